/* imgindex.h - the per-root index of what each node of a root directory
 * holds (content hash of a file, target hash of a symlink, digest of its
 * xattrs), keyed by the node's metadata, so that an unchanged node is never
 * read again (its stat is enough) (as git's index keys files by path, size, mtime, ctime, inode and
 * mode). Stored as $REWIND_HOME/images/index/<hash of the root's real path>;
 * the format is in imgindex.c. The file is untrusted: anything malformed is
 * an empty index (every file is hashed again) and is rewritten. */
#ifndef REWIND_IMAGE_IMGINDEX_H
#define REWIND_IMAGE_IMGINDEX_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "util/hash.h"

struct imgindex_ent {
    char *path; /* relative to the root, "" for the root itself */
    uint64_t dev, ino, mode, size, mtime_s, mtime_ns, ctime_s, ctime_ns;
    hash256 hash;   /* regular file: SHA-256 of its bytes; symlink: of its target; else 0 */
    hash256 xattrs; /* digest of its xattrs (0: none) */
    int used;       /* looked up or added during this process: kept on save */
};

struct imgindex {
    char file[4200];        /* where it is stored; "" when not stored */
    struct imgindex_ent *v; /* [0, nsorted) loaded and sorted by path; then added */
    size_t n, cap, nsorted;
    int changed;   /* something to save */
    int64_t now_s; /* wall time when opened: see invariant 3 in imgindex.c */
};

/* Open the index of the root directory root_real (a real path) in home.
 * A missing or malformed file gives an empty index. -1 (errno) only when
 * the path cannot be built or memory runs out. */
int imgindex_open(struct imgindex *ix, const char *home, const char *root_real);

/* The hashes of rel if st matches its entry exactly: 1 hit, 0 miss. (An
 * xattr change or a new symlink target changes ctime or the inode.) */
int imgindex_find(struct imgindex *ix, const char *rel, const struct stat *st, hash256 *data,
                  hash256 *xattrs);

/* Remember rel's hashes for st (unless st is too fresh to trust). 0 or -1 (ENOMEM). */
int imgindex_put(struct imgindex *ix, const char *rel, const struct stat *st, const hash256 *data,
                 const hash256 *xattrs);

/* Write the entries used or added since open, atomically. 0 or -1 (errno). */
int imgindex_save(struct imgindex *ix);

void imgindex_close(struct imgindex *ix);

#endif
