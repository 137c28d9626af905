/*
 * check: see explore.h.
 *
 * Workers: -j N long-lived worker processes (cworker.h), forked from the
 * parent, which holds no KVM or store handle across fork. Each keeps one
 * machine open (src/run/warm.c) and runs every schedule and probe given to
 * it as a fork of the base run restored in place; the pages of the keyframe
 * they all start from are read from the store once, by the parent, into a
 * shared read-only image (kfcap.h struct kfmat). Probes during narrowing
 * run one at a time. With --vary-seed (every schedule boots) and with
 * REWIND_CHECK_COLD=1 (the old way, kept for benchmarks and the identity
 * test), the same pool is one_shot: each schedule or probe is a worker
 * forked for it that runs once and exits (cold_run). workers_start opens
 * the one pool, warm or cold; every run of a local check goes through it.
 *
 * Invariants (besides explore.h's):
 *  1. A worker ends by its wall limit (probe_timeout_s) as outcome
 *     "timeout": a hung schedule is reported and counted, never waited for.
 *  2. A timed-out run is never the passing side of a narrowed pair.
 *  3. Loops over a base run's steps are bounded by its trace as present on
 *     disk, never by its manifest's "steps" alone (an archive can say 9e18).
 *  4. With properties, every run (schedule 0, schedules, probes) is judged by
 *     the same function of its stored trace (props.h invariant 1).
 *  5. A schedule or probe run by a warm worker is the run a cold worker
 *     makes (warm.c invariant 1): the report does not depend on which ran it.
 *  6. Every probe, and both runs of a narrowed pair, fork where the failing
 *     schedule forked and keep its bursts (src/input/sched.h invariant 3):
 *     the pair differs in the schedule's action at the deciding step alone.
 *  7. A schedule cut by a wall-clock limit (spin, or timeout by
 *     probe_timeout_s, not by the check's own stop) runs once more before
 *     it counts: where a cut run ends is chosen by the host's time, not by
 *     the schedule. Its second run has the same spec and id; complete, it
 *     replaces the cut one in the store (run/ctx.c). Only a second cut
 *     counts, and no schedule runs a third time.
 *
 * The search of narrowing (2, 3 and 6 as it keeps them) is narrow.c's; its
 * probes are check_probe here, run by the workers.
 */
#include "explore/explore.h"
#include "explore/checkrec.h"
#include "explore/cworker.h"
#include "explore/engine.h"
#include "explore/narrow.h"
#include "explore/props.h"

#include <stdarg.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "util/homepath.h"
#include "run/modes.h"
#include "trace/compare.h"
#include "trace/describe.h"
#include "trace/trace.h"
#include "util/check.h"
#include "util/fail.h"
#include "util/io.h"

#define fail util_fail
#define MAX_JOBS 64
#define DEFAULT_PROBE_TIMEOUT_S 600.0

/* One progress line to the caller's callback (printf format, no newline). */
static void progress(const struct check_opts *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void progress(const struct check_opts *c, const char *fmt, ...)
{
    if (!c->progress)
        return;
    char line[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    c->progress(c->progress_ctx, line);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void side_of(struct rw_check_side *s, const struct rw_result *r)
{
    snprintf(s->id, sizeof(s->id), "%s", r->id);
    snprintf(s->outcome, sizeof(s->outcome), "%s", rw_outcome_word(r->outcome));
    s->exit_code = r->exit_code;
    s->steps = r->steps;
    snprintf(s->output_hash, sizeof(s->output_hash), "%s", r->output_hash);
}

static int side_from_manifest(struct rw_check_side *s, const char *name, json_t *m)
{
    const char *oc = json_string_value(json_object_get(m, "outcome"));
    const char *oh = json_string_value(json_object_get(m, "output_hash"));
    if (!oc || !oh)
        return -1;
    snprintf(s->id, sizeof(s->id), "%s", name);
    snprintf(s->outcome, sizeof(s->outcome), "%s", oc);
    snprintf(s->output_hash, sizeof(s->output_hash), "%s", oh);
    s->exit_code = (int)json_integer_value(json_object_get(m, "exit_code"));
    s->steps = (uint64_t)json_integer_value(json_object_get(m, "steps"));
    return 0;
}

struct ctx {
    const struct check_opts *c;
    struct rw_check_report *rep;
    struct run_opts base; /* options of the schedule-0 run */
    const char *base_name;
    uint64_t horizon;
    uint64_t last_step;              /* invariant 3: the last step of the base run's trace */
    int props;                       /* the spec has properties: runs are judged by them */
    const struct rw_check_side *ref; /* what "ends like schedule 0" compares with */
    struct rw_check_side seed_base;  /* vary_seed: schedule 0 at the failing seed */
    rw_home *h;                      /* for rw_sdk_assertions (parent only) */
    char (*runs)[RW_ID_MAX];         /* every run the check made (checkrec.h) */
    size_t nruns, cap;
    struct cworker_pool *pool; /* the workers: warm, or (cold) one process per run */
    int cold;                  /* no warm machine: x->mat is not built */
    struct kfmat mat;          /* the job-start keyframe, materialized for warm workers */
    struct run_warm *warm;     /* in a warm worker: its machine */
    uint64_t diverged_lowest;  /* the schedule rep->divergence names */
};

static void add_run(struct ctx *x, const char *id)
{
    if (x->nruns == x->cap) {
        size_t cap = x->cap ? x->cap * 2 : 64;
        char(*nr)[RW_ID_MAX] = realloc(x->runs, cap * sizeof(*nr));
        if (!nr)
            return; /* the record then lists fewer runs; ls shows the rest */
        x->runs = nr;
        x->cap = cap;
    }
    snprintf(x->runs[x->nruns++], RW_ID_MAX, "%s", id);
}

/* The report's row for what (added if new; NULL when the table is full). */
static struct rw_check_prop *row(struct rw_check_report *rep, const char *what, int sdk_kind)
{
    for (int i = 0; i < rep->nprops; i++)
        if (rep->props[i].sdk_kind == sdk_kind && !strcmp(rep->props[i].what, what))
            return &rep->props[i];
    if (rep->nprops >= (int)(sizeof(rep->props) / sizeof(rep->props[0])))
        return NULL;
    struct rw_check_prop *p = &rep->props[rep->nprops++];
    memset(p, 0, sizeof(*p));
    snprintf(p->what, sizeof(p->what), "%.299s", what);
    p->sdk_kind = sdk_kind;
    return p;
}

static void tally_fail(struct rw_check_prop *p, const char *id, uint64_t schedule, uint64_t step)
{
    p->failed++;
    if (!p->first_fail[0] || schedule < p->first_fail_schedule) {
        snprintf(p->first_fail, sizeof(p->first_fail), "%s", id);
        p->first_fail_schedule = schedule;
        p->first_fail_step = step;
    }
}

struct assert_ctx {
    struct ctx *x;
    struct rw_check_side *s;
    uint64_t schedule;
    int tally;
};

/* One SDK assertion of a run (docs/sdk.md): a run fails on a false
 * always / always_or_unreachable or a hit unreachable; sometimes and
 * reachable are judged across the check (rep->unmet). */
static int on_assertion(void *ctx, const struct rw_sdk_assertion *a)
{
    struct assert_ctx *ac = ctx;
    char what[300];
    snprintf(what, sizeof(what), "%s \"%.200s\"", rw_sdk_kind_name(a->kind), a->msg);
    if (a->failed && !ac->s->props_failed) {
        ac->s->props_failed = 1;
        snprintf(ac->s->why, sizeof(ac->s->why), "%.220s failed at step %llu", what,
                 (unsigned long long)a->first_fail_step);
    }
    if (!ac->tally)
        return 0;
    struct rw_check_prop *p = row(ac->x->rep, what, (int)a->kind);
    if (!p)
        return 0;
    p->reached += a->hits > 0;
    if (a->failed)
        tally_fail(p, ac->s->id, ac->schedule, a->first_fail_step);
    else if (a->kind == RW_SDK_SOMETIMES)
        p->passed += a->passes > 0;
    else
        p->passed += a->hits > 0;
    return 0;
}

/* Judge run s->id by its properties and its SDK assertions (invariant 4):
 * s->props_failed and s->why; tally into rep->props when tally. 0 or -1
 * with err. */
static int judge(struct ctx *x, struct rw_check_side *s, uint64_t schedule, int tally, char *err,
                 size_t errlen)
{
    struct rw_prop_verdict v[RW_PROPS_MAX];
    int n = 0;
    s->props_failed = 0;
    s->why[0] = 0;
    if (explore_props_judge(x->c->home, s->id, v, RW_PROPS_MAX, &n, err, errlen) < 0)
        return -1;
    for (int i = 0; i < n; i++) {
        if (!v[i].passed && !s->props_failed) {
            s->props_failed = 1;
            snprintf(s->why, sizeof(s->why), "%.140s: %.150s", v[i].what, v[i].detail);
        }
        struct rw_check_prop *p = tally ? row(x->rep, v[i].what, -1) : NULL;
        if (!p)
            continue;
        p->reached += v[i].reached;
        p->passed += v[i].reached && v[i].passed;
        if (!v[i].passed)
            tally_fail(p, s->id, schedule, v[i].step);
    }
    struct assert_ctx ac = {.x = x, .s = s, .schedule = schedule, .tally = tally};
    struct rw_error e;
    if (x->h && rw_sdk_assertions(x->h, s->id, on_assertion, &ac, &e) < 0)
        return fail(err, errlen, "the assertions of run %s: %s", s->id, e.msg);
    return 0;
}

/* After the schedules: a sometimes never true or a reachable never reached
 * across the check is a failure of its own. */
static void judge_unmet(struct rw_check_report *rep)
{
    for (int i = 0; i < rep->nprops; i++) {
        struct rw_check_prop *p = &rep->props[i];
        p->unmet = (p->sdk_kind == RW_SDK_SOMETIMES && p->passed == 0) ||
                   (p->sdk_kind == RW_SDK_REACHABLE && p->reached == 0);
        rep->unmet += p->unmet;
    }
}

/* Does the base run use the SDK (then every run is judged). */
static int count_assertion(void *ctx, const struct rw_sdk_assertion *a)
{
    (void)a;
    (*(int *)ctx)++;
    return 1;
}

/* Does side s fail: by the properties, or by ending unlike schedule 0. */
static int bad(const struct ctx *x, const struct rw_check_side *s)
{
    return explore_side_bad(x->props, s, x->ref);
}

/* --vary: schedule k's variation applied to o (docs/nix.md). */
static void vary_apply(const struct check_opts *c, struct run_opts *o, uint64_t k)
{
    if (c->vary_seed)
        o->seed += k;
    if (c->vary_dirorder && k) {
        o->dirorder_on = 1;
        o->dirorder = k;
    }
    if (c->vary_epoch)
        o->epoch_s += (int64_t)k * RW_VARY_EPOCH_STEP;
}

static int vary_any(const struct check_opts *c)
{
    return c->vary_seed || c->vary_dirorder || c->vary_epoch;
}

/* Task t's segment: the schedule's actions in [from, until), its bursts
 * from span_from on (a narrowing probe: src/input/sched.h invariant 3). */
static struct sched_segment task_segment(const struct ctx *x, const struct cworker_task *t)
{
    uint64_t span = t->span_from ? t->span_from : t->from;
    return (struct sched_segment){t->schedule, t->from, t->until,  x->rep->start + 1,
                                  x->horizon,  span,    UINT64_MAX};
}

/* Task t is a schedule's own run (not a probe of narrowing). */
static int whole_schedule(const struct ctx *x, const struct cworker_task *t)
{
    return t->from == x->rep->start + 1 && t->until == UINT64_MAX && !t->span_from;
}

/* In a cold worker: task w, forked from the base run, or (w->record)
 * recorded from boot with the inputs varied by w->seed_add. */
static int cold_run(void *ctx, const struct cworker_task *w, struct rw_result *r,
                    struct rw_error *e)
{
    struct ctx *x = ctx;
    struct run_opts o = x->base;
    o.abort = &cworker_abort;
    if (whole_schedule(x, w))
        eng_test_cut(w->schedule, w->again, &o.spin_limit_s);
    if (!w->record) {
        struct sched_segment g = task_segment(x, w);
        return run_fork(&o, x->base_name, &g, r, e);
    }
    vary_apply(x->c, &o, w->seed_add);
    o.quiet = 1;
    o.name = NULL;
    o.sched.n = 0;
    if (w->schedule &&
        sched_push(&o.sched, w->schedule, w->from, w->until, x->rep->start + 1, x->horizon) < 0)
        return run_usage(e, "bad schedule window");
    return run_record(&o, r, e);
}

/* In a warm worker: run task t on the worker's machine (opened at its
 * first task). */
static int warm_run(void *ctx, const struct cworker_task *t, struct rw_result *r,
                    struct rw_error *e)
{
    struct ctx *x = ctx;
    if (!x->warm) {
        x->base.abort = &cworker_abort;
        if (run_warm_open(&x->warm, &x->base, x->base_name, x->mat.pages ? &x->mat : NULL, e) < 0)
            return -1;
    }
    struct sched_segment g = task_segment(x, t);
    const double spin_s = x->base.spin_limit_s; /* the machine reads it at each fork */
    if (whole_schedule(x, t))
        eng_test_cut(t->schedule, t->again, &x->base.spin_limit_s);
    int rc = run_warm_fork(x->warm, &g, r, e);
    x->base.spin_limit_s = spin_s;
    return rc;
}

static void warm_fini(void *ctx)
{
    struct ctx *x = ctx;
    run_warm_close(x->warm);
    x->warm = NULL;
}

/* Start the workers: a pool of jobs slots, warm (invariant 5: the
 * keyframe every fork starts from materialized first) or cold (--vary:
 * runs from boot; REWIND_CHECK_COLD=1). 0, or -1 with err. */
static int workers_start(struct ctx *x, unsigned jobs, char *err, size_t errlen)
{
    const char *cold = getenv("REWIND_CHECK_COLD");
    double limit_s = x->c->probe_timeout_s > 0 ? x->c->probe_timeout_s : DEFAULT_PROBE_TIMEOUT_S;
    if (x->pool)
        return 0;
    x->pool = calloc(1, sizeof(*x->pool));
    if (!x->pool)
        return fail(err, errlen, "out of memory");
    x->cold = vary_any(x->c) || (cold && !strcmp(cold, "1"));
    if (x->cold) {
        struct cworker_fns f = {.run = cold_run, .ctx = x, .limit_s = limit_s, .one_shot = 1};
        cworker_open(x->pool, jobs, &f);
        return 0;
    }
    char why[600];
    double t0 = now_s();
    if (kfmat_build(&x->mat, x->c->home, x->base_name, x->rep->start,
                    (x->base.mem_mib << 20) / 4096, why, sizeof(why)) < 0)
        progress(x->c, "check: the keyframe's pages are read by each worker (%s)", why);
    else if (getenv("REWIND_TIMING"))
        fprintf(stderr,
                "rewind: timing: keyframe of step %llu materialized: %llu pages in %.3f s\n",
                (unsigned long long)x->mat.step, (unsigned long long)x->mat.npages, now_s() - t0);
    struct cworker_fns f = {.run = warm_run, .fini = warm_fini, .ctx = x, .limit_s = limit_s};
    cworker_open(x->pool, jobs, &f);
    return 0;
}

static void workers_stop(struct ctx *x)
{
    if (!x->pool)
        return;
    cworker_close(x->pool);
    free(x->pool);
    x->pool = NULL;
    if (!x->cold) /* cold: x->mat was never built */
        kfmat_free(&x->mat);
}

/* Wait for the result of one task given to the pool: 0 with *m and its
 * schedule in *s, -1 if it failed (m->e.msg says why, or is empty if its
 * worker died), -2 if there was none. */
static int collect(struct ctx *x, struct cworker_result *m, uint64_t *s)
{
    struct cworker_task t;
    int rc = cworker_wait(x->pool, x->c->abort, m, &t);
    if (rc == -2)
        return -2;
    m->ok = rc == 0 && m->ok;
    *s = t.schedule;
    return m->ok ? 0 : -1;
}

/* One finished schedule s (run r, ran at where: NULL here): tally, judge,
 * say, and keep it as the failing one if it is the lowest that fails. */
static int take(struct ctx *x, uint64_t s, const struct rw_result *r, const char *where, char *err,
                size_t errlen)
{
    const struct check_opts *c = x->c;
    struct rw_check_report *rep = x->rep;
    rep->tried++;
    struct rw_check_side side;
    side_of(&side, r);
    add_run(x, side.id);
    rep->timeouts += r->outcome == RW_TIMEOUT;
    if (r->diverged) { /* a run of the same spec was stored before, and this one differs */
        if (!rep->diverged++ || s < x->diverged_lowest) {
            x->diverged_lowest = s; /* the lowest schedule's, whatever the order they end in */
            snprintf(rep->divergence, sizeof(rep->divergence), "schedule %llu: %s",
                     (unsigned long long)s, r->divergence);
        }
        progress(c, "check: schedule %llu: DETERMINISM VIOLATION: %s", (unsigned long long)s,
                 r->divergence);
    }
    if (x->props && judge(x, &side, s, 1, err, errlen) < 0)
        return -1;
    int d = bad(x, &side);
    rep->failures += d;
    char what[400];
    snprintf(what, sizeof(what), "  <- %s%s", x->props ? "fails: " : "ends differently",
             x->props ? side.why : "");
    char seed[40] = "";
    if (c->vary_seed)
        snprintf(seed, sizeof(seed), ", seed %llu", (unsigned long long)(x->base.seed + s));
    progress(c, "check: schedule %llu (%s%s): run %s %s %d, %llu steps%s%s%s",
             (unsigned long long)s, sched_strategy(s), seed, side.id, side.outcome, side.exit_code,
             (unsigned long long)side.steps, where ? " on " : "", where ? where : "",
             d ? what : "");
    if (r->outcome != RW_EXITED && r->message[0]) /* why the guest's run ended so, its first line */
        progress(c, "check: schedule %llu: %.*s", (unsigned long long)s,
                 (int)strcspn(r->message, "\n"), r->message);
    if (d && (!rep->found || s < rep->schedule)) {
        rep->found = 1;
        rep->schedule = s;
        rep->strategy = sched_strategy(s); /* printed with it on every path */
        rep->failing = side;
    }
    return 0;
}

/* Schedule s's own run, as the pool's task. */
static struct cworker_task schedule_task(const struct ctx *x, uint64_t s)
{
    return (struct cworker_task){.schedule = s,
                                 .from = x->rep->start + 1,
                                 .until = UINT64_MAX,
                                 .record = vary_any(x->c),
                                 .seed_add = s};
}

/* Invariant 7: run r of schedule s (ran at where: NULL here) was cut by a
 * wall-clock limit for the first time (again[s] marks it now): say so and
 * count it; the caller runs s once more. 0: take r as it is. */
static int cut_once(struct ctx *x, uint64_t s, const struct rw_result *r, const char *where,
                    unsigned char *again)
{
    if ((r->outcome != RW_SPIN && r->outcome != RW_TIMEOUT) || again[s])
        return 0;
    again[s] = 1;
    progress(
        x->c,
        "check: schedule %llu (%s): run %s cut by a wall-clock limit (%s after %llu steps%s%s): "
        "where it ends is the host's time, not the schedule's; running it once more",
        (unsigned long long)s, sched_strategy(s), r->id, r->outcome == RW_SPIN ? "spin" : "timeout",
        (unsigned long long)r->steps, where ? " on " : "", where ? where : "");
    return 1;
}

/* The schedules through an engine (engine.h): below. */
static int explore_via(struct ctx *x, char *err, size_t errlen);

static int explore_schedules(struct ctx *x, char *err, size_t errlen)
{
    const struct check_opts *c = x->c;
    if (c->via)
        return explore_via(x, err, errlen);
    struct rw_check_report *rep = x->rep;
    unsigned jobs = c->jobs ? c->jobs : 1, running = 0;
    if (jobs > MAX_JOBS)
        jobs = MAX_JOBS;
    if (workers_start(x, jobs, err, errlen) < 0)
        return -1;
    unsigned char *again = calloc(c->schedules + 1, 1); /* invariant 7: run twice */
    if (!again)
        return fail(err, errlen, "out of memory");
    uint64_t next = c->first;
    int failed = 0;
    int go = 1;
    while (running || (go && !failed && next <= c->schedules && !*c->abort)) {
        while (go && !failed && running < jobs && next <= c->schedules && !*c->abort) {
            struct cworker_task wk = schedule_task(x, next);
            if (cworker_submit(x->pool, &wk, err, errlen) < 0) {
                failed = 1;
                break;
            }
            next++;
            running++;
        }
        if (!running)
            break;
        /* --timeout or a signal: cworker_wait stops the workers too */
        struct cworker_result msg;
        uint64_t s = 0;
        int ok = collect(x, &msg, &s);
        if (ok == -2)
            continue;
        running--;
        if (ok < 0) {
            if (!failed)
                fail(err, errlen, "schedule %llu could not run: %s", (unsigned long long)s,
                     msg.e.msg[0] ? msg.e.msg : "its worker died");
            failed = 1;
            continue;
        }
        if (*c->abort && msg.r.outcome == RW_TIMEOUT) {
            /* cut by the check's own stop (--timeout or a signal), not by
             * its schedule: no outcome of the program, so not counted */
            progress(c, "check: schedule %llu cut when the check was stopped: not counted",
                     (unsigned long long)s);
            continue;
        }
        /* invariant 7, unless the check stops anyway or s cannot be the
         * failing schedule reported */
        if (!*c->abort && !failed && (go || s < rep->schedule) &&
            cut_once(x, s, &msg.r, NULL, again)) {
            struct cworker_task wk = schedule_task(x, s);
            wk.again = 1;
            if (cworker_submit(x->pool, &wk, err, errlen) < 0) {
                failed = 1;
                continue;
            }
            rep->rerun++;
            running++;
            continue;
        }
        if (take(x, s, &msg.r, NULL, err, errlen) < 0) {
            failed = 1;
            continue;
        }
        go = !rep->found || c->keep_going;
    }
    free(again);
    return failed ? -1 : 0;
}

/* Invariant 7 through engine c->via: schedule s of plan p once more, its
 * task alone, and take what it gives. 0, or -1 with err. */
static int via_again(struct ctx *x, const struct eng_plan *p, uint64_t s, char *err, size_t errlen)
{
    struct eng_plan one = *p;
    one.first = one.last = s;
    one.jobs = 1;
    one.again = 1;
    struct eng *e = eng_open(x->c->via, &one, err, errlen);
    if (!e)
        return -1;
    x->rep->rerun++;
    struct eng_outcome o;
    int k = 0, rc = 0;
    while (rc == 0 && (k = eng_next(e, &o, x->c->abort, err, errlen)) == 1) {
        if (!o.ok && o.lost) {
            x->rep->lost++;
            progress(x->c, "check: schedule %llu lost on %s: %s", (unsigned long long)s, o.where,
                     o.why);
        } else if (!o.ok) {
            rc = fail(err, errlen, "schedule %llu could not run%s%s: %s", (unsigned long long)s,
                      o.where[0] ? " on " : "", o.where, o.why);
        } else {
            rc = take(x, s, &o.r, o.where, err, errlen);
        }
    }
    if (rc == 0 && k < 0)
        rc = -1;
    eng_close(e);
    return rc;
}

/* The schedules through engine c->via (engine.h): each outcome as the local
 * loop takes it; the engine is cancelled once one fails (unless keep_going)
 * or on abort. rep->where counts the schedules per node. */
static int explore_via(struct ctx *x, char *err, size_t errlen)
{
    const struct check_opts *c = x->c;
    struct rw_check_report *rep = x->rep;
    struct eng_plan p = {.home = c->home,
                         .base = x->base_name,
                         .first = c->first,
                         .last = c->schedules,
                         .start = rep->start,
                         .horizon = x->horizon,
                         .vary_seed = c->vary_seed,
                         .timeout_s = c->probe_timeout_s,
                         .spin_limit_s = c->run.spin_limit_s,
                         .kernel = c->run.kernel,
                         .init = c->run.init,
                         .jobs = c->jobs ? c->jobs : 1,
                         .share = c->share,
                         .args = c->via_args};
    if (c->schedules < 1)
        return 0;
    struct eng *e = eng_open(c->via, &p, err, errlen);
    if (!e)
        return -1;
    char hosts[8][48];
    uint64_t counts[8] = {0}, below = 0; /* delivered below rep->schedule */
    unsigned char *got = calloc(c->schedules + 1, 1), *again = calloc(c->schedules + 1, 1);
    int nh = 0, rc = 0;
    struct eng_outcome o;
    int k = 0;
    if (!got || !again) {
        free(got);
        free(again);
        eng_close(e);
        return fail(err, errlen, "out of memory");
    }
    while ((k = eng_next(e, &o, c->abort, err, errlen)) == 1) {
        got[o.schedule] = 1;
        if (!o.ok && o.lost) {
            rep->lost++;
            progress(c, "check: schedule %llu lost on %s: %s", (unsigned long long)o.schedule,
                     o.where, o.why);
            continue;
        }
        if (!o.ok) {
            fail(err, errlen, "schedule %llu could not run%s%s: %s", (unsigned long long)o.schedule,
                 o.where[0] ? " on " : "", o.where, o.why);
            rc = -1;
            break;
        }
        char host[48];
        snprintf(host, sizeof(host), "%.*s", (int)strcspn(o.where, " "), o.where);
        int i = 0;
        while (i < nh && strcmp(hosts[i], host))
            i++;
        if (i == nh && nh < 8)
            snprintf(hosts[nh++], sizeof(hosts[0]), "%s", host);
        if (i < nh)
            counts[i]++;
        if (cut_once(x, o.schedule, &o.r, o.where, again))
            continue; /* invariant 7: run again once the engine is done */
        if (take(x, o.schedule, &o.r, o.where, err, errlen) < 0) {
            rc = -1;
            break;
        }
        if (rep->found && !c->keep_going) {
            /* As the local loop: every schedule below the failing one is
             * tried, so the lowest failing schedule is the one reported. */
            for (below = c->first - 1; below + 1 < rep->schedule && got[below + 1]; below++)
                ;
            if (below + 1 == rep->schedule)
                eng_cancel(e);
        }
    }
    if (k < 0)
        rc = -1;
    if (rc == 0 && *c->abort) {
        uint64_t n = 0;
        for (uint64_t i = c->first; i <= c->schedules; i++)
            n += got[i];
        progress(c,
                 "check: stopped (a signal or --timeout) with %llu of %llu schedules back; "
                 "the %s engine's tasks were cancelled",
                 (unsigned long long)n, (unsigned long long)(c->schedules - c->first + 1), c->via);
    }
    free(got);
    eng_close(e);
    for (uint64_t i = c->first; rc == 0 && !*c->abort && i <= c->schedules; i++)
        if (again[i] && (c->keep_going || !rep->found || i < rep->schedule))
            rc = via_again(x, &p, i, err, errlen);
    free(again);
    size_t off = 0;
    for (int i = 0; i < nh && off < sizeof(rep->where) - 1; i++)
        off += (size_t)snprintf(rep->where + off, sizeof(rep->where) - off, "%s%s %llu",
                                i ? ", " : "", hosts[i], (unsigned long long)counts[i]);
    return rc;
}

/* narrow.h's probe: the window [from, until) of the failing schedule run
 * by a worker as a fork of the base run, judged and said. */
static int check_probe(void *ctx, uint64_t from, uint64_t until, struct rw_check_side *out,
                       char *err, size_t errlen)
{
    struct ctx *x = ctx;
    struct cworker_result msg;
    uint64_t s;
    struct cworker_task wk = {
        .schedule = x->rep->schedule, .from = from, .until = until, .span_from = x->rep->start + 1};
    memset(&msg, 0, sizeof(msg));
    if (cworker_submit(x->pool, &wk, err, errlen) < 0)
        return -1;
    if (collect(x, &msg, &s) < 0)
        return fail(err, errlen, "a probe of window [%llu, %llu) could not run: %s",
                    (unsigned long long)from, (unsigned long long)until,
                    msg.e.msg[0] ? msg.e.msg : "its worker died");
    side_of(out, &msg.r);
    add_run(x, out->id);
    if (x->props && judge(x, out, x->rep->schedule, 0, err, errlen) < 0)
        return -1;
    int fails = bad(x, out);
    progress(x->c, "narrow: window [%llu, %llu): run %s %s %d%s%s", (unsigned long long)from,
             (unsigned long long)until, out->id, out->outcome, out->exit_code,
             fails ? (x->props ? "  <- fails: " : "  <- differs") : "",
             fails && x->props ? out->why : "");
    return 0;
}

/* Where the passing and the failing run part, and each side's next events. */
static void tail_of(const char *home, const char *name, uint64_t from_index,
                    struct rw_check_tail *t)
{
    char path[4200];
    struct trace_reader r;
    memset(t, 0, sizeof(*t));
    if (home_path(path, sizeof(path), home, HOME_RUNS, name, "trace") < 0 ||
        trace_open_read(&r, path) != 0)
        return;
    struct trace_entry e;
    uint64_t i = 0;
    while (trace_next(&r, &e) == 1 && t->n < RW_TAIL_MAX) {
        if (i++ < from_index || e.rec.kind == REWIND_REC_CONSOLE || e.rec.kind == REWIND_REC_SCHED)
            continue;
        char d[256];
        describe_entry(&e, d, sizeof(d));
        snprintf(t->lines[t->n], sizeof(t->lines[0]), "step %llu: %s", (unsigned long long)e.step,
                 d);
        t->tid[t->n++] = e.rec.tid;
    }
    trace_close_read(&r);
}

static void parting(const char *home, struct rw_check_report *rep)
{
    char a[4200], b[4200];
    struct trace_difference d = {0};
    if (home_path(a, sizeof(a), home, HOME_RUNS, rep->pass_run.id, "trace") < 0 ||
        home_path(b, sizeof(b), home, HOME_RUNS, rep->fail_run.id, "trace") < 0 ||
        compare_traces(a, b, &d) != 0 || !d.differ)
        return;
    rep->parted = 1;
    rep->part_event = d.index;
    rep->part_step_pass = d.step_a;
    rep->part_step_fail = d.step_b;
    tail_of(home, rep->pass_run.id, d.index, &rep->pass_next);
    tail_of(home, rep->fail_run.id, d.index, &rep->fail_next);
}

/* Schedule 0: recorded here, or the stored run c->base_run. Its name into
 * base_name. 0, or -1 with err (its code the run's: a missing root is the
 * user's error, as for rewind run). */
static int check_schedule0(const struct check_opts *c, char base_name[RW_ID_MAX],
                           struct rw_error *err)
{
    if (c->base_run) {
        snprintf(base_name, RW_ID_MAX, "%s", c->base_run);
        return 0;
    }
    struct run_opts o = c->run;
    struct rw_result r;
    struct rw_error e;
    o.quiet = 1;
    o.abort = c->abort;
    if (run_record(&o, &r, &e) < 0) {
        *err = e;
        return -1;
    }
    snprintf(base_name, RW_ID_MAX, "%s", r.id);
    progress(c, "check: schedule 0: run %s %s %d after %llu steps", r.id,
             rw_outcome_word(r.outcome), r.exit_code, (unsigned long long)r.steps);
    return 0;
}

/* Schedule 0's outcome from its manifest, and whether it can be one: an
 * unperturbed run ended by the guest, with no gdb writes. 0, or -1 with err. */
static int check_base_usable(struct ctx *x, const char *base_name, char *err, size_t errlen)
{
    const struct check_opts *c = x->c;
    struct rw_check_report *rep = x->rep;
    char mp[4200];
    json_error_t je;
    json_t *m = home_path(mp, sizeof(mp), c->home, HOME_RUNS, base_name, "manifest.json") == 0
                    ? json_load_file(mp, 0, &je)
                    : NULL;
    int bad = !m || side_from_manifest(&rep->base, base_name, m);
    json_decref(m);
    if (bad)
        return fail(err, errlen, "run %s has no outcome (is it complete?)", base_name);
    if (!strcmp(rep->base.outcome, "spin") || !strcmp(rep->base.outcome, "timeout"))
        /* Ended by wall time, not by the guest: no reference (docs/determinism.md). */
        return fail(err, errlen, "run %s ended as %s (by wall time): it is no reference for check",
                    base_name, rep->base.outcome);
    if (x->base.sched.n)
        return fail(err, errlen,
                    "run %s is itself perturbed (a schedule or a fork); check needs "
                    "an unperturbed run as schedule 0",
                    base_name);
    if (x->base.patch) /* its forks would apply gdb's writes to another state */
        return fail(err, errlen,
                    "run %s was kept from a gdb session (gdb's writes at step %llu); check needs "
                    "a run with no writes as schedule 0",
                    base_name, (unsigned long long)x->base.patch->at);
    return 0;
}

/* The context over schedule 0: its options, its last step (invariant 3),
 * whether runs are judged (properties or SDK assertions), the step the
 * schedules start at. 0, or -1 with err. */
static int check_setup(struct ctx *x, const char *base_name, char *err, size_t errlen)
{
    const struct check_opts *c = x->c;
    struct rw_check_report *rep = x->rep;
    x->base.abort = c->abort;
    x->base.spin_limit_s = c->run.spin_limit_s;
    x->base.obs = c->run.obs; /* notices of the forks (the job's output: quiet) */
    x->base_name = base_name;
    x->last_step = explore_trace_last_step(c->home, base_name); /* invariant 3 */
    x->props = x->base.expect || x->base.property;
    struct rw_error he;
    if (rw_home_open(c->home, &x->h, &he) < 0)
        return fail(err, errlen, "%s", he.msg);
    int nassert = 0;
    if (rw_sdk_assertions(x->h, base_name, count_assertion, &nassert, &he) < 0)
        return fail(err, errlen, "the assertions of run %s: %s", base_name, he.msg);
    x->props |= nassert > 0;
    rep->judged = x->props;
    rep->start = run_job_step(c->home, base_name, 0);
    if (!rep->start)
        return fail(err, errlen, "run %s never started its job (no job-start event)", base_name);
    if (c->from_step) {
        uint64_t end = rep->base.steps < x->last_step + 1 ? rep->base.steps : x->last_step + 1;
        if (c->from_step >= end)
            return fail(err, errlen, "step %llu is not inside run %s (its trace ends at step %llu)",
                        (unsigned long long)c->from_step, base_name,
                        (unsigned long long)x->last_step);
        rep->start = c->from_step;
    }
    x->horizon = rep->base.steps > rep->start ? rep->base.steps - rep->start : 1;
    return 0;
}

/* Schedule 0 judged, then the schedules explored (unless schedule 0 fails
 * and --keep-going is off). 0, or -1 with err. */
static int check_explore(struct ctx *x, double t0, char *err, size_t errlen)
{
    const struct check_opts *c = x->c;
    struct rw_check_report *rep = x->rep;
    if (x->props && judge(x, &rep->base, 0, 1, err, errlen) < 0)
        return -1;
    if (x->props && rep->base.props_failed) {
        progress(c, "check: schedule 0: run %s fails: %s", x->base_name, rep->base.why);
        rep->found = 1; /* schedule 0 itself: there is nothing to narrow */
        rep->schedule = 0;
        rep->strategy = sched_strategy(0);
        rep->failing = rep->base;
    }
    if ((!rep->found || c->keep_going) &&
        (workers_start(x, c->jobs ? c->jobs : 1, err, errlen) < 0 ||
         explore_schedules(x, err, errlen) < 0))
        return -1;
    rep->explore_s = now_s() - t0;
    explore_wilson(rep->failures, rep->tried, &rep->fail_lo, &rep->fail_hi);
    judge_unmet(rep);
    return 0;
}

/* With a varied input: schedule 0 again at the failing schedule's seed,
 * the side narrowing compares with. 0 to narrow, 1 when that run already
 * fails (the seed decides: nothing to narrow), -1 with err. */
static int check_seed_base(struct ctx *x, char seed_name[RW_ID_MAX], char *err, size_t errlen)
{
    const struct check_opts *c = x->c;
    struct rw_check_report *rep = x->rep;
    struct cworker_result msg;
    uint64_t s;
    struct cworker_task wk = {.record = 1, .seed_add = rep->schedule};
    memset(&msg, 0, sizeof(msg));
    if (cworker_submit(x->pool, &wk, err, errlen) < 0 || collect(x, &msg, &s) < 0)
        return fail(err, errlen, "schedule 0 at seed %llu could not run: %s",
                    (unsigned long long)(x->base.seed + rep->schedule),
                    msg.e.msg[0] ? msg.e.msg : "its worker died");
    snprintf(seed_name, RW_ID_MAX, "%s", msg.r.id);
    add_run(x, seed_name);
    x->base_name = seed_name;
    vary_apply(c, &x->base, rep->schedule);
    x->last_step = explore_trace_last_step(c->home, seed_name);
    side_of(&x->seed_base, &msg.r);
    x->ref = &x->seed_base;
    if (x->props && judge(x, &x->seed_base, rep->schedule, 0, err, errlen) < 0)
        return -1;
    if (explore_side_bad(x->props, &x->seed_base, &rep->base)) {
        /* It fails (or differs) at that seed with no perturbation at
         * all: the seed decides, there is no step to narrow to. */
        rep->seed_decides = 1;
        rep->pass_run = rep->base;
        rep->fail_run = x->seed_base;
        progress(c, "check: schedule 0 at seed %llu: run %s %s: the seed decides",
                 (unsigned long long)x->base.seed, seed_name,
                 x->props ? (x->seed_base.props_failed ? "fails" : "differs") : "differs");
        return 1;
    }
    progress(c, "check: schedule 0 at seed %llu: run %s %s %d", (unsigned long long)x->base.seed,
             seed_name, x->seed_base.outcome, x->seed_base.exit_code);
    return 0;
}

/* A failing schedule narrowed to the step where it parts from a passing
 * one (after check_seed_base with a varied input). 0, or -1 with err. */
static int check_narrow(struct ctx *x, char seed_name[RW_ID_MAX], char *err, size_t errlen)
{
    const struct check_opts *c = x->c;
    struct rw_check_report *rep = x->rep;
    rep->strategy = sched_strategy(rep->schedule);
    if (workers_start(x, c->jobs ? c->jobs : 1, err, errlen) < 0)
        return -1;
    if (vary_any(c)) {
        int sr = check_seed_base(x, seed_name, err, errlen);
        if (sr != 0)
            return sr < 0 ? -1 : 0;
    }
    RW_ASSERT(rep->failing.id[0] && rep->base.id[0]); /* invariant 2: stored runs */
    rep->strategy = sched_strategy(rep->schedule);
    struct narrow_env env = {.home = c->home,
                             .base = &x->base,
                             .horizon = x->horizon,
                             .last_step = x->last_step,
                             .props = x->props,
                             .ref = x->ref,
                             .probe = check_probe,
                             .ctx = x};
    double t1 = now_s();
    int rc = explore_narrow(&env, rep, err, errlen);
    rep->narrow_s = now_s() - t1;
    if (rc == 0 && rep->narrowed)
        parting(c->home, rep);
    else
        rep->deciding_access[0] = 0; /* named only for a narrowed deciding step */
    return rc;
}

/* The check's record (checkrec.h): every run it made, under its id. */
static void check_save(struct ctx *x, const char *base_name)
{
    const struct check_opts *c = x->c;
    struct checkrec_opts co = {.base = base_name,
                               .start = x->rep->start,
                               .schedules = c->schedules,
                               .first = c->first,
                               .keep_going = c->keep_going,
                               .vary_seed = c->vary_seed,
                               .from = c->from_step != 0};
    char why[300];
    if (checkrec_save(c->home, &co, x->rep, x->runs, x->nruns, x->rep->check_id, why, sizeof(why)) <
        0)
        progress(c, "warning: the check's record was not saved: %s", why);
}

int explore_check(const struct check_opts *c, struct rw_check_report *rep, struct rw_error *error)
{
    char *err = error->msg;
    size_t errlen = sizeof(error->msg);
    error->code = RW_EINTERNAL;
    memset(rep, 0, sizeof(*rep));
    struct ctx x = {.c = c, .rep = rep, .ref = &rep->base};
    char base_name[RW_ID_MAX], seed_name[RW_ID_MAX];
    rep->keep_going = c->keep_going;
    rep->vary_seed = c->vary_seed;
    double t0 = now_s();
    if (check_schedule0(c, base_name, error) < 0)
        return -1;
    struct run_stored st;
    struct rw_error e;
    if (run_stored_load(c->home, base_name, c->run.kernel, c->run.init, &st, &e) < 0)
        return fail(err, errlen, "%s", e.msg);
    x.base = st.o; /* the spec's strings live until run_stored_free below */
    int rc = -1;
    if (check_base_usable(&x, base_name, err, errlen) < 0 ||
        check_setup(&x, base_name, err, errlen) < 0 || check_explore(&x, t0, err, errlen) < 0)
        goto out;
    rc = 0;
    if (rep->found && !*c->abort && rep->schedule != 0)
        rc = check_narrow(&x, seed_name, err, errlen);
out:
    if (rc == 0)
        check_save(&x, base_name);
    workers_stop(&x);
    free(x.runs);
    rw_home_close(x.h);
    run_stored_free(&st);
    return rc;
}

void rw_check_config_init(struct rw_check_config *c)
{
    memset(c, 0, sizeof(*c));
    rw_run_config_init(&c->run);
    c->schedules = rw_defaults.schedules;
    c->jobs = rw_defaults.jobs;
}

int rw_check(rw_home *h, const struct rw_check_config *cfg, struct rw_check_report *rep,
             struct rw_error *err)
{
    static volatile sig_atomic_t never;
    struct check_opts c = {
        .home = rw_home_path(h),
        .base_run = NULL,
        .schedules = cfg->schedules,
        .first = cfg->first_schedule ? cfg->first_schedule : 1,
        .jobs = cfg->jobs,
        .progress = cfg->progress,
        .progress_ctx = cfg->progress_ctx,
        .abort = cfg->abort ? cfg->abort : &never,
        .from_step = cfg->from_step,
        .keep_going = cfg->keep_going,
        .vary_seed = cfg->vary_seed,
        .vary_dirorder = cfg->vary_dirorder,
        .vary_epoch = cfg->vary_epoch,
        .probe_timeout_s = cfg->probe_timeout_s,
        .via = cfg->via,
        .share = cfg->share,
        .via_args = cfg->via_args,
    };
    char name[RW_ID_MAX];
    if (c.first > c.schedules)
        return run_usage(err, "the first schedule %llu is above the last, %llu",
                         (unsigned long long)c.first, (unsigned long long)c.schedules);
    if (cfg->from_step && !cfg->base_run)
        return run_usage(err, "a step to start from needs a stored run (--from RUN:STEP)");
    memset(rep, 0, sizeof(*rep));
    if (cfg->base_run) {
        if (rw_resolve(h, cfg->base_run, name, err) < 0)
            return -1;
        c.base_run = name;
        if (cfg->from_step && cfg->from_step > explore_trace_last_step(c.home, name))
            return run_usage(err, "step %llu is not inside run %s (its trace ends before)",
                             (unsigned long long)cfg->from_step, name);
        c.run.kernel = cfg->run.kernel; /* NULL: the defaults */
        c.run.init = cfg->run.init;
        c.run.obs = &cfg->run.observer;
    } else {
        if (run_opts_from_config(h, &cfg->run, &c.run, err) < 0)
            return -1;
        if (c.run.sched.n)
            return run_usage(err, "check chooses the schedules itself; drop --schedule");
    }
    c.run.abort = c.abort;
    if (cfg->via && eng_preflight(cfg->via, err->msg, sizeof(err->msg)) < 0) {
        err->code = RW_EUSAGE; /* before schedule 0 is recorded */
        return -1;
    }
    if (explore_check(&c, rep, err) < 0)
        return -1;
    return 0;
}
