/*
 * trace: the file of (step, record) pairs a run produced.
 *
 * Format (version 1), little-endian:
 *   header  "RWTRACE\0" | u32 version | u32 header size (16)
 *   entry   u64 step | u32 crc32 of (step bytes + record bytes) | u32 pad 0 |
 *           record (struct rewind_record + payload, rec.len bytes) |
 *           zero padding to a multiple of 8
 * The writer appends whole entries; a crash can leave at most a torn last
 * entry, which the reader detects (short read or bad crc) and stops before:
 * everything up to the last whole record stays readable. The reader never
 * trusts a length field: every entry is bounds-checked against
 * REWIND_RECORD_MAX and the file size.
 */
#ifndef REWIND_TRACE_H
#define REWIND_TRACE_H

#include <stdint.h>
#include <stdio.h>

#include "../../guest/include/rewind_abi.h"

#define TRACE_MAGIC "RWTRACE"
#define TRACE_VERSION 1

struct trace_writer {
    FILE *f;
    uint64_t count;
    int failed;
};

/* Create path (truncating) and write the header. Returns 0 or -1 (errno). */
int trace_open_write(struct trace_writer *w, const char *path);
/* Append one entry; errors are sticky in w->failed. */
void trace_append(struct trace_writer *w, uint64_t step, const struct rewind_record *r);
/* Flush to the OS (not fsync). */
void trace_flush(struct trace_writer *w);
/* Flush, fsync and close. Returns 0 or -1. */
int trace_close(struct trace_writer *w);

struct trace_entry {
    uint64_t step;
    struct rewind_record rec; /* header */
    const uint8_t *payload;   /* valid until the next trace_next() */
    uint32_t payload_len;
};

struct trace_reader {
    FILE *f;
    uint8_t buf[REWIND_RECORD_MAX + 8];
    uint64_t count;
    int torn; /* 1 when reading stopped at a torn or corrupt entry */
};

/* Open for reading and check the header. Returns 0, -1 with errno, or -2 if
 * the file is not a trace of a supported version. */
int trace_open_read(struct trace_reader *r, const char *path);
/* Next entry: 1 read, 0 at the end (check r->torn), never crashes on bad
 * input. */
int trace_next(struct trace_reader *r, struct trace_entry *e);
void trace_close_read(struct trace_reader *r);

/* The trace's checksum is crc_32 (util/crc.h). This alias remains only for
 * src/run/session.c, until it calls crc_32 itself. */
#include "util/crc.h"
static inline uint32_t trace_crc32(uint32_t crc, const void *p, size_t n)
{
    return crc_32(crc, p, n);
}

#endif
