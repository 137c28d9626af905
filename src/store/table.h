/* table.h - in-memory map from page name to where its bytes are (page store internal). */
#ifndef REWIND_STORE_TABLE_H
#define REWIND_STORE_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include "util/hash.h"

#define STORE_SLOT_BAD 0x8000u /* in memory only: this copy failed verification */

/* One page's location; len == 0 marks an empty slot. */
struct store_slot {
    hash256 h;
    uint32_t pack;  /* pack number (>= 1) */
    uint32_t off;   /* byte offset of the stored form in the pack */
    uint16_t len;   /* stored length, 1..4096 */
    uint16_t flags; /* STORE_F_RAW, STORE_SLOT_BAD */
    uint32_t pad;
};

struct store_table {
    struct store_slot *slots;
    size_t cap; /* a power of two */
    size_t n;   /* used slots */
};

/* Make t an empty table; returns 0 or -1 (ENOMEM). */
int store_table_init(struct store_table *t);

/* Free t's memory (a zeroed t is fine). */
void store_table_free(struct store_table *t);

/* Empty t, keeping its memory. */
void store_table_clear(struct store_table *t);

/* Return the slot for *h, or NULL if t has none. */
struct store_slot *store_table_find(const struct store_table *t, const hash256 *h);

/* Add *s unless its name is already there (the first location wins); returns
 * 1 if added, 0 if present (t unchanged), -1 (ENOMEM). */
int store_table_add(struct store_table *t, const struct store_slot *s);

#endif
