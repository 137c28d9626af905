/*
 * cmd_fork: `rewind fork RUN STEP --schedule S`: a new run identical to RUN
 * through STEP and perturbed by schedule S after it, started from RUN's
 * keyframe before STEP (it shares RUN's keyframes up to there).
 */
#include <getopt.h>
#include <stdio.h>

#include "cli/cli.h"
#include "rewind.h"

static void help(void)
{
    puts("usage: rewind fork RUN STEP [--schedule S] [--schedule-until B] [--name NAME]\n"
         "\n"
         "Make a new run identical to RUN through STEP and perturbed by schedule S after\n"
         "it (default 0: unperturbed from STEP on), started from RUN's keyframe before\n"
         "STEP. The fork is a run like any other: replay, log, cat, diff, fork again.\n"
         "Exits with the job's status, like rewind run.");
}

int cmd_fork(int argc, char **argv)
{
    struct rw_options o;
    double timeout;
    uint64_t step;
    int pr =
        cli_options(argc, argv, "fork", "schedule,schedule-until,name,timeout", help, &o, &timeout);
    if (pr != 0)
        return pr > 0 ? 0 : 2;
    if (optind != argc - 2)
        return cli_error(2, "fork needs RUN and STEP (see rewind fork --help)");
    if (cli_step_arg(argv[optind + 1], &step) < 0)
        return 2;
    rw_home *h = cli_open_home();
    if (!h)
        return RW_EINTERNAL;
    o.abort = cli_abort_on_signals(timeout);
    struct rw_result r;
    struct rw_error err;
    int rc = rw_fork(h, argv[optind], step, &o, &r, &err);
    rw_home_close(h);
    if (rc < 0)
        return cli_fail(&err);
    if (r.diverged)
        fprintf(stderr, "rewind: DETERMINISM VIOLATION: %s\n", r.divergence);
    fprintf(stderr,
            "rewind: run %s %s:%d after %llu steps, %.3fs virtual, %.3fs wall (fork of %s "
            "at step %llu, schedule %llu, from its keyframe at step %llu)\n",
            r.id, rw_outcome_word(r.outcome), r.exit_code, (unsigned long long)r.steps,
            r.virt_ns / 1e9, r.wall_s, r.parent, (unsigned long long)step,
            (unsigned long long)o.schedule, (unsigned long long)r.from_step);
    return r.exit_code;
}
