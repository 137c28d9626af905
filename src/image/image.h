/* image.h - turn a run's root filesystem (directory, tarball or erofs image)
 * into a content-addressed erofs image that the guest mounts read-only. */
#ifndef REWIND_IMAGE_IMAGE_H
#define REWIND_IMAGE_IMAGE_H

#include <stddef.h>
#include <stdint.h>

#include "util/hash.h"

struct image {
    char path[4096]; /* absolute path of the erofs image to attach */
    hash256 hash;    /* SHA-256 of the image's bytes */
    char hex[65];    /* hash as lowercase hex */
    uint64_t size;   /* image size in bytes */
};

/* Resolve ROOT (dir, tarball or erofs image) to a cached erofs image under cache_dir.
   Returns 0, or -1 with one line (no trailing newline) in err naming the cause. */
int image_prepare(const char *root, const char *cache_dir, struct image *out, char *err,
                  size_t errlen);

/* Return how many times this process has run mkfs.erofs (lets tests and stats see cache hits). */
unsigned long image_mkfs_runs(void);

/* SHA-256 of the file at path, remembered in cache_dir by the file's identity
 * (dev, inode, size, times) so an unchanged kernel is hashed once. Returns 0,
 * or -1 with one line in err. */
int image_hash_file(const char *path, const char *cache_dir, hash256 *out, char *err,
                    size_t errlen);

#endif
