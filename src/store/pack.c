/*
 * pack: open, read, append to, create and list pack files (page store
 * internal; the format is in pack.h, the locking rules in store.c).
 *
 * Invariants:
 *  1. Bytes are only appended under the store's lock, at the pack's size as
 *     fstat sees it then; a failed append is cut back (a crash instead leaves
 *     unreferenced bytes, dead until gc).
 *  2. A pack whose size is below the highest end an index entry claims (the
 *     entry outlived its bytes in an OS crash) is never appended to again, so
 *     the bytes such an entry points at are never written and it stays
 *     ignored; appends roll to the next number instead.
 *  3. Appends go only to a file whose header names it as our pack number.
 */
#include "store/pack.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/bytes.h"
#include "util/check.h"
#include "util/io.h"
#include "util/failpoint.h"

#define PACK_MAGIC "RWSTPACK"
#define PACK_VERSION 1

static void encode_header(uint32_t num, uint8_t *out)
{
    memcpy(out, PACK_MAGIC, 8);
    bytes_put_u32(out + 8, PACK_VERSION);
    bytes_put_u32(out + 12, num);
}

int store_packs_init(struct store_packs *p, const char *store_dir)
{
    memset(p, 0, sizeof(*p));
    p->limit = STORE_PACK_LIMIT;
    size_t n = strlen(store_dir) + sizeof("/packs");
    p->dir = malloc(n);
    if (!p->dir) {
        errno = ENOMEM;
        return -1;
    }
    snprintf(p->dir, n, "%s/packs", store_dir);
    if (mkdir(p->dir, 0755) < 0 && errno != EEXIST)
        return -1;
    return 0;
}

void store_packs_reset(struct store_packs *p)
{
    for (uint32_t i = 0; i < p->nv; i++) {
        if (p->v[i].dirty && fdatasync(p->v[i].fd) < 0) {
            /* Best effort: store_sync can no longer reach this fd. */
        }
        if (p->v[i].fd >= 0)
            close(p->v[i].fd);
        memset(&p->v[i], 0, sizeof(p->v[i]));
        p->v[i].fd = -1;
    }
    p->maxref = 0;
    p->cur = 0;
}

void store_packs_free(struct store_packs *p)
{
    store_packs_reset(p);
    free(p->v);
    free(p->dir);
    memset(p, 0, sizeof(*p));
}

void store_pack_path(const struct store_packs *p, uint32_t num, char *buf, size_t len)
{
    snprintf(buf, len, "%s/%06u.pack", p->dir, num);
}

/* The record of pack num, growing the array; NULL (ENOMEM or ENOSPC). */
static struct store_pack *pack_at(struct store_packs *p, uint32_t num)
{
    if (num < 1 || num > STORE_PACK_MAX_NUM) {
        errno = ENOSPC;
        return NULL;
    }
    if (num >= p->nv) {
        uint32_t nv = p->nv ? p->nv : 16;
        while (nv <= num)
            nv *= 2;
        struct store_pack *v = realloc(p->v, nv * sizeof(*v));
        if (!v) {
            errno = ENOMEM;
            return NULL;
        }
        for (uint32_t i = p->nv; i < nv; i++) {
            memset(&v[i], 0, sizeof(v[i]));
            v[i].fd = -1;
        }
        p->v = v;
        p->nv = nv;
    }
    return &p->v[num];
}

static void refresh_size(struct store_packs *p, uint32_t num, struct store_pack *pk)
{
    struct stat sb;
    char path[4096];
    int rc;
    if (pk->fd >= 0) {
        rc = fstat(pk->fd, &sb);
    } else {
        store_pack_path(p, num, path, sizeof(path));
        rc = stat(path, &sb);
    }
    pk->size = rc == 0 ? (uint64_t)sb.st_size : 0;
    pk->known = 1;
}

int store_pack_note(struct store_packs *p, const struct store_entry *e)
{
    struct store_pack *pk = pack_at(p, e->pack);
    if (!pk)
        return errno == ENOSPC ? 0 : -1;
    uint64_t end = (uint64_t)e->off + e->len;
    if (end > pk->hwm)
        pk->hwm = end;
    if (e->pack > p->maxref)
        p->maxref = e->pack;
    if (!pk->known || end > pk->size)
        refresh_size(p, e->pack, pk); /* others append: look again before ignoring */
    return end <= pk->size;
}

int store_pack_read(struct store_packs *p, uint32_t num, uint32_t off, void *buf, size_t len)
{
    struct store_pack *pk = pack_at(p, num);
    if (!pk)
        return -1;
    if (pk->fd < 0) {
        char path[4096];
        store_pack_path(p, num, path, sizeof(path));
        pk->fd = open(path, O_RDONLY | O_CLOEXEC);
        if (pk->fd < 0)
            return -1;
    }
    return io_pread_exact(pk->fd, buf, len, off);
}

/* Open pack num for appending (creating it with its header); returns 1 if it
 * is ours to append to, 0 if the file there is not our pack num, -1. */
static int open_for_append(struct store_packs *p, uint32_t num, struct store_pack *pk)
{
    if (pk->writable)
        return 1;
    if (pk->fd >= 0)
        close(pk->fd);
    char path[4096];
    store_pack_path(p, num, path, sizeof(path));
    pk->fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (pk->fd < 0)
        return -1;
    pk->known = 0;
    struct stat sb;
    uint8_t want[STORE_PACK_HEADER], got[STORE_PACK_HEADER];
    encode_header(num, want);
    if (fstat(pk->fd, &sb) < 0)
        return -1;
    if (sb.st_size < STORE_PACK_HEADER) {
        /* New, or torn while its header was written: no entry can be in it. */
        if (ftruncate(pk->fd, 0) < 0 || io_pwrite_all(pk->fd, want, sizeof(want), 0) < 0)
            return -1;
    } else {
        if (io_pread_exact(pk->fd, got, sizeof(got), 0) < 0)
            return -1;
        if (memcmp(got, want, sizeof(want)) != 0)
            return 0;
    }
    pk->writable = 1;
    return 1;
}

int store_pack_append_locked(struct store_packs *p, const void *buf, size_t len, uint32_t *num,
                             uint32_t *off)
{
    if (p->cur == 0)
        p->cur = p->maxref ? p->maxref : 1;
    for (;; p->cur++) {
        struct store_pack *pk = pack_at(p, p->cur);
        if (!pk)
            return -1;
        int r = open_for_append(p, p->cur, pk);
        if (r < 0)
            return -1;
        if (r == 0)
            continue;
        struct stat sb;
        if (fstat(pk->fd, &sb) < 0)
            return -1;
        uint64_t size = (uint64_t)sb.st_size;
        pk->size = size;
        pk->known = 1;
        if (size < pk->hwm || (size > STORE_PACK_HEADER && size + len > p->limit))
            continue; /* invariant 2, or full */
        /* Invariant 3: open_for_append found our header in it. */
        RW_ASSERT(pk->writable);
        RW_FAILPOINT("store.append.pack");
        if (io_pwrite_all(pk->fd, buf, len, (off_t)size) < 0) {
            int e = errno;
            if (ftruncate(pk->fd, (off_t)size) < 0) {
                /* Unreferenced bytes: dead until gc (invariant 1). */
            }
            errno = e;
            return -1;
        }
        pk->size = size + len;
        pk->dirty = 1;
        *num = p->cur;
        *off = (uint32_t)size;
        return 0;
    }
}

int store_pack_need_sync(struct store_packs *p, uint32_t num)
{
    struct store_pack *pk = pack_at(p, num);
    if (!pk)
        return -1;
    pk->dirty = 1;
    return 0;
}

int store_packs_sync(struct store_packs *p)
{
    for (uint32_t i = 0; i < p->nv; i++) {
        if (!p->v[i].dirty)
            continue;
        if (p->v[i].fd < 0) { /* named, not yet read: fdatasync needs an fd */
            char path[4096];
            store_pack_path(p, i, path, sizeof(path));
            p->v[i].fd = open(path, O_RDONLY | O_CLOEXEC);
            if (p->v[i].fd < 0 && errno == ENOENT) {
                p->v[i].dirty = 0; /* a gc moved its pages to fsynced packs */
                continue;
            }
            if (p->v[i].fd < 0)
                return -1;
        }
        RW_FAILPOINT("store.sync.pack");
        if (fdatasync(p->v[i].fd) < 0)
            return -1;
        p->v[i].dirty = 0;
    }
    return 0;
}

int store_pack_create(const struct store_packs *p, uint32_t num, int *fd)
{
    char path[4096];
    uint8_t h[STORE_PACK_HEADER];
    if (num < 1 || num > STORE_PACK_MAX_NUM) {
        errno = ENOSPC;
        return -1;
    }
    store_pack_path(p, num, path, sizeof(path));
    *fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (*fd < 0)
        return -1;
    encode_header(num, h);
    if (io_pwrite_all(*fd, h, sizeof(h), 0) < 0) {
        int e = errno;
        close(*fd);
        *fd = -1;
        errno = e;
        return -1;
    }
    return 0;
}

static int cmp_file(const void *a, const void *b)
{
    const struct store_pack_file *x = a, *y = b;
    return x->num < y->num ? -1 : x->num > y->num;
}

int store_pack_list(const struct store_packs *p, struct store_pack_file **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    DIR *d = opendir(p->dir);
    if (!d)
        return -1;
    size_t cap = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        char *end, canon[32], path[4096];
        struct stat sb;
        unsigned long num = strtoul(de->d_name, &end, 10);
        if (end == de->d_name || strcmp(end, ".pack") != 0 || num < 1 || num > STORE_PACK_MAX_NUM)
            continue;
        snprintf(canon, sizeof(canon), "%06lu.pack", num);
        if (strcmp(canon, de->d_name) != 0)
            continue; /* not a name we give (e.g. 1.pack) */
        store_pack_path(p, (uint32_t)num, path, sizeof(path));
        if (stat(path, &sb) < 0)
            continue; /* gone meanwhile */
        if (*n == cap) {
            cap = cap ? 2 * cap : 64;
            struct store_pack_file *v = realloc(*out, cap * sizeof(*v));
            if (!v) {
                closedir(d);
                free(*out);
                *out = NULL;
                *n = 0;
                errno = ENOMEM;
                return -1;
            }
            *out = v;
        }
        (*out)[*n].num = (uint32_t)num;
        (*out)[*n].size = (uint64_t)sb.st_size;
        (*n)++;
    }
    closedir(d);
    if (*n)
        qsort(*out, *n, sizeof(**out), cmp_file);
    return 0;
}

