/* race_aba_stack_fixed with the bug removed (FIXED): see race_aba_stack.c. */
#define FIXED 1
#include "race_aba_stack.c"
