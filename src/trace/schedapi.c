/*
 * schedapi: which thread held the guest's CPU (rw_sched_switches,
 * rw_sched_running in include/rewind.h), from the trace's SCHED records
 * (guest/include/rewind_abi.h, "Context switches"; checked by schedrec.c).
 *
 * A SCHED record at step S holds the switches the guest kernel made after
 * step S-1 and before step S, in order; so the thread that ran at step S
 * (the one whose port write was step S) is the `next` of the last switch in
 * the records at steps <= S. Each thread is named from the other records:
 * a record's pid and tid place the thread in its process, a fork places the
 * child (a thread in its parent's process, a process in its own), and an
 * exec names the process after its file (a fork inherits the name).
 *
 * Invariants:
 *  1. A SCHED record is used only after schedrec_parse accepted it; a
 *     record it refuses ends the read with an error naming its step.
 *  2. The thread table holds at most SCHEDAPI_MAX_THREADS threads (the
 *     trace is untrusted); threads beyond it are reported with pid 0 and
 *     name "?", never dropped from the switches.
 *  3. Steps reach the callback in trace order, only those in [from, to].
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/apierr.h"
#include "rewind.h"
#include "trace/schedrec.h"
#include "util/check.h"

#define SCHEDAPI_MAX_THREADS 65536

struct thread {
    uint32_t tid, pid; /* tid 0 marks a free slot (idle is never stored) */
    char name[32];
};

struct reader {
    uint64_t from, to;
    int (*fn)(void *ctx, const struct rw_sched_step *s);
    void *ctx;
    struct thread *t; /* open addressing on tid */
    size_t cap, n;
    int oom, bad, stop;
    char why[200];
    uint64_t bad_step;
    struct rw_sched_stats stats;
    struct rw_sched_switch sw[REWIND_SW_MAX];
    struct rw_sched_thread running; /* the next of the last switch so far */
    int have_running;
};

static struct thread *find_slot(struct thread *t, size_t cap, uint32_t tid)
{
    size_t i = (tid * 2654435761u) & (cap - 1);
    while (t[i].tid && t[i].tid != tid)
        i = (i + 1) & (cap - 1);
    return &t[i];
}

/* Double the table (at most to 2 * SCHEDAPI_MAX_THREADS slots). 0 or -1. */
static int grow(struct reader *r)
{
    if (r->cap >= 2 * SCHEDAPI_MAX_THREADS)
        return -1;
    size_t cap = r->cap ? r->cap * 2 : 1024;
    struct thread *t = calloc(cap, sizeof(*t));
    if (!t) {
        r->oom = 1;
        return -1;
    }
    for (size_t i = 0; i < r->cap; i++)
        if (r->t[i].tid)
            *find_slot(t, cap, r->t[i].tid) = r->t[i];
    free(r->t);
    r->t = t;
    r->cap = cap;
    return 0;
}

static struct thread *slot(struct reader *r, uint32_t tid, int add)
{
    if (tid == 0)
        return NULL;
    if (r->cap) {
        struct thread *t = find_slot(r->t, r->cap, tid);
        if (t->tid == tid)
            return t;
    }
    if (!add)
        return NULL;
    if ((r->n + 1) * 2 > r->cap && grow(r) < 0)
        return NULL; /* invariant 2: the table is full */
    struct thread *t = find_slot(r->t, r->cap, tid);
    t->tid = tid;
    r->n++;
    return t;
}

static struct thread *place(struct reader *r, uint32_t tid, uint32_t pid)
{
    struct thread *t = slot(r, tid, 1);
    if (t && !t->pid)
        t->pid = pid;
    return t;
}

static void set_name(struct thread *t, const char *s, size_t n)
{
    if (n >= sizeof(t->name))
        n = sizeof(t->name) - 1;
    memcpy(t->name, s, n);
    t->name[n] = 0;
}

/* An exec: the process's name is its file's last path component. */
static void on_exec(struct reader *r, const struct rw_event *ev)
{
    struct thread *t = place(r, ev->pid, ev->pid);
    if (!t)
        return;
    const char *p = (const char *)ev->payload;
    size_t len = strnlen(p, ev->payload_len);
    const char *base = memrchr(p, '/', len);
    base = base ? base + 1 : p;
    set_name(t, base, len - (size_t)(base - p));
}

static void on_fork(struct reader *r, const struct rw_event *ev)
{
    if (ev->aux == 0 || ev->aux > REWIND_TID_MAX)
        return;
    uint32_t child = (uint32_t)ev->aux;
    uint32_t pid = (ev->flags & 1) ? ev->pid : child;
    struct thread *c = place(r, child, pid);
    const struct thread *parent = slot(r, ev->pid, 0);
    if (c && !c->name[0]) {
        if (ev->pid == 2 && !(ev->flags & 1))
            set_name(c, "[kernel]", 8); /* kthreadd's children: kernel threads */
        else if (parent)
            memcpy(c->name, parent->name, sizeof(c->name));
    }
}

static void describe_thread(struct reader *r, uint32_t tid, struct rw_sched_thread *out)
{
    memset(out, 0, sizeof(*out));
    out->tid = tid;
    if (tid == 0) {
        memcpy(out->name, "idle", 5);
        return;
    }
    const struct thread *t = slot(r, tid, 0);
    const struct thread *leader = t && t->pid ? slot(r, t->pid, 0) : NULL;
    const char *name = leader && leader->name[0] ? leader->name : t && t->name[0] ? t->name : "?";
    out->pid = t ? t->pid : 0;
    if (tid == 2 && !out->pid)
        out->pid = 2, name = "[kthreadd]";
    snprintf(out->name, sizeof(out->name), "%s", name);
}

static void on_sched(struct reader *r, const struct rw_event *ev)
{
    struct rewind_record h = {.len = (uint32_t)(sizeof(h) + ev->payload_len),
                              .kind = (uint16_t)ev->kind,
                              .flags = (uint16_t)ev->flags,
                              .pid = ev->pid,
                              .tid = ev->tid,
                              .aux = ev->aux};
    struct rewind_switch sw[REWIND_SW_MAX];
    uint32_t n;
    uint64_t lost;
    if (schedrec_parse(&h, ev->payload, ev->payload_len, sw, &n, &lost, r->why, sizeof(r->why)) <
        0) { /* invariant 1 */
        r->bad = 1;
        r->bad_step = ev->step;
        return;
    }
    for (uint32_t i = 0; i < n; i++) {
        describe_thread(r, sw[i].prev, &r->sw[i].prev);
        describe_thread(r, sw[i].next, &r->sw[i].next);
    }
    if (n) {
        r->running = r->sw[n - 1].next;
        r->have_running = 1;
    }
    if (ev->step < r->from) /* invariant 3 */
        return;
    r->stats.records++;
    r->stats.switches += n;
    r->stats.lost += lost;
    if (r->fn) {
        struct rw_sched_step s = {.step = ev->step, .n = n, .sw = r->sw, .lost = lost};
        r->stop = r->fn(r->ctx, &s);
    }
}

static int on_event(void *ctx, const struct rw_event *ev)
{
    struct reader *r = ctx;
    if (ev->kind == REWIND_REC_SCHED) {
        on_sched(r, ev);
        return r->bad || r->stop;
    }
    if (ev->tid && ev->tid <= REWIND_TID_MAX && ev->pid <= REWIND_TID_MAX)
        place(r, ev->tid, ev->pid);
    if (ev->kind == REWIND_REC_EXEC)
        on_exec(r, ev);
    else if (ev->kind == REWIND_REC_FORK)
        on_fork(r, ev);
    return 0;
}

static int read_run(rw_home *h, const char *id, struct reader *r, struct rw_trace_status *st,
                    struct rw_error *err)
{
    struct rw_event_query q = RW_EVENTS_ALL;
    q.to = r->to;
    int rc = rw_events(h, id, &q, on_event, r, st, err);
    free(r->t);
    r->t = NULL;
    if (rc == 0 && r->bad)
        rc = apierr_set(err, RW_EINTERNAL, "run %s: bad trace record at step %llu: %s", id,
                        (unsigned long long)r->bad_step, r->why);
    return rc;
}

int rw_sched_switches(rw_home *h, const char *id, uint64_t from, uint64_t to,
                      int (*fn)(void *ctx, const struct rw_sched_step *s), void *ctx,
                      struct rw_sched_stats *stats, struct rw_trace_status *st,
                      struct rw_error *err)
{
    RW_ASSERT(h && id && fn);
    struct reader *r = calloc(1, sizeof(*r));
    if (!r)
        return apierr_set(err, RW_EINTERNAL, "out of memory");
    r->from = from;
    r->to = to;
    r->fn = fn;
    r->ctx = ctx;
    int rc = read_run(h, id, r, st, err);
    if (rc == 0 && stats)
        *stats = r->stats;
    free(r);
    return rc;
}

int rw_sched_running(rw_home *h, const char *id, uint64_t step, struct rw_sched_thread *out,
                     struct rw_trace_status *st, struct rw_error *err)
{
    RW_ASSERT(h && id && out);
    struct reader *r = calloc(1, sizeof(*r));
    if (!r)
        return apierr_set(err, RW_EINTERNAL, "out of memory");
    r->from = 0;
    r->to = step;
    int rc = read_run(h, id, r, st, err);
    if (rc == 0) {
        rc = r->have_running;
        *out = r->running;
    }
    free(r);
    return rc;
}
