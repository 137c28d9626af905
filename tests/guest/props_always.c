/* props_always: two threads add to a shared counter with a read, a system
 * call (a step where a schedule may switch threads) and a store, so some
 * schedules lose an update (docs/tutorials/properties.md). It asserts from
 * inside with the guest SDK: `always` no update is lost, `sometimes` an
 * update is lost. With the argument "fixed" a mutex closes the window: the
 * always holds in every schedule and the sometimes is never true. Exits 0
 * either way, and prints the same line: only the assertions see the bug. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "rewind.h"

#define ROUNDS 4

static volatile int counter;
static int fixed;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

static void *adder(void *arg)
{
    (void)arg;
    for (int i = 0; i < ROUNDS; i++) {
        if (fixed)
            pthread_mutex_lock(&mu);
        int v = counter; /* read */
        getppid();       /* a system call between the read and the store */
        counter = v + 1; /* store */
        if (fixed)
            pthread_mutex_unlock(&mu);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    fixed = argc > 1 && !strcmp(argv[1], "fixed");
    pthread_t a, b;
    pthread_create(&a, NULL, adder, NULL);
    pthread_create(&b, NULL, adder, NULL);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    rewind_always(counter == 2 * ROUNDS, "no update is lost");
    rewind_sometimes(counter < 2 * ROUNDS, "an update is lost");
    printf("done\n");
    return 0;
}
