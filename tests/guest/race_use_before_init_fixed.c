/* race_use_before_init_fixed with the bug removed (FIXED): see race_use_before_init.c. */
#define FIXED 1
#include "race_use_before_init.c"
