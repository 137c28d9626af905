/* ring.h - a fixed-size byte ring buffer and a CRC-32 (the compat suite's C library). */
#ifndef RING_H
#define RING_H
#include <stddef.h>
#include <stdint.h>

struct ring {
    unsigned char *buf;
    size_t cap, head, len;
};

int ring_init(struct ring *r, size_t cap);
void ring_free(struct ring *r);
size_t ring_put(struct ring *r, const void *src, size_t n); /* bytes stored */
size_t ring_get(struct ring *r, void *dst, size_t n);       /* bytes taken */
uint32_t ring_crc32(uint32_t crc, const void *p, size_t n);
#endif
