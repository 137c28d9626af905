/*
 * crc: the checksums of rewind's file formats (docs/formats.md). Both are
 * reflected CRC-32s computed by one table-driven routine:
 *  - crc_32:  polynomial 0xedb88320 (IEEE 802.3, as zlib), used by the trace
 *             and keyframes files;
 *  - crc_32c: polynomial 0x82f63b78 (Castagnoli), used by the page store's
 *             index.
 * Both take the running value (0 to start) so a record can be summed in parts.
 */
#ifndef REWIND_UTIL_CRC_H
#define REWIND_UTIL_CRC_H

#include <stddef.h>
#include <stdint.h>

uint32_t crc_32(uint32_t crc, const void *p, size_t n);
uint32_t crc_32c(uint32_t crc, const void *p, size_t n);

#endif
