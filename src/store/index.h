/* index.h - the page store's append-only index file (page store internal).
 *
 * Format (version 1), little-endian, fixed 48-byte records:
 *   header  "RWSTIDX1" | u32 version 1 | u32 entry size 48 | u32 page size 4096 |
 *           u32 hash id 1 (SHA-256) | 20 zero bytes | u32 CRC-32C of bytes 0..43
 *   entry   hash[32] | u32 pack | u32 offset | u16 stored length | u16 flags |
 *           u32 CRC-32C of bytes 0..43
 * An entry says: the page named hash is stored at [offset, offset + length) of
 * packs/<pack>.pack, compressed unless flags has STORE_F_RAW. */
#ifndef REWIND_STORE_INDEX_H
#define REWIND_STORE_INDEX_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "util/hash.h"

#define STORE_INDEX_ENTRY 48
#define STORE_INDEX_HEADER STORE_INDEX_ENTRY

struct store_entry {
    hash256 h;
    uint32_t pack;
    uint32_t off;
    uint16_t len;
    uint16_t flags;
};

struct store_index {
    int fd;
    dev_t dev; /* identity of the file fd has open, to notice a rename over path */
    ino_t ino;
    uint64_t off; /* end of the last good entry read (never past a bad tail) */
    uint8_t *buf; /* read/encode buffer of STORE_INDEX_CHUNK entries */
};

/* What one store_index_read saw. */
struct store_index_scan {
    uint64_t size;     /* file size at the start of the read */
    uint64_t good_end; /* end of the last good entry (or where the read began) */
    uint64_t bad;      /* entries skipped (bad checksum or fields) before good_end */
};

/* Called for each good entry; a negative return stops the read. */
typedef int (*store_entry_fn)(void *ctx, const struct store_entry *e);

/* Open (creating if missing, empty) the index at path into *ix with off 0;
 * returns 0 or -1. */
int store_index_open(struct store_index *ix, const char *path);

/* Close ix (a zeroed ix with fd -1 is fine). */
void store_index_close(struct store_index *ix);

/* Return 1 if path no longer names the file ix has open (gc renamed a new one
 * over it, or it is gone), 0 if it does, -1 on error. */
int store_index_replaced(const struct store_index *ix, const char *path);

/* Check the header: returns 0 if valid (sets off to the first entry if it was
 * 0), 1 if the file is shorter than a header or is a header of zeros (new,
 * or torn at creation), -1 (errno EPROTO) if it is not a version-1 page store
 * index. */
int store_index_check_header(struct store_index *ix);

/* With the store's lock held, make the file a bare header; returns 0 or -1. */
int store_index_init_locked(struct store_index *ix);

/* Call fn(ctx, e) for every good whole entry from byte from to the end of
 * the file and describe the read in *sc; returns 0, or -1 if reading failed
 * or fn stopped it (sc->good_end covers the entries already passed to fn). */
int store_index_read(struct store_index *ix, uint64_t from, store_entry_fn fn, void *ctx,
                     struct store_index_scan *sc);

/* With the lock held and ix->off at the end of everything good, cut any bad
 * or partial tail after ix->off; returns the bytes cut, or -1. */
int64_t store_index_trim_locked(struct store_index *ix);

/* With the lock held and ix->off at the end of everything good, append the n
 * entries at e (trimming a bad tail first) and advance ix->off; returns 0 or
 * -1 (the file is then cut back to where it was). */
int store_index_append_locked(struct store_index *ix, const struct store_entry *e, size_t n);

/* Fsync the index file; returns 0 or -1. */
int store_index_sync(struct store_index *ix);

/* Write a complete index holding the n entries at e to path (truncating) and
 * fsync it; returns 0 or -1. */
int store_index_write_file(const char *path, const struct store_entry *e, size_t n);

#endif
