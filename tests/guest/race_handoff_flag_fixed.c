/* race_handoff_flag_fixed with the bug removed (FIXED): see race_handoff_flag.c. */
#define FIXED 1
#include "race_handoff_flag.c"
