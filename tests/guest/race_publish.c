/* race_publish: publication in the wrong order. The writer raises the flag
 * and then writes the payload; the reader waits for the flag and reads the
 * payload. The reader sees no payload when it runs between the two stores.
 * FIXED: payload first, then the flag with a release store (and the reader
 * an acquire load). */
#include "race.h"

static volatile int payload;
static volatile int ready;

static void *writer(void *arg)
{
    (void)arg;
#ifdef FIXED
    payload = 42;
    __atomic_store_n(&ready, 1, __ATOMIC_RELEASE);
#else
    ready = 1;    /* published ... */
    payload = 42; /* ... before it was written */
#endif
    return NULL;
}

static void *reader(void *arg)
{
    (void)arg;
    if (!race_wait_until(&ready, 100000)) {
        printf("reader: never ready\n");
        exit(2);
    }
    int p = payload;
    printf("reader: payload %d\n", p);
    if (p != 42)
        exit(1);
    return NULL;
}

static void *both(void *arg)
{
    return (long)arg == 0 ? reader(arg) : writer(arg);
}

int main(void)
{
    race_run(2, both);
    return 0;
}
