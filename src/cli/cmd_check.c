/*
 * cmd_check: `rewind check [--schedules N] [-j JOBS] [--json] [--keep-going]
 * [--vary seed] [--probe-timeout S] [--run RUN | --from RUN:STEP |
 * RUN-OPTIONS -- CMD]`: run CMD (schedule 0), then schedules 1..N from the
 * keyframe where the job starts (or STEP), until one fails (a property
 * fails, or with none, it ends differently from schedule 0); narrow it to
 * the step whose perturbation decides the outcome; say where the passing
 * and the failing run part, per thread, in words, with the job's threads
 * and their stacks at the deciding step of each side (rw_where; --no-where
 * leaves them out); end with the property report. Exit 1 when a failure is
 * found, 0 when none is, 2 on bad usage.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "cli_read.h"
#include "rewind.h"

static void help(void)
{
    puts("usage: rewind check [--schedules N|A..B] [-j JOBS] [--json] [--keep-going] [--vary "
         "seed|dirorder|epoch]\n"
         "                    [--probe-timeout S] [--no-where] [--via local|slurm [--share DIR]\n"
         "                    [--slurm-args 'ARGS']] [--run RUN | --from RUN:STEP | RUN-OPTIONS -- "
         "CMD]\n"
         "       rewind check [...] INSTALLABLE | -f FILE [-A ATTR]   (a Nix derivation's build)\n"
         "\n"
         "Run CMD once unperturbed (schedule 0; or take the kept run RUN), then schedules\n"
         "1..N in parallel, each a fork from the keyframe where the job starts, until one\n"
         "fails: with properties (--expect, --property: see rewind run --help), a run fails\n"
         "when one of them does; without, when it ends differently from schedule 0\n"
         "(outcome, exit status or output). Then narrow its perturbed window by search to\n"
         "the single step whose perturbation decides the failure, and show where the\n"
         "passing and the failing run first part, per thread, and the job's threads at\n"
         "the deciding step in each (their innermost frames; rewind where RUN STEP has\n"
         "the full stacks). With properties, end with a report: for each, the runs that\n"
         "reached it, passed and failed, and the first failing run.\n"
         "\n"
         "  --schedules N      how many schedules to try (default 64)\n"
         "  --schedules A..B   only schedules A to B, each exactly the schedule of that\n"
         "                     number in a check of 1..B (one schedule again: 27..27)\n"
         "  -j JOBS            schedules run at once (default 2)\n"
         "  --json             one JSON object on stdout instead of words\n"
         "  --keep-going       run all N schedules; count the failures (fraction, 95% interval)\n"
         "  --vary seed        schedule k also gets seed base+k (each a run from boot)\n"
         "  --vary dirorder    schedule k also gets directory order k (--dirorder k)\n"
         "  --vary epoch       schedule k also starts its clock k*1000003 s later\n"
         "                     (--vary is repeatable)\n"
         "  --probe-timeout S  wall limit of each schedule and probe (default 600): one\n"
         "                     that hangs ends as timeout; a schedule cut so, or by the\n"
         "                     spin limit, runs once more before it counts (where a cut\n"
         "                     run ends is the host's time, not the schedule)\n"
         "  --no-where         leave out the threads at the deciding step (each side's\n"
         "                     costs a seek there, about a rewind cat)\n"
         "  --via local        run the schedules as tasks of the engine interface on this\n"
         "                     machine (docs/distributed.md)\n"
         "  --via slurm        run them as a Slurm job array: publish schedule 0 to the\n"
         "                     share, -j JOBS tasks each run a slice of the schedules\n"
         "                     (rewind check-task); narrowing runs here\n"
         "  --share DIR        slurm: a directory every node sees (default $REWIND_HOME/slurm)\n"
         "  --slurm-args ARGS  slurm: more sbatch arguments, split at blanks\n"
         "  --run RUN          use a kept run as schedule 0 (its properties judge)\n"
         "  --from RUN:STEP    fork the schedules from STEP of the kept run RUN\n"
         "  RUN-OPTIONS        as for rewind run (--root, -e, --cwd, --seed, --expect, ...);\n"
         "                     --preempt is memory unless given (--preempt off: threads\n"
         "                     switch only where the guest enters the kernel)\n"
         "  --faults KINDS     with --node: every schedule but 0 also injects faults into\n"
         "                     the nodes (kill, pause, partition, clock, net, disk, split,\n"
         "                     power; --fault-rate N per schedule, default 2; a killed\n"
         "                     node with a --restart NAME=COMMAND restarts; a split\n"
         "                     makes two sides of nodes that cannot reach each other,\n"
         "                     the job reaches both; power is a kill whose node also\n"
         "                     loses its writes since their file's last fsync);\n"
         "                     narrowing names the fault that decides (docs/faults.md)\n"
         "  --disk-glob GLOB   with --faults disk or power: the files whose writes and\n"
         "                     syncs disk faults fail and whose unsynced writes power cuts\n"
         "                     undo ('*' matches '/' too; default '*')\n"
         "  INSTALLABLE        .#attr, FLAKE#attr, a .drv or -f FILE -A ATTR: check the\n"
         "                     derivation's build as rewind nix makes it (docs/nix.md); a\n"
         "                     different output (its collected files) ends differently\n"
         "\n"
         "SDK assertions (docs/sdk.md) judge every run too: a false always or a reached\n"
         "unreachable fails it, and a sometimes never true or a reachable never reached\n"
         "in any run fails the check.\n"
         "\n"
         "Exit status: 1 a schedule fails (or an assertion was never met, or a run\n"
         "differs from the stored run of its spec: a determinism violation), 0 none of\n"
         "N did, 2 bad usage, 124 --timeout or a signal stopped the check before all N\n"
         "schedules ran (and none of those that ran failed).");
}

static void print_tail(const char *label, const struct rw_check_tail *t, int json)
{
    if (json) {
        printf("\"%s\":[", label);
        for (int i = 0; i < t->n; i++) {
            printf("%s{\"tid\":%u,\"event\":", i ? "," : "", t->tid[i]);
            cli_read_json_str(t->lines[i], strlen(t->lines[i]));
            putchar('}');
        }
        putchar(']');
        return;
    }
    printf("  %s:\n", label);
    int done[RW_TAIL_MAX] = {0};
    for (int i = 0; i < t->n; i++) {
        if (done[i])
            continue;
        printf("    thread %u:\n", t->tid[i]);
        for (int j = i; j < t->n; j++)
            if (t->tid[j] == t->tid[i]) {
                printf("      %s\n", t->lines[j]);
                done[j] = 1;
            }
    }
    if (!t->n)
        printf("    (no more events)\n");
}

static void side_json(const char *k, const struct rw_check_side *s)
{
    printf("\"%s\":{\"id\":\"%s\",\"outcome\":\"%s\",\"exit_code\":%d,\"steps\":%llu", k, s->id,
           s->outcome, s->exit_code, (unsigned long long)s->steps);
    if (s->props_failed) {
        printf(",\"fails\":");
        cli_read_json_str(s->why, strlen(s->why));
    }
    putchar('}');
}

/* The property report and the failure count (docs/tutorials/properties.md). */
static void props_report(const struct rw_check_report *r, int json)
{
    if (json) {
        printf(",\"judged_by_properties\":%s,\"failures\":%llu,\"timeouts\":%llu,"
               "\"rerun\":%llu,\"diverged\":%llu,\"failure_interval95\":[%.4f,%.4f],",
               r->judged ? "true" : "false", (unsigned long long)r->failures,
               (unsigned long long)r->timeouts, (unsigned long long)r->rerun,
               (unsigned long long)r->diverged, r->fail_lo, r->fail_hi);
        if (r->diverged) {
            printf("\"divergence\":");
            cli_read_json_str(r->divergence, strlen(r->divergence));
            putchar(',');
        }
        printf("\"properties\":[");
        for (int i = 0; i < r->nprops; i++) {
            const struct rw_check_prop *p = &r->props[i];
            printf("%s{\"property\":", i ? "," : "");
            cli_read_json_str(p->what, strlen(p->what));
            printf(",\"kind\":\"%s\",\"reached\":%llu,\"passed\":%llu,\"failed\":%llu,"
                   "\"unmet\":%s",
                   p->sdk_kind < 0 ? "property" : rw_sdk_kind_name((enum rw_sdk_kind)p->sdk_kind),
                   (unsigned long long)p->reached, (unsigned long long)p->passed,
                   (unsigned long long)p->failed, p->unmet ? "true" : "false");
            if (p->first_fail[0])
                printf(",\"first_failing_run\":\"%s\",\"first_failing_schedule\":%llu,"
                       "\"first_failing_step\":%llu",
                       p->first_fail, (unsigned long long)p->first_fail_schedule,
                       (unsigned long long)p->first_fail_step);
            putchar('}');
        }
        putchar(']');
        return;
    }
    if (r->nprops) {
        printf("properties and assertions (over schedule 0 and %llu schedules):\n",
               (unsigned long long)r->tried);
        for (int i = 0; i < r->nprops; i++) {
            const struct rw_check_prop *p = &r->props[i];
            printf("  %-6s %s: reached %llu, passed %llu, failed %llu%s",
                   p->failed || p->unmet ? "FAILED" : "ok", p->what, (unsigned long long)p->reached,
                   (unsigned long long)p->passed, (unsigned long long)p->failed,
                   !p->unmet                         ? ""
                   : p->sdk_kind == RW_SDK_SOMETIMES ? "; never true in any run"
                                                     : "; never reached in any run");
            if (p->first_fail[0])
                printf("; first failing run %s (schedule %llu, step %llu)", p->first_fail,
                       (unsigned long long)p->first_fail_schedule,
                       (unsigned long long)p->first_fail_step);
            putchar('\n');
        }
    }
    if (r->timeouts)
        printf("%llu runs ended by the wall limit (timeout)\n", (unsigned long long)r->timeouts);
    if (r->diverged)
        printf("DETERMINISM VIOLATION in %llu run%s; the lowest, %s\n",
               (unsigned long long)r->diverged, r->diverged == 1 ? "" : "s", r->divergence);
    if (r->rerun)
        printf("%llu schedule%s cut by a wall-clock limit (spin or timeout) and run once more\n",
               (unsigned long long)r->rerun, r->rerun == 1 ? "" : "s");
    if (r->keep_going && r->tried)
        printf("failures: %llu of %llu schedules (%.1f%%), 95%% interval %.1f%%..%.1f%%\n",
               (unsigned long long)r->failures, (unsigned long long)r->tried,
               100.0 * (double)r->failures / (double)r->tried, 100.0 * r->fail_lo,
               100.0 * r->fail_hi);
}

/* The job's threads at the deciding step of each side (issue 14): side 0
 * the passing run, 1 the failing run; looked only when narrowing isolated
 * the step, and not with --no-where. A side whose stacks cannot be read
 * keeps its error: the report says it in one line, the exit status stays. */
static struct {
    int looked;
    int rc[2];
    struct rw_where w[2];
    char err[2][300];
} at_step;

static int has_step(const struct rw_check_report *r)
{
    return r->found && r->schedule != 0 && !r->seed_decides && r->narrowed;
}

static void where_sides(rw_home *h, const struct rw_check_report *r, volatile sig_atomic_t *ab,
                        int progress)
{
    if (!has_step(r))
        return;
    const char *run[2] = {r->pass_run.id, r->fail_run.id};
    if (progress)
        fprintf(stderr, "rewind: where: the job's threads at step %llu of runs %s and %s\n",
                (unsigned long long)r->deciding_step, run[0], run[1]);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int k = 0; k < 2; k++) {
        struct rw_options o;
        struct rw_error e;
        rw_options_init(&o);
        o.abort = ab;
        at_step.rc[k] = rw_where(h, run[k], r->deciding_step, &o, 0, &at_step.w[k], &e);
        if (at_step.rc[k] < 0)
            snprintf(at_step.err[k], sizeof(at_step.err[k]), "%.299s", e.msg);
    }
    at_step.looked = 1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (progress)
        fprintf(stderr, "rewind: where: both sides in %.1f s\n",
                (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
}

/* The frames a thread's line shows: the innermost through the first with a
 * source line (the program's own code, when it has debug information), at
 * most WHERE_FRAMES; without any, the innermost three. */
#define WHERE_FRAMES 6
static int frames_shown(const struct rw_stack *s)
{
    for (int j = 0; j < s->nframes && j < WHERE_FRAMES; j++)
        if (s->frames[j].file[0] && s->frames[j].line) /* not the vDSO's "[vdso]" */
            return j + 1;
    return s->nframes < 3 ? s->nframes : 3;
}

static void where_text(const struct rw_check_report *r)
{
    static const char *label[2] = {"passing run", "failing run"};
    const char *run[2] = {r->pass_run.id, r->fail_run.id};
    printf("the job's threads at step %llu, innermost frames first:\n",
           (unsigned long long)r->deciding_step);
    for (int k = 0; k < 2; k++) {
        if (at_step.rc[k] < 0) {
            printf("  %s %s: no stacks: %s\n", label[k], run[k], at_step.err[k]);
            continue;
        }
        const struct rw_where *w = &at_step.w[k];
        printf("  %s %s, process %u (%s; full stacks: rewind where %s %llu):\n", label[k], run[k],
               w->pid, w->exe, run[k], (unsigned long long)r->deciding_step);
        for (size_t i = 0; i < w->nthreads; i++) {
            const struct rw_stack *s = &w->threads[i];
            int n = frames_shown(s);
            printf("    thread %u (%s) %s:", s->t.tid, s->t.comm, cli_where_state(&s->t));
            for (int j = 0; j < n; j++) {
                const struct rw_frame *f = &s->frames[j];
                printf("%s", j ? " < " : " ");
                if (f->func[0])
                    printf("%s", f->func);
                else
                    printf("0x%llx", (unsigned long long)f->pc);
                if (f->file[0] && f->line) {
                    const char *b = strrchr(f->file, '/');
                    printf(" (%s:%d)", b ? b + 1 : f->file, f->line);
                } else if (f->file[0]) {
                    printf(" %s", f->file); /* the vDSO: no line information */
                }
            }
            if (n < s->nframes)
                printf(" < ...");
            if (!s->nframes)
                printf(" no user frames%s%s", s->why[0] ? ": " : "", s->why);
            putchar('\n');
        }
    }
}

static void where_free(void)
{
    for (int k = 0; k < 2; k++)
        if (at_step.looked && at_step.rc[k] == 0)
            rw_where_free(&at_step.w[k]);
}

static void where_json(const struct rw_check_report *r)
{
    static const char *key[2] = {"passing", "failing"};
    const char *run[2] = {r->pass_run.id, r->fail_run.id};
    printf(",\"where\":{\"step\":%llu", (unsigned long long)r->deciding_step);
    for (int k = 0; k < 2; k++) {
        printf(",\"%s\":{\"run\":\"%s\",", key[k], run[k]);
        if (at_step.rc[k] < 0) {
            printf("\"error\":");
            cli_read_json_str(at_step.err[k], strlen(at_step.err[k]));
        } else {
            cli_where_json(&at_step.w[k], 0);
        }
        putchar('}');
    }
    putchar('}');
}

static void report_json(const struct rw_check_report *r);
static void report_text(const struct rw_check_report *r);
static int from_given; /* --from: the schedules start at a step of the user's choice */
/* --timeout or a signal stopped the check before every schedule ran and none
 * had ended differently, or an engine lost schedules (their task died
 * or was held twice): that is no pass, so the report says so (exit 124) */
static int stopped;
static uint64_t asked;            /* the schedules asked for (-n) */
static uint64_t range_a, range_b; /* --schedules A..B (range_a 0: 1..N) */

/* The report, then the check's record id (rewind checks, rewind show). */
static void report(const struct rw_check_report *r, int json)
{
    if (json) {
        printf("{\"check\":\"%s\",", r->check_id);
        report_json(r);
        return;
    }
    report_text(r);
    if (r->check_id[0])
        printf("check %s kept: rewind show %s\n", r->check_id, r->check_id);
}

/* --json: the failing schedule, its narrowing and where the runs part. */
static void report_json_found(const struct rw_check_report *r)
{
    printf(",\"schedule\":%llu,\"strategy\":\"%s\",", (unsigned long long)r->schedule, r->strategy);
    side_json("failing", &r->failing);
    printf(",\"seed_decides\":%s", r->seed_decides ? "true" : "false");
    printf(",\"bursts_decide\":%s", r->bursts_decide ? "true" : "false");
    printf(",\"narrowed\":%s,\"probes\":%llu,\"narrow_s\":%.3f", r->narrowed ? "true" : "false",
           (unsigned long long)r->probes, r->narrow_s);
    printf(",\"deciding_step\":%llu,\"perturbation\":", (unsigned long long)r->deciding_step);
    cli_read_json_str(r->deciding_what, strlen(r->deciding_what));
    printf(",\"deciding_fault\":%s", r->deciding_fault ? "true" : "false");
    if (r->deciding_access[0]) {
        printf(",\"deciding_access\":");
        cli_read_json_str(r->deciding_access, strlen(r->deciding_access));
    }
    printf(",\"window\":[%llu,%llu],\"perturbed_steps_in_window\":%llu,",
           (unsigned long long)r->window_from, (unsigned long long)r->window_until,
           (unsigned long long)r->perturbed_in_window);
    side_json("passing_run", &r->pass_run);
    putchar(',');
    side_json("failing_run", &r->fail_run);
    if (at_step.looked)
        where_json(r);
    if (r->parted) {
        printf(",\"part_at\":{\"event\":%llu,\"step_passing\":%llu,\"step_failing\":%llu,",
               (unsigned long long)r->part_event, (unsigned long long)r->part_step_pass,
               (unsigned long long)r->part_step_fail);
        print_tail("passing_next", &r->pass_next, 1);
        putchar(',');
        print_tail("failing_next", &r->fail_next, 1);
        putchar('}');
    }
}

static void report_json(const struct rw_check_report *r)
{
    if (stopped)
        printf("\"stopped\":true,\"schedules_asked\":%llu,", (unsigned long long)asked);
    if (range_a)
        printf("\"schedule_range\":[%llu,%llu],", (unsigned long long)range_a,
               (unsigned long long)range_b);
    printf("\"unmet\":%llu,\"schedules_tried\":%llu,\"found\":%s,", (unsigned long long)r->unmet,
           (unsigned long long)r->tried, r->found ? "true" : "false");
    side_json("schedule0", &r->base);
    printf(",\"job_start_step\":%llu,\"explore_s\":%.3f", (unsigned long long)r->start,
           r->explore_s);
    if (r->where[0] || r->lost) {
        printf(",\"ran_on\":");
        cli_read_json_str(r->where, strlen(r->where));
        printf(",\"lost\":%llu", (unsigned long long)r->lost);
    }
    props_report(r, 1);
    if (r->found)
        report_json_found(r);
    puts("}");
}

/* No schedule failed (or ended differently). */
static void report_text_none(const struct rw_check_report *r)
{
    if (r->judged)
        printf("no failure: schedule 0 and %llu schedules pass every property (%.1f s)\n",
               (unsigned long long)r->tried, r->explore_s);
    else if (stopped)
        printf("stopped: %llu of %llu schedules ran before --timeout or a signal stopped the "
               "check, and ended like schedule 0 (%.1f s): not a pass\n",
               (unsigned long long)r->tried, (unsigned long long)asked, r->explore_s);
    else if (r->lost)
        printf("no difference: %llu schedules ended like schedule 0 (%.1f s), but %llu were "
               "lost: not a pass\n",
               (unsigned long long)r->tried, r->explore_s, (unsigned long long)r->lost);
    else
        printf("no difference: %llu schedules ended like schedule 0 (%.1f s)\n",
               (unsigned long long)r->tried, r->explore_s);
    props_report(r, 0);
    if (r->unmet)
        printf("check fails: %llu assertions were never met across the check\n",
               (unsigned long long)r->unmet);
}

/* The narrowed pair: the deciding step, the two runs, where they part. */
static void report_text_narrowed(const struct rw_check_report *r)
{
    if (r->deciding_fault) /* docs/faults.md: the fault decides */
        printf("deciding step: %llu, where the schedule %s: without it the run passes (%llu "
               "probes, %.1f s)\n",
               (unsigned long long)r->deciding_step, r->deciding_what,
               (unsigned long long)r->probes, r->narrow_s);
    else
        printf("deciding step: %llu, where the perturbation %s (%llu probes, %.1f s)\n",
               (unsigned long long)r->deciding_step, r->deciding_what,
               (unsigned long long)r->probes, r->narrow_s);
    if (r->deciding_access[0]) /* docs/determinism.md: a memory-access point */
        printf("  at that step the guest was about to touch shared memory: %s\n",
               r->deciding_access);
    if (r->perturbed_in_window > 1)
        printf("  (together with %llu earlier perturbed steps from step %llu)\n",
               (unsigned long long)r->perturbed_in_window - 1, (unsigned long long)r->window_from);
    printf("passing run: %s (%s %d)   failing run: %s (%s %d)\n", r->pass_run.id,
           r->pass_run.outcome, r->pass_run.exit_code, r->fail_run.id, r->fail_run.outcome,
           r->fail_run.exit_code);
    if (at_step.looked)
        where_text(r);
    if (r->parted) {
        printf("they part at event %llu (step %llu in the passing run, %llu in the failing run); "
               "next events:\n",
               (unsigned long long)r->part_event, (unsigned long long)r->part_step_pass,
               (unsigned long long)r->part_step_fail);
        print_tail("passing", &r->pass_next, 0);
        print_tail("failing", &r->fail_next, 0);
    }
}

static void report_text(const struct rw_check_report *r)
{
    printf("schedule 0: run %s %s %d after %llu steps; %s %llu\n", r->base.id, r->base.outcome,
           r->base.exit_code, (unsigned long long)r->base.steps,
           from_given ? "the schedules fork after step" : "the job starts at step",
           (unsigned long long)r->start);
    if (range_a)
        printf("schedules %llu..%llu only (--schedules A..B)\n", (unsigned long long)range_a,
               (unsigned long long)range_b);
    if (r->where[0])
        printf("the schedules ran on: %s (schedules per node)\n", r->where);
    if (r->lost)
        printf(
            "%llu schedules were lost: their task died or was held twice (not counted as tried)\n",
            (unsigned long long)r->lost);
    if (!r->found) {
        report_text_none(r);
        return;
    }
    if (r->schedule == 0) {
        printf("schedule 0 itself fails: %s\n", r->base.why);
        props_report(r, 0);
        return;
    }
    if (r->judged)
        printf("schedule %llu (%s) fails: run %s %s %d after %llu steps: %s (%llu schedules "
               "tried, %.1f s)\n",
               (unsigned long long)r->schedule, r->strategy, r->failing.id, r->failing.outcome,
               r->failing.exit_code, (unsigned long long)r->failing.steps, r->failing.why,
               (unsigned long long)r->tried, r->explore_s);
    else
        printf("schedule %llu (%s) ends differently: run %s %s %d after %llu steps (%llu schedules "
               "tried, %.1f s)\n",
               (unsigned long long)r->schedule, r->strategy, r->failing.id, r->failing.outcome,
               r->failing.exit_code, (unsigned long long)r->failing.steps,
               (unsigned long long)r->tried, r->explore_s);
    props_report(r, 0);
    if (r->seed_decides) {
        printf("the seed decides: run %s, at the same seed with no perturbation, %s too\n",
               r->fail_run.id, r->fail_run.props_failed ? "fails" : "ends so");
        return;
    }
    if (r->bursts_decide) {
        printf("the schedule's bursts decide: run %s, with its bursts and none of its actions, "
               "%s too; no single step decides (%llu probes)\n",
               r->fail_run.id, r->judged ? "fails" : "ends so", (unsigned long long)r->probes);
        return;
    }
    if (!r->narrowed) {
        printf("narrowing did not isolate one step (%llu probes; the outcome depends on several "
               "perturbations together)\n",
               (unsigned long long)r->probes);
        return;
    }
    report_text_narrowed(r);
}

static void on_progress(void *ctx, const char *line)
{
    (void)ctx;
    fprintf(stderr, "rewind: %s\n", line);
}

/* check INSTALLABLE: the NAR hash of the output each side built. */
static void cli_nix_check_outputs(rw_home *h, const struct rw_check_report *r)
{
    const struct rw_check_side *side[2] = {&r->base, &r->failing};
    for (int k = 0; k < (r->found && r->schedule ? 2 : 1); k++) {
        char nar[80];
        struct rw_error err;
        if (rw_nix_output_hash(h, side[k]->id, nar, &err) < 0)
            printf("output of %s %s: none (%s)\n", k ? "the failing run" : "schedule 0",
                   side[k]->id, err.msg);
        else
            printf("output of %s %s: %s\n", k ? "the failing run" : "schedule 0", side[k]->id, nar);
    }
}

/* A check's command line, and what it holds until it ends. */
struct check_cli {
    struct rw_check_config c;
    struct rw_nix_config nc;
    struct rw_nix_job nj;
    int json, no_where, nix;
    double timeout;
    char **rest; /* the run options and the command (or the installable) */
    int nrest;
};

/* A helper's "go on": every other value is cmd_check's exit code. */
#define CHECK_GO (-1)

/* --from RUN:STEP */
static int check_from(struct rw_check_config *c, const char *v)
{
    static char ref[512];
    uint64_t n;
    const char *colon = strrchr(v, ':');
    if (c->base_run)
        return cli_error(2, "give one of --run and --from");
    if (!colon || colon == v || (size_t)(colon - v) >= sizeof(ref) ||
        cli_read_step(colon + 1, &n) < 0 || n == 0)
        return cli_error(2, "--from needs RUN:STEP (a step above 0): %s", v);
    memcpy(ref, v, (size_t)(colon - v));
    ref[colon - v] = 0;
    c->base_run = ref;
    c->from_step = n;
    from_given = 1;
    return CHECK_GO;
}

/* --schedules A..B: only schedules A to B (1 <= A <= B <= 100000), each the
 * very schedule a check of 1..B runs under that number. */
static int check_range(struct rw_check_config *c, const char *v)
{
    static char first[32];
    const char *dots = strstr(v, "..");
    uint64_t a, b;
    if ((size_t)(dots - v) >= sizeof(first))
        return cli_error(2, "--schedules needs N or A..B (1 <= A <= B <= 100000): %s", v);
    memcpy(first, v, (size_t)(dots - v));
    first[dots - v] = 0;
    if (cli_read_step(first, &a) < 0 || cli_read_step(dots + 2, &b) < 0 || a == 0 || b < a ||
        b > 100000)
        return cli_error(2, "--schedules needs N or A..B (1 <= A <= B <= 100000): %s", v);
    c->first_schedule = a;
    c->schedules = b;
    return CHECK_GO;
}

/* One of check's options with a value: option a, value v. */
static int check_value(struct rw_check_config *c, const char *a, const char *v)
{
    uint64_t n;
    char *end;
    if (!strcmp(a, "--run") && c->base_run)
        return cli_error(2, "give one of --run and --from");
    if (!strcmp(a, "--via")) {
        if (strcmp(v, "local") && strcmp(v, "slurm"))
            return cli_error(2, "--via takes local or slurm: %s", v);
        c->via = v;
    } else if (!strcmp(a, "--share")) {
        if (!*v)
            return cli_error(2, "--share needs a directory");
        c->share = v;
    } else if (!strcmp(a, "--slurm-args")) {
        c->via_args = v;
    } else if (!strcmp(a, "--run")) {
        c->base_run = v;
    } else if (!strcmp(a, "--vary")) {
        if (!strcmp(v, "seed"))
            c->vary_seed = 1;
        else if (!strcmp(v, "dirorder"))
            c->vary_dirorder = 1;
        else if (!strcmp(v, "epoch"))
            c->vary_epoch = 1;
        else
            return cli_error(2, "--vary takes seed, dirorder or epoch: %s", v);
    } else if (!strcmp(a, "--probe-timeout")) {
        c->probe_timeout_s = strtod(v, &end);
        if (*end || !(c->probe_timeout_s > 0) || c->probe_timeout_s > 1e7)
            return cli_error(2, "--probe-timeout needs a positive number of seconds: %s", v);
    } else if (!strcmp(a, "--from")) {
        return check_from(c, v);
    } else if (!strcmp(a, "--schedules") && strstr(v, "..")) {
        return check_range(c, v);
    } else if (cli_read_step(v, &n) < 0 || n == 0 || n > 100000)
        return cli_error(2, "%s needs a positive number: %s", a, v);
    else if (!strcmp(a, "-j"))
        c->jobs = (unsigned)(n > 64 ? 64 : n);
    else
        c->schedules = n, c->first_schedule = 0; /* the last --schedules counts, range or not */
    return CHECK_GO;
}

/* check's own options; the rest into cc->rest, then everything from "--"
 * on. CHECK_GO, or an exit code when the command ends here. */
static int check_options(int argc, char **argv, struct check_cli *cc)
{
    int i, rc = CHECK_GO;
    for (i = 1; i < argc && rc == CHECK_GO; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--")) {
            break;
        } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            help();
            rc = 0;
        } else if (!strcmp(a, "--json")) {
            cc->json = 1;
        } else if (!strcmp(a, "--keep-going")) {
            cc->c.keep_going = 1;
        } else if (!strcmp(a, "--no-where")) {
            cc->no_where = 1;
        } else if (!strcmp(a, "--schedules") || !strcmp(a, "-j") || !strcmp(a, "--run") ||
                   !strcmp(a, "--from") || !strcmp(a, "--vary") || !strcmp(a, "--probe-timeout") ||
                   !strcmp(a, "--via") || !strcmp(a, "--share") || !strcmp(a, "--slurm-args")) {
            if (i + 1 >= argc)
                rc = cli_error(2, "%s needs a value (see rewind check --help)", a);
            else
                rc = check_value(&cc->c, a, argv[++i]);
        } else {
            cc->rest[cc->nrest++] = argv[i];
        }
    }
    for (; i < argc && rc == CHECK_GO; i++)
        cc->rest[cc->nrest++] = argv[i];
    return rc;
}

/* The command line: check's options, then a stored run, an installable
 * (docs/nix.md: the derivation's build is the job) or the run's options. */
static int check_parse(int argc, char **argv, struct check_cli *cc)
{
    struct rw_check_config *c = &cc->c;
    rw_check_config_init(c);
    cc->rest = calloc((size_t)argc + 2, sizeof(char *));
    if (!cc->rest)
        return cli_error(2, "out of memory");
    cc->rest[cc->nrest++] = argv[0];
    int rc = check_options(argc, argv, cc);
    if (rc != CHECK_GO)
        return rc;
    if ((c->share || c->via_args) && (!c->via || strcmp(c->via, "slurm")))
        return cli_error(2, "--share and --slurm-args go with --via slurm");
    if (c->via && (c->vary_dirorder || c->vary_epoch)) /* the engines vary only the seed */
        return cli_error(2, "--vary dirorder and --vary epoch do not go with --via yet");
    if (!c->base_run) {
        rw_nix_config_init(&cc->nc);
        int np = cli_nix_args(cc->nrest, cc->rest, &cc->nc, &cc->timeout);
        if (np < 0)
            return 2;
        cc->nix = np == 0;
    }
    if (c->base_run) {
        if (cc->nrest > 1)
            return cli_error(2, "--run and --from take no command or run options");
    } else if (cc->nix) {
        if (cc->nc.run.schedule)
            return cli_error(2, "check chooses the schedules itself; drop --schedule");
    } else {
        int pr = cli_run_args(cc->nrest, cc->rest, &c->run, &cc->timeout);
        if (pr != 0)
            return pr > 0 ? 0 : 2;
        if (c->run.schedule)
            return cli_error(2, "check chooses the schedules itself; drop --schedule");
        if (!c->run.preempt) /* docs/determinism.md: check's default */
            c->run.preempt = "memory";
    }
    c->run.observer = cli_stdio; /* notices (the job's output stays quiet) */
    return CHECK_GO;
}

/* The check run by rw_check, then its report. The exit code. */
static int check_run(rw_home *h, struct check_cli *cc)
{
    struct rw_check_config *c = &cc->c;
    c->abort = cli_abort_on_signals(cc->timeout);
    if (!cc->json || getenv("REWIND_PROGRESS") != NULL)
        c->progress = on_progress;
    struct rw_check_report r;
    struct rw_error err;
    if (cc->nix) {
        int e = cli_nix_job(h, &cc->nc, &cc->nj, cc->json);
        if (e)
            return e;
        c->run = cc->nj.run;
    }
    int rc = rw_check(h, c, &r, &err);
    asked = c->schedules - (c->first_schedule > 1 ? c->first_schedule - 1 : 0);
    range_a = c->first_schedule > 1 ? c->first_schedule : 0;
    range_b = c->schedules;
    stopped = rc == 0 && *c->abort && !r.found && r.tried < asked;
    int lost = rc == 0 && !r.found && r.lost; /* no pass either */
    if (cc->nix)
        rw_nix_job_free(&cc->nj);
    if (rc == 0 && !cc->no_where)
        where_sides(h, &r, c->abort, c->progress != NULL);
    if (rc < 0)
        return err.code == RW_EUSAGE
                   ? cli_fail(&err)
                   : cli_error(err.code ? err.code : RW_EINTERNAL, "check: %s", err.msg);
    report(&r, cc->json);
    where_free();
    if (cc->nix && !cc->json)
        cli_nix_check_outputs(h, &r);
    return r.found || r.unmet || r.diverged ? 1 : stopped || lost ? 124 : 0;
}

int cmd_check(int argc, char **argv)
{
    static struct check_cli cc; /* the run config points into it until the end */
    memset(&cc, 0, sizeof(cc));
    int rc = check_parse(argc, argv, &cc);
    if (rc == CHECK_GO) {
        rw_home *h = cli_open_home();
        if (!h) {
            rc = RW_EINTERNAL;
        } else {
            rc = check_run(h, &cc);
            rw_home_close(h);
        }
    }
    free(cc.rest);
    return rc;
}

int cmd_check_task(int argc, char **argv)
{
    if (argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
        puts("usage: rewind check-task DIR K\n\nOne task of rewind check --via slurm: run slice K "
             "of the plan in DIR\n(DIR/plan.json), write each schedule's run and outcome into "
             "DIR/out.\nStarted by the check's batch script, not by hand.");
        return 0;
    }
    uint64_t k;
    if (argc != 3 || cli_read_step(argv[2], &k) < 0)
        return cli_error(2, "usage: rewind check-task DIR K (see rewind check --help)");
    struct rw_error err;
    if (rw_check_task(argv[1], k, &err) < 0)
        return cli_error(err.code ? err.code : RW_EINTERNAL, "check-task: %s", err.msg);
    return 0;
}
