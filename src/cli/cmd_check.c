/*
 * cmd_check: `rewind check [--schedules N] [-j JOBS] [--json] [--run RUN |
 * RUN-OPTIONS -- CMD]`: run CMD (schedule 0), then schedules 1..N from the
 * keyframe where the job starts, until one ends differently; narrow it to
 * the step whose perturbation decides the outcome; say where the passing
 * and the failing run part, per thread, in words. Exit 1 when a difference
 * is found, 0 when none is, 2 on bad usage.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/cli_read.h"
#include "rewind.h"

static void help(void)
{
    puts("usage: rewind check [--schedules N] [-j JOBS] [--json] [--run RUN | RUN-OPTIONS -- CMD]\n"
         "\n"
         "Run CMD once unperturbed (schedule 0; or take the kept run RUN), then schedules\n"
         "1..N in parallel, each a fork from the keyframe where the job starts, until one\n"
         "ends differently (outcome, exit status or output). Then narrow its perturbed\n"
         "window by search to the single step whose perturbation decides the outcome,\n"
         "and show where the passing and the failing run first part, per thread.\n"
         "\n"
         "  --schedules N   how many schedules to try (default 64)\n"
         "  -j JOBS         schedules run at once (default 2)\n"
         "  --json          one JSON object on stdout instead of words\n"
         "  --run RUN       use a kept run as schedule 0\n"
         "  RUN-OPTIONS     as for rewind run (--root, -e, --cwd, --seed, ...)\n"
         "\n"
         "Exit status: 1 a schedule ends differently, 0 none of N did, 2 bad usage.");
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
    printf("\"%s\":{\"id\":\"%s\",\"outcome\":\"%s\",\"exit_code\":%d,\"steps\":%llu}", k, s->id,
           s->outcome, s->exit_code, (unsigned long long)s->steps);
}

static void report(const struct rw_check_report *r, int json)
{
    if (json) {
        printf("{\"schedules_tried\":%llu,\"found\":%s,", (unsigned long long)r->tried,
               r->found ? "true" : "false");
        side_json("schedule0", &r->base);
        printf(",\"job_start_step\":%llu,\"explore_s\":%.3f", (unsigned long long)r->start,
               r->explore_s);
        if (r->found) {
            printf(",\"schedule\":%llu,\"strategy\":\"%s\",", (unsigned long long)r->schedule,
                   r->strategy);
            side_json("failing", &r->failing);
            printf(",\"narrowed\":%s,\"probes\":%llu,\"narrow_s\":%.3f",
                   r->narrowed ? "true" : "false", (unsigned long long)r->probes, r->narrow_s);
            printf(",\"deciding_step\":%llu,\"perturbation\":",
                   (unsigned long long)r->deciding_step);
            cli_read_json_str(r->deciding_what, strlen(r->deciding_what));
            printf(",\"window\":[%llu,%llu],\"perturbed_steps_in_window\":%llu,",
                   (unsigned long long)r->window_from, (unsigned long long)r->window_until,
                   (unsigned long long)r->perturbed_in_window);
            side_json("passing_run", &r->pass_run);
            putchar(',');
            side_json("failing_run", &r->fail_run);
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
        puts("}");
        return;
    }
    printf("schedule 0: run %s %s %d after %llu steps; the job starts at step %llu\n", r->base.id,
           r->base.outcome, r->base.exit_code, (unsigned long long)r->base.steps,
           (unsigned long long)r->start);
    if (!r->found) {
        printf("no difference: %llu schedules ended like schedule 0 (%.1f s)\n",
               (unsigned long long)r->tried, r->explore_s);
        return;
    }
    printf("schedule %llu (%s) ends differently: run %s %s %d after %llu steps (%llu schedules "
           "tried, %.1f s)\n",
           (unsigned long long)r->schedule, r->strategy, r->failing.id, r->failing.outcome,
           r->failing.exit_code, (unsigned long long)r->failing.steps, (unsigned long long)r->tried,
           r->explore_s);
    if (!r->narrowed) {
        printf("narrowing did not isolate one step (%llu probes; the outcome depends on several "
               "perturbations together)\n",
               (unsigned long long)r->probes);
        return;
    }
    printf("deciding step: %llu, where the perturbation %s (%llu probes, %.1f s)\n",
           (unsigned long long)r->deciding_step, r->deciding_what, (unsigned long long)r->probes,
           r->narrow_s);
    if (r->perturbed_in_window > 1)
        printf("  (together with %llu earlier perturbed steps from step %llu)\n",
               (unsigned long long)r->perturbed_in_window - 1, (unsigned long long)r->window_from);
    printf("passing run: %s (%s %d)   failing run: %s (%s %d)\n", r->pass_run.id,
           r->pass_run.outcome, r->pass_run.exit_code, r->fail_run.id, r->fail_run.outcome,
           r->fail_run.exit_code);
    if (r->parted) {
        printf("they part at event %llu (step %llu in the passing run, %llu in the failing run); "
               "next events:\n",
               (unsigned long long)r->part_event, (unsigned long long)r->part_step_pass,
               (unsigned long long)r->part_step_fail);
        print_tail("passing", &r->pass_next, 0);
        print_tail("failing", &r->fail_next, 0);
    }
}

static void on_progress(void *ctx, const char *line)
{
    (void)ctx;
    fprintf(stderr, "rewind: %s\n", line);
}

int cmd_check(int argc, char **argv)
{
    struct rw_check_config c;
    rw_check_config_init(&c);
    int json = 0, i;
    double timeout = 0;
    char **rest = calloc((size_t)argc + 2, sizeof(char *));
    int nrest = 0;
    if (!rest)
        return cli_error(2, "out of memory");
    rest[nrest++] = argv[0];
    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--")) {
            break;
        } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            help();
            return 0;
        } else if (!strcmp(a, "--json")) {
            json = 1;
        } else if (!strcmp(a, "--schedules") || !strcmp(a, "-j") || !strcmp(a, "--run")) {
            if (i + 1 >= argc)
                return cli_error(2, "%s needs a value (see rewind check --help)", a);
            const char *v = argv[++i];
            uint64_t n;
            if (!strcmp(a, "--run"))
                c.base_run = v;
            else if (cli_read_step(v, &n) < 0 || n == 0 || n > 100000)
                return cli_error(2, "%s needs a positive number: %s", a, v);
            else if (!strcmp(a, "-j"))
                c.jobs = (unsigned)(n > 64 ? 64 : n);
            else
                c.schedules = n;
        } else {
            rest[nrest++] = argv[i];
        }
    }
    for (; i < argc; i++)
        rest[nrest++] = argv[i];
    if (c.base_run) {
        if (nrest > 1)
            return cli_error(2, "--run takes no command or run options");
    } else {
        int pr = cli_run_args(nrest, rest, &c.run, &timeout);
        if (pr != 0)
            return pr > 0 ? 0 : 2;
        if (c.run.schedule)
            return cli_error(2, "check chooses the schedules itself; drop --schedule");
    }
    c.run.observer = cli_stdio; /* notices (the job's output stays quiet) */
    rw_home *h = cli_open_home();
    if (!h)
        return RW_EINTERNAL;
    c.abort = cli_abort_on_signals(timeout);
    if (!json || getenv("REWIND_PROGRESS") != NULL)
        c.progress = on_progress;
    struct rw_check_report r;
    struct rw_error err;
    int rc = rw_check(h, &c, &r, &err);
    rw_home_close(h);
    free(rest);
    if (rc < 0)
        return err.code == RW_EUSAGE
                   ? cli_fail(&err)
                   : cli_error(err.code ? err.code : RW_EINTERNAL, "check: %s", err.msg);
    report(&r, json);
    return r.found ? 1 : 0;
}
