/*
 * index: encode, read, trim and append the page store's index file (page
 * store internal; the format is in index.h, the locking rules in store.c).
 *
 * Invariants:
 *  1. An entry is good only if its CRC-32C matches and its fields are in
 *     range (pack >= 1, offset past the pack header, length 1..4096, raw pages
 *     exactly 4096, no unknown flag); anything else is skipped, never trusted.
 *  2. ix->off only ever moves to the end of a good entry, so it never points
 *     past a tail that a locked trim may cut, and a trim never cuts a good
 *     entry (it cuts from ix->off after a locked read of everything).
 *  3. Appends are one write(2) of whole entries to an O_APPEND file under the
 *     lock: other readers see an entry either whole (Linux raises i_size only
 *     after copying the bytes) or not at all (a partial tail, not consumed).
 */
#include "store/index.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store/codec.h"
#include "store/pack.h"
#include "store/store.h"
#include "util/bytes.h"
#include "util/check.h"
#include "util/crc.h"
#include "util/io.h"
#include "util/failpoint.h"

#define STORE_INDEX_CHUNK 1365 /* entries per read: just under 64 KiB */
#define INDEX_MAGIC "RWSTIDX1"
#define INDEX_VERSION 1
#define INDEX_HASH_SHA256 1

/* 1 if e's fields are in range (invariant 1; the CRC is checked apart). */
static int entry_fields_ok(const struct store_entry *e)
{
    if (e->pack < 1 || e->pack > STORE_PACK_MAX_NUM || e->off < STORE_PACK_HEADER)
        return 0;
    if (e->len < 1 || e->len > STORE_PAGE_SIZE || (e->flags & ~(STORE_F_RAW | STORE_F_SUM)) ||
        (e->flags & STORE_F_RAW && e->flags & STORE_F_SUM))
        return 0;
    return !(e->flags & STORE_F_RAW) || e->len == STORE_PAGE_SIZE;
}

static void encode_entry(const struct store_entry *e, uint8_t *out)
{
    RW_ASSERT(entry_fields_ok(e)); /* we never write an entry we would skip */
    memcpy(out, e->h.b, 32);
    bytes_put_u32(out + 32, e->pack);
    bytes_put_u32(out + 36, e->off);
    bytes_put_u16(out + 40, e->len);
    bytes_put_u16(out + 42, e->flags);
    bytes_put_u32(out + 44, crc_32c(0, out, 44));
}

/* Decode one entry; returns 1 if it is good (invariant 1), else 0. */
static int decode_entry(const uint8_t *in, struct store_entry *e)
{
    if (bytes_get_u32(in + 44) != crc_32c(0, in, 44))
        return 0;
    memcpy(e->h.b, in, 32);
    e->pack = bytes_get_u32(in + 32);
    e->off = bytes_get_u32(in + 36);
    e->len = bytes_get_u16(in + 40);
    e->flags = bytes_get_u16(in + 42);
    return entry_fields_ok(e);
}

/* ix->off is the header's end or the end of a whole entry (invariant 2). */
static int off_on_boundary(const struct store_index *ix)
{
    return ix->off >= STORE_INDEX_HEADER && (ix->off - STORE_INDEX_HEADER) % STORE_INDEX_ENTRY == 0;
}

/* Encode the n entries at e through buf (STORE_INDEX_CHUNK entries of room)
 * and write them to fd, adding each chunk's bytes to *done once written.
 * 0 or -1 (*done then covers the chunks written before the failure). */
static int write_entries(int fd, uint8_t *buf, const struct store_entry *e, size_t n,
                         uint64_t *done)
{
    while (n > 0) {
        size_t k = n < STORE_INDEX_CHUNK ? n : STORE_INDEX_CHUNK;
        for (size_t i = 0; i < k; i++)
            encode_entry(&e[i], buf + i * STORE_INDEX_ENTRY);
        if (io_write_all(fd, buf, k * STORE_INDEX_ENTRY) < 0)
            return -1;
        *done += k * STORE_INDEX_ENTRY;
        e += k;
        n -= k;
    }
    return 0;
}

static void encode_header(uint8_t *out)
{
    memset(out, 0, STORE_INDEX_HEADER);
    memcpy(out, INDEX_MAGIC, 8);
    bytes_put_u32(out + 8, INDEX_VERSION);
    bytes_put_u32(out + 12, STORE_INDEX_ENTRY);
    bytes_put_u32(out + 16, STORE_PAGE_SIZE);
    bytes_put_u32(out + 20, INDEX_HASH_SHA256);
    bytes_put_u32(out + 44, crc_32c(0, out, 44));
}

int store_index_open(struct store_index *ix, const char *path)
{
    memset(ix, 0, sizeof(*ix));
    ix->fd = -1;
    ix->buf = malloc((size_t)STORE_INDEX_CHUNK * STORE_INDEX_ENTRY);
    if (!ix->buf) {
        errno = ENOMEM;
        return -1;
    }
    ix->fd = open(path, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    struct stat sb;
    if (ix->fd < 0 || fstat(ix->fd, &sb) < 0) {
        int e = errno;
        store_index_close(ix);
        errno = e;
        return -1;
    }
    ix->dev = sb.st_dev;
    ix->ino = sb.st_ino;
    return 0;
}

void store_index_close(struct store_index *ix)
{
    if (ix->fd >= 0)
        close(ix->fd);
    free(ix->buf);
    memset(ix, 0, sizeof(*ix));
    ix->fd = -1;
}

int store_index_replaced(const struct store_index *ix, const char *path)
{
    struct stat sb;
    if (stat(path, &sb) < 0)
        return errno == ENOENT ? 1 : -1;
    /* ix holds the old file open, so its inode cannot be reused by a new one. */
    return sb.st_dev != ix->dev || sb.st_ino != ix->ino;
}

int store_index_check_header(struct store_index *ix)
{
    uint8_t got[STORE_INDEX_HEADER], want[STORE_INDEX_HEADER];
    ssize_t r = io_pread_full(ix->fd, got, sizeof(got), 0);
    if (r < 0)
        return -1;
    if (r < (ssize_t)sizeof(got))
        return 1;
    static const uint8_t zeros[STORE_INDEX_HEADER];
    struct stat sb;
    if (memcmp(got, zeros, sizeof(got)) == 0 && fstat(ix->fd, &sb) == 0 &&
        sb.st_size == STORE_INDEX_HEADER)
        return 1; /* created, then an OS crash lost the header's bytes */
    encode_header(want);
    if (memcmp(got, want, sizeof(got)) != 0) {
        errno = EPROTO;
        return -1;
    }
    if (ix->off < STORE_INDEX_HEADER)
        ix->off = STORE_INDEX_HEADER;
    return 0;
}

int store_index_init_locked(struct store_index *ix)
{
    uint8_t h[STORE_INDEX_HEADER];
    encode_header(h);
    if (ftruncate(ix->fd, 0) < 0 || io_write_all(ix->fd, h, sizeof(h)) < 0)
        return -1;
    ix->off = STORE_INDEX_HEADER;
    return 0;
}

int store_index_read(struct store_index *ix, uint64_t from, store_entry_fn fn, void *ctx,
                     struct store_index_scan *sc)
{
    struct stat sb;
    RW_ASSERT(from >= STORE_INDEX_HEADER && (from - STORE_INDEX_HEADER) % STORE_INDEX_ENTRY == 0);
    memset(sc, 0, sizeof(*sc));
    sc->good_end = from;
    if (fstat(ix->fd, &sb) < 0)
        return -1;
    sc->size = (uint64_t)sb.st_size;
    uint64_t pos = from, pending_bad = 0;
    while (pos + STORE_INDEX_ENTRY <= sc->size) {
        uint64_t want = (sc->size - pos) / STORE_INDEX_ENTRY;
        if (want > STORE_INDEX_CHUNK)
            want = STORE_INDEX_CHUNK;
        ssize_t r = io_pread_full(ix->fd, ix->buf, want * STORE_INDEX_ENTRY, (off_t)pos);
        if (r < 0)
            return -1;
        size_t got = (size_t)r / STORE_INDEX_ENTRY;
        if (got == 0)
            break; /* cut under us by a locked trim: nothing good was there */
        for (size_t i = 0; i < got; i++, pos += STORE_INDEX_ENTRY) {
            struct store_entry e;
            if (!decode_entry(ix->buf + i * STORE_INDEX_ENTRY, &e)) {
                pending_bad++;
                continue;
            }
            if (fn && fn(ctx, &e) < 0)
                return -1;
            sc->bad += pending_bad;
            pending_bad = 0;
            sc->good_end = pos + STORE_INDEX_ENTRY;
        }
    }
    return 0;
}

int64_t store_index_trim_locked(struct store_index *ix)
{
    RW_ASSERT(off_on_boundary(ix)); /* a trim never cuts a good entry */
    struct stat sb;
    if (fstat(ix->fd, &sb) < 0)
        return -1;
    if ((uint64_t)sb.st_size <= ix->off)
        return 0;
    if (ftruncate(ix->fd, (off_t)ix->off) < 0)
        return -1;
    return (int64_t)((uint64_t)sb.st_size - ix->off);
}

int store_index_append_locked(struct store_index *ix, const struct store_entry *e, size_t n)
{
    RW_ASSERT(off_on_boundary(ix));
    struct stat sb;
    if (fstat(ix->fd, &sb) < 0)
        return -1;
    if ((uint64_t)sb.st_size < ix->off) {
        errno = EIO; /* shorter than what we read: not the file we think it is */
        return -1;
    }
    if ((uint64_t)sb.st_size > ix->off && ftruncate(ix->fd, (off_t)ix->off) < 0)
        return -1; /* a bad tail: cut it so entries stay on boundaries */
    RW_FAILPOINT("store.append.index");
    if (write_entries(ix->fd, ix->buf, e, n, &ix->off) < 0) {
        int err = errno;
        if (ftruncate(ix->fd, (off_t)ix->off) < 0) {
            /* Left as a tail the next locked trim cuts (invariant 2). */
        }
        errno = err;
        return -1;
    }
    RW_ASSERT(off_on_boundary(ix));
    return 0;
}

int store_index_sync(struct store_index *ix)
{
    RW_FAILPOINT("store.sync.index");
    return fdatasync(ix->fd);
}

int store_index_write_file(const char *path, const struct store_entry *e, size_t n)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return -1;
    uint8_t *buf = malloc((size_t)STORE_INDEX_CHUNK * STORE_INDEX_ENTRY);
    int rc = -1;
    if (!buf) {
        errno = ENOMEM;
        goto out;
    }
    encode_header(buf);
    if (io_write_all(fd, buf, STORE_INDEX_HEADER) < 0)
        goto out;
    uint64_t done = STORE_INDEX_HEADER;
    if (write_entries(fd, buf, e, n, &done) < 0)
        goto out;
    rc = fsync(fd);
out:;
    int err = errno;
    free(buf);
    close(fd);
    errno = err;
    return rc;
}
