/*
 * explore: runs derived from a stored run. A fork is RUN's spec with one
 * more perturbation segment starting at a step, started from RUN's keyframe
 * at or before that step (so it shares RUN's history and keyframes).
 * `check` runs schedule 0, then schedules 1..N as forks at the step the
 * job starts, in parallel worker processes, until one ends differently;
 * then narrows the perturbed window by binary search over the perturbed
 * steps to the one step whose perturbation decides the outcome.
 *
 * Invariants:
 *  1. A fork at step K has the parent's segments truncated at K, so its
 *     decisions before K are the parent's: it is identical through K.
 *  2. Every run check starts is a stored run with an id: the runs it names
 *     can be replayed and inspected like any other.
 *  3. "Ends differently" is a different outcome, exit status or output
 *     (the hash of the job's output records).
 */
#ifndef REWIND_EXPLORE_EXPLORE_H
#define REWIND_EXPLORE_EXPLORE_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "run/runner.h"

/* Options of the stored run `name` (a directory under runs/), with kernel
 * and init checked against its spec. *manifest (may be NULL) gets its
 * manifest. Returns 0 or -1 with one line in err. */
int explore_opts(const char *home, const char *name, const char *kernel, const char *init,
                 struct run_opts *o, json_t **manifest, char *err, size_t errlen);

/* The step of the run's job-start event (exec 0), or of the first exec
 * after it (exec 1: the first step at which the job can be inspected); 0 if
 * there is none. */
uint64_t explore_job_step(const char *home, const char *name, int exec);

/* Fork: o (from explore_opts of parent) perturbed by schedule in [from,
 * until) (pct points from [origin, origin + horizon)), started from parent's keyframe at or before from. */
int explore_fork(struct run_opts *o, const char *parent, uint64_t schedule, uint64_t from,
                 uint64_t until, uint64_t origin, uint64_t horizon, struct run_result *r,
                 char *err, size_t errlen);

struct check_opts {
    const char *home, *kernel, *init;
    struct run_opts run;   /* the command to check (ignored with base_run) */
    const char *base_run;  /* --run: a kept run is schedule 0 */
    uint64_t schedules;    /* N */
    unsigned jobs;         /* -j */
    int progress;          /* progress lines on stderr */
    volatile sig_atomic_t *abort;
};

struct check_side {
    char id[64];
    char outcome[24];
    int exit_code;
    uint64_t steps;
    char output_hash[65];
};

struct check_report {
    struct check_side base;       /* schedule 0 */
    uint64_t start;               /* the job-start step (perturbation starts here) */
    uint64_t tried;               /* schedules run */
    int found;                    /* a schedule ended differently */
    uint64_t schedule;            /* the first that did */
    const char *strategy;         /* its strategy */
    struct check_side failing;    /* that schedule's run */
    int narrowed;                 /* narrowing reached a verdict */
    uint64_t window_from, window_until; /* the narrowed window */
    uint64_t perturbed_in_window; /* perturbed steps inside it */
    uint64_t deciding_step;
    char deciding_what[128];
    struct check_side pass_run, fail_run; /* differ only by the deciding step */
    uint64_t probes;
    double explore_s, narrow_s;
};

/* Run the check. Returns 0 (see rep->found) or -1 with one line in err. */
int explore_check(const struct check_opts *c, struct check_report *rep, char *err,
                  size_t errlen);

#endif
