/* sdk_race: two threads add to a shared counter with a read and a store
 * and no system call between them, so without a schedule point no step
 * falls inside the window and no schedule can interleave them. With the
 * argument "point", one rewind_point() sits between the read and the store
 * (docs/tutorials/schedule-points.md). Exits 1 when an update was lost. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "rewind.h"

#define ROUNDS 4

static volatile int counter;
static int use_point;

static void *adder(void *arg)
{
    (void)arg;
    for (int i = 0; i < ROUNDS; i++) {
        int v = counter; /* read */
        if (use_point)
            rewind_point();
        counter = v + 1; /* store */
    }
    return NULL;
}

int main(int argc, char **argv)
{
    use_point = argc > 1 && !strcmp(argv[1], "point");
    pthread_t a, b;
    pthread_create(&a, NULL, adder, NULL);
    pthread_create(&b, NULL, adder, NULL);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    int ok = rewind_always(counter == 2 * ROUNDS, "no update is lost");
    printf("counter %d of %d\n", counter, 2 * ROUNDS);
    return ok ? 0 : 1;
}
