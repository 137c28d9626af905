/* dbg_clock: clock_gettime in a loop, for rewind where in the vDSO
 * (tests/system/t_where.sh): every call is a step of the run (the
 * clocksource reads the monitor's clock inside the vDSO), so the steps
 * after its first line stop it in the vDSO, called from read_clock. Built
 * with -g, not optimized, like every dbg_ program. */
#include <stdio.h>
#include <time.h>

static long read_clock(struct timespec *ts)
{
    clock_gettime(CLOCK_MONOTONIC, ts);
    return ts->tv_nsec;
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    struct timespec ts;
    long sum = 0;
    for (int i = 1; i <= 400; i++) {
        sum += read_clock(&ts) & 1;
        if (i % 100 == 0)
            printf("clock %d\n", i);
    }
    printf("done %ld\n", sum);
    return 0;
}
