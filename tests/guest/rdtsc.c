/* rdtsc: executes RDTSC and RDTSCP in user mode and prints what they
 * return. Under rewind both are emulated from virtual time (ns), so every
 * run prints the same values. */
#include <stdint.h>
#include <stdio.h>

static uint64_t rdtsc(void)
{
    uint32_t lo, hi;
    __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
    return (uint64_t)hi << 32 | lo;
}

static uint64_t rdtscp(uint32_t *aux)
{
    uint32_t lo, hi;
    __asm__ volatile("rdtscp" : "=a"(lo), "=d"(hi), "=c"(*aux));
    return (uint64_t)hi << 32 | lo;
}

int main(void)
{
    uint32_t aux = 99;
    uint64_t a = rdtsc();
    uint64_t b = rdtsc();
    uint64_t c = rdtscp(&aux);
    printf("rdtsc %llu %llu rdtscp %llu aux %u\n", (unsigned long long)a, (unsigned long long)b,
           (unsigned long long)c, aux);
    return b > a && c > b ? 0 : 1;
}
