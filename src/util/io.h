/*
 * io: the read/write loops every module uses on file descriptors. They
 * retry on EINTR and short counts, so a writer sees all its bytes written
 * or -1 with errno set (a 0-byte write is EIO), and a reader sees all the
 * bytes it asked for, the shorter count at end of file, or -1 with errno
 * (io_pread_exact makes an end of file before n bytes EIO).
 * Once the flag given to io_set_abort is set, an interrupted loop returns
 * -1 with errno EINTR instead of retrying.
 */
#ifndef REWIND_UTIL_IO_H
#define REWIND_UTIL_IO_H

#include <stddef.h>
#include <signal.h>
#include <stdint.h>
#include <sys/types.h>

/* The abort flag every loop checks on EINTR (NULL: always retry). A run
 * sets its caller's flag for its life (src/run/ctx.c). */
void io_set_abort(volatile sig_atomic_t *flag);

/* Write all n bytes at p to fd. 0, or -1 with errno (EIO for a 0 write). */
int io_write_all(int fd, const void *p, size_t n);
/* Write all n bytes at offset off. 0 or -1 with errno. */
int io_pwrite_all(int fd, const void *p, size_t n, off_t off);
/* Read exactly n bytes. Returns n, the shorter count at end of file, or -1
 * with errno. */
ssize_t io_read_full(int fd, void *p, size_t n);
/* Read exactly n bytes at offset off. Returns n, the shorter count at end
 * of file, or -1 with errno. */
ssize_t io_pread_full(int fd, void *p, size_t n, off_t off);
/* Read exactly n bytes at offset off: 0, or -1 with errno (EIO if the file
 * ends first). */
int io_pread_exact(int fd, void *p, size_t n, off_t off);
/* Read a whole file of at most max bytes into a malloc'd buffer with a NUL
 * after it; *len gets its length. NULL with errno (EFBIG past max). */
char *io_read_file(const char *path, size_t max, size_t *len);
/* fsync the directory at path, so the names created, renamed or removed in
 * it are durable. 0 or -1 with errno. */
int io_fsync_dir(const char *path);
/* Write data to path atomically: a temp file beside it, fsync, rename, and
 * an fsync of the directory. 0 or -1 with errno. */
int io_write_file_atomic(const char *path, const void *data, size_t n);

/* mkdir -p path with mode 0755: every missing directory on the way made,
 * existing ones fine. 0, or -1 with errno (ENOTDIR: path is there and is
 * not a directory; ENAMETOOLONG: longer than PATH_MAX). */
int io_mkdir_p(const char *path);

#endif
