/* store_int.h - the handle behind struct store, shared by store.c and gc.c
 * (page store internal). */
#ifndef REWIND_STORE_INT_H
#define REWIND_STORE_INT_H

#include <stddef.h>
#include <stdint.h>

#include "store/codec.h"
#include "store/index.h"
#include "store/pack.h"
#include "store/store.h"
#include "store/table.h"

#define STORE_BATCH 256 /* pages per lock and per pack write in store_put_batch */

struct store {
    char *dir;
    char *index_path;
    int lockfd;        /* <dir>/lock, flock()ed exclusively by writers, trim and gc */
    int locked;        /* nesting depth of store_lock */
    uint64_t *gen_map; /* the gc generation, the first 8 bytes of <dir>/lock, shared */
    uint64_t gen;      /* the generation this handle's view is from */
    struct store_index ix;
    struct store_packs packs;
    struct store_table table;
    struct store_codec codec;
    hash256 zero;
    struct store_stats st;
    uint8_t *cbuf;            /* STORE_BATCH stored forms, a page of room each */
    uint8_t *rbuf;            /* one stored form read back */
    uint8_t *pbuf;            /* one decoded page */
    struct store_entry *ents; /* STORE_BATCH entries to append */
    size_t *want;             /* batch positions of the pages to write */
    uint16_t *lens, *flags;   /* their stored lengths and flags */
};

/* Take the store's exclusive lock (nests); returns 0 or -1. */
int store_lock(struct store *s);

/* Release one level of store_lock. */
void store_unlock(struct store *s);

/* Forget everything read and read the index at its path from the start
 * (trimming a torn tail under the lock); returns 0 or -1. */
int store_reload(struct store *s);

/* Read index entries added since the last read, or reload if the index was
 * replaced; returns 0 or -1. */
int store_refresh(struct store *s);

/* Mark the start (odd) or end (even) of gc's index replacement in the shared
 * generation; with the lock held. */
void store_gen_bump(struct store *s, int odd);

/* Decode and verify the stored form at sl into page; returns 0 or -1. */
int store_read_slot(struct store *s, const struct store_slot *sl, void *page);
/* store_read_slot, trusting this store's checksummed frames (codec.c 3). */
int store_read_slot_trusting(struct store *s, const struct store_slot *sl, void *page);

/* sl's copy failed to verify: find another index entry for its page that
 * verifies, point *sl at it and read it into page (s->rbuf then holds its
 * stored form); returns 0, or -1 with errno EIO if no copy is good. */
int store_read_other_copy(struct store *s, struct store_slot *sl, void *page);

#endif
