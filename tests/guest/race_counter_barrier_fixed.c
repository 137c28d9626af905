/* race_counter_barrier_fixed with the bug removed (FIXED): see race_counter_barrier.c. */
#define FIXED 1
#include "race_counter_barrier.c"
