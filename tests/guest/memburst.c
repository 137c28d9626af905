/* memburst: two hazards of memory-access bursts (docs/determinism.md,
 * "Memory-access points"), each a correct program that must exit 0 with
 * --preempt memory:
 *  1. two threads store 8 bytes across a page boundary of a shared buffer
 *     (one instruction, two taken pages);
 *  2. main signals the worker (SIGUSR1) over and over while the worker
 *     touches shared memory, so signals land during bursts. */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static unsigned char buf[3 * 4096] __attribute__((aligned(4096)));
static volatile long handled, spins;
static volatile int stop;

static void *cross(void *arg)
{
    uint64_t me = (uint64_t)(uintptr_t)arg + 1;
    for (int i = 0; i < 200; i++) {
        uint64_t v = me * 1000 + (uint64_t)i;
        memcpy(buf + 4096 - 4, &v, sizeof(v)); /* across the boundary */
        __asm__ volatile("" ::: "memory");
    }
    return NULL;
}

static void on_usr1(int sig)
{
    (void)sig;
    handled++;
}

static void *worker(void *arg)
{
    (void)arg;
    while (!stop)
        spins++;
    return NULL;
}

int main(void)
{
    pthread_t a, b;
    pthread_create(&a, NULL, cross, (void *)0);
    pthread_create(&b, NULL, cross, (void *)1);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    uint64_t last;
    memcpy(&last, buf + 4096 - 4, sizeof(last));
    printf("memburst: crossing stores done, last %llu\n", (unsigned long long)(last / 1000));

    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_usr1;
    sigaction(SIGUSR1, &sa, NULL);
    pthread_t w;
    pthread_create(&w, NULL, worker, NULL);
    for (int i = 0; i < 50; i++) {
        pthread_kill(w, SIGUSR1);
        sched_yield();
    }
    stop = 1;
    pthread_join(w, NULL);
    printf("memburst: %ld signals handled, worker alive\n", handled);
    return handled > 0 ? 0 : 1;
}
