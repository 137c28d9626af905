/* race_spin_wait: no bug. main starts a thread and spins on a flag the
 * thread sets after some work; nothing in between makes a system call.
 * Without memory-access points the spinning thread never gives up the CPU
 * and the run ends as spin; with --preempt memory it progresses and exits 0,
 * identically on every run (docs/determinism.md). */
#include "race.h"

static volatile int ready;
static volatile long result;

static void *setter(void *arg)
{
    (void)arg;
    volatile long work = 0;
    for (int i = 0; i < 1000; i++)
        work += i;
    result = work;
    ready = 1;
    return NULL;
}

int main(void)
{
    pthread_t t;
    if (pthread_create(&t, NULL, setter, NULL))
        return 3;
    while (!ready) /* spins: no system call */
        ;
    printf("spin-wait: result %ld\n", result);
    pthread_join(t, NULL);
    return result == 499500 ? 0 : 1;
}
