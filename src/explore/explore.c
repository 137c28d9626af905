/*
 * explore: see explore.h.
 *
 * Workers: each schedule runs in a child process made by fork() (a VM per
 * process; the parent holds no KVM or store handle across fork), which
 * writes its struct run_result into a pipe and exits. Probes during
 * narrowing run one at a time in this process.
 */
#include "util/fail.h"
#include "explore/explore.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "trace/trace.h"

#define fail util_fail
#define MAX_JOBS 64

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int explore_opts(const char *home, const char *name, const char *kernel, const char *init,
                 struct run_opts *o, json_t **manifest, char *err, size_t errlen)
{
    char path[4200];
    snprintf(path, sizeof(path), "%s/runs/%s/manifest.json", home, name);
    json_error_t je;
    json_t *m = json_load_file(path, 0, &je);
    if (!m)
        return fail(err, errlen, "cannot read the manifest of run %s", name);
    json_t *spec = json_object_get(m, "spec");
    memset(o, 0, sizeof(*o));
    int rc = run_opts_from_spec(spec, home, o, err, errlen);
    if (rc == 0) {
        o->kernel = kernel;
        o->init = init;
        o->kf_every = (uint64_t)json_integer_value(json_object_get(m, "keyframe_every"));
        o->quiet = 1;
        rc = run_check_artifacts(o, spec, err, errlen);
    }
    if (rc == 0 && manifest)
        *manifest = m;
    else
        json_decref(m);
    return rc;
}

uint64_t explore_job_step(const char *home, const char *name, int exec)
{
    char path[4200];
    snprintf(path, sizeof(path), "%s/runs/%s/trace", home, name);
    struct trace_reader r;
    if (trace_open_read(&r, path) != 0)
        return 0;
    struct trace_entry e;
    uint64_t at = 0;
    int started = 0;
    while (trace_next(&r, &e) == 1) {
        if (e.rec.kind == REWIND_REC_INIT && e.rec.aux == REWIND_INIT_JOB_START) {
            started = 1;
            if (!exec) {
                at = e.step;
                break;
            }
        } else if (started && e.rec.kind == REWIND_REC_EXEC) {
            at = e.step;
            break;
        }
    }
    trace_close_read(&r);
    return at;
}

int explore_fork(struct run_opts *o, const char *parent, uint64_t schedule, uint64_t from,
                 uint64_t until, uint64_t origin, uint64_t horizon, struct run_result *r,
                 char *err, size_t errlen)
{
    if (from == 0)
        return fail(err, errlen, "a fork needs a step after boot (1 or more)");
    if (schedule && sched_push(&o->sched, schedule, from, until, origin, horizon ? horizon : 1) < 0)
        return fail(err, errlen, "too many perturbation segments (forks of forks)");
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
    }
    /* The keyframe at `from` was taken after the parent's step `from`; the
     * fork's own decision at `from` needs the state before it. */
    o->from_run = parent;
    o->from_step = from - 1;
    o->fork_step = from;
    return run_execute(o, r, err, errlen);
}

static void side_of(struct check_side *s, const struct run_result *r)
{
    snprintf(s->id, sizeof(s->id), "%s", r->id);
    snprintf(s->outcome, sizeof(s->outcome), "%s", run_outcome_word(r->outcome));
    s->exit_code = r->exit_code;
    s->steps = r->steps;
    snprintf(s->output_hash, sizeof(s->output_hash), "%s", r->output_hash);
}

static int side_from_manifest(struct check_side *s, const char *name, json_t *m)
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

static int differs(const struct check_side *a, const struct check_side *b)
{
    return strcmp(a->outcome, b->outcome) || a->exit_code != b->exit_code ||
           strcmp(a->output_hash, b->output_hash);
}

struct worker {
    pid_t pid;
    int fd;
    uint64_t schedule;
};

struct ctx {
    const struct check_opts *c;
    struct check_report *rep;
    struct run_opts base; /* options of the schedule-0 run */
    const char *base_name;
    uint64_t horizon;
};

static int spawn(struct ctx *x, struct worker *w, uint64_t s, char *err, size_t errlen)
{
    int pfd[2];
    if (pipe(pfd) < 0)
        return fail(err, errlen, "pipe: %s", strerror(errno));
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        close(pfd[0]);
        close(pfd[1]);
        return fail(err, errlen, "fork: %s", strerror(errno));
    }
    if (pid == 0) {
        close(pfd[0]);
        struct run_opts o = x->base;
        struct run_result r;
        char e[1024];
        if (explore_fork(&o, x->base_name, s, x->rep->start + 1, UINT64_MAX, x->rep->start + 1,
                         x->horizon, &r, e, sizeof(e)) < 0) {
            fprintf(stderr, "rewind: schedule %llu: %s\n", (unsigned long long)s, e);
            _exit(3);
        }
        ssize_t n = write(pfd[1], &r, sizeof(r));
        _exit(n == (ssize_t)sizeof(r) ? 0 : 3);
    }
    close(pfd[1]);
    w->pid = pid;
    w->fd = pfd[0];
    w->schedule = s;
    return 0;
}

static volatile sig_atomic_t *abort_flag;

/* Wait for one worker; fill *r. Returns its index, or -1 if it failed. */
static int reap(struct worker *ws, unsigned n, struct run_result *r, int *idx)
{
    int st;
    pid_t pid;
    while ((pid = waitpid(-1, &st, 0)) < 0 && errno == EINTR) {
        if (abort_flag && *abort_flag)
            for (unsigned i = 0; i < n; i++)
                if (ws[i].pid)
                    kill(ws[i].pid, SIGTERM);
    }
    for (unsigned i = 0; i < n; i++) {
        if (ws[i].pid != pid)
            continue;
        *idx = (int)i;
        size_t got = 0;
        while (got < sizeof(*r)) {
            ssize_t k = read(ws[i].fd, (char *)r + got, sizeof(*r) - got);
            if (k < 0 && errno == EINTR)
                continue;
            if (k <= 0)
                break;
            got += (size_t)k;
        }
        close(ws[i].fd);
        ws[i].pid = 0;
        return got == sizeof(*r) && WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
    }
    *idx = -1;
    return -1;
}

static int explore_schedules(struct ctx *x, char *err, size_t errlen)
{
    const struct check_opts *c = x->c;
    struct check_report *rep = x->rep;
    struct worker ws[MAX_JOBS];
    memset(ws, 0, sizeof(ws));
    unsigned jobs = c->jobs ? c->jobs : 1, running = 0;
    abort_flag = c->abort;
    if (jobs > MAX_JOBS)
        jobs = MAX_JOBS;
    uint64_t next = 1;
    int failed = 0;
    while (running || (!rep->found && !failed && next <= c->schedules && !*c->abort)) {
        while (!rep->found && !failed && running < jobs && next <= c->schedules && !*c->abort) {
            unsigned slot = 0;
            while (ws[slot].pid)
                slot++;
            if (spawn(x, &ws[slot], next, err, errlen) < 0) {
                failed = 1;
                break;
            }
            next++;
            running++;
        }
        if (!running)
            break;
        if (*c->abort) /* --timeout or a signal: stop the workers too */
            for (unsigned i = 0; i < jobs; i++)
                if (ws[i].pid)
                    kill(ws[i].pid, SIGTERM);
        struct run_result r;
        int idx;
        int ok = reap(ws, jobs, &r, &idx);
        if (idx < 0)
            continue;
        running--;
        uint64_t s = ws[idx].schedule;
        if (ok < 0) {
            if (!failed)
                fail(err, errlen, "schedule %llu could not run (see above)",
                     (unsigned long long)s);
            failed = 1;
            continue;
        }
        rep->tried++;
        struct check_side side;
        side_of(&side, &r);
        int d = differs(&side, &rep->base);
        if (c->progress)
            fprintf(stderr, "rewind: check: schedule %llu (%s): %s %d, %llu steps%s\n",
                    (unsigned long long)s, sched_strategy(s), side.outcome, side.exit_code,
                    (unsigned long long)side.steps, d ? "  <- ends differently" : "");
        if (d && (!rep->found || s < rep->schedule)) {
            rep->found = 1;
            rep->schedule = s;
            rep->failing = side;
        }
    }
    return failed ? -1 : 0;
}

/* Run the probe window [from, until) of the failing schedule. */
static int probe(struct ctx *x, uint64_t from, uint64_t until, struct check_side *out, int *fails,
                 char *err, size_t errlen)
{
    struct run_opts o = x->base;
    struct run_result r;
    x->rep->probes++;
    if (explore_fork(&o, x->base_name, x->rep->schedule, from, until, x->rep->start + 1,
                     x->horizon, &r, err, errlen) < 0)
        return -1;
    side_of(out, &r);
    *fails = differs(out, &x->rep->base);
    if (x->c->progress)
        fprintf(stderr, "rewind: narrow: window [%llu, %llu): %s %d%s\n",
                (unsigned long long)from, (unsigned long long)until, out->outcome,
                out->exit_code, *fails ? "  <- differs" : "");
    return 0;
}

static int narrow(struct ctx *x, char *err, size_t errlen)
{
    struct check_report *rep = x->rep;
    struct sched one = {.seed = x->base.seed};
    sched_push(&one, rep->schedule, rep->start + 1, UINT64_MAX, rep->start + 1, x->horizon);
    uint64_t cap = 1024, n = 0, *ps = malloc(cap * sizeof(*ps));
    if (!ps)
        return fail(err, errlen, "out of memory");
    uint64_t end = rep->failing.steps > rep->base.steps ? rep->failing.steps : rep->base.steps;
    for (uint64_t st = rep->start + 1; st < end; st++) {
        if (sched_decide(&one, st).action == SCHED_NONE)
            continue;
        if (n == cap) {
            uint64_t *np = realloc(ps, (cap *= 2) * sizeof(*ps));
            if (!np) {
                free(ps);
                return fail(err, errlen, "out of memory");
            }
            ps = np;
        }
        ps[n++] = st;
    }
    int rc = -1, f;
    struct check_side side;
    if (n == 0) {
        fail(err, errlen, "schedule %llu perturbs no step of the run",
             (unsigned long long)rep->schedule);
        goto out;
    }
    /* Smallest k such that perturbing ps[0..k-1] ends differently. */
    uint64_t lo = 0, hi = n;
    while (hi - lo > 1) {
        uint64_t mid = (lo + hi) / 2;
        if (probe(x, ps[0], ps[mid - 1] + 1, &side, &f, err, errlen) < 0)
            goto out;
        if (f)
            hi = mid;
        else
            lo = mid;
    }
    uint64_t k = hi, d = ps[k - 1];
    /* Largest j such that perturbing ps[j..k-1] still ends differently. */
    uint64_t j = 0;
    struct check_side failrun = rep->failing;
    if (k > 1) {
        if (probe(x, d, d + 1, &side, &f, err, errlen) < 0)
            goto out;
        if (f) {
            j = k - 1;
            failrun = side;
        } else {
            uint64_t a = 0, b = k - 1;
            while (b - a > 1) {
                uint64_t mid = (a + b) / 2;
                if (probe(x, ps[mid], d + 1, &side, &f, err, errlen) < 0)
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
        if (probe(x, ps[j], d + 1, &failrun, &f, err, errlen) < 0)
            goto out;
    }
    rep->fail_run = failrun;
    if (j == k - 1) {
        rep->pass_run = rep->base; /* the window without d is empty: schedule 0 */
    } else if (probe(x, ps[j], d, &rep->pass_run, &f, err, errlen) < 0) {
        goto out;
    }
    rep->window_from = ps[j];
    rep->window_until = d + 1;
    rep->perturbed_in_window = k - j;
    rep->deciding_step = d;
    struct sched_decision dd = sched_decide(&one, d);
    sched_describe(&dd, rep->deciding_what, sizeof(rep->deciding_what));
    rep->narrowed = differs(&rep->fail_run, &rep->base) && !differs(&rep->pass_run, &rep->base);
    rc = 0;
out:
    free(ps);
    return rc;
}

int explore_check(const struct check_opts *c, struct check_report *rep, char *err,
                  size_t errlen)
{
    memset(rep, 0, sizeof(*rep));
    struct ctx x = {.c = c, .rep = rep};
    static char base_name[64];
    double t0 = now_s();
    if (c->base_run) {
        snprintf(base_name, sizeof(base_name), "%s", c->base_run);
    } else {
        struct run_opts o = c->run;
        struct run_result r;
        o.quiet = 1;
        o.abort = c->abort;
        if (run_execute(&o, &r, err, errlen) < 0)
            return -1;
        snprintf(base_name, sizeof(base_name), "%s", r.id);
        if (c->progress)
            fprintf(stderr, "rewind: check: schedule 0: run %s %s %d after %llu steps\n", r.id,
                    run_outcome_word(r.outcome), r.exit_code, (unsigned long long)r.steps);
    }
    json_t *m = NULL;
    if (explore_opts(c->home, base_name, c->kernel, c->init, &x.base, &m, err, errlen) < 0)
        return -1;
    int bad = side_from_manifest(&rep->base, base_name, m);
    json_decref(m);
    if (bad)
        return fail(err, errlen, "run %s has no outcome (is it complete?)", base_name);
    if (x.base.sched.n)
        return fail(err, errlen, "run %s is itself perturbed (a schedule or a fork); check needs "
                    "an unperturbed run as schedule 0", base_name);
    x.base.abort = c->abort;
    x.base_name = base_name;
    rep->start = explore_job_step(c->home, base_name, 0);
    if (!rep->start)
        return fail(err, errlen, "run %s never started its job (no job-start event)", base_name);
    x.horizon = rep->base.steps > rep->start ? rep->base.steps - rep->start : 1;
    if (explore_schedules(&x, err, errlen) < 0)
        return -1;
    rep->explore_s = now_s() - t0;
    if (!rep->found || *c->abort)
        return 0;
    rep->strategy = sched_strategy(rep->schedule);
    double t1 = now_s();
    int rc = narrow(&x, err, errlen);
    rep->narrow_s = now_s() - t1;
    return rc;
}
