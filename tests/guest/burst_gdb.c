/* burst_gdb: gdb on a run made with --preempt memory (docs/determinism.md,
 * "The debugger on such runs"). main spins on a flag the worker sets. The
 * worker's store to the shared page is a memory-access point, after which
 * the guest kernel single-steps it for a burst of at most 16 instructions;
 * right after that the worker computes on its own stack (no point, M10)
 * for a few thousand instructions and calls mark(). A breakpoint on mark
 * is reached only if the debugger sees the worker again after its burst
 * ended (the notice, D3). */
#include <pthread.h>
#include <stdio.h>

static volatile int ready;
static volatile long result;

__attribute__((noinline)) static long mark(long v)
{
    return v + 1;
}

static void *worker(void *arg)
{
    (void)arg;
    result = 41;
    ready = 1;
    volatile long own = 0;
    for (int i = 0; i < 500; i++)
        own += i;
    result = mark(own);
    return NULL;
}

int main(void)
{
    pthread_t t;
    if (pthread_create(&t, NULL, worker, NULL))
        return 3;
    while (!ready) /* spins: no system call */
        ;
    pthread_join(t, NULL);
    printf("burst_gdb: result %ld\n", result);
    return result == 124751 ? 0 : 1;
}
