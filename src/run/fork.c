/*
 * fork: a new run identical to a stored run through a step and perturbed
 * after it, started from the stored run's keyframe before that step (it
 * shares the parent's history and keyframes: explore.h invariant 1).
 */
#include "run/modes.h"

#include <stdio.h>
#include <string.h>

#include "home/runnames.h"
#include "util/check.h"

int run_fork_opts(struct run_opts *o, uint64_t schedule, uint64_t from, uint64_t until,
                  uint64_t origin, uint64_t horizon, struct rw_error *err)
{
    if (from == 0)
        return run_usage(err, "a fork needs a step after boot (1 or more)");
    if (schedule && sched_push(&o->sched, schedule, from, until, origin, horizon ? horizon : 1) < 0)
        return run_usage(err, "too many perturbation segments (forks of forks)");
    if (!schedule) {
        /* Schedule 0 after `from`: the parent's segments end there. */
        struct sched s = o->sched;
        o->sched.n = 0;
        for (unsigned i = 0; i < s.n; i++)
            if (s.seg[i].from < from) {
                o->sched.seg[o->sched.n] = s.seg[i];
                if (o->sched.seg[o->sched.n].until > from)
                    o->sched.seg[o->sched.n].until = from;
                o->sched.n++;
            }
        for (unsigned i = 0; i < o->sched.n; i++) /* explore.h invariant 1 */
            RW_ASSERT(o->sched.seg[i].until <= from);
    }
    return 0;
}

int run_fork(struct run_opts *o, const char *parent, uint64_t schedule, uint64_t from,
             uint64_t until, uint64_t origin, uint64_t horizon, struct rw_result *res,
             struct rw_error *err)
{
    memset(res, 0, sizeof(*res));
    if (run_fork_opts(o, schedule, from, until, origin, horizon, err) < 0)
        return -1;
    /* The keyframe at `from` was taken after the parent's step `from`; the
     * fork's own decision at `from` needs the state before it. */
    struct run_ctx c;
    int rc = run_prepare(&c, o, NULL, RUN_KEEP, 1, res, err);
    if (rc == 0)
        rc = run_restore(&c, parent, from - 1, from);
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
        st.o.quiet = 0;
        st.o.name = op->name;
        st.o.obs = &op->observer;
        st.o.abort = op->abort;
        st.o.max_trace_mb = op->max_trace_mb;
        st.o.max_disk_mb = op->max_disk_mb;
        st.o.spin_limit_s = op->spin_limit_s;
        rc = run_fork(&st.o, st.name, op->schedule, step, op->schedule_until, step, st.steps - step,
                      res, err);
    }
    run_stored_free(&st);
    return rc;
}
