/*
 * events: a run's trace as the public stream of struct rw_event
 * (include/rewind.h): rw_events with a step, position and kind filter, and
 * rw_log, its output events. The trace format is in trace.h.
 *
 * Invariants:
 *  1. Events reach the callback in trace order; reading stops at the first
 *     entry past the query's last step or position, so a torn tail after
 *     that point is never reported.
 *  2. A mark record whose payload is an SDK line (trace/sdk.h) is reported
 *     as kind assert, for the filter too; its payload is unchanged.
 *  3. The trace path is built by home_path from a checked run directory
 *     name (util/homepath.h, invariant 2).
 *  4. Every event names the node of its process (trace/nodemap.h), from
 *     every record before it, those outside the query's range included.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/apierr.h"
#include "util/homepath.h"
#include "rewind.h"
#include "trace/describe.h"
#include "trace/nodemap.h"
#include "trace/sdk.h"
#include "trace/trace.h"
#include "util/check.h"

/* ev from e; an unknown kind's name is written into kind_buf
 * (RW_KIND_NAME_MAX bytes), which lives as long as the payload. */
static void to_event(const struct trace_entry *e, uint64_t index, struct rw_event *ev,
                     char *kind_buf)
{
    *ev = (struct rw_event){
        .index = index,
        .step = e->step,
        .kind = sdk_record_kind(e->rec.kind, e->payload, e->payload_len),
        .pid = e->rec.pid,
        .tid = e->rec.tid,
        .aux = e->rec.aux,
        .flags = e->rec.flags,
        .payload = e->payload,
        .payload_len = e->payload_len,
    };
    ev->kind_name = describe_kind(ev->kind, kind_buf);
}

int rw_events(rw_home *h, const char *id, const struct rw_event_query *q,
              int (*fn)(void *ctx, const struct rw_event *ev), void *ctx,
              struct rw_trace_status *st, struct rw_error *err)
{
    RW_ASSERT(h && id && q && fn);
    struct rw_trace_status local;
    st = st ? st : &local;
    memset(st, 0, sizeof(*st));
    if (home_path(st->path, sizeof(st->path), rw_home_path(h), HOME_RUNS, id, "trace") < 0)
        return apierr_set(err, RW_EUSAGE, "bad run name '%s'", id);
    struct trace_reader *r = malloc(sizeof(*r));
    if (!r)
        return apierr_set(err, RW_EINTERNAL, "out of memory");
    int o = trace_open_read(r, st->path);
    if (o < 0) {
        int e = errno;
        free(r);
        if (o == -2)
            return apierr_set(err, RW_EINTERNAL,
                              "%s is not a rewind trace (corrupt or foreign file)", st->path);
        return apierr_set(err, RW_EINTERNAL, "cannot read %s: %s", st->path, strerror(e));
    }
    struct trace_entry e;
    char kind_buf[RW_KIND_NAME_MAX];
    struct nodemap nm; /* invariant 4 */
    nodemap_init(&nm);
    for (uint64_t i = 0; trace_next(r, &e); i++) {
        if (e.step > q->to || i > q->last_index)
            break;
        nodemap_feed(&nm, e.rec.kind, e.rec.flags, e.rec.pid, e.rec.aux, e.payload, e.payload_len);
        if (e.step < q->from || i < q->first_index)
            continue;
        struct rw_event ev;
        to_event(&e, i, &ev, kind_buf); /* an SDK line in a mark record is kind assert */
        if (e.rec.kind == REWIND_REC_FAULT) {
            /* docs/faults.md: a fault belongs to its target node, not to
             * the task its step's interrupt happened to cut into */
            ev.node = nodemap_name(&nm, (unsigned)((e.rec.aux >> 8) & 0xff));
            ev.pid = ev.tid = 0;
        } else {
            ev.node = nodemap_of(&nm, ev.pid);
        }
        if (q->kind && ev.kind != q->kind)
            continue;
        if (fn(ctx, &ev))
            break;
    }
    nodemap_free(&nm);
    st->torn = r->torn;
    st->records = r->count;
    trace_close_read(r);
    free(r);
    return 0;
}

int rw_log(rw_home *h, const char *id, uint64_t upto,
           int (*fn)(void *ctx, const struct rw_event *ev), void *ctx, struct rw_trace_status *st,
           struct rw_error *err)
{
    struct rw_event_query q = RW_EVENTS_ALL;
    q.to = upto;
    q.kind = REWIND_REC_OUTPUT;
    return rw_events(h, id, &q, fn, ctx, st, err);
}

const char *rw_event_kind_name(unsigned kind, char buf[RW_KIND_NAME_MAX])
{
    return describe_kind(kind, buf);
}

unsigned rw_event_kind(const char *name)
{
    return describe_kind_number(name);
}

void rw_event_describe(const struct rw_event *ev, char *out, size_t n)
{
    struct trace_entry e = {
        .step = ev->step,
        .rec = {.len = (uint32_t)(sizeof(struct rewind_record) + ev->payload_len),
                .kind = (uint16_t)ev->kind,
                .flags = (uint16_t)ev->flags,
                .pid = ev->pid,
                .tid = ev->tid,
                .aux = ev->aux},
        .payload = ev->payload,
        .payload_len = (uint32_t)ev->payload_len,
    };
    describe_entry(&e, out, n);
}
