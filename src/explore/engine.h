/*
 * engine: where the schedules of a check run (docs/distributed.md). A check
 * is turned into tasks, each a slice of its schedules; an engine runs them
 * somewhere and hands back one outcome per schedule, in the order they
 * finish. `--via local` (engine_local.c) runs them in worker processes of
 * this one (a one_shot pool of cworker.h), in this home; `--via slurm` (slurm.c) publishes the base
 * run to a share every node sees and submits a Slurm job array whose tasks run `rewind check-task`
 * (slurm_task.c). Narrowing stays with the caller.
 *
 * Invariants:
 *  1. A schedule's run is the same function of (base run, schedule, plan)
 *     whatever the engine: eng_task_one is the only code that starts it
 *     (in a worker of a one_shot cworker pool, local or in a Slurm task),
 *     so its run id is the one a local check gives.
 *  2. eng_next delivers each schedule first..last at most once, and, unless
 *     cancelled, every one of them exactly once before it returns 0 (ok = 0
 *     for one that could not run or was lost). After eng_cancel it
 *     delivers at most what had already finished, then returns 0.
 *  3. An outcome with ok = 1 names a run stored in the caller's home
 *     (remote engines import it before delivering it).
 *  4. After eng_cancel or eng_close nothing the engine started runs on
 *     (workers are killed and reaped, cworker_kill; Slurm jobs scancel'ed).
 */
#ifndef REWIND_EXPLORE_ENGINE_H
#define REWIND_EXPLORE_ENGINE_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "explore/cworker.h"
#include "rewind.h"

/* What every task needs: written to the share as plan.json (slurm). */
struct eng_plan {
    const char *home;          /* the caller's REWIND_HOME */
    const char *base;          /* schedule 0's run (directory name) */
    uint64_t first, last;      /* schedules first..last */
    uint64_t start, horizon;   /* fork after step start; PCT horizon */
    int vary_seed;             /* schedule s: a run from boot with seed base + s */
    int again;                 /* the schedules' second runs (their first were cut) */
    double timeout_s;          /* each schedule's wall limit (0: the default) */
    double spin_limit_s;       /* the runs' spin limit (0: off) */
    const char *kernel, *init; /* NULL: the defaults */
    unsigned jobs;             /* local: processes at once; slurm: tasks of the array */
    const char *share;         /* slurm: a directory every node sees (NULL: in the home) */
    const char *args;          /* slurm: extra sbatch arguments, split at blanks */
};

/* One finished schedule. */
struct eng_outcome {
    uint64_t schedule;
    int ok;             /* r is valid (invariant 3) */
    int lost;           /* !ok: its task died or was held twice (else: it could not run) */
    struct rw_result r; /* ok: the run */
    char where[64];     /* "node2 task 3", "local" */
    char why[300];      /* !ok: why */
};

struct eng;

/* Check that engine via can be used here at all (its tools are present, its
 * controller answers) before anything runs. 0 or -1 with one line in err. */
int eng_preflight(const char *via, char *err, size_t errlen);
/* Start the schedules of p on engine via ("local", "slurm"). NULL with err. */
struct eng *eng_open(const char *via, const struct eng_plan *p, char *err, size_t errlen);
/* 1: *out is one outcome; 0: every schedule was delivered, or the engine
 * was cancelled (also by *abort, polled); -1: err (the engine is then
 * cancelled). */
int eng_next(struct eng *e, struct eng_outcome *out, volatile sig_atomic_t *abort, char *err,
             size_t errlen);
/* Stop every unfinished task (invariant 4); eng_next then returns 0. */
void eng_cancel(struct eng *e);
void eng_close(struct eng *e);

/* --- for the engines (engine.c) --- */
struct eng_ops {
    const char *name;
    int (*preflight)(char *err, size_t errlen);
    int (*start)(struct eng *e, char *err, size_t errlen);
    int (*next)(struct eng *e, struct eng_outcome *out, volatile sig_atomic_t *abort, char *err,
                size_t errlen);
    void (*cancel)(struct eng *e);
    void (*close)(struct eng *e);
};

struct eng {
    const struct eng_ops *ops;
    struct eng_plan plan;
    void *priv;
};

extern const struct eng_ops eng_local_ops, eng_slurm_ops;

/* Run schedule s of plan p in home (invariant 1): a fork of p->base (or,
 * vary_seed, a run from boot). Bounded by p->timeout_s (outcome timeout).
 * abort: set to stop it. 0 with *r, or -1 with e. */
/* Tests only (REWIND_TEST_HOLES=1 and REWIND_TEST_CUT_FIRST=S): the first
 * run of schedule S (again = 0) gets a spin limit of 1 ms, so the spin
 * watch cuts it wherever the guest runs 50 ms of wall time without a step
 * (src/vmm/spin.c), as a stalled host would: this is how t_props tests
 * check's second run of a cut schedule. Else *spin_s is left alone. */
void eng_test_cut(uint64_t s, int again, double *spin_s);

int eng_task_one(const char *home, const struct eng_plan *p, uint64_t s,
                 volatile sig_atomic_t *abort, struct rw_result *r, struct rw_error *e);

/* A one_shot cworker pool's run function (cworker_fns.run) with ctx the
 * plan: eng_task_one of schedule t->schedule, stopped by the worker's
 * abort flag. */
int eng_worker_run(void *ctx, const struct cworker_task *t, struct rw_result *r,
                   struct rw_error *e);
/* A schedule's wall limit in its worker: p->timeout_s, or the default. */
double eng_timeout_s(const struct eng_plan *p);
/* The outcome of schedule s from what cworker_wait gave for it (rc, *r):
 * 0 with o->ok = 1, or -1 with o->why. Local engines and Slurm tasks run
 * eng_task_one in a one_shot cworker pool, the pool a local check uses. */
int eng_outcome_of(int rc, const struct cworker_result *r, uint64_t s, struct eng_outcome *o);

/* The plan as JSON text (malloc'd) and back. eng_plan_parse points p's
 * strings into *hold (json_decref it when done); 0 or -1 with err. */
char *eng_plan_json(const struct eng_plan *p);
int eng_plan_parse(const char *text, struct eng_plan *p, void **hold, char *err, size_t errlen);

/* One outcome as a file (atomically: a temporary name, then renamed) and
 * back. 0 or -1 with err. */
int eng_outcome_write(const char *path, const struct eng_outcome *o, char *err, size_t errlen);
int eng_outcome_read(const char *path, struct eng_outcome *o, char *err, size_t errlen);

#endif
