/*
 * usercache: directories of the user's cache that every home shares (the
 * key cache of big files, src/image/image.c invariant 8; the page-name memo
 * of keyframe captures, src/run/kfmemo.c).
 *
 * Invariants:
 *  1. A directory is used only if it belongs to the user, no one else may
 *     write it, and it is not a symbolic link: it is opened without
 *     following a link and checked on that descriptor, and used through
 *     /proc/self/fd/N of the same descriptor, so nothing can be swapped in
 *     between the check and the use.
 *  2. Only absolute locations are used (a relative $REWIND_CACHE,
 *     $XDG_CACHE_HOME or $HOME is ignored).
 */
#include "util/usercache.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/io.h"

int usercache_open(const char *sub, char *path, size_t pathlen)
{
    const char *rc = getenv("REWIND_CACHE"), *xdg = getenv("XDG_CACHE_HOME");
    const char *home = getenv("HOME");
    char base[PATH_MAX], dir[PATH_MAX];
    int n;
    if (rc && rc[0] == '/') /* invariant 2 */
        n = snprintf(base, sizeof base, "%s", rc);
    else if (xdg && xdg[0] == '/')
        n = snprintf(base, sizeof base, "%s/rewind", xdg);
    else if (home && home[0] == '/')
        n = snprintf(base, sizeof base, "%s/.cache/rewind", home);
    else
        return -1;
    if (n < 0 || (size_t)n >= sizeof base || !sub[0] || strchr(sub, '/'))
        return -1;
    n = snprintf(dir, sizeof dir, "%s/%s", base, sub);
    if (n < 0 || (size_t)n >= sizeof dir)
        return -1;
    if (io_mkdir_p(base) < 0 || (mkdir(dir, 0700) < 0 && errno != EEXIST))
        return -1;
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC); /* invariant 1 */
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0 || st.st_uid != geteuid() || (st.st_mode & 022)) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    n = snprintf(path, pathlen, "/proc/self/fd/%d", fd);
    if (n < 0 || (size_t)n >= pathlen || access(path, W_OK) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}
