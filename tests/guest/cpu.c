/* cpu: CPU-bound work for the benchmarks (no syscalls in the loop): counts
 * primes below N by trial division and prints the count. */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 2000000, count = 0;
    for (long i = 2; i < n; i++) {
        int prime = 1;
        for (long d = 2; d * d <= i; d++)
            if (i % d == 0) {
                prime = 0;
                break;
            }
        count += prime;
    }
    printf("primes below %ld: %ld\n", n, count);
    return 0;
}
