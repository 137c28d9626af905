/* clockloop: a syscall-heavy program for the benchmarks: N calls of
 * clock_gettime(CLOCK_MONOTONIC) (each one step in rewind: the clocksource
 * reads the monitor's clock), printing a line every 1000 calls. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 100000;
    struct timespec ts;
    for (long i = 1; i <= n; i++) {
        clock_gettime(CLOCK_MONOTONIC, &ts);
        if (i % 1000 == 0)
            printf("%ld %lld.%09ld\n", i, (long long)ts.tv_sec, ts.tv_nsec);
    }
    return 0;
}
