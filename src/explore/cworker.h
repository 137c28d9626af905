/*
 * cworker: the one pool of worker processes of check (docs/
 * architecture.md, "check workers"). Each worker is forked once, lazily,
 * when a task first needs its slot; it runs tasks one after another (the
 * caller's run function keeps whatever it opened, e.g. a warm machine,
 * across tasks) and sends each task's result back over its socket. A
 * one_shot pool forks a worker for each task instead (a cold check: each
 * run in a fresh process, forked when the task is given, so it sees the
 * caller's state of that moment).
 *
 * Invariants:
 *  1. A task ends by its wall limit: the worker's abort flag
 *     (cworker_abort) is set by SIGALRM after limit_s, and by SIGTERM /
 *     SIGINT, after which every task ends at once; a task given to a live
 *     worker is always answered.
 *  2. A worker never outlives a failed task (nor, one_shot, any task): it
 *     exits after sending the result, and its slot is forked anew for the
 *     next task.
 *  3. A worker holds no descriptor of another worker's socket, so every
 *     worker sees EOF (and exits) when the pool is closed.
 *  4. Every worker forked is waited for (cworker_close, or when it dies).
 */
#ifndef REWIND_EXPLORE_CWORKER_H
#define REWIND_EXPLORE_CWORKER_H

#include <signal.h>
#include <stdint.h>
#include <sys/types.h>

#include "rewind.h"

#define CWORKER_MAX 64

/* One run: schedule s from step from to until, forked from the base run,
 * or (record) recorded from boot with its seed (and other varied inputs)
 * moved by seed_add. */
struct cworker_task {
    uint64_t schedule, from, until; /* the schedule's actions in [from, until) */
    uint64_t span_from;             /* its bursts and the fork from here on (0: from) */
    int record;
    uint64_t seed_add;
    int again; /* the schedule's second run: its first was cut by a wall limit */
};

struct cworker_result {
    int ok;
    struct rw_result r;
    struct rw_error e;
    int signal; /* set by the pool: the signal that ended a worker that died, or 0 */
};

struct cworker_fns {
    /* In the worker: run one task. 0 or -1 with e. */
    int (*run)(void *ctx, const struct cworker_task *t, struct rw_result *r, struct rw_error *e);
    /* In the worker, before it exits (may be NULL). */
    void (*fini)(void *ctx);
    void *ctx;
    double limit_s; /* wall limit of one task (invariant 1) */
    int one_shot;   /* a worker per task: it exits after its result (invariant 2) */
};

struct cworker {
    pid_t pid; /* 0: no process in this slot */
    int fd;
    int busy;
    struct cworker_task task;
};

struct cworker_pool {
    struct cworker w[CWORKER_MAX];
    unsigned n;
    struct cworker_fns fns;
    int killed; /* the busy workers were told to stop (abort) */
};

/* The abort flag of the task running in this worker process (invariant 1). */
extern volatile sig_atomic_t cworker_abort;

/* Set up a pool of n slots (1..CWORKER_MAX); no process is forked yet. */
void cworker_open(struct cworker_pool *p, unsigned n, const struct cworker_fns *f);
/* Give t to a free slot (forking its worker if needed). 0, or -1 + err
 * when no slot is free or no worker can be started. */
int cworker_submit(struct cworker_pool *p, const struct cworker_task *t, char *err, size_t errlen);
/* Tasks given and not yet collected. */
unsigned cworker_busy(const struct cworker_pool *p);
/* Wait for one task's result (*t: which task). With *abort set, the busy
 * workers are sent SIGTERM once. Returns 0 (r->ok says whether the task
 * ran; r->e says why not), -1 if its worker died (r->e.msg empty,
 * r->signal the signal that ended it), or -2 if no task is busy. */
int cworker_wait(struct cworker_pool *p, volatile sig_atomic_t *abort, struct cworker_result *r,
                 struct cworker_task *t);
/* cworker_wait for at most timeout_ms (< 0: no limit): -3 when no result
 * came by then (the caller looks at its own flags and waits again). */
int cworker_wait_for(struct cworker_pool *p, volatile sig_atomic_t *abort, int timeout_ms,
                     struct cworker_result *r, struct cworker_task *t);
/* Kill every busy worker (SIGKILL) and wait for it: its task is dropped,
 * never answered (an engine's cancel, engine.h invariant 4). */
void cworker_kill(struct cworker_pool *p);
/* Close every socket and wait for every worker (invariant 4). */
void cworker_close(struct cworker_pool *p);

#endif
