/* race_tas_lock_fixed with the bug removed (FIXED): see race_tas_lock.c. */
#define FIXED 1
#include "race_tas_lock.c"
