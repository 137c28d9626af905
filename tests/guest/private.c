/* private: two threads compute on memory of their own (M10 in
 * docs/determinism.md). Each allocates 16 pages after the threads exist,
 * walks them with a xorshift, and yields the CPU after every round, so the
 * other thread runs in between and takes its pages back. Under --preempt
 * memory a fault on a page only its thread touched is no point: the run
 * makes few access points however many rounds it has (before M10 every
 * round made a point every few instructions until the window's bound). */
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define PAGES 16
#define ROUNDS 40

static uint64_t sums[2];

static void *worker(void *arg)
{
    long me = (long)arg;
    uint64_t *buf = calloc(PAGES * 512, sizeof(uint64_t));
    if (!buf)
        return NULL;
    uint64_t x = (uint64_t)me + 1;
    for (int r = 0; r < ROUNDS; r++) {
        for (int i = 0; i < PAGES * 512; i++) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            buf[(x >> 3) % (PAGES * 512)] += x;
        }
        sched_yield(); /* the other thread runs and takes these pages back */
    }
    uint64_t s = 0;
    for (int i = 0; i < PAGES * 512; i++)
        s ^= buf[i];
    sums[me] = s;
    free(buf);
    return NULL;
}

int main(void)
{
    pthread_t t[2];
    for (long i = 0; i < 2; i++)
        if (pthread_create(&t[i], NULL, worker, (void *)i))
            return 3;
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    printf("private: %016llx %016llx\n", (unsigned long long)sums[0], (unsigned long long)sums[1]);
    return 0;
}
