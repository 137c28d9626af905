/*
 * cmd_fork: `rewind fork RUN STEP --schedule S`: a new run identical to RUN
 * through STEP and perturbed by schedule S after it, started from RUN's
 * keyframe before STEP (it shares RUN's keyframes up to there).
 */
#include <getopt.h>
#include <stdio.h>

#include "cli.h"
#include "rewind.h"

static void help(void)
{
    puts("usage: rewind fork RUN STEP [--schedule S] [--schedule-until B] [--name NAME]\n"
         "                            [--timeout S] [--max-trace MB] [--max-disk MB]\n"
         "\n"
         "Make a new run identical to RUN through STEP and perturbed by schedule S after\n"
         "it (default 0: unperturbed from STEP on), started from RUN's keyframe before\n"
         "STEP. The fork is a run like any other: replay, log, cat, diff, fork again.\n"
         "Exits with the job's status, like rewind run.\n"
         "\n"
         "  --timeout S                     give up after S seconds of wall time\n"
         "  --max-trace MB, --max-disk MB   disk limits of the fork (see rewind run)");
}

int cmd_fork(int argc, char **argv)
{
    struct rw_options o;
    uint64_t step;
    static const struct cli_derived d = {
        "fork", "schedule,schedule-until,name,timeout,max-trace,max-disk", 2, "RUN and STEP", help};
    rw_home *h;
    int ex = cli_start(argc, argv, &d, &o, &step, &h);
    if (ex >= 0)
        return ex;
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
