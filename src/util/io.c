/*
 * io: see io.h.
 */
#include "util/io.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/check.h"

/* Set by the caller's signal handler (--timeout, SIGINT): a loop that a
 * signal interrupts gives up instead of retrying (a writer blocked on a full
 * pipe must not outlive the run's wall-time limit). */
static volatile sig_atomic_t *io_abort_flag;

void io_set_abort(volatile sig_atomic_t *flag)
{
    io_abort_flag = flag;
}

/* An EINTR to retry: only while no abort is asked for. */
static int io_retry(void)
{
    return errno == EINTR && !(io_abort_flag && *io_abort_flag);
}

/* The one write loop: all n bytes, at off if off >= 0, else at the file
 * position. A 0-byte write is EIO, so a full device cannot spin us. */
static int write_loop(int fd, const uint8_t *b, size_t n, off_t off)
{
    while (n > 0) {
        ssize_t w = off < 0 ? write(fd, b, n) : pwrite(fd, b, n, off);
        if (w < 0 && io_retry())
            continue;
        if (w < 0)
            return -1;
        if (w == 0) {
            errno = EIO;
            return -1;
        }
        b += w;
        n -= (size_t)w;
        if (off >= 0)
            off += w;
    }
    return 0;
}

/* The one read loop: n bytes or up to end of file, at off if off >= 0. */
static ssize_t read_loop(int fd, uint8_t *b, size_t n, off_t off)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r =
            off < 0 ? read(fd, b + got, n - got) : pread(fd, b + got, n - got, off + (off_t)got);
        if (r < 0 && io_retry())
            continue;
        if (r < 0)
            return -1;
        if (r == 0)
            break;
        got += (size_t)r;
    }
    return (ssize_t)got;
}

int io_write_all(int fd, const void *p, size_t n)
{
    return write_loop(fd, p, n, -1);
}

int io_pwrite_all(int fd, const void *p, size_t n, off_t off)
{
    RW_ASSERT(off >= 0);
    return write_loop(fd, p, n, off);
}

ssize_t io_read_full(int fd, void *p, size_t n)
{
    return read_loop(fd, p, n, -1);
}

ssize_t io_pread_full(int fd, void *p, size_t n, off_t off)
{
    RW_ASSERT(off >= 0);
    return read_loop(fd, p, n, off);
}

int io_pread_exact(int fd, void *p, size_t n, off_t off)
{
    ssize_t r = io_pread_full(fd, p, n, off);
    if (r < 0)
        return -1;
    if ((size_t)r != n) {
        errno = EIO;
        return -1;
    }
    return 0;
}

char *io_read_file(const char *path, size_t max, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    struct stat st;
    if (fstat(fd, &st) < 0) {
        close(fd);
        return NULL;
    }
    if (st.st_size < 0 || (uint64_t)st.st_size > max) {
        close(fd);
        errno = EFBIG;
        return NULL;
    }
    size_t n = (size_t)st.st_size;
    char *buf = malloc(n + 1);
    if (!buf) {
        close(fd);
        errno = ENOMEM;
        return NULL;
    }
    ssize_t r = io_read_full(fd, buf, n);
    int saved = errno;
    close(fd);
    if (r < 0 || (size_t)r != n) {
        free(buf);
        errno = r < 0 ? saved : EIO; /* the file shrank under us */
        return NULL;
    }
    buf[n] = 0;
    if (len)
        *len = n;
    return buf;
}

int io_write_file_atomic(const char *path, const void *data, size_t n)
{
    char tmp[PATH_MAX];
    if (snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long)getpid()) >= (int)sizeof(tmp)) {
        errno = ENAMETOOLONG;
        return -1;
    }
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return -1;
    if (io_write_all(fd, data, n) < 0 || fsync(fd) < 0) {
        int saved = errno;
        close(fd);
        unlink(tmp);
        errno = saved;
        return -1;
    }
    close(fd);
    if (rename(tmp, path) < 0) {
        int saved = errno;
        unlink(tmp);
        errno = saved;
        return -1;
    }
    char dir[PATH_MAX];
    snprintf(dir, sizeof(dir), "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash == dir)
        slash[1] = 0;
    else if (slash)
        *slash = 0;
    else
        snprintf(dir, sizeof(dir), ".");
    return io_fsync_dir(dir);
}

int io_fsync_dir(const char *path)
{
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    int rc = fsync(fd);
    int e = errno;
    close(fd);
    errno = e;
    return rc;
}

int io_mkdir_p(const char *path)
{
    char tmp[PATH_MAX];
    if (snprintf(tmp, sizeof tmp, "%s", path) >= (int)sizeof tmp) {
        errno = ENAMETOOLONG;
        return -1;
    }
    for (char *p = tmp + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        int r = mkdir(tmp, 0755);
        *p = '/';
        if (r < 0 && errno != EEXIST)
            return -1;
    }
    if (mkdir(tmp, 0755) < 0 && errno != EEXIST)
        return -1;
    struct stat st;
    if (stat(tmp, &st) < 0)
        return -1;
    if (!S_ISDIR(st.st_mode)) {
        errno = ENOTDIR;
        return -1;
    }
    return 0;
}
