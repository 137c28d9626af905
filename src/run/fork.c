/*
 * fork: a new run identical to a stored run through a step and perturbed
 * after it, started from the stored run's keyframe before that step (it
 * shares the parent's history and keyframes: explore.h invariant 1). A
 * kept gdb session (rw_fork_patched) is a fork whose new input is gdb's
 * writes at a step instead of a schedule (src/input/patch.h).
 */
#include "run/modes.h"

#include <stdio.h>
#include <string.h>

#include "home/runnames.h"
#include "input/patch.h"
#include "util/check.h"

int run_fork_opts(struct run_opts *o, const struct sched_segment *g, struct rw_error *err)
{
    if (g->span_from == 0)
        return run_usage(err, "a fork needs a step after boot (1 or more)");
    if (g->schedule && sched_push_span(&o->sched, g->schedule, g->span_from, g->span_until, g->from,
                                       g->until, g->origin, g->horizon ? g->horizon : 1) < 0)
        return run_usage(err, "too many perturbation segments (forks of forks)");
    if (!g->schedule)
        sched_end_at(&o->sched, g->span_from);    /* schedule 0 after the fork step */
    for (unsigned i = 0; i + 1 < o->sched.n; i++) /* explore.h invariant 1 */
        RW_ASSERT(o->sched.seg[i].span_until <= g->span_from);
    return 0;
}

int run_fork(struct run_opts *o, const char *parent, const struct sched_segment *g,
             struct rw_result *res, struct rw_error *err)
{
    memset(res, 0, sizeof(*res));
    if (run_fork_opts(o, g, err) < 0)
        return -1;
    /* The keyframe at the fork step was taken after the parent's step
     * there; the fork's own decision at that step needs the state before it. */
    struct run_ctx c;
    int rc = run_prepare(&c, o, NULL, RUN_KEEP, 1, res, err);
    if (rc == 0)
        rc = run_restore(&c, parent, g->span_from - 1, g->span_from);
    return run_through(&c, rc);
}

int rw_fork(rw_home *h, const char *ref, uint64_t step, const struct rw_options *op,
            struct rw_result *res, struct rw_error *err)
{
    struct run_stored st;
    memset(res, 0, sizeof(*res));
    if (run_stored_at(h, ref, step, 0, op, &st, err) < 0)
        return -1;
    int rc;
    if (op->schedule_until <= step) {
        rc = run_usage(err, "--schedule-until must be after STEP");
    } else if (op->name && !runnames_valid(op->name)) {
        rc = run_usage(err, "--name must be a name, not shaped like a run id: %s", op->name);
    } else {
        run_stored_runtime(&st.o, op);
        st.o.name = op->name;
        struct sched_segment g =
            sched_window(op->schedule, step, op->schedule_until, step, st.steps - step);
        rc = run_fork(&st.o, st.name, &g, res, err);
    }
    run_stored_free(&st);
    return rc;
}

int rw_patch_base(rw_home *h, const char *ref, uint64_t step, struct rw_patch *p,
                  struct rw_error *err)
{
    struct run_stored st;
    struct rw_options op;
    rw_options_init(&op);
    if (run_stored_at(h, ref, step, 0, &op, &st, err) < 0)
        return -1;
    int rc = 0;
    memset(p, 0, sizeof(*p));
    p->at = step;
    if (st.o.patch && st.o.patch->at != step)
        rc = run_usage(err,
                       "run %s holds gdb's writes at step %llu: a kept session on it must be "
                       "at that step too (a run holds the writes of one step)",
                       ref, (unsigned long long)st.o.patch->at);
    else if (st.o.patch)
        *p = *st.o.patch; /* the session adds to them */
    run_stored_free(&st);
    return rc;
}

int rw_fork_patched(rw_home *h, const char *ref, const struct rw_patch *p,
                    const struct rw_options *op, struct rw_result *res, struct rw_error *err)
{
    struct run_stored st;
    memset(res, 0, sizeof(*res));
    if (p->at == 0 || p->n == 0 || p->n > RW_PATCH_OPS_MAX)
        return run_usage(err, "a kept session needs gdb's writes at a step (1 or more)");
    if (run_stored_at(h, ref, p->at, 0, op, &st, err) < 0)
        return -1;
    int rc = 0;
    if (st.o.patch && st.o.patch->at != p->at)
        rc = run_usage(err, "run %s holds gdb's writes at step %llu, not %llu", ref,
                       (unsigned long long)st.o.patch->at, (unsigned long long)p->at);
    /* The machine as `rewind gdb ref at` found it: the parent's segments
     * through step `at` (they end at at + 1), then unperturbed. */
    struct sched_segment g0 = sched_window(0, p->at + 1, UINT64_MAX, 0, 0);
    if (rc == 0)
        rc = run_fork_opts(&st.o, &g0, err);
    if (rc == 0) {
        free((struct rw_patch *)st.o.patch);
        st.o.patch = p; /* not ours: run_stored_free must not free it */
        run_stored_runtime(&st.o, op);
        struct run_ctx c;
        rc = run_prepare(&c, &st.o, NULL, RUN_KEEP, 1, res, err);
        /* patch.h invariant 3: from a keyframe before `at`, never at it. */
        if (rc == 0)
            rc = run_restore(&c, st.name, p->at - 1, p->at);
        if (rc == 0)
            RW_ASSERT(c.p->step < p->at);
        rc = run_through(&c, rc);
        st.o.patch = NULL;
    }
    run_stored_free(&st);
    return rc;
}
