#include "ring.h"

uint32_t ring_crc32(uint32_t crc, const void *p, size_t n)
{
    const unsigned char *b = p;
    crc = ~crc;
    while (n--) {
        crc ^= *b++;
        for (int i = 0; i < 8; i++)
            crc = (crc >> 1) ^ (0xEDB88320u & -(crc & 1));
    }
    return ~crc;
}
