/*
 * crc: see crc.h. Each table is built once, on first use, from its
 * polynomial; the tables are immutable afterwards.
 */
#include "util/crc.h"

#include <pthread.h>

static uint32_t table_32[256], table_32c[256];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void fill(uint32_t *t, uint32_t poly)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = (c >> 1) ^ (poly & (0u - (c & 1)));
        t[i] = c;
    }
}

static void init_tables(void)
{
    fill(table_32, 0xedb88320u);
    fill(table_32c, 0x82f63b78u);
}

static uint32_t run(const uint32_t *t, uint32_t crc, const void *p, size_t n)
{
    const uint8_t *b = p;
    crc = ~crc;
    while (n--)
        crc = t[(crc ^ *b++) & 0xff] ^ (crc >> 8);
    return ~crc;
}

uint32_t crc_32(uint32_t crc, const void *p, size_t n)
{
    pthread_once(&once, init_tables);
    return run(table_32, crc, p, n);
}

uint32_t crc_32c(uint32_t crc, const void *p, size_t n)
{
    pthread_once(&once, init_tables);
    return run(table_32c, crc, p, n);
}
