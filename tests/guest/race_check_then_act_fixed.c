/* race_check_then_act_fixed with the bug removed (FIXED): see race_check_then_act.c. */
#define FIXED 1
#include "race_check_then_act.c"
