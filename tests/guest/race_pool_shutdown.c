/* race_pool_shutdown: a pool of 2 workers takes tasks from a queue by
 * spinning on it. main queues the tasks and then sets `shutdown`. The bug: a
 * worker looks at `shutdown` before it looks at the queue, so when it sees
 * shutdown set it leaves with tasks still queued (and the other worker may
 * have left already): tasks are lost. FIXED: a worker leaves only when the
 * queue is empty and shutdown is set. */
#include "race.h"

#define TASKS 8
static volatile int queued, taken, done;
static volatile int shutdown_;
static pthread_mutex_t qlock = PTHREAD_MUTEX_INITIALIZER;

static void *worker(void *arg)
{
    (void)arg;
    for (;;) {
#ifndef FIXED
        if (shutdown_) /* leaves without looking at the queue */
            return NULL;
#endif
        int got = 0;
        pthread_mutex_lock(&qlock);
        if (taken < queued) {
            taken++;
            got = 1;
        }
        pthread_mutex_unlock(&qlock);
        if (got) {
            __atomic_fetch_add(&done, 1, __ATOMIC_SEQ_CST);
            continue;
        }
#ifdef FIXED
        if (shutdown_ && taken == queued)
            return NULL;
#endif
    }
}

int main(void)
{
    pthread_t t[2];
    for (long i = 0; i < 2; i++)
        if (pthread_create(&t[i], NULL, worker, (void *)i))
            return 3;
    for (int i = 0; i < TASKS; i++) {
        pthread_mutex_lock(&qlock);
        queued++;
        pthread_mutex_unlock(&qlock);
    }
    shutdown_ = 1;
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    printf("pool: %d of %d tasks done\n", done, TASKS);
    return done == TASKS ? 0 : 1;
}
