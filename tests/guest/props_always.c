/* props_always: workers compute results and count each task done; main
 * polls until every task is counted, then asserts from inside with the
 * guest SDK that every result is stored. The bug: a worker counts its task
 * done before it stores the result, with a system call between (a step
 * where a schedule can stall it), so in some schedules main finds a result
 * missing. It prints the same line either way: only the `always` sees the
 * bug (docs/tutorials/properties.md). With the argument "fixed" the result
 * is stored first: the always holds in every schedule, and the `sometimes`
 * (a result is missing) is never true. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "rewind.h"

#define WORKERS 2
#define TASKS 16

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static volatile long result[TASKS];
static int next_task, done, fixed;

static long work_on(int in)
{
    long x = in + 7;
    for (int i = 0; i < 20000; i++)
        x = (x * 48271 + 11) % 2147483647;
    return x | 1; /* never 0: 0 means "not stored" */
}

static void *worker(void *arg)
{
    (void)arg;
    for (;;) {
        pthread_mutex_lock(&mu);
        int t = next_task < TASKS ? next_task++ : -1;
        pthread_mutex_unlock(&mu);
        if (t < 0)
            return NULL;
        long r = work_on(t);
        if (fixed)
            result[t] = r;
        pthread_mutex_lock(&mu);
        done++;
        pthread_mutex_unlock(&mu);
        getppid(); /* a system call between counting and storing */
        if (!fixed)
            result[t] = r;
    }
}

int main(int argc, char **argv)
{
    fixed = argc > 1 && !strcmp(argv[1], "fixed");
    pthread_t th[WORKERS];
    for (int i = 0; i < WORKERS; i++)
        pthread_create(&th[i], NULL, worker, NULL);
    for (;;) {
        pthread_mutex_lock(&mu);
        int all = done == TASKS;
        pthread_mutex_unlock(&mu);
        if (all)
            break;
        usleep(1000);
    }
    int missing = 0;
    for (int i = 0; i < TASKS; i++)
        missing += result[i] == 0;
    rewind_always(missing == 0, "every counted result is stored");
    rewind_sometimes(missing > 0, "a counted result is missing");
    for (int i = 0; i < WORKERS; i++)
        pthread_join(th[i], NULL);
    printf("done\n");
    return 0;
}
