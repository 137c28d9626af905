/* race_lock_order_fixed with the bug removed (FIXED): see race_lock_order.c. */
#define FIXED 1
#include "race_lock_order.c"
