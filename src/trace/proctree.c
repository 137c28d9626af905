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
 *  3. Every step is O(1) or O(n) in the processes alive (issue 27, 6: a
 *     chain of 8,000 forks or 40,000 processes under init took half a
 *     minute): pids are found through a hash map, an exit does not walk the
 *     table (its children are handed to init when reported: a parent
 *     entry forked after the child is a reused pid, not its parent), and
 *     the report walks a child index once, without recursion. Every loop
 *     step is counted (work, per thread: proctree.h), so a test holds
 *     rw_ps to that bound without a clock.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/apierr.h"
#include "rewind.h"
#include "trace/proctree.h"
#include "trace/trace.h"
#include "util/check.h"

#define PROCTREE_MAX_DEPTH 4096

/* invariant 3: the loop steps and events of this thread's rw_ps */
static _Thread_local uint64_t work, applied;

void proctree_last_work(uint64_t *steps, uint64_t *events)
{
    *steps = work;
    *events = applied;
}

/* The live processes: a table (v, with each entry's serial: the order of
 * its fork) and a pid -> index map (open addressing, linear probing). */
struct tree {
    uint64_t upto;
    struct rw_proc *v;
    uint64_t *serial; /* per entry: its fork's order (invariant 3) */
    size_t n, cap;
    uint32_t *map; /* index + 1, 0: empty; mcap slots, a power of 2 */
    size_t mcap;
    uint64_t next_serial;
    int oom;
};

static size_t slot_of(uint32_t pid, size_t mcap)
{
    return (size_t)((pid * 2654435761u) & (mcap - 1));
}

/* The map slot holding pid, or the empty slot where it would go. */
static size_t map_slot(const struct tree *t, uint32_t pid)
{
    size_t s = slot_of(pid, t->mcap);
    while (t->map[s] && t->v[t->map[s] - 1].pid != pid) {
        s = (s + 1) & (t->mcap - 1);
        work++;
    }
    return s;
}

static struct rw_proc *find(struct tree *t, uint32_t pid)
{
    if (!t->mcap)
        return NULL;
    size_t s = map_slot(t, pid);
    return t->map[s] ? &t->v[t->map[s] - 1] : NULL;
}

/* Remove the map slot s, shifting back the entries of its probe run. */
static void map_remove(struct tree *t, size_t s)
{
    size_t m = t->mcap - 1, j = s;
    t->map[s] = 0;
    for (;;) {
        j = (j + 1) & m;
        work++;
        if (!t->map[j])
            return;
        size_t home = slot_of(t->v[t->map[j] - 1].pid, t->mcap);
        /* move j back into s unless its home lies cyclically in (s, j] */
        if ((j > s && (home <= s || home > j)) || (j < s && home <= s && home > j)) {
            t->map[s] = t->map[j];
            t->map[j] = 0;
            s = j;
        }
    }
}

static int grow(struct tree *t)
{
    size_t cap = t->cap ? t->cap * 2 : 64;
    struct rw_proc *nv = realloc(t->v, cap * sizeof(*nv));
    if (nv)
        t->v = nv;
    uint64_t *ns = nv ? realloc(t->serial, cap * sizeof(*ns)) : NULL;
    if (ns)
        t->serial = ns;
    uint32_t *nm = ns && cap <= UINT32_MAX / 2 ? calloc(2 * cap, sizeof(*nm)) : NULL;
    if (!nm)
        return -1;
    free(t->map);
    t->map = nm;
    t->mcap = 2 * cap;
    t->cap = cap;
    for (size_t i = 0; i < t->n; i++, work++) /* rehash */
        t->map[map_slot(t, t->v[i].pid)] = (uint32_t)(i + 1);
    return 0;
}

static struct rw_proc *add(struct tree *t, uint32_t pid, uint32_t ppid)
{
    RW_ASSERT(!find(t, pid)); /* invariant 1 */
    if (t->n == t->cap && grow(t) < 0) {
        t->oom = 1;
        return NULL;
    }
    struct rw_proc *p = &t->v[t->n];
    memset(p, 0, sizeof(*p));
    p->pid = pid;
    p->ppid = ppid;
    t->serial[t->n] = t->next_serial++;
    t->map[map_slot(t, pid)] = (uint32_t)(++t->n);
    return p;
}

/* A leader's exit: its children are not touched here; they are handed to
 * init when the tree is reported (invariant 3), so an exit costs O(1). */
static void drop(struct tree *t, uint32_t pid)
{
    if (!t->mcap)
        return;
    size_t s = map_slot(t, pid);
    if (!t->map[s])
        return;
    size_t i = t->map[s] - 1;
    map_remove(t, s);
    if (i != --t->n) { /* the last entry takes its place */
        t->v[i] = t->v[t->n];
        t->serial[i] = t->serial[t->n];
        t->map[map_slot(t, t->v[i].pid)] = (uint32_t)(i + 1);
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
    applied++;
    if (e->node && (p = find(t, e->pid)) && !p->node[0]) /* a node's leader: its node */
        snprintf(p->node, sizeof(p->node), "%s", e->node);
    switch (e->kind) {
    case REWIND_REC_FORK:
        if (e->flags & 1) {
            if ((p = find(t, e->pid)))
                p->threads++;
        } else if (!find(t, (uint32_t)e->aux)) {
            struct rw_proc *parent;
            p = add(t, (uint32_t)e->aux, e->pid);
            if (p && (parent = find(t, e->pid))) {
                memcpy(p->argv, parent->argv, sizeof(p->argv));
                memcpy(p->node, parent->node, sizeof(p->node)); /* the parent's node */
            }
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

/* The parent of entry i as the kernel sees it now: the entry of its ppid
 * if that process was forked before it (the same process), else init (the
 * parent exited, its pid may be reused by a later process). -1: none. */
static long parent_of(struct tree *t, size_t i)
{
    struct rw_proc *p = find(t, t->v[i].ppid);
    if (!p || t->serial[p - t->v] > t->serial[i])
        p = find(t, 1);
    return p ? (long)(p - t->v) : -1;
}

struct frame {
    size_t at, next; /* an entry, and the cursor into its children */
    int depth;
};

/* init's descendants, each before its children, children in table order,
 * each process once (invariant 2): an iterative walk of a child index
 * built once, O(n) after the O(n) index (issue 27, 6). */
static int report(struct tree *t, size_t root, int (*fn)(void *ctx, const struct rw_proc *p),
                  void *ctx)
{
    size_t n = t->n;
    size_t *first = calloc(n + 2, sizeof(*first)), *kids = malloc((n + 1) * sizeof(*kids));
    long *par = malloc((n + 1) * sizeof(*par));
    uint8_t *done = calloc(n + 1, 1);
    struct frame *st = malloc((n + 1) * sizeof(*st));
    int stop = 0;
    if (!first || !kids || !par || !done || !st) {
        stop = -1;
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        par[i] = parent_of(t, i);
        /* A trace can make a pid cycle (FORK 1->5, EXIT 1, FORK 5->1): init
         * is reported only as the root, nothing as its own child. */
        if (par[i] < 0 || (size_t)par[i] == i || t->v[i].pid == 1)
            par[i] = -1;
        else
            first[par[i] + 1]++;
    }
    for (size_t i = 0; i < n; i++)
        first[i + 1] += first[i];
    for (size_t i = 0; i < n; i++) /* children in table order; first[p] moves to p's end */
        if (par[i] >= 0)
            kids[first[par[i]]++] = i;
    for (size_t i = n; i > 0; i--) /* back to starts: p's start is p - 1's end */
        first[i] = first[i - 1];
    first[0] = 0;
    size_t sp = 0;
    st[sp++] = (struct frame){.at = root, .next = first[root], .depth = 1};
    done[root] = 1;
    work += 4 * (uint64_t)n; /* the index's four passes above */
    while (sp && !stop) {
        work++;
        struct frame *f = &st[sp - 1];
        if (f->next == first[f->at + 1]) {
            sp--;
            continue;
        }
        size_t c = kids[f->next++];
        if (done[c])
            continue;
        done[c] = 1;
        struct rw_proc p = t->v[c];
        p.ppid = t->v[f->at].pid;
        p.threads++; /* the leader */
        p.depth = f->depth;
        stop = fn(ctx, &p);
        if (f->depth + 1 < PROCTREE_MAX_DEPTH) { /* depths 1 .. MAX - 1, as before */
            RW_ASSERT(sp <= n);
            st[sp++] = (struct frame){.at = c, .next = first[c], .depth = f->depth + 1};
        }
    }
out:
    free(first);
    free(kids);
    free(par);
    free(done);
    free(st);
    return stop < 0 ? -1 : 0;
}

int rw_ps(rw_home *h, const char *id, uint64_t upto, int (*fn)(void *ctx, const struct rw_proc *p),
          void *ctx, struct rw_trace_status *st, struct rw_error *err)
{
    struct tree t = {.upto = upto};
    work = applied = 0;
    struct rw_proc *init = add(&t, 1, 0);
    if (init)
        memcpy(init->argv, "/init", sizeof("/init"));
    struct rw_event_query q = RW_EVENTS_ALL;
    q.to = upto;
    int rc = rw_events(h, id, &q, apply, &t, st, err);
    if (rc == 0 && t.oom)
        rc = apierr_set(err, RW_EINTERNAL, "out of memory");
    struct rw_proc *root = find(&t, 1);
    int stop = 0;
    if (root) {
        /* init as the kernel started it, whatever it exec'd since */
        struct rw_proc p = {.pid = 1, .ppid = 0, .threads = 1, .depth = 0, .argv = "/init"};
        stop = fn(ctx, &p);
    }
    if (root && !stop && report(&t, (size_t)(root - t.v), fn, ctx) < 0 && rc == 0)
        rc = apierr_set(err, RW_EINTERNAL, "out of memory");
    free(t.v);
    free(t.serial);
    free(t.map);
    return rc;
}
