/*
 * dbg_threads: four threads, each blocked in a function of its own, for
 * `rewind where` and `rewind gdb` (tests/system/t_where.sh, t_gdb.sh).
 * Built with -g. main prints "ready" once every worker is about to block,
 * then sleeps in wait_main; it wakes the workers and joins them.
 *   - wait_pipe: read() on an empty pipe
 *   - wait_cond: pthread_cond_wait
 *   - wait_sleep: nanosleep in a loop until main says stop
 */
#include <pthread.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

static int pfd[2];
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int ready, go;
static volatile int stop;
static volatile long counter; /* bumped by wait_sleep: for breakpoints and watch */

static void mark_ready(void)
{
    pthread_mutex_lock(&mu);
    ready++;
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&mu);
}

__attribute__((noinline)) static void wait_pipe(void)
{
    char c;
    mark_ready();
    if (read(pfd[0], &c, 1) != 1)
        perror("read");
}

__attribute__((noinline)) static void wait_cond(void)
{
    pthread_mutex_lock(&mu);
    ready++;
    pthread_cond_broadcast(&cv);
    while (!go)
        pthread_cond_wait(&cv, &mu);
    pthread_mutex_unlock(&mu);
}

__attribute__((noinline)) static void bump(int i)
{
    counter += i;
}

__attribute__((noinline)) static void wait_sleep(void)
{
    struct timespec ts = {0, 20000000};
    mark_ready();
    for (int i = 1; !stop; i++) {
        bump(i);
        nanosleep(&ts, NULL);
    }
}

static void *run_pipe(void *a)
{
    (void)a;
    wait_pipe();
    return NULL;
}

static void *run_cond(void *a)
{
    (void)a;
    wait_cond();
    return NULL;
}

static void *run_sleep(void *a)
{
    (void)a;
    wait_sleep();
    return NULL;
}

__attribute__((noinline)) static void wait_main(void)
{
    struct timespec ts = {0, 300000000};
    nanosleep(&ts, NULL);
}

int main(void)
{
    if (pipe(pfd) != 0)
        return 2;
    pthread_t th[3];
    void *(*fn[3])(void *) = {run_pipe, run_cond, run_sleep};
    for (int i = 0; i < 3; i++)
        pthread_create(&th[i], NULL, fn[i], NULL);
    pthread_mutex_lock(&mu);
    while (ready < 3)
        pthread_cond_wait(&cv, &mu);
    pthread_mutex_unlock(&mu);
    printf("ready\n");
    fflush(stdout);
    wait_main();
    stop = 1;
    pthread_mutex_lock(&mu);
    go = 1;
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&mu);
    if (write(pfd[1], "x", 1) != 1)
        return 3;
    for (int i = 0; i < 3; i++)
        pthread_join(th[i], NULL);
    printf("done %ld\n", counter);
    return 0;
}
