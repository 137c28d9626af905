/*
 * archive_int: what archive_export.c and archive_import.c share: the entry
 * kinds, the bounds every length is checked against and name helpers.
 */
#ifndef REWIND_ARCHIVE_ARCHIVE_INT_H
#define REWIND_ARCHIVE_ARCHIVE_INT_H

#include <stddef.h>
#include <stdint.h>

#include "util/bytes.h"
#include "util/hash.h"

#define ARCH_HEADER_SIZE 80 /* magic 8 | version 4 | flags 4 | run 64 */
#define ARCH_ENTRY_SIZE 16  /* kind 4 | name_len 4 | data_len 8 */
#define ARCH_NAME_LEN_MAX 255
#define ARCH_END_LEN 40
#define ARCH_JSON_MAX (16ull << 20)   /* manifest.json, spec.json */
#define ARCH_DATA_MAX (1ull << 40)    /* trace, states, keyframes, image */
#define ARCH_MAX_RUNS 65              /* KF_MAX_CHAIN + 1 */
#define ARCH_MAX_PAGES (1ull << 28)   /* 1 TiB of distinct pages */
#define ARCH_STREAM_MAX (64ull << 30) /* staged from a pipe (stdin), in all */
#define ARCH_FREE_RESERVE 20          /* staging leaves 1/20 of its disk free */

enum arch_kind {
    ARCH_FILE = 1,
    ARCH_PAGE = 2,
    ARCH_PAGEZ = 3,
    ARCH_IMAGE = 4,
    ARCH_END = 5,
};

/* The run files an archive may carry, in the order export writes them. */
enum arch_file {
    ARCH_F_MANIFEST,
    ARCH_F_SPEC,
    ARCH_F_TRACE,
    ARCH_F_STATES,
    ARCH_F_KEYFRAMES,
    ARCH_F_INPUTS, /* a shell session's keystrokes (src/run/session.h) */
    ARCH_NFILES
};
extern const char *const archive_file_names[ARCH_NFILES];

/* The buffer a file is copied through, into or out of an archive (heap:
 * no static buffer, the engine is reentrant). */
#define ARCH_COPY_BUF (1 << 16)

/* Index of a run file name, or -1 if an archive may not carry it. */
int archive_file_index(const char *name);

/* Parse exactly 64 lowercase hex digits (n bytes at s) into *h: 0 or -1. */
int archive_parse_hex(const char *s, size_t n, hash256 *h);

/* The archive's byte order is util/bytes.h's; these names remain for
 * tests/engine/archive_test.c. */
static inline void archive_put32(uint8_t *p, uint32_t v)
{
    bytes_put_u32(p, v);
}
static inline void archive_put64(uint8_t *p, uint64_t v)
{
    bytes_put_u64(p, v);
}
static inline uint32_t archive_get32(const uint8_t *p)
{
    return bytes_get_u32(p);
}
static inline uint64_t archive_get64(const uint8_t *p)
{
    return bytes_get_u64(p);
}

#endif
