/*
 * tracehash: a stored trace's hash, as a run's manifest states it
 * ("trace_hash"): SHA-256 over every entry's step (u64 LE), record header
 * and payload, in order (src/run/ctx.c, hash_record). verify, import and
 * export check a trace against its manifest with it (docs/reliability.md,
 * "What verify checks").
 *
 * Invariants:
 *  1. The hash is over whole entries only: a trace whose reader stops at a
 *     torn or corrupt entry reports that (TRACEHASH_TORN), never the hash
 *     of the part before it as if it were the whole.
 */
#ifndef REWIND_TRACE_TRACEHASH_H
#define REWIND_TRACE_TRACEHASH_H

#include <stdint.h>

enum {
    TRACEHASH_OK = 0,
    TRACEHASH_UNREADABLE = -1, /* cannot open, or not a trace of this version */
    TRACEHASH_TORN = -2,       /* reading stopped at a torn or corrupt entry */
};

/* Hash the trace at path (parents looked for beside it and in alt_runs, if
 * not NULL) into hex (65 bytes); *events: the entries read. */
int tracehash_file(const char *path, const char *alt_runs, char hex[65], uint64_t *events);

#endif
