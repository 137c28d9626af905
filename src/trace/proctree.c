/*
 * proctree: the processes alive at a step of a run (rw_ps in
 * include/rewind.h), rebuilt from the trace's fork, exec and exit events.
 *
 * A fork adds the child (it inherits the parent's argv until it execs), a
 * thread fork counts a thread of its process, an exec sets the argv, an
 * exit of a leader drops the process and hands its children to init (as
 * the kernel reparents orphans). Kernel threads are not init's descendants
 * and are left out.
 *
 * Invariants:
 *  1. Every pid appears at most once in the table.
 *  2. init (pid 1) is reported first, then each process before its
 *     children, each process once.
 */
#include <stdlib.h>
#include <string.h>

#include "util/apierr.h"
#include "rewind.h"
#include "trace/trace.h"
#include "util/check.h"

#define PROCTREE_MAX_DEPTH 4096

struct tree {
    uint64_t upto;
    struct rw_proc *v;
    size_t n, cap;
    int oom;
};

static struct rw_proc *find(struct tree *t, uint32_t pid)
{
    for (size_t i = 0; i < t->n; i++)
        if (t->v[i].pid == pid)
            return &t->v[i];
    return NULL;
}

static struct rw_proc *add(struct tree *t, uint32_t pid, uint32_t ppid)
{
    RW_ASSERT(!find(t, pid));
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 64;
        struct rw_proc *nv = realloc(t->v, cap * sizeof(*nv));
        if (!nv) {
            t->oom = 1;
            return NULL;
        }
        t->v = nv;
        t->cap = cap;
    }
    struct rw_proc *p = &t->v[t->n++];
    memset(p, 0, sizeof(*p));
    p->pid = pid;
    p->ppid = ppid;
    return p;
}

static void drop(struct tree *t, uint32_t pid)
{
    for (size_t i = 0; i < t->n; i++)
        if (t->v[i].ppid == pid)
            t->v[i].ppid = 1;
    for (size_t i = 0; i < t->n; i++)
        if (t->v[i].pid == pid) {
            t->v[i] = t->v[--t->n];
            return;
        }
}

/* EXEC payload: path NUL argv0 NUL argv1 ... ; keep argv joined by spaces. */
static void set_argv(struct rw_proc *p, const uint8_t *pl, size_t n)
{
    const uint8_t *z = memchr(pl, 0, n);
    size_t o = 0;
    if (!z)
        return;
    for (const uint8_t *s = z + 1; s < pl + n && o + 2 < sizeof(p->argv); s++)
        p->argv[o++] = *s ? (char)*s : ' ';
    while (o && p->argv[o - 1] == ' ')
        o--;
    p->argv[o] = 0;
}

static int apply(void *ctx, const struct rw_event *e)
{
    struct tree *t = ctx;
    struct rw_proc *p;
    switch (e->kind) {
    case REWIND_REC_FORK:
        if (e->flags & 1) {
            if ((p = find(t, e->pid)))
                p->threads++;
        } else if (!find(t, (uint32_t)e->aux)) {
            struct rw_proc *parent;
            p = add(t, (uint32_t)e->aux, e->pid);
            if (p && (parent = find(t, e->pid)))
                memcpy(p->argv, parent->argv, sizeof(p->argv));
        }
        break;
    case REWIND_REC_EXEC:
        if ((p = find(t, e->pid)))
            set_argv(p, e->payload, e->payload_len);
        break;
    case REWIND_REC_EXIT:
        if (e->tid == e->pid)
            drop(t, e->pid);
        else if ((p = find(t, e->pid)) && p->threads > 0)
            p->threads--;
        break;
    default:
        break;
    }
    return 0;
}

static int under_init(struct tree *t, const struct rw_proc *p)
{
    for (int depth = 0; p && depth < PROCTREE_MAX_DEPTH; depth++) {
        if (p->pid == 1)
            return 1;
        p = find(t, p->ppid);
    }
    return 0;
}

struct report {
    int (*fn)(void *ctx, const struct rw_proc *p);
    void *ctx;
    int stop;
    uint8_t *done; /* per table entry: reported (invariant 2) */
};

static void report(struct tree *t, struct report *r, uint32_t pid, int depth)
{
    for (size_t i = 0; i < t->n && !r->stop; i++) {
        struct rw_proc p = t->v[i];
        /* A trace can make a pid cycle (FORK 1->5, EXIT 1, FORK 5->1): each
         * process is reported once, init only as the root. */
        if (p.ppid != pid || p.pid == pid || p.pid == 1 || r->done[i])
            continue;
        r->done[i] = 1;
        p.threads++; /* the leader */
        p.depth = depth;
        r->stop = r->fn(r->ctx, &p);
        if (depth < PROCTREE_MAX_DEPTH)
            report(t, r, p.pid, depth + 1);
    }
}

int rw_ps(rw_home *h, const char *id, uint64_t upto, int (*fn)(void *ctx, const struct rw_proc *p),
          void *ctx, struct rw_trace_status *st, struct rw_error *err)
{
    struct tree t = {.upto = upto};
    struct rw_proc *init = add(&t, 1, 0);
    if (init)
        memcpy(init->argv, "/init", sizeof("/init"));
    struct rw_event_query q = RW_EVENTS_ALL;
    q.to = upto;
    int rc = rw_events(h, id, &q, apply, &t, st, err);
    if (rc == 0 && t.oom)
        rc = apierr_set(err, RW_EINTERNAL, "out of memory");
    /* Keep only init's descendants (kernel threads hang off kthreadd). */
    for (size_t i = 0; i < t.n;)
        if (!under_init(&t, &t.v[i]))
            t.v[i] = t.v[--t.n];
        else
            i++;
    struct report r = {.fn = fn, .ctx = ctx, .done = calloc(t.n + 1, 1)};
    if (!r.done) {
        free(t.v);
        return apierr_set(err, RW_EINTERNAL, "out of memory");
    }
    if (find(&t, 1)) {
        /* init as the kernel started it, whatever it exec'd since */
        struct rw_proc p = {.pid = 1, .ppid = 0, .threads = 1, .depth = 0, .argv = "/init"};
        r.stop = fn(ctx, &p);
    }
    if (!r.stop)
        report(&t, &r, 1, 1);
    free(r.done);
    free(t.v);
    return rc;
}
