/* race_lost_update_fixed with the bug removed (FIXED): see race_lost_update.c. */
#define FIXED 1
#include "race_lost_update.c"
