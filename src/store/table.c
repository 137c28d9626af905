/*
 * table: the page store's in-memory index, an open-addressing hash table
 * with linear probing, keyed by page name (page store internal).
 *
 * Names are SHA-256 digests, so their first 8 bytes are already uniformly
 * distributed and serve as the hash. A slot is 48 bytes; a million pages
 * (4 GiB of distinct memory) cost 64-96 MiB of table.
 *
 * Invariants:
 *  1. cap is a power of two and n * 10 < cap * 7 after every add (load
 *     below 0.7 keeps probe runs short for misses, the common case of a put).
 *  2. Slots are never removed one at a time (only store_table_clear), so a
 *     probe run ends at the first empty slot.
 */
#include "store/table.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define TABLE_MIN_CAP 1024

static size_t slot_of(const hash256 *h, size_t cap)
{
    uint64_t k;
    memcpy(&k, h->b, sizeof(k));
    return (size_t)k & (cap - 1);
}

int store_table_init(struct store_table *t)
{
    t->slots = calloc(TABLE_MIN_CAP, sizeof(*t->slots));
    if (!t->slots) {
        errno = ENOMEM;
        return -1;
    }
    t->cap = TABLE_MIN_CAP;
    t->n = 0;
    return 0;
}

void store_table_free(struct store_table *t)
{
    free(t->slots);
    memset(t, 0, sizeof(*t));
}

void store_table_clear(struct store_table *t)
{
    memset(t->slots, 0, t->cap * sizeof(*t->slots));
    t->n = 0;
}

struct store_slot *store_table_find(const struct store_table *t, const hash256 *h)
{
    for (size_t i = slot_of(h, t->cap);; i = (i + 1) & (t->cap - 1)) {
        struct store_slot *s = &t->slots[i];
        if (s->len == 0)
            return NULL;
        if (memcmp(s->h.b, h->b, sizeof(h->b)) == 0)
            return s;
    }
}

static void put_slot(struct store_slot *slots, size_t cap, const struct store_slot *s)
{
    size_t i = slot_of(&s->h, cap);
    while (slots[i].len != 0)
        i = (i + 1) & (cap - 1);
    slots[i] = *s;
}

static int grow(struct store_table *t)
{
    size_t cap = t->cap * 2;
    struct store_slot *slots = calloc(cap, sizeof(*slots));
    if (!slots) {
        errno = ENOMEM;
        return -1;
    }
    for (size_t i = 0; i < t->cap; i++)
        if (t->slots[i].len != 0)
            put_slot(slots, cap, &t->slots[i]);
    free(t->slots);
    t->slots = slots;
    t->cap = cap;
    return 0;
}

int store_table_add(struct store_table *t, const struct store_slot *s)
{
    if (store_table_find(t, &s->h))
        return 0;
    if ((t->n + 1) * 10 >= t->cap * 7 && grow(t) < 0)
        return -1;
    put_slot(t->slots, t->cap, s);
    t->n++;
    return 1;
}
