/*
 * watchctr: the program `rewind watch` is tested with (tests/system/
 * t_watch.sh). THREADS threads each add 1 to the global `counter` ROUNDS
 * times under a mutex, in the function bump, and log every increment as
 * "bump tid=T counter=V" right after it, so the test can match each write
 * the watch lists (its step, thread, new value and function) with the
 * program's own account. Built with -g for the function's source line.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define THREADS 3
#define ROUNDS 4

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
volatile long counter;

static void say(const char *s)
{
    size_t n = strlen(s);
    while (n > 0) {
        ssize_t w = write(1, s, n);
        if (w <= 0)
            return;
        s += w;
        n -= (size_t)w;
    }
}

__attribute__((noinline)) static long bump(void)
{
    counter = counter + 1; /* the write the test watches */
    return counter;
}

static void *worker(void *arg)
{
    (void)arg;
    long tid = syscall(SYS_gettid);
    for (int i = 0; i < ROUNDS; i++) {
        char line[64];
        pthread_mutex_lock(&mu);
        long v = bump();
        snprintf(line, sizeof(line), "bump tid=%ld counter=%ld\n", tid, v);
        say(line);
        pthread_mutex_unlock(&mu);
        usleep(1000);
    }
    return NULL;
}

int main(void)
{
    pthread_t t[THREADS];
    char line[64];
    snprintf(line, sizeof(line), "watchctr pid=%ld counter=%p\n", (long)getpid(), (void *)&counter);
    say(line);
    for (int i = 0; i < THREADS; i++)
        pthread_create(&t[i], NULL, worker, NULL);
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    snprintf(line, sizeof(line), "done counter=%ld\n", counter);
    say(line);
    return 0;
}
