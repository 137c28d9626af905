/*
 * hashvec: a growable array of page hashes that becomes a sorted set
 * (gc's live set, the pages an export carries, the pages an import holds).
 * Out of memory is sticky (oom) so callbacks that cannot fail can add.
 */
#ifndef REWIND_UTIL_HASHVEC_H
#define REWIND_UTIL_HASHVEC_H

#include <stddef.h>

#include "util/hash.h"

struct hashvec {
    hash256 *v;
    size_t n, cap;
    size_t max; /* 0: no limit; adding past it sets oom */
    int oom;
};

/* Append *h (nothing once oom is set). 0 or -1 (oom). */
int hashvec_add(struct hashvec *s, const hash256 *h);
/* Sort, and drop repeats; returns how many were dropped. */
size_t hashvec_sort_unique(struct hashvec *s);
/* 1 if *h is in s (sorted), else 0. */
int hashvec_has(const struct hashvec *s, const hash256 *h);
void hashvec_free(struct hashvec *s);

#endif
