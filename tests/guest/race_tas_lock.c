/* race_tas_lock: a spin lock whose test-and-set is two plain accesses (test
 * the lock word, then set it). Both threads can find it free and both enter:
 * the counter it protects loses updates. FIXED: an atomic test-and-set. */
#include "race.h"

#define N 60
static volatile int lockword;
static volatile long counter;

static void acquire(void)
{
#ifdef FIXED
    while (__atomic_test_and_set((void *)&lockword, __ATOMIC_ACQUIRE))
        ;
#else
    for (;;) {
        while (lockword) /* test ... */
            ;
        lockword = 1; /* ... then set: not one step */
        return;
    }
#endif
}

static void release(void)
{
#ifdef FIXED
    __atomic_clear((void *)&lockword, __ATOMIC_RELEASE);
#else
    lockword = 0;
#endif
}

static void *add(void *arg)
{
    (void)arg;
    for (int i = 0; i < N; i++) {
        acquire();
        long v = counter;
        counter = v + 1;
        release();
    }
    return NULL;
}

int main(void)
{
    race_run(2, add);
    printf("counter %ld of %d\n", counter, 2 * N);
    return counter == 2 * N ? 0 : 1;
}
