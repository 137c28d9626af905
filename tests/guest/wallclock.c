/* wallclock: a node's view of its clocks for the clock fault's test
 * (docs/faults.md, "clock"). Every 100 ms of monotonic time, N times
 * (default 40), prints "NAME wall W mono M": CLOCK_REALTIME and
 * CLOCK_MONOTONIC in ms, read by clock_gettime, and gettimeofday's seconds
 * as a third column, so the test sees a wall clock step while the
 * monotonic clock goes on. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/time.h>
#include <time.h>

static long long ms(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int main(int argc, char **argv)
{
    const char *name = getenv("REWIND_NODE");
    long n = argc > 1 ? atol(argv[1]) : 40;
    setvbuf(stdout, NULL, _IOLBF, 0);
    for (long i = 0; i < n; i++) {
        struct timeval tv;
        gettimeofday(&tv, NULL);
        printf("%s wall %lld mono %lld tod %lld\n", name ? name : "-", ms(CLOCK_REALTIME),
               ms(CLOCK_MONOTONIC), (long long)tv.tv_sec);
        struct timespec d = {0, 100000000};
        nanosleep(&d, NULL);
    }
    return 0;
}
