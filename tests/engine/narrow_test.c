/* narrow_test: check's narrowing (src/explore/narrow.c) in-process, its
 * probes answered by a fake whose outcome is a function of the probe's
 * window alone: the search finds the one deciding step, or the pair of
 * steps that decide together, in O(log n) probes; the bursts alone deciding
 * are reported as such; a timed-out run is never the passing side of a
 * narrowed pair; when outcomes are not monotone in the window's start the
 * pair falls back to the first search's prefix; and a deciding fault the
 * failing run carried out is named in words with its node's name. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "explore/narrow.h"
#include "home/rundir.h"
#include "input/faults.h"
#include "trace/trace.h"
#include "util/io.h"
#include "unit.h"

#define START 1000 /* the job-start step: probes start after it */
#define STEPS 3000 /* schedule 0's and the failing run's length */
#define MAXCAND 4096

enum mode {
    ALL_OF,   /* a window fails iff it holds every step of need[] */
    ALWAYS,   /* every window fails: the bursts decide */
    NONMONO,  /* fails iff it holds need[0] and need[1], or need[2] but not ps[0] */
    TIMEOUTS, /* properties; a window without need[0] times out (and passes them) */
};

/* The fake engine: each probe a run named "p<from>-<until>". */
struct fake {
    enum mode mode;
    uint64_t need[3], first;
    int nneed;
    uint64_t calls, timeouts;
    uint64_t from[256], until[256];
};

static int holds(uint64_t from, uint64_t until, uint64_t st)
{
    return from <= st && st < until;
}

static int fake_probe(void *ctx, uint64_t from, uint64_t until, struct rw_check_side *out,
                      char *err, size_t errlen)
{
    struct fake *f = ctx;
    (void)err;
    (void)errlen;
    if (f->calls < 256) {
        f->from[f->calls] = from;
        f->until[f->calls] = until;
    }
    f->calls++;
    int fails = 1;
    for (int i = 0; i < f->nneed && f->mode != NONMONO; i++)
        fails &= holds(from, until, f->need[i]);
    if (f->mode == ALWAYS)
        fails = 1;
    if (f->mode == NONMONO)
        fails = (holds(from, until, f->need[0]) && holds(from, until, f->need[1])) ||
                (holds(from, until, f->need[2]) && !holds(from, until, f->first));
    memset(out, 0, sizeof(*out));
    snprintf(out->id, sizeof(out->id), "p%llu-%llu", (unsigned long long)from,
             (unsigned long long)until);
    snprintf(out->outcome, sizeof(out->outcome), "exit");
    out->exit_code = fails;
    out->steps = STEPS;
    snprintf(out->output_hash, sizeof(out->output_hash), "%s", fails ? "f" : "b");
    if (f->mode == TIMEOUTS) { /* judged by properties: a timeout passes them */
        out->props_failed = fails;
        if (!fails) {
            snprintf(out->outcome, sizeof(out->outcome), "timeout");
            f->timeouts++;
        }
    }
    return 0;
}

static char home[64];
static struct run_opts base;
static struct rw_check_side ref;

/* The perturbed steps of schedule 3 under base, found as the search must
 * find them (any action, at an access point or not, or a fault). */
static uint64_t cand[MAXCAND];
static uint64_t ncand;

static void setup_sched(struct sched *one)
{
    memset(one, 0, sizeof(*one));
    one->seed = base.seed;
    one->fault_kinds = base.sched.fault_kinds;
    one->fault_rate = base.sched.fault_rate;
    one->fault_nodes = base.sched.fault_nodes;
    one->fault_restart = base.sched.fault_restart;
    sched_push(one, 3, START + 1, UINT64_MAX, START + 1, STEPS - START);
}

static void find_candidates(void)
{
    struct sched one;
    setup_sched(&one);
    ncand = 0;
    for (uint64_t st = START + 1; st < STEPS && ncand < MAXCAND; st++)
        if (sched_decide(&one, st, 0).action != SCHED_NONE ||
            sched_decide(&one, st, 1).action != SCHED_NONE ||
            faults_decide(&one, st).kind != FAULT_NONE)
            cand[ncand++] = st;
}

static uint64_t index_of(uint64_t st)
{
    for (uint64_t i = 0; i < ncand; i++)
        if (cand[i] == st)
            return i;
    return UINT64_MAX;
}

static unsigned log2_ceil(uint64_t n)
{
    unsigned l = 0;
    while ((1ull << l) < n)
        l++;
    return l;
}

/* Narrow schedule 3 with fake f (props: runs judged by properties). */
static int run_narrow(struct fake *f, int props, struct rw_check_report *rep)
{
    struct narrow_env env = {.home = home,
                             .base = &base,
                             .horizon = STEPS - START,
                             .last_step = STEPS - 1,
                             .props = props,
                             .ref = &ref,
                             .probe = fake_probe,
                             .ctx = f};
    char err[256] = "";
    memset(rep, 0, sizeof(*rep));
    rep->schedule = 3;
    rep->start = START;
    rep->base = ref;
    rep->failing = ref;
    snprintf(rep->failing.id, sizeof(rep->failing.id), "failing");
    rep->failing.exit_code = 1;
    int rc = explore_narrow(&env, rep, err, sizeof(err));
    if (rc < 0)
        fprintf(stderr, "explore_narrow: %s\n", err);
    return rc;
}

static int named(const struct rw_check_side *s, uint64_t from, uint64_t until)
{
    char id[64];
    snprintf(id, sizeof(id), "p%llu-%llu", (unsigned long long)from, (unsigned long long)until);
    return !strcmp(s->id, id);
}

/* Every probe is a window of the schedule's perturbed steps (check.c
 * invariant 6: each starts at a candidate, past the job start). */
static int windows_sane(const struct fake *f)
{
    for (uint64_t i = 0; i < f->calls && i < 256; i++)
        if (index_of(f->from[i]) == UINT64_MAX || f->until[i] < f->from[i])
            return 0;
    return 1;
}

/* One step decides: the pair is [K, K) and [K, K + 1). */
static void test_one_step(void)
{
    struct fake f = {.mode = ALL_OF, .nneed = 1};
    struct rw_check_report rep;
    uint64_t K = cand[ncand * 2 / 3];
    f.need[0] = K;
    CHECK(run_narrow(&f, 0, &rep) == 0, "narrowing runs");
    CHECK(rep.narrowed && !rep.bursts_decide, "one step: narrowed");
    CHECK(rep.deciding_step == K, "one step: the deciding step is K");
    CHECK(rep.window_from == K && rep.window_until == K + 1 && rep.perturbed_in_window == 1,
          "one step: the window is K alone");
    CHECK(named(&rep.fail_run, K, K + 1), "one step: the failing run perturbs K alone");
    CHECK(named(&rep.pass_run, K, K), "one step: the passing run is the bursts alone");
    CHECK(rep.fail_run.exit_code == 1 && rep.pass_run.exit_code == 0, "one step: the pair's ends");
    CHECK(rep.probes == f.calls, "every probe counted");
    CHECK(rep.probes <= log2_ceil(ncand) + 2, "one step: O(log n) probes");
    CHECK(rep.timeouts == 0, "no timeouts");
    CHECK(windows_sane(&f), "one step: every probe a window of perturbed steps");
    struct sched one;
    setup_sched(&one);
    char words[160];
    struct sched_decision dd = sched_decide(&one, K, 0);
    sched_describe(&dd, words, sizeof(words));
    CHECK(!strcmp(rep.deciding_what, words) && !rep.deciding_fault,
          "one step: the deciding perturbation in words");
}

/* Two steps decide together: K2 with K1 and the perturbed steps between. */
static void test_two_steps(void)
{
    struct fake f = {.mode = ALL_OF, .nneed = 2};
    struct rw_check_report rep;
    uint64_t i1 = ncand / 4, i2 = ncand * 3 / 4, K1 = cand[i1], K2 = cand[i2];
    f.need[0] = K1;
    f.need[1] = K2;
    CHECK(run_narrow(&f, 0, &rep) == 0, "narrowing runs");
    CHECK(rep.narrowed && rep.deciding_step == K2, "two steps: the later one decides");
    CHECK(rep.window_from == K1 && rep.window_until == K2 + 1,
          "two steps: the window runs from the earlier one");
    CHECK(rep.perturbed_in_window == i2 - i1 + 1,
          "two steps: several perturbations together, counted");
    CHECK(named(&rep.fail_run, K1, K2 + 1) && named(&rep.pass_run, K1, K2),
          "two steps: the pair differs by K2 alone");
    CHECK(rep.probes == f.calls && rep.probes <= log2_ceil(ncand) + 1 + log2_ceil(i2) + 2,
          "two steps: O(log n) probes");
    CHECK(windows_sane(&f), "two steps: every probe a window of perturbed steps");
}

/* Every window fails, none of the actions matter: the bursts decide. */
static void test_bursts(void)
{
    struct fake f = {.mode = ALWAYS};
    struct rw_check_report rep;
    CHECK(run_narrow(&f, 0, &rep) == 0, "narrowing runs");
    CHECK(!rep.narrowed && rep.bursts_decide, "bursts: no step decides, the bursts do");
    CHECK(named(&rep.fail_run, cand[0], cand[0]), "bursts: the failing run has no action");
    CHECK(!strcmp(rep.pass_run.id, ref.id), "bursts: the passing side is schedule 0");
    CHECK(rep.probes == f.calls && rep.probes <= log2_ceil(ncand) + 2,
          "bursts: the bursts' run is the search's, not one more");
}

/* Properties: every window without K times out, so passes them. */
static void test_timeout(void)
{
    struct fake f = {.mode = TIMEOUTS, .nneed = 1};
    struct rw_check_report rep;
    uint64_t K = cand[ncand / 2];
    f.need[0] = K;
    CHECK(run_narrow(&f, 1, &rep) == 0, "narrowing runs");
    CHECK(rep.deciding_step == K, "timeouts: the search still reaches K");
    CHECK(!strcmp(rep.pass_run.outcome, "timeout"), "timeouts: the run without K timed out");
    CHECK(!rep.narrowed, "timeouts: a timed-out run is never the passing side");
    CHECK(!rep.bursts_decide, "timeouts: nor do the bursts decide");
    CHECK(rep.timeouts == f.timeouts && rep.timeouts > 0, "timeouts: every one counted");
}

/* Not monotone in the window's start: [B, K) fails without K (B alone
 * fails unless the first step is perturbed too), so the pair falls back to
 * the prefix [ps[0], K) the first search proved passing. */
static void test_not_monotone(void)
{
    struct fake f = {.mode = NONMONO, .first = cand[0]};
    struct rw_check_report rep;
    uint64_t C = cand[ncand / 4], B = cand[ncand / 2], K = cand[ncand * 3 / 4];
    f.need[0] = C;
    f.need[1] = K;
    f.need[2] = B;
    CHECK(run_narrow(&f, 0, &rep) == 0, "narrowing runs");
    CHECK(rep.narrowed && rep.deciding_step == K, "not monotone: K decides");
    CHECK(rep.window_from == cand[0] && rep.perturbed_in_window == index_of(K) + 1,
          "not monotone: the window is the first search's prefix");
    CHECK(named(&rep.fail_run, cand[0], K + 1) && named(&rep.pass_run, cand[0], K),
          "not monotone: the pair is that prefix with and without K");
}

/* A trace for run id holding a fault record (kind, node) at step. */
static int write_fault_trace(const char *id, uint64_t step, unsigned kind, unsigned node)
{
    char p[256];
    snprintf(p, sizeof(p), "%s/runs/%s", home, id);
    if (io_mkdir_p(p) < 0)
        return -1;
    snprintf(p, sizeof(p), "%s/runs/%s/trace", home, id);
    struct trace_writer w;
    if (trace_open_write(&w, p) != 0)
        return -1;
    struct rewind_record r = {.len = sizeof(r), .kind = REWIND_REC_FAULT, .tid = 1};
    r.aux = kind | (node << 8);
    trace_append(&w, step, &r);
    return trace_close(&w);
}

/* A fault decides: named with its node when the failing run carried it
 * out (its trace has the fault's record), as a perturbation otherwise. */
static void test_fault(void)
{
    static char n1[] = "primary=/bin/kv", n2[] = "backup=/bin/kv";
    static char *nodes[] = {n1, n2, NULL};
    base.nodes = nodes;
    base.sched.fault_kinds = 1u << FAULT_KILL;
    base.sched.fault_rate = 20;
    base.sched.fault_nodes = 2;
    find_candidates();
    struct sched one;
    setup_sched(&one);
    uint64_t K = 0;
    for (uint64_t i = ncand / 3; i < ncand && !K; i++)
        if (faults_decide(&one, cand[i]).kind == FAULT_KILL &&
            faults_decide(&one, cand[i]).node == 2)
            K = cand[i];
    CHECK(K != 0, "fault: schedule 3 kills node 2 somewhere");
    if (!K)
        return;
    struct fake f = {.mode = ALL_OF, .nneed = 1, .need = {K}};
    struct rw_check_report rep;
    CHECK(run_narrow(&f, 0, &rep) == 0, "narrowing runs");
    CHECK(rep.narrowed && rep.deciding_step == K && !rep.deciding_fault,
          "fault: not carried out (no record), not named as the decision");
    char id[64];
    snprintf(id, sizeof(id), "p%llu-%llu", (unsigned long long)K, (unsigned long long)K + 1);
    CHECK(write_fault_trace(id, K + 3, FAULT_KILL, 2) == 0, "fault: the failing run's trace");
    memset(&f, 0, sizeof(f));
    f.mode = ALL_OF;
    f.nneed = 1;
    f.need[0] = K;
    CHECK(run_narrow(&f, 0, &rep) == 0, "narrowing runs");
    CHECK(rep.narrowed && rep.deciding_step == K && rep.deciding_fault,
          "fault: carried out a few steps later, it decides");
    const char *w = "killed node backup (SIGKILL to each of its processes)";
    CHECK(!strncmp(rep.deciding_what, w, strlen(w)), "fault: in words, with the node's name");
    base.nodes = NULL;
    memset(&base.sched, 0, sizeof(base.sched));
}

int main(void)
{
    snprintf(home, sizeof(home), "/tmp/narrow_test.%d", (int)getpid());
    base.seed = 42;
    snprintf(ref.id, sizeof(ref.id), "base");
    snprintf(ref.outcome, sizeof(ref.outcome), "exit");
    snprintf(ref.output_hash, sizeof(ref.output_hash), "b");
    ref.steps = STEPS;
    find_candidates();
    CHECK(ncand > 64, "schedule 3 perturbs many steps");
    test_one_step();
    test_two_steps();
    test_bursts();
    test_timeout();
    test_not_monotone();
    test_fault();
    rundir_remove_tree(home);
    return unit_done();
}
