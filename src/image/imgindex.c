/* imgindex.c - see imgindex.h.
 *
 * File format (little-endian), all of it covered by the trailing hash:
 *   "RWIDX002"                 8 bytes
 *   u64 count
 *   count entries:  u32 len, len bytes of path (no NUL),
 *                   u64 dev, ino, mode, size, mtime_s, mtime_ns, ctime_s,
 *                   ctime_ns, 32 bytes data hash, 32 bytes xattr digest
 *   32 bytes: SHA-256 of everything before
 *
 * Invariants:
 *  1. A loaded entry is only used if the file's (ino, mode, size, mtime,
 *     ctime) equal the entry's exactly; anything else is a miss and the file
 *     is hashed again. The device number is kept but not compared: it
 *     changes across reboots for network and 9p mounts, while an index
 *     belongs to one root path anyway.
 *  2. The file is untrusted: a bad magic, count, length, path or trailing
 *     hash makes the whole index empty (never a partial or wrong hash).
 *  3. Racy entries are not stored: a file whose mtime or ctime is within
 *     IMGINDEX_RACY_S of the time the index was opened may still change
 *     within the same timestamp tick, so it is hashed again next time.
 *  4. The index is written to a temp name and renamed: a reader sees the
 *     old or the new file, never half of one.
 */
#include "image/imgindex.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util/homepath.h"
#include "util/bytes.h"
#include "util/check.h"
#include "util/io.h"

#define IMGINDEX_MAGIC "RWIDX002"
#define IMGINDEX_MAX_FILE (1ull << 30)
#define IMGINDEX_ENT_FIXED (8 * 8 + 64)
#define IMGINDEX_RACY_S 2

static int ent_cmp(const void *a, const void *b)
{
    return strcmp(((const struct imgindex_ent *)a)->path, ((const struct imgindex_ent *)b)->path);
}

static void drop_all(struct imgindex *ix)
{
    for (size_t i = 0; i < ix->n; i++)
        free(ix->v[i].path);
    free(ix->v);
    ix->v = NULL;
    ix->n = ix->cap = ix->nsorted = 0;
}

static int grow(struct imgindex *ix)
{
    if (ix->n < ix->cap)
        return 0;
    size_t cap = ix->cap ? 2 * ix->cap : 256;
    void *p = realloc(ix->v, cap * sizeof *ix->v);
    if (!p)
        return -1;
    ix->v = p;
    ix->cap = cap;
    return 0;
}

static void fill_meta(struct imgindex_ent *e, const struct stat *st)
{
    e->dev = (uint64_t)st->st_dev;
    e->ino = (uint64_t)st->st_ino;
    e->mode = (uint64_t)st->st_mode;
    e->size = (uint64_t)st->st_size;
    e->mtime_s = (uint64_t)st->st_mtim.tv_sec;
    e->mtime_ns = (uint64_t)st->st_mtim.tv_nsec;
    e->ctime_s = (uint64_t)st->st_ctim.tv_sec;
    e->ctime_ns = (uint64_t)st->st_ctim.tv_nsec;
}

/* Parse buf (len bytes) into ix; 0, or -1 if malformed (invariant 2). */
static int parse(struct imgindex *ix, const uint8_t *buf, size_t len)
{
    if (len < 8 + 8 + 32 || memcmp(buf, IMGINDEX_MAGIC, 8))
        return -1;
    hash256 h;
    hash_buf(buf, len - 32, &h);
    if (memcmp(h.b, buf + len - 32, 32))
        return -1;
    size_t end = len - 32, off = 8;
    uint64_t count = bytes_get_u64(buf + off);
    off += 8;
    if (count > (end - off) / (4 + IMGINDEX_ENT_FIXED))
        return -1;
    for (uint64_t i = 0; i < count; i++) {
        if (end - off < 4)
            return -1;
        uint32_t plen = bytes_get_u32(buf + off);
        off += 4;
        if (plen >= PATH_MAX || end - off < (size_t)plen + IMGINDEX_ENT_FIXED ||
            memchr(buf + off, 0, plen))
            return -1;
        if (grow(ix) < 0)
            return -1;
        struct imgindex_ent *e = &ix->v[ix->n];
        memset(e, 0, sizeof *e);
        if (!(e->path = strndup((const char *)buf + off, plen)))
            return -1;
        ix->n++;
        off += plen;
        uint64_t *f[] = {&e->dev,     &e->ino,      &e->mode,    &e->size,
                         &e->mtime_s, &e->mtime_ns, &e->ctime_s, &e->ctime_ns};
        for (size_t k = 0; k < 8; k++, off += 8)
            *f[k] = bytes_get_u64(buf + off);
        memcpy(e->hash.b, buf + off, 32);
        memcpy(e->xattrs.b, buf + off + 32, 32);
        off += 64;
    }
    if (off != end)
        return -1;
    qsort(ix->v, ix->n, sizeof *ix->v, ent_cmp);
    for (size_t i = 1; i < ix->n; i++)
        if (!strcmp(ix->v[i - 1].path, ix->v[i].path))
            return -1; /* one entry per path */
    ix->nsorted = ix->n;
    return 0;
}

int imgindex_open(struct imgindex *ix, const char *home, const char *root_real)
{
    memset(ix, 0, sizeof *ix);
    ix->now_s = (int64_t)time(NULL);
    char name[65];
    hash256 h;
    hash_buf(root_real, strlen(root_real), &h);
    hash_hex(&h, name);
    if (home_path(ix->file, sizeof ix->file, home, HOME_IMGINDEX, name, NULL) < 0)
        return -1;
    size_t len = 0;
    uint8_t *buf = (uint8_t *)io_read_file(ix->file, IMGINDEX_MAX_FILE, &len);
    if (!buf)
        return 0; /* missing or unreadable: empty */
    if (parse(ix, buf, len) < 0) {
        drop_all(ix);
        ix->changed = 1; /* rewrite the bad file (invariant 2) */
    }
    free(buf);
    return 0;
}

static struct imgindex_ent *lookup(struct imgindex *ix, const char *rel)
{
    struct imgindex_ent key = {.path = (char *)rel};
    struct imgindex_ent *e =
        ix->nsorted ? bsearch(&key, ix->v, ix->nsorted, sizeof *ix->v, ent_cmp) : NULL;
    if (e)
        return e;
    for (size_t i = ix->nsorted; i < ix->n; i++) /* added this time (the re-walk) */
        if (!strcmp(ix->v[i].path, rel))
            return &ix->v[i];
    return NULL;
}

int imgindex_find(struct imgindex *ix, const char *rel, const struct stat *st, hash256 *data,
                  hash256 *xattrs)
{
    struct imgindex_ent *e = lookup(ix, rel);
    if (!e)
        return 0;
    struct imgindex_ent now;
    fill_meta(&now, st);
    if (e->ino != now.ino || e->mode != now.mode || e->size != now.size ||
        e->mtime_s != now.mtime_s || e->mtime_ns != now.mtime_ns || e->ctime_s != now.ctime_s ||
        e->ctime_ns != now.ctime_ns)
        return 0; /* invariant 1 */
    e->used = 1;
    *data = e->hash;
    *xattrs = e->xattrs;
    return 1;
}

int imgindex_put(struct imgindex *ix, const char *rel, const struct stat *st, const hash256 *data,
                 const hash256 *xattrs)
{
    if ((int64_t)st->st_mtim.tv_sec >= ix->now_s - IMGINDEX_RACY_S ||
        (int64_t)st->st_ctim.tv_sec >= ix->now_s - IMGINDEX_RACY_S)
        return 0; /* invariant 3 */
    struct imgindex_ent *e = lookup(ix, rel);
    if (!e) {
        if (grow(ix) < 0)
            return -1;
        e = &ix->v[ix->n];
        memset(e, 0, sizeof *e);
        if (!(e->path = strdup(rel)))
            return -1;
        ix->n++;
    }
    fill_meta(e, st);
    e->hash = *data;
    e->xattrs = *xattrs;
    e->used = 1;
    ix->changed = 1;
    return 0;
}

/* The directories above file. 0 or -1 with errno. */
static int mkdirs_for(const char *file)
{
    char dir[4200];
    if (snprintf(dir, sizeof dir, "%s", file) >= (int)sizeof dir) {
        errno = ENAMETOOLONG;
        return -1;
    }
    char *slash = strrchr(dir, '/');
    if (!slash || slash == dir)
        return 0;
    *slash = 0;
    return io_mkdir_p(dir);
}

int imgindex_save(struct imgindex *ix)
{
    size_t keep = 0, bytes = 8 + 8 + 32;
    for (size_t i = 0; i < ix->n; i++) {
        if (!ix->v[i].used)
            ix->changed = 1; /* a file gone from the tree: drop it */
        else {
            keep++;
            bytes += 4 + strlen(ix->v[i].path) + IMGINDEX_ENT_FIXED;
        }
    }
    if (!ix->changed || !ix->file[0])
        return 0;
    uint8_t *buf = malloc(bytes);
    if (!buf)
        return -1;
    size_t off = 0;
    memcpy(buf, IMGINDEX_MAGIC, 8);
    bytes_put_u64(buf + 8, keep);
    off = 16;
    for (size_t i = 0; i < ix->n; i++) {
        const struct imgindex_ent *e = &ix->v[i];
        if (!e->used)
            continue;
        uint32_t plen = (uint32_t)strlen(e->path);
        bytes_put_u32(buf + off, plen);
        memcpy(buf + off + 4, e->path, plen);
        off += 4 + plen;
        const uint64_t f[] = {e->dev,     e->ino,      e->mode,    e->size,
                              e->mtime_s, e->mtime_ns, e->ctime_s, e->ctime_ns};
        for (size_t k = 0; k < 8; k++, off += 8)
            bytes_put_u64(buf + off, f[k]);
        memcpy(buf + off, e->hash.b, 32);
        memcpy(buf + off + 32, e->xattrs.b, 32);
        off += 64;
    }
    hash256 h;
    hash_buf(buf, off, &h);
    memcpy(buf + off, h.b, 32);
    off += 32;
    RW_ASSERT(off == bytes); /* the size computed above is what was written */
    int rc = mkdirs_for(ix->file) < 0 ? -1 : io_write_file_atomic(ix->file, buf, off);
    free(buf);
    if (rc == 0)
        ix->changed = 0;
    return rc;
}

void imgindex_close(struct imgindex *ix)
{
    drop_all(ix);
}
