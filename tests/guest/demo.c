/* demo: the determinism acceptance program. Prints the wall clock, a random
 * number from getrandom(), the address of a stack variable, sleeps one
 * second, and prints the clock again. Under rewind every run with the same
 * spec prints the same bytes; another --seed changes the number and the
 * address (ASLR is seeded too). */
#include <stdint.h>
#include <stdio.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

static void print_time(const char *what)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    printf("%s %lld.%09ld\n", what, (long long)ts.tv_sec, ts.tv_nsec);
}

int main(void)
{
    uint64_t r = 0;
    print_time("time");
    if (getrandom(&r, sizeof(r), 0) != sizeof(r))
        return 1;
    printf("random %llu\n", (unsigned long long)r);
    printf("stack %p\n", (void *)&r);
    sleep(1);
    print_time("time");
    return 0;
}
