/* rewrite: writes "version N" into /tmp/file for N = 1..100, each version
 * written whole to a temporary file and renamed into place, and marks the
 * step after each one ("v N") so a test can `rewind cat` the file there. */
#include <stdio.h>

#include "rewind.h"

int main(void)
{
    for (int v = 1; v <= 100; v++) {
        FILE *f = fopen("/tmp/file.tmp", "w");
        if (!f)
            return 2;
        fprintf(f, "version %d\n", v);
        if (fclose(f) != 0 || rename("/tmp/file.tmp", "/tmp/file") != 0)
            return 2;
        char m[32];
        snprintf(m, sizeof(m), "v %d", v);
        rewind_mark(m);
    }
    puts("rewrote 100 times");
    return 0;
}
