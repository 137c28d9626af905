/*
 * initrd: an in-memory cpio "newc" archive, the guest's initramfs. It
 * carries rewind-init as /init and the job description as /job. Entries get
 * fixed inode numbers, uid/gid 0 and mtime 0, so the same inputs give the
 * same bytes.
 */
#ifndef REWIND_VMM_INITRD_H
#define REWIND_VMM_INITRD_H

#include <stddef.h>
#include <stdint.h>

struct initrd {
    uint8_t *data;
    size_t size, cap;
    uint32_t ino;
};

/* Append a directory / a regular file. Return 0 or -1 (out of memory). */
int initrd_add_dir(struct initrd *c, const char *name, uint32_t mode);
int initrd_add_file(struct initrd *c, const char *name, uint32_t mode, const void *data,
                    size_t len);
/* Append a file read from the host path. Returns 0 or -1 with errno. */
int initrd_add_host_file(struct initrd *c, const char *name, uint32_t mode, const char *path);
/* Append the trailer. Returns 0 or -1. */
int initrd_finish(struct initrd *c);
void initrd_free(struct initrd *c);

#endif
