/*
 * cmd_fork: `rewind fork RUN STEP --schedule S`: a new run identical to RUN
 * through STEP and perturbed by schedule S after it, started from RUN's
 * keyframe before STEP (it shares RUN's keyframes up to there). --json: the
 * result as one JSON object on stdout (docs/serve.md, "Answers").
 */
#include <getopt.h>
#include <stdio.h>

#include "cli.h"
#include "rewind.h"

static void help(void)
{
    puts("usage: rewind fork RUN STEP [--schedule S] [--schedule-until B] [--name NAME]\n"
         "                            [--timeout S] [--max-trace MB] [--max-disk MB] [--json]\n"
         "\n"
         "Make a new run identical to RUN through STEP and perturbed by schedule S after\n"
         "it (default 0: unperturbed from STEP on), started from RUN's keyframe before\n"
         "STEP. The fork is a run like any other: replay, log, cat, diff, fork again.\n"
         "Exits with the job's status, like rewind run.\n"
         "\n"
         "  --timeout S                     give up after S seconds of wall time\n"
         "  --max-trace MB, --max-disk MB   disk limits of the fork (see rewind run)\n"
         "  --json                          the result as one JSON object on stdout (the\n"
         "                                  job's output goes to stderr)");
}

int cmd_fork(int argc, char **argv)
{
    struct rw_options o;
    uint64_t step;
    static const struct cli_derived d = {
        "fork", "schedule,schedule-until,name,timeout,max-trace,max-disk", 2, "RUN and STEP", help};
    rw_home *h;
    int json;
    int ex = cli_start(argc, argv, &d, &o, &step, &h, &json);
    if (ex >= 0)
        return ex;
    struct rw_result r;
    struct rw_error err;
    int rc = rw_fork(h, argv[optind], step, &o, &r, &err);
    rw_home_close(h);
    if (rc < 0)
        return cli_fail_json(&err, json);
    if (r.diverged)
        fprintf(stderr, "rewind: DETERMINISM VIOLATION: %s\n", r.divergence);
    char line[1024];
    snprintf(line, sizeof line,
             "run %s %s:%d after %llu steps, %.3fs virtual, %.3fs wall (fork of %s "
             "at step %llu, schedule %llu, from its keyframe at step %llu)",
             r.id, rw_outcome_word(r.outcome), r.exit_code, (unsigned long long)r.steps,
             r.virt_ns / 1e9, r.wall_s, r.parent, (unsigned long long)step,
             (unsigned long long)o.schedule, (unsigned long long)r.from_step);
    fprintf(stderr, "rewind: %s\n", line);
    if (json)
        cli_json_answer(json_pack("{s:s,s:s,s:I,s:I,s:I,s:s,s:i,s:I,s:f,s:f,s:b,s:s?,s:s}", "id",
                                  r.id, "parent", r.parent, "step", (json_int_t)step, "schedule",
                                  (json_int_t)o.schedule, "from_step", (json_int_t)r.from_step,
                                  "outcome", rw_outcome_word(r.outcome), "exit_code", r.exit_code,
                                  "steps", (json_int_t)r.steps, "virtual_s", r.virt_ns / 1e9,
                                  "wall_s", r.wall_s, "diverged", r.diverged, "divergence",
                                  r.diverged ? r.divergence : NULL, "summary", line));
    return r.exit_code;
}
