/* hostile: a guest program that breaks the platform contract on purpose, to
 * check that the monitor ends the run as guest-error and survives. As root
 * in the guest it can reach the platform ports with ioperm(2).
 *   hostile oob    record at a guest-physical address outside RAM
 *   hostile byte   an 8-bit access to a 32-bit platform port
 *   hostile stop   an unknown stop code
 *   hostile port   an address inside the platform block that is no port */
#include <stdio.h>
#include <string.h>
#include <sys/io.h>

#include "../../guest/include/rewind_abi.h"

int main(int argc, char **argv)
{
    if (argc != 2 || ioperm(REWIND_PORT_BASE, REWIND_PORT_COUNT * 4 + 4, 1) != 0) {
        perror("hostile: ioperm");
        return 2;
    }
    printf("hostile: %s\n", argv[1]);
    fflush(stdout);
    if (!strcmp(argv[1], "oob"))
        outl(0xfffff000u, REWIND_PORT_RECORD);
    else if (!strcmp(argv[1], "byte"))
        outb(1, REWIND_PORT_RECORD);
    else if (!strcmp(argv[1], "stop"))
        outl(99, REWIND_PORT_STOP);
    else if (!strcmp(argv[1], "port"))
        outl(0, REWIND_PORT_BASE + 2); /* inside the block, not a port */
    printf("hostile: still running\n");
    return 0;
}
