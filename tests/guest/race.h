/* race.h: shared by the race programs (race_*.c, docs/tutorials/races.md).
 * Each program has a bug between plain memory accesses with no system call in
 * its window, prints what it saw, and exits 1 when the bug shows (0 when not);
 * race_NAME_fixed.c builds the same program with FIXED defined, the bug
 * removed. Shared variables are volatile so that every load and store in the
 * source is one in the program (the compiler keeps them, in order). */
#ifndef RACE_H
#define RACE_H
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

/* Start n threads running fn(i); join them all. */
static inline void race_run(int n, void *(*fn)(void *))
{
    pthread_t t[16];
    for (long i = 0; i < n; i++)
        if (pthread_create(&t[i], NULL, fn, (void *)i)) {
            perror("pthread_create");
            exit(3);
        }
    for (int i = 0; i < n; i++)
        pthread_join(t[i], NULL);
}

/* Wait until *flag != 0, at most `limit` rounds, yielding the CPU each
 * round (the waits are not the races' windows); 0 if it never was. */
static inline int race_wait_until(volatile int *flag, long limit)
{
    for (long i = 0; i < limit; i++) {
        if (*flag)
            return 1;
        sched_yield();
    }
    return *flag != 0;
}
#endif
