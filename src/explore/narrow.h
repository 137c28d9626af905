/*
 * narrow: a failing schedule's perturbed window narrowed by search to the
 * one step whose action decides the outcome (explore.h). The search only
 * asks for probes: each is a run of the failing schedule's actions in a
 * window [from, until) with its bursts everywhere (src/input/sched.h
 * invariant 3), started through narrow_env's probe callback. check.c's
 * callback forks the run in a worker (cworker.h); tests/engine/narrow_test.c
 * gives one whose outcome is a function of the window alone, so the search
 * is tested in-process.
 *
 * Invariants (check.c's 2, 3 and 6, as the search keeps them):
 *  1. A timed-out run is never the passing side of a narrowed pair.
 *  2. The candidate steps end at the longer trace present on disk (the
 *     failing run's or schedule 0's), never at a manifest's "steps" alone.
 *  3. Every probe differs from the failing schedule only by the actions it
 *     leaves out; the narrowed pair differs by the action at the deciding
 *     step alone. When the bursts alone (no action) fail too, no step
 *     decides: rep->bursts_decide, fail_run that run, pass_run env->ref.
 *  4. The search makes O(log n) probes over the n perturbed steps: two
 *     binary searches, then the pair (and, when the outcomes are not
 *     monotone in the window's start, the pair of the first search's prefix).
 */
#ifndef REWIND_EXPLORE_NARROW_H
#define REWIND_EXPLORE_NARROW_H

#include <stddef.h>
#include <stdint.h>

#include "rewind.h"
#include "run/ctx.h"

struct narrow_env {
    const char *home;                /* the probes' traces: access points, faults carried out */
    const struct run_opts *base;     /* the schedules' seed, fault settings and nodes */
    uint64_t horizon;                /* of the failing schedule's segment */
    uint64_t last_step;              /* the last step of schedule 0's trace (invariant 2) */
    int props;                       /* a run fails by its props_failed ... */
    const struct rw_check_side *ref; /* ... else by ending unlike this run */
    /* Run probe [from, until) of schedule rep->schedule (its bursts from
     * rep->start + 1 on): the run, judged, into *out. 0, or -1 with err. */
    int (*probe)(void *ctx, uint64_t from, uint64_t until, struct rw_check_side *out, char *err,
                 size_t errlen);
    void *ctx;
};

/* Does side s fail: by its properties (props), or by ending unlike ref (a
 * different outcome, exit status or output: explore.h invariant 3). */
int explore_side_bad(int props, const struct rw_check_side *s, const struct rw_check_side *ref);

/* Narrow rep->failing (schedule rep->schedule, forked after rep->start) to
 * its deciding step: rep's window, deciding step and words, pass_run and
 * fail_run, narrowed or bursts_decide; rep->probes and rep->timeouts count
 * the probes. 0, or -1 with err. */
int explore_narrow(const struct narrow_env *env, struct rw_check_report *rep, char *err,
                   size_t errlen);

#endif
