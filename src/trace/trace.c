/*
 * trace: see trace.h.
 *
 * Invariants:
 *  1. Entries are written whole by one fwrite each; the header is written
 *     before any entry.
 *  2. The reader accepts an entry only if its length is within bounds, all
 *     its bytes are present, its crc matches and the bytes the crc does not
 *     cover (reserved, padding) are 0; the first entry that fails ends the
 *     read with torn = 1.
 *  3. A version 2 trace is opened only when its parent's name is a plain
 *     run name, the parent's trace (followed at most TRACE_REF_DEPTH deep)
 *     holds at least the prefix, and the prefix hashes to the header's
 *     hash; it then yields exactly the prefix's entries, then its own. A
 *     parent that changes while it is read ends the read as torn.
 *  4. A reference is only written before any entry (the header is
 *     rewritten in place).
 */
#include "trace/trace.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/bytes.h"
#include "util/check.h"
#include "util/crc.h"
#include "util/failpoint.h"
#include "util/hash.h"
#include "util/io.h"

#define REF_HEADER (16 + TRACE_REF_NAME + 8 + 32) /* a version 2 header */

int trace_open_write(struct trace_writer *w, const char *path)
{
    memset(w, 0, sizeof(*w));
    w->f = fopen(path, "wbe");
    if (!w->f)
        return -1;
    uint8_t h[16] = {0};
    memcpy(h, TRACE_MAGIC, 8);
    bytes_put_u32(h + 8, TRACE_VERSION);
    bytes_put_u32(h + 12, 16);
    if (fwrite(h, 1, 16, w->f) != 16) {
        fclose(w->f);
        w->f = NULL;
        return -1;
    }
    return 0;
}

/* One entry as the file holds it, into buf (16 + REWIND_RECORD_MAX + 8
 * bytes); its length, or 0 for a record of a bad length. */
static size_t encode(uint8_t *buf, uint64_t step, const struct rewind_record *r)
{
    uint32_t len = r->len;
    if (len < sizeof(*r) || len > REWIND_RECORD_MAX)
        return 0;
    bytes_put_u64(buf, step);
    memcpy(buf + 16, r, len);
    uint32_t crc = crc_32(crc_32(0, buf, 8), r, len);
    bytes_put_u32(buf + 8, crc);
    bytes_put_u32(buf + 12, 0);
    size_t total = 16 + len;
    size_t padded = (total + 7) & ~(size_t)7;
    RW_ASSERT(padded % 8 == 0 && padded <= 16 + REWIND_RECORD_MAX + 8); /* invariant 1 */
    memset(buf + total, 0, padded - total);
    return padded;
}

void trace_append(struct trace_writer *w, uint64_t step, const struct rewind_record *r)
{
    if (!w->f || w->failed)
        return;
    uint8_t buf[16 + REWIND_RECORD_MAX + 8];
    size_t padded = encode(buf, step, r);
    if (!padded || fwrite(buf, 1, padded, w->f) != padded)
        w->failed = 1;
    else
        w->count++;
}

/* A parent name a version 2 header may hold: one path component, not
 * hidden (no '/', no leading '.': never "..", never a staging directory). */
static int valid_parent(const char *n)
{
    size_t len = strnlen(n, TRACE_REF_NAME);
    return len > 0 && len < TRACE_REF_NAME && n[0] != '.' && !memchr(n, '/', len);
}

int trace_prefix_begin(struct trace_prefix *p)
{
    p->n = 0;
    p->hash = hash_new();
    return p->hash ? 0 : -1;
}

static void prefix_hash_entry(hash_ctx *h, uint64_t step, const void *rec, uint32_t len)
{
    uint8_t le[8];
    bytes_put_u64(le, step);
    hash_update(h, le, 8);
    hash_update(h, rec, len);
}

void trace_prefix_add(struct trace_prefix *p, uint64_t step, const struct rewind_record *r)
{
    prefix_hash_entry(p->hash, step, r, r->len);
    p->n++;
}

void trace_prefix_drop(struct trace_prefix *p)
{
    if (p->hash) {
        hash256 h;
        hash_final(p->hash, &h);
    }
    p->hash = NULL;
}

int trace_refer(struct trace_writer *w, const char *parent, struct trace_prefix *p)
{
    RW_ASSERT(p->hash && w->count == 0); /* invariant 4 */
    hash256 h;
    hash_final(p->hash, &h);
    p->hash = NULL;
    if (!w->f || w->failed || !valid_parent(parent)) {
        w->failed = 1;
        return -1;
    }
    uint8_t hd[REF_HEADER] = {0};
    memcpy(hd, TRACE_MAGIC, 8);
    bytes_put_u32(hd + 8, TRACE_VERSION_REF);
    bytes_put_u32(hd + 12, REF_HEADER);
    memcpy(hd + 16, parent, strlen(parent));
    bytes_put_u64(hd + 16 + TRACE_REF_NAME, p->n);
    memcpy(hd + 16 + TRACE_REF_NAME + 8, h.b, 32);
    if (fseek(w->f, 0, SEEK_SET) != 0 || fwrite(hd, 1, REF_HEADER, w->f) != REF_HEADER) {
        w->failed = 1;
        return -1;
    }
    w->count = p->n;
    return 0;
}

void trace_flush(struct trace_writer *w)
{
    if (w->f && fflush(w->f) != 0)
        w->failed = 1;
}

int trace_close(struct trace_writer *w)
{
    if (!w->f)
        return -1;
    int rc = (fflush(w->f) == 0 && fsync(fileno(w->f)) == 0 && !w->failed) ? 0 : -1;
    if (fclose(w->f) != 0)
        rc = -1;
    w->f = NULL;
    return rc;
}

/* The trace of run parent: beside the run whose trace is at path
 * (<runs>/<run>/trace), else under alt_runs. */
static void parent_path(const char *path, const char *parent, const char *alt_runs, char *out,
                        size_t n)
{
    const char *slash = strrchr(path, '/');
    const char *prev = NULL;
    for (const char *q = path; slash && q < slash; q++)
        if (*q == '/')
            prev = q;
    if (!slash)
        snprintf(out, n, "../%s/trace", parent);
    else if (!prev)
        snprintf(out, n, "%s/trace", parent);
    else
        snprintf(out, n, "%.*s/%s/trace", (int)(prev - path), path, parent);
    if (alt_runs && access(out, R_OK) != 0)
        snprintf(out, n, "%s/%s/trace", alt_runs, parent);
}

/* Back to the first entry (the prefix's, if any). */
static int rewind_reader(struct trace_reader *r, long hsize, uint64_t base_n)
{
    r->count = 0;
    r->torn = 0;
    r->base_left = base_n;
    return fseek(r->f, hsize, SEEK_SET);
}

static int open_depth(struct trace_reader *r, const char *path, const char *alt, int depth);
int trace_reopen(struct trace_reader *r);

/* Open the parent's trace into r->base and check that its first n entries
 * hash to want (invariant 3). 0 or -1. */
static int open_base(struct trace_reader *r, const char *path, const char *alt, int depth,
                     uint64_t n, const uint8_t *want)
{
    char pp[4400];
    parent_path(path, r->parent, alt, pp, sizeof(pp));
    struct trace_reader *b = malloc(sizeof(*b));
    if (!b)
        return -1;
    if (open_depth(b, pp, alt, depth + 1) != 0) {
        free(b);
        return -1;
    }
    hash_ctx *h = hash_new();
    uint64_t got = 0;
    struct trace_entry e;
    while (h && got < n && trace_next(b, &e) == 1) {
        prefix_hash_entry(h, e.step, b->buf, e.rec.len);
        got++;
    }
    hash256 sum = {{0}};
    if (h)
        hash_final(h, &sum);
    if (!h || got != n || memcmp(sum.b, want, 32) != 0 || trace_reopen(b) != 0) {
        trace_close_read(b);
        free(b);
        return -1;
    }
    r->base = b;
    r->base_left = n;
    return 0;
}

static int open_depth(struct trace_reader *r, const char *path, const char *alt, int depth)
{
    memset(r, 0, sizeof(*r));
    r->f = fopen(path, "rbe");
    if (!r->f)
        return -1;
    uint8_t h[REF_HEADER];
    if (fread(h, 1, 16, r->f) != 16 || memcmp(h, TRACE_MAGIC, 8) != 0)
        goto bad;
    uint32_t version = bytes_get_u32(h + 8), hsize = bytes_get_u32(h + 12);
    r->hsize = hsize;
    if (version == TRACE_VERSION && hsize == 16)
        return 0;
    if (version != TRACE_VERSION_REF || hsize != REF_HEADER || depth >= TRACE_REF_DEPTH ||
        fread(h + 16, 1, REF_HEADER - 16, r->f) != REF_HEADER - 16)
        goto bad;
    memcpy(r->parent, h + 16, TRACE_REF_NAME);
    if (r->parent[TRACE_REF_NAME - 1] != 0 || !valid_parent(r->parent))
        goto bad;
    r->base_n = bytes_get_u64(h + 16 + TRACE_REF_NAME);
    if (open_base(r, path, alt, depth, r->base_n, h + 16 + TRACE_REF_NAME + 8) != 0)
        goto bad;
    return 0;
bad:
    fclose(r->f);
    r->f = NULL;
    return -2;
}

int trace_reopen(struct trace_reader *r)
{
    if (!r->f)
        return -1;
    if (r->base && trace_reopen(r->base) != 0)
        return -1;
    return rewind_reader(r, (long)r->hsize, r->base_n);
}

int trace_open_read(struct trace_reader *r, const char *path)
{
    return open_depth(r, path, NULL, 0);
}

int trace_open_read_in(struct trace_reader *r, const char *path, const char *alt_runs)
{
    return open_depth(r, path, alt_runs, 0);
}

int trace_parent(const char *path, char parent[TRACE_REF_NAME])
{
    parent[0] = 0;
    FILE *f = fopen(path, "rbe");
    if (!f)
        return -1;
    uint8_t h[REF_HEADER];
    int rc = -1;
    if (fread(h, 1, 16, f) == 16 && memcmp(h, TRACE_MAGIC, 8) == 0) {
        uint32_t version = bytes_get_u32(h + 8);
        if (version == TRACE_VERSION)
            rc = 0;
        else if (version == TRACE_VERSION_REF &&
                 fread(h + 16, 1, REF_HEADER - 16, f) == REF_HEADER - 16) {
            memcpy(parent, h + 16, TRACE_REF_NAME);
            parent[TRACE_REF_NAME - 1] = 0;
            rc = valid_parent(parent) ? 0 : -1;
            if (rc)
                parent[0] = 0;
        }
    }
    fclose(f);
    return rc;
}

int trace_write_flat(const char *path, FILE *out, uint64_t *len)
{
    struct trace_reader *r = malloc(sizeof(*r));
    if (!r || trace_open_read(r, path) != 0) {
        free(r);
        return -1;
    }
    uint8_t h[16] = {0}, buf[16 + REWIND_RECORD_MAX + 8];
    memcpy(h, TRACE_MAGIC, 8);
    bytes_put_u32(h + 8, TRACE_VERSION);
    bytes_put_u32(h + 12, 16);
    int ok = fwrite(h, 1, 16, out) == 16;
    uint64_t n = 16;
    struct trace_entry e;
    while (ok && trace_next(r, &e) == 1) {
        size_t k = encode(buf, e.step, (const struct rewind_record *)r->buf);
        ok = k && fwrite(buf, 1, k, out) == k;
        n += k;
    }
    ok = ok && !r->torn;
    trace_close_read(r);
    free(r);
    *len = n;
    return ok && fflush(out) == 0 ? 0 : -1;
}

/* The entry e of reader r, as its record bytes (in r->buf). */
static int same_entry(const struct trace_entry *a, const uint8_t *abuf, const struct trace_entry *b,
                      const uint8_t *bbuf)
{
    return a->step == b->step && a->rec.len == b->rec.len && !memcmp(abuf, bbuf, a->rec.len);
}

int trace_compact(const char *path)
{
    char parent[TRACE_REF_NAME], tmp[4400], pp[4400];
    if (trace_parent(path, parent) < 0)
        return -1;
    if (!parent[0])
        return 0; /* a trace of its own: nothing to share */
    struct trace_reader *own = malloc(sizeof(*own)), *par = malloc(sizeof(*par));
    int rc = -1;
    FILE *o;
    hash_ctx *h = hash_new();
    if (!own || !par || !h || trace_open_read(own, path) != 0)
        goto out;
    parent_path(path, parent, NULL, pp, sizeof(pp));
    if (trace_open_read(par, pp) != 0) {
        trace_close_read(own);
        goto out;
    }
    /* the prefix: the same entries on both sides (invariant 3) */
    struct trace_entry a, b;
    uint64_t n = 0;
    int ha = 0, hb = 0;
    for (;;) {
        ha = trace_next(own, &a) == 1;
        hb = ha && trace_next(par, &b) == 1;
        if (!ha || !hb || (n >= own->base_n && !same_entry(&a, own->buf, &b, par->buf)))
            break;
        prefix_hash_entry(h, a.step, own->buf, a.rec.len);
        n++;
    }
    trace_close_read(par);
    if (own->torn || n == own->base_n) { /* torn, or no entry more to share */
        rc = own->torn ? -1 : 0;
        trace_close_read(own);
        goto out;
    }
    snprintf(tmp, sizeof(tmp), "%s.compact.tmp", path);
    o = fopen(tmp, "wbe");
    struct trace_writer w = {.f = o};
    struct trace_prefix pre = {.hash = h, .n = n};
    h = NULL;
    int ok = o && trace_refer(&w, parent, &pre) == 0;
    if (ok && ha) /* the first entry that differs is the run's own */
        trace_append(&w, a.step, (const struct rewind_record *)own->buf);
    while (ok && trace_next(own, &a) == 1)
        trace_append(&w, a.step, (const struct rewind_record *)own->buf);
    ok = ok && !own->torn && !w.failed && fflush(o) == 0 && fsync(fileno(o)) == 0;
    trace_close_read(own);
    if (o && fclose(o) != 0)
        ok = 0;
    o = NULL;
    RW_FAILPOINT("trace.compact.rename");
    if (ok && rename(tmp, path) == 0)
        rc = 0;
    else
        unlink(tmp);
out:
    if (h) {
        hash256 x;
        hash_final(h, &x);
    }
    free(own);
    free(par);
    return rc;
}

int trace_flatten(const char *path)
{
    char tmp[4400];
    snprintf(tmp, sizeof(tmp), "%s.flat.tmp", path);
    FILE *o = fopen(tmp, "wbe");
    uint64_t len;
    int ok = o && trace_write_flat(path, o, &len) == 0 && fsync(fileno(o)) == 0;
    if (o && fclose(o) != 0)
        ok = 0;
    if (!ok || rename(tmp, path) != 0) {
        unlink(tmp);
        return -1;
    }
    return 0;
}

int trace_next(struct trace_reader *r, struct trace_entry *e)
{
    if (!r->f || r->torn)
        return 0;
    if (r->base_left) { /* the parent's prefix first (invariant 3) */
        if (trace_next(r->base, e) != 1) {
            r->torn = 1;
            return 0;
        }
        r->base_left--;
        memcpy(r->buf, r->base->buf, e->rec.len);
        e->payload = r->buf + sizeof(struct rewind_record);
        r->count++;
        return 1;
    }
    uint8_t head[16];
    size_t n = fread(head, 1, 16, r->f);
    if (n == 0)
        return 0;
    if (n != 16)
        goto torn;
    if (fread(r->buf, 1, sizeof(struct rewind_record), r->f) != sizeof(struct rewind_record))
        goto torn;
    struct rewind_record rec;
    memcpy(&rec, r->buf, sizeof(rec));
    if (rec.len < sizeof(rec) || rec.len > REWIND_RECORD_MAX)
        goto torn;
    size_t rest = rec.len - sizeof(rec);
    size_t pad = ((16 + (size_t)rec.len + 7) & ~(size_t)7) - 16 - rec.len;
    if (fread(r->buf + sizeof(rec), 1, rest + pad, r->f) != rest + pad)
        goto torn;
    uint32_t crc = crc_32(crc_32(0, head, 8), r->buf, rec.len);
    if (crc != bytes_get_u32(head + 8))
        goto torn;
    /* the bytes the crc does not cover are written 0 (encode): a flipped
     * one is damage too (invariant 2; issue 27, 5) */
    uint8_t any = head[12] | head[13] | head[14] | head[15];
    for (size_t i = 0; i < pad; i++)
        any |= r->buf[rec.len + i];
    if (any)
        goto torn;
    RW_ASSERT(rec.len >= sizeof(rec) && rec.len <= REWIND_RECORD_MAX); /* invariant 2 */
    e->step = bytes_get_u64(head);
    e->rec = rec;
    e->payload = r->buf + sizeof(rec);
    e->payload_len = (uint32_t)rest;
    r->count++;
    return 1;
torn:
    r->torn = 1;
    return 0;
}

void trace_close_read(struct trace_reader *r)
{
    if (r->base) {
        trace_close_read(r->base);
        free(r->base);
    }
    r->base = NULL;
    if (r->f)
        fclose(r->f);
    r->f = NULL;
}
