/* sdk_c: every call of the C SDK (guest/sdk/rewind.h), for t_sdk.sh. Its
 * output is the same inside rewind and outside (where the calls are
 * no-ops); "sdk_c fail" also fails an always and hits an unreachable. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "rewind.h"

static int counter;

static void *worker(void *arg)
{
    (void)arg;
    for (int i = 0; i < 3; i++) {
        counter++;
        rewind_always(counter > 0, "counter stays positive");
        rewind_point();
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int fail = argc > 1 && !strcmp(argv[1], "fail");
    rewind_mark("sdk_c starts");
    uint64_t a = rewind_random(), b = rewind_random();
    printf("random draws differ: %s\n", a != b ? "yes" : "no");
    pthread_t t;
    pthread_create(&t, NULL, worker, NULL);
    pthread_join(t, NULL);
    int r = rewind_sometimes(counter == 3, "counter reaches three");
    rewind_always_or_unreachable(counter == 3, "counter is three at the end");
    rewind_reachable("the end is reached");
    if (counter < 0)
        rewind_unreachable("counter went negative"); /* never reached: catalog only */
    if (fail) {
        rewind_always(counter == 4, "counter is four on request");
        rewind_unreachable("the failure path");
    }
    printf("counter %d, sometimes returned %d\n", counter, r);
    return 0;
}
