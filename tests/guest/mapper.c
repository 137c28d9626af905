/* mapper: maps and unmaps memory at the same virtual address in a loop,
 * each time backed by a fresh page holding another value, and checks what
 * it reads back. A restore that leaves a stale TLB entry (docs/determinism.md rule 10) makes
 * a read return the old page's value: the program then prints "stale" and
 * exits 1, and in any case its checksum and the run's RAM differ. */
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>

#define ADDR ((void *)0x700000000000ull)
#define ROUNDS 3000

int main(void)
{
    uint64_t sum = 0;
    for (int i = 0; i < ROUNDS; i++) {
        volatile uint64_t *p = mmap(ADDR, 4096, PROT_READ | PROT_WRITE,
                                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
        if (p == MAP_FAILED) {
            perror("mmap");
            return 2;
        }
        uint64_t before = p[0];
        p[0] = (uint64_t)i * 2654435761u;
        sched_yield(); /* a step: keyframes land inside the loop */
        if (before != 0 || p[0] != (uint64_t)i * 2654435761u) {
            printf("stale at round %d: %llx\n", i, (unsigned long long)before);
            return 1;
        }
        sum = sum * 31 + p[0];
        munmap((void *)p, 4096);
    }
    printf("mapper done %llx\n", (unsigned long long)sum);
    return 0;
}
