/* race_counter_barrier: a barrier made of a counter. Each of 3 threads adds 1
 * to `arrived` (a plain load and store) and spins until it reaches 3. An
 * arrival is lost when two threads interleave their additions, and the
 * others then wait forever; here each waits a bounded number of rounds
 * (yielding: the wait is not the window) and reports it. FIXED: an atomic
 * add. */
#include "race.h"

#define THREADS 3
static volatile int arrived;
static volatile int stuck;

static void *meet(void *arg)
{
    (void)arg;
    volatile long work = 0;
    for (int i = 0; i < 20; i++)
        work += i;
#ifdef FIXED
    __atomic_fetch_add(&arrived, 1, __ATOMIC_SEQ_CST);
#else
    int a = arrived; /* load */
    arrived = a + 1; /* store */
#endif
    for (long r = 0; arrived < THREADS && r < 20000; r++)
        sched_yield();
    if (arrived < THREADS)
        stuck = 1;
    return NULL;
}

int main(void)
{
    race_run(THREADS, meet);
    printf("barrier: %d of %d arrived%s\n", arrived, THREADS, stuck ? ", threads stuck" : "");
    return stuck || arrived != THREADS ? 1 : 0;
}
