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
#include <stdlib.h>
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

/* ---- blame: the writer of one byte (rw_blame) ---- */

struct blame_find {
    const char *path;
    uint64_t offset;
    struct rw_blame *b;
};

static int blame_on_write(void *ctx, const struct rw_write *w)
{
    struct blame_find *f = ctx;
    if (strcmp(w->path, f->path))
        return 0;
    f->b->writes++;
    if (f->offset >= w->offset && f->offset - w->offset < w->length) {
        f->b->found = 1;
        f->b->w = *w; /* the last covering write wins */
    }
    return 0;
}

#define BLAME_PROCS 4096
struct blame_procs {
    struct rw_proc *v;
    size_t n;
};

static int blame_on_proc(void *ctx, const struct rw_proc *p)
{
    struct blame_procs *ps = ctx;
    if (ps->n < BLAME_PROCS)
        ps->v[ps->n++] = *p;
    return 0;
}

static const struct rw_proc *blame_proc_of(const struct blame_procs *ps, uint32_t pid)
{
    for (size_t i = 0; i < ps->n; i++)
        if (ps->v[i].pid == pid)
            return &ps->v[i];
    return NULL;
}

int rw_blame(rw_home *h, const char *id, const char *path, uint64_t offset, const void *content,
             size_t clen, struct rw_blame *b, struct rw_error *err)
{
    RW_ASSERT(h && id && path && b);
    memset(b, 0, sizeof(*b));
    b->holds = -1;
    struct blame_find f = {.path = path, .offset = offset, .b = b};
    struct rw_trace_status st;
    if (rw_writes(h, id, blame_on_write, &f, &st, err) < 0)
        return -1;
    if (!b->found)
        return 0;
    struct blame_procs ps = {.v = malloc(BLAME_PROCS * sizeof(struct rw_proc))};
    if (!ps.v)
        return apierr_set(err, RW_EINTERNAL, "out of memory");
    if (rw_ps(h, id, b->w.step, blame_on_proc, &ps, &st, err) < 0) {
        free(ps.v);
        return -1;
    }
    const struct rw_write *w = &b->w;
    if (content && !(w->flags & 1) && w->offset <= clen && w->length <= clen - w->offset)
        b->holds = rw_fnv64((const char *)content + w->offset, w->length) == w->fnv;
    for (const struct rw_proc *q = blame_proc_of(&ps, w->pid); q && b->chain_n < RW_BLAME_CHAIN;
         q = q->pid == 1 ? NULL : blame_proc_of(&ps, q->ppid))
        b->chain[b->chain_n++] = *q;
    free(ps.v);
    return 0;
}
