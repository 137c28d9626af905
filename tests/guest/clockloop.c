/* clockloop: a syscall-heavy program for the benchmarks: N calls of
 * clock_gettime(CLOCK_MONOTONIC) (each one step in rewind: the clocksource
 * reads the monitor's clock), printing a line (one write, one output
 * record) every K calls (default 1000). */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 100000;
    long k = argc > 2 ? atol(argv[2]) : 1000;
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (k < 1)
        k = 1;
    struct timespec ts;
    for (long i = 1; i <= n; i++) {
        clock_gettime(CLOCK_MONOTONIC, &ts);
        if (i % k == 0)
            printf("%ld %lld.%09ld\n", i, (long long)ts.tv_sec, ts.tv_nsec);
    }
    return 0;
}
