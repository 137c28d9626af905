/* diskprobe: file writes and syncs that show what a disk fault does
 * (docs/faults.md, "Disk faults").
 *
 *   diskprobe N MS FILE...   N rounds, one every MS ms of (virtual) time;
 *                            in each, for each FILE: append a line
 *                            (write), fsync it, then print one line
 *                            "round I FILE write=R sync=R" where R is ok
 *                            or the error's name (EIO, ENOSPC, ...).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char *result(int ok, int e)
{
    if (ok)
        return "ok";
    switch (e) {
    case EIO:
        return "EIO";
    case ENOSPC:
        return "ENOSPC";
    default:
        return strerror(e);
    }
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: diskprobe N MS FILE...\n");
        return 2;
    }
    int n = atoi(argv[1]), ms = atoi(argv[2]);
    for (int i = 1; i <= n; i++) {
        for (int f = 3; f < argc; f++) {
            int fd = open(argv[f], O_WRONLY | O_CREAT | O_APPEND, 0644);
            if (fd < 0) {
                fprintf(stderr, "diskprobe: %s: %s\n", argv[f], strerror(errno));
                return 1;
            }
            char line[32];
            int len = snprintf(line, sizeof(line), "%d\n", i);
            int wok = write(fd, line, (size_t)len) == len, we = errno;
            int sok = fsync(fd) == 0, se = errno;
            printf("round %d %s write=%s sync=%s\n", i, argv[f], result(wok, we), result(sok, se));
            close(fd);
        }
        fflush(stdout);
        struct timespec t = {ms / 1000, (long)(ms % 1000) * 1000000L};
        nanosleep(&t, NULL);
    }
    return 0;
}
