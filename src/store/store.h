/* store.h - the page store: 4 KiB pages named by their SHA-256, zstd-compressed
 * in append-only packs, shared by every run, keyframe and fork of a user
 * ($REWIND_HOME/store). The design note and invariants are in store.c.
 *
 * A struct store is one handle: not thread-safe and not to be used across
 * fork(); several handles (threads, processes) may use one directory at once.
 * Functions that return int return 0 (or a count) on success and -1 with errno
 * set on failure, unless their contract says otherwise. */
#ifndef REWIND_STORE_H
#define REWIND_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "util/hash.h"

#define STORE_PAGE_SIZE 4096

struct store;

/* Counters of one handle; pages and bytes_stored describe the store as this
 * handle last read its index, the rest what this handle did. */
struct store_stats {
    uint64_t pages;         /* distinct pages in the index (the zero page is never one) */
    uint64_t bytes_stored;  /* their stored (compressed) bytes */
    uint64_t puts;          /* pages given to store_put / store_put_batch */
    uint64_t named_puts;    /* of them, named by the caller (store_put_batch_named) */
    uint64_t zero_puts;     /* of which were the zero page (never written) */
    uint64_t dedup_hits;    /* of which were already present (or twice in one batch) */
    uint64_t written;       /* pages this handle appended to a pack */
    uint64_t bytes_written; /* their stored bytes */
    uint64_t ignored;       /* index entries ignored: bad checksum or bytes past their pack's end */
};

/* What store_gc found and did (in a dry run: what it would do). */
struct store_gc_stats {
    uint64_t live_pages;      /* distinct stored pages is_live kept */
    uint64_t dead_pages;      /* distinct stored pages is_live dropped */
    uint64_t copied_pages;    /* live pages copied out of packs that also held dead bytes */
    uint64_t corrupt_pages;   /* live pages that failed verification while copying (dropped) */
    uint64_t packs_kept;      /* packs holding only live pages, left as they are */
    uint64_t packs_rewritten; /* packs whose live pages were copied out, then deleted */
    uint64_t packs_deleted;   /* packs with no live page (dead or orphaned), deleted */
    uint64_t bytes_before;    /* pack bytes on disk before */
    uint64_t bytes_after;     /* pack bytes on disk after (estimated in a dry run) */
};

/* Open (creating if needed) the store in directory dir, whose parent must
 * exist, into *out; on failure return -1 with a message in err (errlen bytes).
 * A torn index tail left by a crash is trimmed here under the store's lock. */
int store_open(const char *dir, struct store **out, char *err, size_t errlen);

/* Close handle s (NULL is fine); pages put are in the OS's hands, not fsynced
 * (see store_sync). */
void store_close(struct store *s);

/* Name the 4096 bytes at page4k by SHA-256 into *out_hash and store them
 * unless the zero page or already present; returns 0 or -1 (*out_hash is set
 * even on failure). */
int store_put(struct store *s, const void *page4k, hash256 *out_hash);

/* store_put for n consecutive pages at pages, names into out_hashes[0..n-1],
 * with one lock and one write per 256 new pages; returns 0 or -1 (a failure
 * may leave earlier pages stored). */
int store_put_batch(struct store *s, const void *pages, size_t n, hash256 *out_hashes);

/* store_put_batch where the caller already knows some names: for each i
 * with known[i] set, names[i] must be the SHA-256 of page i (the caller
 * compared the page with bytes of that name, src/run/kfmemo.c) and is used
 * as is; the other names are computed into names[i]. known may be NULL. */
int store_put_batch_named(struct store *s, const void *pages, size_t n, hash256 *names,
                          const uint8_t *known);

/* Write the name store_put would give the 4096 bytes at page4k (their
 * SHA-256, with the handle's reused context: codec.c invariant 1) into
 * *out; stores nothing. For a caller that names pages before it puts them
 * with store_put_batch_named (src/run/kfpipe.c). */
void store_hash_page(struct store *s, const void *page4k, hash256 *out);

/* Fill page4k with the page named *h, decompressed and re-hashed to check it
 * is that page; returns 0, or -1 (errno ENOENT if absent, EIO if every stored
 * copy is corrupt) leaving page4k untouched. */
int store_get(struct store *s, const hash256 *h, void *page4k);

/* store_get for restoring a keyframe: a page this store compressed with a
 * content checksum (every page stored since that flag, STORE_F_SUM) is
 * checked by zstd's checksum instead of SHA-256 (codec.c invariant 3);
 * other pages are re-hashed as by store_get. */
int store_load(struct store *s, const hash256 *h, void *page4k);

/* What store_verify found. */
struct store_verify_stats {
    uint64_t pages;    /* distinct pages in the index */
    uint64_t summed;   /* of which stored with a content checksum (STORE_F_SUM) */
    uint64_t bad;      /* of which no stored copy re-hashes to its name */
    hash256 first_bad; /* the first of those */
};

/* Re-hash every page of the store (every copy until a good one), as store_get
 * does, whatever its checksum says: the check store_load leaves out (codec.c
 * invariant 3). Returns 0 with *st (bad pages are counted, not an error), or
 * -1 with errno if the store cannot be read. */
int store_verify(struct store *s, struct store_verify_stats *st);

/* Return 1 if the page named *h is in the store (or is the zero page), else 0;
 * does not read the page (store_get verifies). */
int store_has(struct store *s, const hash256 *h);

/* Make every page put through s so far durable (fdatasync of packs, then the
 * index); returns 0 or -1. */
int store_sync(struct store *s);

/* Write the well-known name of the zero page (SHA-256 of 4096 zero bytes). */
void store_zero_hash(hash256 *out);
/* 1 if h is that name. */
int store_is_zero_hash(const hash256 *h);

/* Fill *out with the counters of s. */
void store_stats(struct store *s, struct store_stats *out);

/* Roll packs when they would pass bytes (default 1 GiB; meant for tests);
 * bytes must be in [64 KiB, 2 GiB]; returns 0 or -1 (EINVAL). */
int store_set_pack_limit(struct store *s, uint64_t bytes);

/* Delete every stored page for which is_live(ctx, h) returns 0 (it is asked
 * once per distinct stored page; < 0 aborts the gc unchanged), holding the
 * store's lock throughout: live pages are copied out of packs that hold dead
 * bytes, a new index replaces the old by rename, then dead packs are deleted.
 * A crash at any point leaves a store whose live pages are all readable. With
 * dry_run nothing changes and *st says what would happen. st may be NULL.
 * Returns 0 or -1 with a message in err. is_live must know every page a
 * caller still needs, including ones being captured right now, and must not
 * call into s. */
int store_gc(struct store *s, int (*is_live)(void *ctx, const hash256 *h), void *ctx, int dry_run,
             struct store_gc_stats *st, char *err, size_t errlen);

#endif
