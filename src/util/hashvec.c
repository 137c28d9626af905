/* hashvec: see hashvec.h. Doubling growth, qsort, bsearch. */
#include "util/hashvec.h"

#include <stdlib.h>
#include <string.h>

int hashvec_add(struct hashvec *s, const hash256 *h)
{
    if (s->oom)
        return -1;
    if (s->n == s->cap) {
        size_t nc = s->cap ? s->cap * 2 : 1024;
        hash256 *nv = (!s->max || s->n < s->max) ? realloc(s->v, nc * sizeof(*nv)) : NULL;
        if (!nv) {
            s->oom = 1;
            return -1;
        }
        s->v = nv;
        s->cap = nc;
    }
    if (s->max && s->n >= s->max) {
        s->oom = 1;
        return -1;
    }
    s->v[s->n++] = *h;
    return 0;
}

static int cmp_hash(const void *a, const void *b)
{
    return memcmp(a, b, sizeof(hash256));
}

size_t hashvec_sort_unique(struct hashvec *s)
{
    if (s->n < 2)
        return 0;
    qsort(s->v, s->n, sizeof(hash256), cmp_hash);
    size_t k = 1;
    for (size_t i = 1; i < s->n; i++)
        if (memcmp(&s->v[i], &s->v[k - 1], sizeof(hash256)))
            s->v[k++] = s->v[i];
    size_t dropped = s->n - k;
    s->n = k;
    return dropped;
}

int hashvec_has(const struct hashvec *s, const hash256 *h)
{
    return s->n && bsearch(h, s->v, s->n, sizeof(hash256), cmp_hash) != NULL;
}

void hashvec_free(struct hashvec *s)
{
    free(s->v);
    memset(s, 0, sizeof(*s));
}
