/* race_pool_shutdown_fixed with the bug removed (FIXED): see race_pool_shutdown.c. */
#define FIXED 1
#include "race_pool_shutdown.c"
