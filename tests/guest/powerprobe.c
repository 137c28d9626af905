/* powerprobe: a file that shows what a power cut keeps (docs/faults.md,
 * "Power cuts").
 *
 *   powerprobe write FILE N MS K  N rounds, one every MS ms of (virtual)
 *                                 time: append record I (32 bytes, through
 *                                 an O_APPEND descriptor), then overwrite
 *                                 the 32-byte header at offset 0 with I
 *                                 (pwrite); every K rounds print
 *                                 "syncing I", fsync, print "synced I".
 *   powerprobe rewrite FILE N MS K
 *                                 N rounds, one every MS ms: write a line
 *                                 "pending I" past the file's end, cut the
 *                                 file to nothing (ftruncate) and write
 *                                 version I (three 32-byte lines naming
 *                                 I); every K rounds
 *                                 print "rewrite syncing I", fsync, print
 *                                 "rewrite synced I".
 *   powerprobe version FILE       print "file FILE version V" (its three
 *                                 lines name V), "file FILE empty" or
 *                                 "file FILE damaged: WHY"; exit 0.
 *   powerprobe check FILE         print "file FILE header H records R
 *                                 intact" when the header names the last
 *                                 of R records 1..R in order (an empty or
 *                                 missing file: H = R = 0), else
 *                                 "file FILE damaged: WHY"; exit 0.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define REC 32

static void die(const char *what)
{
    fprintf(stderr, "powerprobe: %s: %s\n", what, strerror(errno));
    exit(1);
}

static void line(char *buf, const char *word, int i)
{
    memset(buf, ' ', REC);
    int n = snprintf(buf, REC, "%s %08d", word, i);
    buf[n] = ' ';
    buf[REC - 1] = '\n';
}

/* Say "WHATsyncing I", fsync fd, say "WHATsynced I"; then sleep ms. */
static void sync_and_wait(int fd, const char *what, int i, int k, int ms)
{
    if (i % k == 0) {
        printf("%ssyncing %d\n", what, i);
        fflush(stdout);
        if (fsync(fd) < 0)
            die("fsync");
        printf("%ssynced %d\n", what, i);
        fflush(stdout);
    }
    struct timespec t = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

static int do_write(const char *path, int n, int ms, int k)
{
    int fd = open(path, O_RDWR | O_CREAT, 0644);
    int ap = open(path, O_WRONLY | O_APPEND);
    if (fd < 0 || ap < 0)
        die("open");
    char hdr[REC], rec[REC];
    line(hdr, "hdr", 0);
    if (pwrite(fd, hdr, REC, 0) != REC) /* the header comes first */
        die("pwrite");
    for (int i = 1; i <= n; i++) {
        line(rec, "rec", i);
        if (write(ap, rec, REC) != REC)
            die("write");
        line(hdr, "hdr", i);
        if (pwrite(fd, hdr, REC, 0) != REC)
            die("pwrite");
        sync_and_wait(fd, "", i, k, ms);
    }
    return 0;
}

static int do_rewrite(const char *path, int n, int ms, int k)
{
    char buf[3 * REC];
    for (int i = 1; i <= n; i++) {
        int fd = open(path, O_WRONLY | O_CREAT, 0644);
        if (fd < 0)
            die("open");
        line(buf, "pending", i);
        if (pwrite(fd, buf, REC, 3 * REC) != REC)
            die("pwrite");
        if (ftruncate(fd, 0) < 0)
            die("ftruncate");
        for (int j = 0; j < 3; j++)
            line(buf + j * REC, "version", i);
        if (write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf))
            die("write");
        sync_and_wait(fd, "rewrite ", i, k, ms);
        close(fd);
    }
    return 0;
}

static int do_version(const char *path)
{
    char buf[3 * REC + 1], want[REC];
    int fd = open(path, O_RDONLY);
    ssize_t n = fd < 0 ? 0 : read(fd, buf, sizeof(buf));
    if (n == 0) {
        printf("file %s empty\n", path);
        return 0;
    }
    int v = n == 3 * REC ? atoi(buf + strlen("version ")) : -1;
    if (v > 0)
        line(want, "version", v);
    for (int j = 0; v > 0 && j < 3; j++)
        if (memcmp(buf + j * REC, want, REC))
            v = -1;
    if (v > 0)
        printf("file %s version %d\n", path, v);
    else
        printf("file %s damaged: %zd bytes\n", path, n);
    return 0;
}

static int do_check(const char *path)
{
    char buf[REC + 1], want[REC];
    int fd = open(path, O_RDONLY);
    if (fd < 0 && errno == ENOENT) {
        printf("file %s header 0 records 0 intact\n", path);
        return 0;
    }
    if (fd < 0)
        die("open");
    off_t size = lseek(fd, 0, SEEK_END);
    if (size == 0) {
        printf("file %s header 0 records 0 intact\n", path);
        return 0;
    }
    if (size < REC || size % REC) {
        printf("file %s damaged: size %lld\n", path, (long long)size);
        return 0;
    }
    int r = (int)(size / REC) - 1;
    for (int i = 0; i <= r; i++) {
        if (pread(fd, buf, REC, (off_t)i * REC) != REC)
            die("pread");
        line(want, i ? "rec" : "hdr", i ? i : r);
        if (memcmp(buf, want, REC)) {
            buf[REC - 1] = 0;
            printf("file %s damaged: %s %d is '%s' (%d records)\n", path, i ? "record" : "header",
                   i, buf, r);
            return 0;
        }
    }
    printf("file %s header %d records %d intact\n", path, r, r);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 6 && !strcmp(argv[1], "write"))
        return do_write(argv[2], atoi(argv[3]), atoi(argv[4]), atoi(argv[5]));
    if (argc == 6 && !strcmp(argv[1], "rewrite"))
        return do_rewrite(argv[2], atoi(argv[3]), atoi(argv[4]), atoi(argv[5]));
    if (argc == 3 && !strcmp(argv[1], "check"))
        return do_check(argv[2]);
    if (argc == 3 && !strcmp(argv[1], "version"))
        return do_version(argv[2]);
    fprintf(stderr, "usage: powerprobe write|rewrite FILE N MS K | powerprobe check|version "
                    "FILE\n");
    return 2;
}
