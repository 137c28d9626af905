/* pack.h - the page store's pack files (page store internal).
 *
 * packs/NNNNNN.pack: a 16-byte header ("RWSTPACK" | u32 version 1 | u32 pack
 * number) then stored pages back to back, each found only through the index.
 * Packs are append-only; a new one is started when the next append would
 * pass the limit (1 GiB). */
#ifndef REWIND_STORE_PACK_H
#define REWIND_STORE_PACK_H

#include <stddef.h>
#include <stdint.h>

#include "store/index.h"

#define STORE_PACK_HEADER 16
#define STORE_PACK_MAX_NUM 999999u
#define STORE_PACK_LIMIT (1ull << 30)

struct store_pack {
    int fd;           /* -1 until first used */
    uint8_t writable; /* fd is open read-write and the header was checked */
    uint8_t known;    /* size holds a fresh enough stat */
    uint8_t dirty;    /* appended to since the last store_packs_sync */
    uint64_t size;    /* last known size (0 if missing) */
    uint64_t hwm;     /* highest end any index entry claims in this pack */
};

struct store_packs {
    char *dir;            /* <store>/packs */
    struct store_pack *v; /* indexed by pack number, nv of them */
    uint32_t nv;
    uint32_t maxref; /* highest pack number an index entry names */
    uint32_t cur;    /* pack appends go to; 0 until the first append */
    uint64_t limit;  /* roll size */
};

/* A pack file found on disk. */
struct store_pack_file {
    uint32_t num;
    uint64_t size;
};

/* Set up p for <store_dir>/packs, creating that directory; returns 0 or -1. */
int store_packs_init(struct store_packs *p, const char *store_dir);

/* Close every pack (fdatasyncing those appended to) and forget all sizes and
 * claims, as after the index was replaced; the limit is kept. */
void store_packs_reset(struct store_packs *p);

/* Free p (a zeroed p is fine). */
void store_packs_free(struct store_packs *p);

/* Write the path of pack num into buf (len bytes). */
void store_pack_path(const struct store_packs *p, uint32_t num, char *buf, size_t len);

/* Record that index entry e claims bytes of its pack, and return 1 if those
 * bytes are there, 0 if not (pack missing or too short), -1 (ENOMEM). */
int store_pack_note(struct store_packs *p, const struct store_entry *e);

/* Read exactly len bytes at off of pack num into buf; returns 0 or -1 (errno
 * ENOENT if the pack is gone, EIO if it is too short). */
int store_pack_read(struct store_packs *p, uint32_t num, uint32_t off, void *buf, size_t len);

/* With the lock held, append len bytes at buf to the current pack (rolling to
 * a new one when full or when an index entry claims more than it holds) and
 * say where they went; returns 0 or -1 (the pack is cut back). */
int store_pack_append_locked(struct store_packs *p, const void *buf, size_t len, uint32_t *num,
                             uint32_t *off);

/* Make the next store_packs_sync fdatasync pack num too (a page this handle
 * named there, which another process may have written and not synced);
 * returns 0 or -1. */
int store_pack_need_sync(struct store_packs *p, uint32_t num);

/* Fdatasync every pack appended to or named since the last call; returns 0
 * or -1. */
int store_packs_sync(struct store_packs *p);

/* Create pack num, which must not exist, with its header, into *fd; returns
 * 0 or -1. */
int store_pack_create(const struct store_packs *p, uint32_t num, int *fd);

/* List the pack files on disk, sorted by number, into a malloc'd *out of *n;
 * returns 0 or -1. */
int store_pack_list(const struct store_packs *p, struct store_pack_file **out, size_t *n);


#endif
