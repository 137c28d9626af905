/*
 * sdk_report: rw_sdk_assertions (include/rewind.h), a run's SDK
 * assertions: its catalog entries merged with its evaluations, from the
 * run's trace (docs/sdk.md).
 *
 * Invariants:
 *  1. An assertion is keyed by (kind, message): every catalog entry and
 *     evaluation with the same key lands in the same entry, whatever its
 *     file, line or process.
 *  2. hits == passes + fails for every entry; first_fail_step is the step
 *     of the first false evaluation (UINT64_MAX when none).
 *  3. The table is bounded by the trace (one entry per distinct key), and
 *     lookups are hashed, so a hostile trace with many keys costs linear
 *     time, not quadratic.
 *  4. Entries reach the callback sorted by (file, line, kind, message), a
 *     function of the set of entries alone.
 */
#include <stdlib.h>
#include <string.h>

#include "util/apierr.h"
#include "rewind.h"
#include "trace/sdk.h"
#include "trace/trace.h"
#include "util/check.h"

struct entry {
    struct rw_sdk_assertion a;
    char *msg, *file;
    int file_from_hit; /* file/line come from an evaluation */
};

struct table {
    struct entry *v;
    size_t n, cap;
    size_t *slot; /* hash slots: index + 1, 0 empty */
    size_t nslot;
    int oom;
};

static uint64_t key_hash(enum rw_sdk_kind k, const char *msg)
{
    uint64_t h = 1469598103934665603ull ^ (uint64_t)k;
    for (const unsigned char *p = (const unsigned char *)msg; *p; p++)
        h = (h ^ *p) * 1099511628211ull;
    return h;
}

static int rehash(struct table *t, size_t nslot)
{
    size_t *s = calloc(nslot, sizeof(*s));
    if (!s)
        return -1;
    for (size_t i = 0; i < t->n; i++) {
        size_t j = key_hash(t->v[i].a.kind, t->v[i].msg) & (nslot - 1);
        while (s[j])
            j = (j + 1) & (nslot - 1);
        s[j] = i + 1;
    }
    free(t->slot);
    t->slot = s;
    t->nslot = nslot;
    return 0;
}

static struct entry *lookup(struct table *t, enum rw_sdk_kind k, const char *msg)
{
    if ((t->n + 1) * 2 > t->nslot && rehash(t, t->nslot ? t->nslot * 2 : 64) < 0)
        return NULL;
    size_t j = key_hash(k, msg) & (t->nslot - 1);
    for (; t->slot[j]; j = (j + 1) & (t->nslot - 1)) {
        struct entry *e = &t->v[t->slot[j] - 1];
        if (e->a.kind == k && !strcmp(e->msg, msg))
            return e;
    }
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 32;
        struct entry *v = realloc(t->v, cap * sizeof(*v));
        if (!v)
            return NULL;
        t->v = v;
        t->cap = cap;
    }
    struct entry *e = &t->v[t->n];
    memset(e, 0, sizeof(*e));
    e->msg = strdup(msg);
    e->file = strdup("");
    if (!e->msg || !e->file) {
        free(e->msg);
        free(e->file);
        return NULL;
    }
    e->a.kind = k;
    e->a.first_fail_step = UINT64_MAX;
    t->slot[j] = ++t->n;
    return e;
}

static void set_where(struct entry *e, const struct sdk_line *l)
{
    char *f = strdup(l->file);
    if (!f)
        return; /* keeps the earlier location */
    free(e->file);
    e->file = f;
    e->a.line = l->line;
}

static int on_event(void *ctx, const struct rw_event *ev)
{
    struct table *t = ctx;
    struct sdk_line l;
    if (ev->kind != REWIND_REC_ASSERT || sdk_parse(ev->payload, ev->payload_len, &l) < 0 ||
        l.verb == SDK_POINT)
        return 0;
    struct entry *e = lookup(t, l.kind, l.msg);
    if (!e) {
        t->oom = 1;
        return 1;
    }
    if (l.verb == SDK_CATALOG) {
        if (!e->a.catalogued && !e->file_from_hit)
            set_where(e, &l);
        e->a.catalogued = 1;
        return 0;
    }
    if (!e->file_from_hit) {
        set_where(e, &l);
        e->file_from_hit = 1;
    }
    e->a.hits++;
    if (l.result) {
        e->a.passes++;
    } else {
        e->a.fails++;
        if (e->a.first_fail_step == UINT64_MAX)
            e->a.first_fail_step = ev->step;
    }
    RW_ASSERT(e->a.hits == e->a.passes + e->a.fails);
    return 0;
}

static int by_place(const void *x, const void *y)
{
    const struct entry *a = x, *b = y;
    int c = strcmp(a->file, b->file);
    if (c)
        return c;
    if (a->a.line != b->a.line)
        return a->a.line < b->a.line ? -1 : 1;
    if (a->a.kind != b->a.kind)
        return a->a.kind < b->a.kind ? -1 : 1;
    return strcmp(a->msg, b->msg);
}

static void judge(struct rw_sdk_assertion *a)
{
    switch (a->kind) {
    case RW_SDK_ALWAYS:
    case RW_SDK_ALWAYS_OR_UNREACHABLE:
        a->failed = a->fails > 0;
        break;
    case RW_SDK_UNREACHABLE:
        a->failed = a->hits > 0;
        if (a->hits && a->first_fail_step == UINT64_MAX)
            a->first_fail_step = 0; /* only a malformed "hit 1" line gets here */
        break;
    default:
        a->failed = 0; /* judged across a check */
        break;
    }
}

int rw_sdk_assertions(rw_home *h, const char *id,
                      int (*fn)(void *ctx, const struct rw_sdk_assertion *a), void *ctx,
                      struct rw_error *err)
{
    RW_ASSERT(h && id && fn);
    struct table t = {0};
    struct rw_event_query q = RW_EVENTS_ALL;
    q.kind = REWIND_REC_ASSERT;
    int rc = rw_events(h, id, &q, on_event, &t, NULL, err);
    if (rc == 0 && t.oom)
        rc = apierr_set(err, RW_EINTERNAL, "out of memory reading the assertions of %s", id);
    if (rc == 0) {
        qsort(t.v, t.n, sizeof(*t.v), by_place);
        for (size_t i = 0; i < t.n; i++) {
            struct entry *e = &t.v[i];
            judge(&e->a);
            e->a.msg = e->msg;
            e->a.file = e->file;
            if (fn(ctx, &e->a))
                break;
        }
        rc = (int)t.n;
    }
    for (size_t i = 0; i < t.n; i++) {
        free(t.v[i].msg);
        free(t.v[i].file);
    }
    free(t.v);
    free(t.slot);
    return rc;
}
