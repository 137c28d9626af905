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
    int built;       /* 1: mkfs.erofs made it now; 0: found in the cache */
};

/* Progress of a long phase ("hashing", "building image"): fn(ctx, what,
 * done, total) as bytes go by; fn(ctx, NULL, total, total) when it ends. */
struct image_progress {
    void (*fn)(void *ctx, const char *what, uint64_t done, uint64_t total);
    void *ctx;
};

/* Resolve ROOT (dir, tarball or erofs image) to a cached erofs image under cache_dir.
   Returns 0, or -1 with one line (no trailing newline) in err naming the cause. */
int image_prepare(const char *root, const char *cache_dir, struct image *out, char *err,
                  size_t errlen);

/* image_prepare, reporting progress through prog (may be NULL). */
int image_prepare_progress(const char *root, const char *cache_dir,
                           const struct image_progress *prog, struct image *out, char *err,
                           size_t errlen);

/* Return how many times this process has run mkfs.erofs (lets tests and stats see cache hits). */
unsigned long image_mkfs_runs(void);

/* How many files of root directories this process has read to hash them
 * (the file index's misses: lets tests see that an unchanged tree is not read). */
unsigned long image_files_hashed(void);

/* SHA-256 of the file at path, remembered in cache_dir by the file's identity
 * (dev, inode, size, times) so an unchanged kernel is hashed once. Returns 0,
 * or -1 with one line in err. */
int image_hash_file(const char *path, const char *cache_dir, hash256 *out, char *err,
                    size_t errlen);

#endif
