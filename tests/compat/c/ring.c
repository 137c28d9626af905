#include <stdlib.h>

#include "ring.h"

int ring_init(struct ring *r, size_t cap)
{
    r->buf = malloc(cap ? cap : 1);
    r->cap = cap;
    r->head = r->len = 0;
    return r->buf ? 0 : -1;
}

void ring_free(struct ring *r)
{
    free(r->buf);
    r->buf = NULL;
}

size_t ring_put(struct ring *r, const void *src, size_t n)
{
    const unsigned char *s = src;
    size_t k = 0;
    for (; k < n && r->len < r->cap; k++, r->len++)
        r->buf[(r->head + r->len) % r->cap] = s[k];
    return k;
}

size_t ring_get(struct ring *r, void *dst, size_t n)
{
    unsigned char *d = dst;
    size_t k = 0;
    for (; k < n && r->len > 0; k++, r->len--) {
        d[k] = r->buf[r->head];
        r->head = (r->head + 1) % r->cap;
    }
    return k;
}
