/* race_double_checked_fixed with the bug removed (FIXED): see race_double_checked.c. */
#define FIXED 1
#include "race_double_checked.c"
