/* race_check_then_act: two threads claim 32 slots, each slot by whoever finds
 * it free: check (`if (!slot[i])`) then act (`slot[i] = me`). A slot is
 * claimed twice when the other thread runs between the check and the act.
 * FIXED: a compare-and-swap claims. */
#include "race.h"

#define SLOTS 32
static volatile int slot[SLOTS];
static volatile int claims[2];

static void *claim(void *arg)
{
    int me = (int)(long)arg + 1;
    for (int i = 0; i < SLOTS; i++) {
#ifdef FIXED
        int free_ = 0;
        if (__atomic_compare_exchange_n(&slot[i], &free_, me, 0, __ATOMIC_SEQ_CST,
                                        __ATOMIC_SEQ_CST))
            claims[me - 1]++;
#else
        if (!slot[i]) {     /* check */
            slot[i] = me;   /* act */
            claims[me - 1]++;
        }
#endif
    }
    return NULL;
}

int main(void)
{
    race_run(2, claim);
    int total = claims[0] + claims[1];
    printf("claims %d + %d = %d of %d slots\n", claims[0], claims[1], total, SLOTS);
    return total == SLOTS ? 0 : 1;
}
