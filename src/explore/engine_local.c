/*
 * engine_local: `--via local`, the engine of engine.h on this machine. Up
 * to plan.jobs schedules run at once, each in a worker process of its own
 * (a one_shot pool of cworker.h, the pool a local check uses: a VM per
 * process), in the caller's home; an outcome is delivered when its worker
 * has sent its result.
 *
 * Invariants:
 *  1. At most min(plan.jobs, ENG_LOCAL_MAX) workers run at once; every
 *     worker forked is waited for (by next, or by close after SIGKILL).
 *  2. After cancel no worker is forked and none runs: the running ones are
 *     killed and reaped (cworker_kill), their schedules not delivered
 *     (engine.h invariant 4).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "explore/cworker.h"
#include "explore/engine.h"
#include "util/check.h"
#include "util/fail.h"

#define ENG_LOCAL_MAX CWORKER_MAX

struct local {
    struct cworker_pool pool; /* one_shot: a worker per schedule */
    unsigned jobs;
    uint64_t next;
    int cancelled;
};

static int lstart(struct eng *e, char *err, size_t errlen)
{
    struct local *l = calloc(1, sizeof(*l));
    if (!l)
        return util_fail(err, errlen, "out of memory");
    l->jobs = e->plan.jobs ? e->plan.jobs : 1;
    if (l->jobs > ENG_LOCAL_MAX)
        l->jobs = ENG_LOCAL_MAX;
    l->next = e->plan.first;
    struct cworker_fns f = {
        .run = eng_worker_run, .ctx = &e->plan, .limit_s = eng_timeout_s(&e->plan), .one_shot = 1};
    cworker_open(&l->pool, l->jobs, &f);
    e->priv = l;
    return 0;
}

static void lcancel(struct eng *e)
{
    struct local *l = e->priv;
    if (!l || l->cancelled)
        return;
    l->cancelled = 1; /* invariant 2 */
    cworker_kill(&l->pool);
}

static int lnext(struct eng *e, struct eng_outcome *out, volatile sig_atomic_t *abort, char *err,
                 size_t errlen)
{
    struct local *l = e->priv;
    for (;;) {
        if (*abort)
            lcancel(e);
        while (!l->cancelled && cworker_busy(&l->pool) < l->jobs && l->next <= e->plan.last) {
            struct cworker_task t = {.schedule = l->next};
            if (cworker_submit(&l->pool, &t, err, errlen) < 0)
                return -1;
            l->next++;
        }
        RW_ASSERT(cworker_busy(&l->pool) <= l->jobs); /* invariant 1 */
        if (!cworker_busy(&l->pool))
            return 0;
        struct cworker_result r;
        struct cworker_task t;
        int rc = cworker_wait_for(&l->pool, NULL, 200, &r, &t);
        if (rc == -3)
            continue; /* look at the abort flag again */
        if (rc == -2)
            return 0;
        eng_outcome_of(rc, &r, t.schedule, out);
        snprintf(out->where, sizeof(out->where), "local");
        return 1;
    }
}

static void lclose(struct eng *e)
{
    struct local *l = e->priv;
    if (!l)
        return;
    cworker_kill(&l->pool); /* invariant 1 */
    cworker_close(&l->pool);
    free(l);
    e->priv = NULL;
}

const struct eng_ops eng_local_ops = {
    .name = "local",
    .preflight = NULL,
    .start = lstart,
    .next = lnext,
    .cancel = lcancel,
    .close = lclose,
};
