/*
 * pool: a small thread pool with a shutdown race.
 *
 * Workers take tasks from a queue, compute, count the task done, note when
 * it finished, then store the result. The main thread polls until every
 * task is counted, adds up the results, prints the sum and unmaps the task
 * array. The bug: a worker counts its task done before it stores the
 * result. If it loses the CPU in that window and main polls just then,
 * main sums a missing result and unmaps the array under the worker, whose
 * late store crashes with SIGSEGV. On a real machine the window is tens of
 * nanoseconds against a 1 ms poll: the crash is very rare. Build with
 * -DFIXED for the fix: store the result, then count the task done.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define WORKERS 2
#define TASKS 16

struct task {
    int in;
    long out;
    struct timespec finished;
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct task *tasks;
static int next_task, done;

static long compute(int in)
{
    long x = in + 1;
    for (int i = 0; i < 20000; i++)
        x = (x * 1103515245 + 12345) % 1000003;
    return x;
}

static void *worker(void *arg)
{
    (void)arg;
    for (;;) {
        pthread_mutex_lock(&mu);
        if (next_task == TASKS) {
            pthread_mutex_unlock(&mu);
            return NULL;
        }
        struct task *t = &tasks[next_task++];
        pthread_mutex_unlock(&mu);
        long r = compute(t->in);
#ifdef FIXED
        t->out = r; /* the fix: the result is in place before the task counts as done */
#endif
        pthread_mutex_lock(&mu);
        done++;
        pthread_mutex_unlock(&mu);
        clock_gettime(CLOCK_MONOTONIC, &t->finished);
#ifndef FIXED
        t->out = r; /* BUG: stored after the task counts as done */
#endif
    }
}

int main(void)
{
    tasks = mmap(NULL, sizeof(struct task) * TASKS, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (tasks == MAP_FAILED)
        return 2;
    for (int i = 0; i < TASKS; i++)
        tasks[i].in = i;
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
    long sum = 0;
    for (int i = 0; i < TASKS; i++)
        sum += tasks[i].out;
    munmap(tasks, sizeof(struct task) * TASKS); /* shutdown: the tasks are gone */
    for (int i = 0; i < WORKERS; i++)
        pthread_join(th[i], NULL);
    printf("sum %ld\n", sum);
    return 0;
}
