/*
 * writes: the write records of a run made with --track-writes (docs/nix.md),
 * as rw_writes and rw_fnv64 in include/rewind.h; `rewind blame` and
 * `rewind repro` name the writer of a byte from them and rw_ps.
 *
 * Record (guest/linux/patches/20-nix.patch, REWIND_REC_WRITE): aux = the
 * file offset; payload = u64 length, u64 FNV-1a-64 of the bytes, then the
 * path as the writer saw it (no NUL); flags bit 0: the hash covers only a
 * prefix, bit 1: the run's last tracked write (the limit was reached).
 *
 * Invariants:
 *  1. A record shorter than its 16-byte header is skipped, never read past;
 *     the path is copied bounded and NUL-terminated.
 *  2. Writes are reported in trace order, with their index and step.
 */
#include <limits.h>
#include <string.h>

#include "util/apierr.h"
#include "util/homepath.h"
#include "rewind.h"
#include "trace/trace.h"
#include "util/bytes.h"
#include "util/check.h"

uint64_t rw_fnv64(const void *p, size_t n)
{
    const unsigned char *b = p;
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < n; i++) {
        h ^= b[i];
        h *= 0x100000001b3ULL;
    }
    return h;
}

int rw_writes(rw_home *h, const char *id, int (*fn)(void *ctx, const struct rw_write *w), void *ctx,
              struct rw_trace_status *st, struct rw_error *err)
{
    RW_ASSERT(h && id && fn && st);
    memset(st, 0, sizeof(*st));
    if (home_path(st->path, sizeof(st->path), rw_home_path(h), HOME_RUNS, id, "trace") < 0)
        return apierr_set(err, RW_EUSAGE, "run %s: path too long", id);
    struct trace_reader r;
    if (trace_open_read(&r, st->path) != 0)
        return apierr_set(err, RW_EUSAGE, "cannot read the trace %s", st->path);
    struct trace_entry e;
    struct rw_write w;
    int rc = 0;
    for (uint64_t index = 0; rc == 0 && trace_next(&r, &e) == 1; index++) {
        if (e.rec.kind != REWIND_REC_WRITE || e.payload_len < 16) /* invariant 1 */
            continue;
        memset(&w, 0, sizeof(w));
        w.index = index;
        w.step = e.step;
        w.pid = e.rec.pid;
        w.tid = e.rec.tid;
        w.offset = e.rec.aux;
        w.length = bytes_get_u64(e.payload);
        w.fnv = bytes_get_u64(e.payload + 8);
        w.flags = e.rec.flags;
        size_t pl = e.payload_len - 16;
        if (pl >= sizeof(w.path))
            pl = sizeof(w.path) - 1;
        memcpy(w.path, e.payload + 16, pl);
        w.path[pl] = 0;
        rc = fn(ctx, &w);
    }
    st->torn = r.torn;
    st->records = r.count;
    trace_close_read(&r);
    return rc < 0 ? -1 : 0;
}
