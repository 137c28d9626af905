/* spin: prints its pid, then spins in user mode in spin_here() with no
 * system call and no port access: the guest makes no step again, which
 * `rewind run --spin-limit S` ends as outcome spin (tests/system/t_spin.sh). */
#include <stdio.h>
#include <unistd.h>

static volatile unsigned long spin_counter;

__attribute__((noinline)) void spin_here(void)
{
    for (;;)
        spin_counter++;
}

int main(void)
{
    printf("spin: pid %d\n", (int)getpid());
    fflush(stdout);
    spin_here();
    return 0;
}
