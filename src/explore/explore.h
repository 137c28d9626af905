/*
 * explore: runs derived from a stored run to find a schedule that changes
 * its outcome. A fork (run/fork.c) is RUN's spec with one more
 * perturbation segment starting at a step, started from RUN's keyframe at
 * or before that step (so it shares RUN's history and keyframes).
 * `check` (check.c) runs schedule 0, then schedules 1..N as forks at the
 * step the job starts, in parallel worker processes, until one ends
 * differently; then narrows the perturbed window by binary search over the
 * perturbed steps to the one step whose perturbation decides the outcome.
 *
 * Invariants:
 *  1. A fork at step K has the parent's segments truncated at K, so its
 *     decisions before K are the parent's: it is identical through K.
 *  2. Every run check starts is a stored run with an id: the runs it names
 *     can be replayed and inspected like any other.
 *  3. "Ends differently" is a different outcome, exit status or output
 *     (the hash of the job's output records). When the spec has
 *     properties (props.h), a run fails when one of them does instead.
 */
#ifndef REWIND_EXPLORE_EXPLORE_H
#define REWIND_EXPLORE_EXPLORE_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "rewind.h"
#include "run/ctx.h"

struct check_opts {
    const char *home;
    struct run_opts run;  /* the command to check (ignored with base_run) */
    const char *base_run; /* a stored run (directory name) is schedule 0 */
    uint64_t schedules;   /* N */
    uint64_t first;       /* the schedules are first..N (first >= 1) */
    unsigned jobs;        /* schedules at once */
    void (*progress)(void *ctx, const char *line);
    void *progress_ctx;
    volatile sig_atomic_t *abort;       /* never NULL */
    uint64_t from_step;                 /* with base_run: fork after this step (0: job start) */
    int keep_going;                     /* all N schedules, counting failures */
    int vary_seed;                      /* schedule k: a run from boot with seed base+k */
    int vary_dirorder, vary_epoch;      /* and directory order k, epoch base + k * step */
    double probe_timeout_s;             /* each worker's wall limit (0: the default) */
    const char *via, *share, *via_args; /* an engine for the schedules (engine.h) */
};

/* Run the check. Returns 0 (see rep->found) or -1 with one line in err. */
int explore_check(const struct check_opts *c, struct rw_check_report *rep, struct rw_error *err);

#endif
