/*
 * modes: the engine's entry points below the public API, one per mode
 * (record.c, replay.c, fork.c, inspect.c), and what they share (api.c):
 * a public config turned into run options, and a stored run loaded as the
 * options that recreate it.
 */
#ifndef REWIND_RUN_MODES_H
#define REWIND_RUN_MODES_H

#include <jansson.h>

#include "rewind.h"
#include "run/ctx.h"

/* Record: boot, run to the end, keep the run. 0 or -1 with err. */
int run_record(const struct run_opts *o, struct rw_result *res, struct rw_error *err);

/* Fork: o (a stored run's options) perturbed by segment g (its actions in
 * [g->from, g->until), PCT change points from [origin, origin + horizon),
 * its bursts over its span: src/input/sched.h), started from parent's
 * keyframe at or before g->span_from - 1 (explore.h invariant 1). */
int run_fork(struct run_opts *o, const char *parent, const struct sched_segment *g,
             struct rw_result *res, struct rw_error *err);

/* The options of that fork: o's perturbation segments with g appended
 * (schedule 0: the segments end at g->span_from). 0 or -1 with err. */
int run_fork_opts(struct run_opts *o, const struct sched_segment *g, struct rw_error *err);

/* A machine kept for many forks of one stored run (src/run/warm.c). */
struct run_warm;
/* Open a machine for forks of run parent whose options are base (they
 * must outlive it); src (or NULL): a materialized keyframe of parent whose
 * pages are copied instead of read from the store. 0 or -1 with err. */
int run_warm_open(struct run_warm **w, const struct run_opts *base, const char *parent,
                  const struct kfmat *src, struct rw_error *err);
/* run_fork(base, parent, ...) on the machine: the same run, the same id,
 * trace, keyframes and manifest. 0 or -1 with err; after -1 the machine
 * is closed (the caller opens another). */
int run_warm_fork(struct run_warm *w, const struct sched_segment *g, struct rw_result *res,
                  struct rw_error *err);
void run_warm_close(struct run_warm *w);

/* A stored run loaded to be run again or derived from. */
struct run_stored {
    char name[RW_ID_MAX];   /* its directory under runs/ */
    struct run_opts o;      /* its spec's options (owned: run_stored_free) */
    struct run_inspect ins; /* a shell session's inspection (ins.kind NULL: none) */
    char parent[RW_ID_MAX]; /* the manifest's parent, or "" */
    uint64_t steps;
};

/* Load run `name` of home with kernel and init (NULL: rw_default_kernel
 * and rw_default_init), checked against its spec. 0 or -1 with err (RW_EUSAGE). */
int run_stored_load(const char *home, const char *name, const char *kernel, const char *init,
                    struct run_stored *st, struct rw_error *err);
void run_stored_free(struct run_stored *st);
/* How a mode derived from a stored run runs (not its spec): the job's
 * output to op's observer, op's abort flag and limits. */
void run_stored_runtime(struct run_opts *o, const struct rw_options *op);

/* Resolve ref and load it for a mode that starts at step of it: step must
 * be inside the run, and with inspect, not before the job's command runs;
 * op gives the kernel and init.
 * 0 or -1 with err. */
int run_stored_at(rw_home *h, const char *ref, uint64_t step, int inspect,
                  const struct rw_options *op, struct run_stored *st, struct rw_error *err);

/* A config's options: the spec's parts, the defaults for kernel and init,
 * the observer and abort flag. 0 or -1 with err (RW_EUSAGE). */
int run_opts_from_config(rw_home *h, const struct rw_run_config *c, struct run_opts *o,
                         struct rw_error *err);

/* The job-start step of run name (exec 0), or the first exec after it
 * (exec 1); 0 if none. */
uint64_t run_job_step(const char *home, const char *name, int exec);

/* Fill err with code RW_EUSAGE and the message; return -1. */
int run_usage(struct rw_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
