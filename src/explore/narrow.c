/*
 * narrow: see narrow.h.
 */
#include "explore/narrow.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "explore/props.h"
#include "input/faults.h"
#include "input/nodes.h"
#include "trace/describe.h"
#include "trace/trace.h"
#include "util/check.h"
#include "util/fail.h"
#include "util/homepath.h"

#define fail util_fail

/* One narrowing: its inputs, its report, where an error goes. */
struct nar {
    const struct narrow_env *v;
    struct rw_check_report *rep;
    char *err;
    size_t errlen;
};

int explore_side_bad(int props, const struct rw_check_side *s, const struct rw_check_side *ref)
{
    if (props)
        return s->props_failed;
    return strcmp(s->outcome, ref->outcome) || s->exit_code != ref->exit_code ||
           strcmp(s->output_hash, ref->output_hash);
}

static int bad(const struct nar *x, const struct rw_check_side *s)
{
    return explore_side_bad(x->v->props, s, x->v->ref);
}

/* Run the probe window [from, until) of the failing schedule: its actions
 * there alone, its bursts everywhere (src/input/sched.h invariant 3), so
 * the window of every perturbed step is the failing run itself. */
static int probe(struct nar *x, uint64_t from, uint64_t until, struct rw_check_side *out,
                 int *fails)
{
    x->rep->probes++;
    if (x->v->probe(x->v->ctx, from, until, out, x->err, x->errlen) < 0)
        return -1;
    x->rep->timeouts += !strcmp(out->outcome, "timeout");
    *fails = bad(x, out);
    return 0;
}

/* The memory-access point at step `step` of run `name`, in words ("" if the
 * step is none: docs/determinism.md, "Memory-access points"). */
static void access_at(const char *home, const char *name, uint64_t step, char *out, size_t n)
{
    char path[4200];
    struct trace_reader r;
    out[0] = 0;
    if (home_path(path, sizeof(path), home, HOME_RUNS, name, "trace") < 0 ||
        trace_open_read(&r, path) != 0)
        return;
    struct trace_entry e;
    while (trace_next(&r, &e) == 1 && e.step <= step)
        if (e.step == step && e.rec.kind == REWIND_REC_ACCESS) {
            describe_entry(&e, out, n);
            break;
        }
    trace_close_read(&r);
}

/* Did run `name` carry out fault fd decided at step `step`? Its record
 * comes at the step where the guest took the interrupt: that step, or a few
 * later (docs/faults.md); a fault the guest ignored (its node gone, already
 * paused) or the monitor dropped (the last one still pending) has none. */
static int fault_acted(const char *home, const char *name, uint64_t step,
                       const struct fault_decision *fd)
{
    char path[4200];
    struct trace_reader r;
    int found = 0;
    if (home_path(path, sizeof(path), home, HOME_RUNS, name, "trace") < 0 ||
        trace_open_read(&r, path) != 0)
        return 0;
    struct trace_entry e;
    while (!found && trace_next(&r, &e) == 1 && e.step <= step + 64)
        found = e.step >= step && e.rec.kind == REWIND_REC_FAULT &&
                (e.rec.aux & 0xff) == (uint64_t)fd->kind && ((e.rec.aux >> 8) & 0xff) == fd->node;
    trace_close_read(&r);
    return found;
}
/* Not narrowed: the search took the bursts alone (the window [from, from),
 * no action) to pass. When they fail too, they decide and no step does
 * (invariant 3): the report says so. ran: rep->pass_run is that run. */
static int bursts_alone(struct nar *x, uint64_t from, int ran)
{
    struct rw_check_report *rep = x->rep;
    struct rw_check_side b = rep->pass_run;
    int f;
    if (!ran && probe(x, from, from, &b, &f) < 0)
        return -1;
    if (bad(x, &b)) {
        rep->bursts_decide = 1;
        rep->fail_run = b;
        rep->pass_run = *x->v->ref;
    }
    return 0;
}

/* Words for what schedule one does at step d: its fault (named by the
 * node's name from the spec), its perturbation, or both. */
static void describe_decision(const struct nar *x, const struct sched *one, uint64_t d, int access,
                              struct rw_check_report *rep)
{
    struct sched_decision dd = sched_decide(one, d, access);
    struct fault_decision fd = faults_decide(one, d);
    char what[sizeof(rep->deciding_what)], name[NODE_NAME_MAX + 1];
    rep->deciding_fault =
        fd.kind != FAULT_NONE && fault_acted(x->v->home, rep->fail_run.id, d, &fd);
    if (!rep->deciding_fault) {
        sched_describe(&dd, rep->deciding_what, sizeof(rep->deciding_what));
        return;
    }
    const char *nm = NULL;
    size_t nn = 0;
    while (x->v->base->nodes && x->v->base->nodes[nn])
        nn++;
    if (fd.node >= 1 && fd.node <= nn) {
        size_t l = nodes_name_len(x->v->base->nodes[fd.node - 1]);
        snprintf(name, sizeof(name), "%.*s", (int)(l > NODE_NAME_MAX ? NODE_NAME_MAX : l),
                 x->v->base->nodes[fd.node - 1]);
        nm = name;
    }
    faults_describe(&fd, nm, what, sizeof(what));
    if (dd.action == SCHED_NONE) {
        snprintf(rep->deciding_what, sizeof(rep->deciding_what), "%s", what);
        return;
    }
    char more[128];
    sched_describe(&dd, more, sizeof(more));
    snprintf(rep->deciding_what, sizeof(rep->deciding_what), "%.90s, and %.60s", what, more);
}

/* The candidate steps of schedule one: every step from rep->start + 1 to
 * the end of the longer trace (invariant 2) that the schedule perturbs or
 * injects a fault at, into *ps (malloc'd), their number into *n. 0, or -1
 * with err. */
static int candidates(struct nar *x, const struct sched *one, uint64_t **ps, uint64_t *n)
{
    struct rw_check_report *rep = x->rep;
    uint64_t cap = 1024;
    *n = 0;
    *ps = malloc(cap * sizeof(**ps));
    if (!*ps)
        return fail(x->err, x->errlen, "out of memory");
    uint64_t end = rep->failing.steps > rep->base.steps ? rep->failing.steps : rep->base.steps;
    uint64_t have = explore_trace_last_step(x->v->home, rep->failing.id);
    if (have < x->v->last_step)
        have = x->v->last_step;
    if (end > have + 1) /* invariant 2 */
        end = have + 1;
    for (uint64_t st = rep->start + 1; st < end; st++) {
        /* Whether st is an access point depends on the probe's run: take
         * st if either would perturb it (an extra candidate only costs a
         * probe; a missing one could hide the deciding step). */
        if (sched_decide(one, st, 0).action == SCHED_NONE &&
            sched_decide(one, st, 1).action == SCHED_NONE &&
            faults_decide(one, st).kind == FAULT_NONE) /* docs/faults.md */
            continue;
        if (*n == cap) {
            uint64_t *np = realloc(*ps, (cap *= 2) * sizeof(**ps));
            if (!np) {
                free(*ps);
                *ps = NULL;
                return fail(x->err, x->errlen, "out of memory");
            }
            *ps = np;
        }
        (*ps)[(*n)++] = st;
    }
    return 0;
}

int explore_narrow(const struct narrow_env *env, struct rw_check_report *rep, char *err,
                   size_t errlen)
{
    struct nar nx = {.v = env, .rep = rep, .err = err, .errlen = errlen}, *x = &nx;
    const struct run_opts *base = env->base;
    struct sched one = {.seed = base->seed,
                        .fault_kinds = base->sched.fault_kinds,
                        .fault_rate = base->sched.fault_rate,
                        .fault_nodes = base->sched.fault_nodes,
                        .fault_restart = base->sched.fault_restart};
    sched_push(&one, rep->schedule, rep->start + 1, UINT64_MAX, rep->start + 1, env->horizon);
    uint64_t n, *ps;
    if (candidates(x, &one, &ps, &n) < 0)
        return -1;
    int rc = -1, f;
    struct rw_check_side side;
    if (n == 0) {
        fail(err, errlen, "schedule %llu perturbs no step of the run",
             (unsigned long long)rep->schedule);
        goto out;
    }
    /* Smallest k such that perturbing ps[0..k-1] ends differently. */
    uint64_t lo = 0, hi = n;
    while (hi - lo > 1) {
        uint64_t mid = (lo + hi) / 2;
        if (probe(x, ps[0], ps[mid - 1] + 1, &side, &f) < 0)
            goto out;
        if (f)
            hi = mid;
        else
            lo = mid;
    }
    uint64_t k = hi, d = ps[k - 1];
    /* Largest j such that perturbing ps[j..k-1] still ends differently. */
    uint64_t j = 0;
    struct rw_check_side failrun = rep->failing;
    if (k > 1) {
        if (probe(x, d, d + 1, &side, &f) < 0)
            goto out;
        if (f) {
            j = k - 1;
            failrun = side;
        } else {
            uint64_t a = 0, b = k - 1;
            while (b - a > 1) {
                uint64_t mid = (a + b) / 2;
                if (probe(x, ps[mid], d + 1, &side, &f) < 0)
                    goto out;
                if (f)
                    a = mid;
                else
                    b = mid;
            }
            j = a;
        }
    }
    if (!(k > 1 && j == k - 1)) {
        if (probe(x, ps[j], d + 1, &failrun, &f) < 0)
            goto out;
    }
    rep->fail_run = failrun;
    /* The window without d (empty when j == k - 1: the bursts alone; not
     * schedule 0, whose bursts are the guest's): invariant 3. */
    if (probe(x, ps[j], d, &rep->pass_run, &f) < 0)
        goto out;
    if (j > 0 && bad(x, &rep->pass_run)) {
        /* Outcomes need not be monotone in the window's start (with
         * memory-access points many perturbations can each lead to the
         * failure): fall back to the prefix the first search proved, which
         * passes without d (ps[0..k-2], or the bursts alone) and fails
         * with it. */
        j = 0;
        if (probe(x, ps[0], d + 1, &rep->fail_run, &f) < 0)
            goto out;
        if (probe(x, ps[0], d, &rep->pass_run, &f) < 0)
            goto out;
    }
    rep->window_from = ps[j];
    rep->window_until = d + 1;
    rep->perturbed_in_window = k - j;
    rep->deciding_step = d;
    access_at(x->v->home, rep->fail_run.id, d, rep->deciding_access, sizeof(rep->deciding_access));
    describe_decision(x, &one, d, rep->deciding_access[0] != 0, rep);
    rep->narrowed = bad(x, &rep->fail_run) && !bad(x, &rep->pass_run) &&
                    strcmp(rep->pass_run.outcome, "timeout") != 0;             /* invariant 1 */
    RW_ASSERT(!rep->narrowed || (rep->pass_run.id[0] && rep->fail_run.id[0])); /* invariant 1 */
    if (!rep->narrowed && bursts_alone(x, ps[0], k == 1 && j == 0) < 0)
        goto out;
    rc = 0;
out:
    free(ps);
    return rc;
}
