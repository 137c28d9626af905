/* race_lost_update: two threads add 1 to a global N times each; the load
 * and the store of each addition have no lock and no system call between
 * them. An update is lost when one thread runs between the other's load and
 * store. FIXED: an atomic add. */
#include "race.h"

#define N 100
static volatile long counter;

static void *add(void *arg)
{
    (void)arg;
    for (int i = 0; i < N; i++) {
#ifdef FIXED
        __atomic_fetch_add(&counter, 1, __ATOMIC_SEQ_CST);
#else
        long v = counter; /* load */
        counter = v + 1;  /* store */
#endif
    }
    return NULL;
}

int main(void)
{
    race_run(2, add);
    printf("counter %ld of %d\n", counter, 2 * N);
    return counter == 2 * N ? 0 : 1;
}
