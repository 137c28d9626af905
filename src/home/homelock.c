/*
 * homelock: see homelock.h.
 *
 * The holder count for the waiting message comes from /proc/locks, whose
 * lines look like "3: FLOCK  ADVISORY  READ  1234 00:2e:5678 0 EOF" (device
 * as hex major:minor, then the inode); lines with "->" are blocked waiters.
 * It is only used for the message: a wrong count never changes what is
 * locked.
 */
#include "home/homelock.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "util/homepath.h"
#include "home/rundir.h"
#include "util/fail.h"
#include "util/io.h"

int homelock_holders(int fd)
{
    struct stat st;
    if (fstat(fd, &st) < 0)
        return -1;
    FILE *f = fopen("/proc/locks", "re");
    if (!f)
        return -1;
    char want[64], line[256];
    snprintf(want, sizeof(want), " %02x:%02x:%llu ", major(st.st_dev), minor(st.st_dev),
             (unsigned long long)st.st_ino);
    int n = 0;
    while (fgets(line, sizeof(line), f))
        if (strstr(line, want) && !strstr(line, "->") && strstr(line, "FLOCK"))
            n++;
    fclose(f);
    return n;
}

static void say_waiting(int fd, int exclusive)
{
    if (!exclusive) {
        fputs("rewind: waiting for rewind gc to finish...\n", stderr);
        return;
    }
    int n = homelock_holders(fd);
    if (n > 0)
        fprintf(stderr,
                "rewind: waiting for %d running rewind process%s (runs, imports, "
                "exports) to finish...\n",
                n, n == 1 ? "" : "es");
    else
        fputs("rewind: waiting for running rewind processes (runs, imports, exports) to "
              "finish...\n",
              stderr);
}

int homelock_take(const char *home, int exclusive, int wait, char *err, size_t errlen)
{
    char path[PATH_MAX];
    if (io_mkdir_p(home) < 0)
        return util_fail(err, errlen, "cannot create %s: %s", home, strerror(errno));
    if (home_path(path, sizeof(path), home, HOME_LOCK, NULL, NULL) < 0)
        return util_fail(err, errlen, "cannot lock %s: %s", home, strerror(errno));
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
        return util_fail(err, errlen, "cannot open %s: %s", path, strerror(errno));
    int op = exclusive ? LOCK_EX : LOCK_SH;
    if (flock(fd, op | LOCK_NB) == 0)
        return fd;
    if (errno == EWOULDBLOCK && wait) {
        say_waiting(fd, exclusive);
        int r;
        while ((r = flock(fd, op)) < 0 && errno == EINTR)
            ;
        if (r == 0)
            return fd;
    }
    int e = errno;
    close(fd);
    errno = e;
    if (e == EWOULDBLOCK)
        return util_fail(
            err, errlen,
            exclusive ? "other rewind processes are using %s" : "rewind gc is running on %s", home);
    return util_fail(err, errlen, "cannot lock %s: %s", path, strerror(e));
}

void homelock_release(int fd)
{
    if (fd >= 0)
        close(fd);
}
