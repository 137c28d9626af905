/*
 * cmd_fork: `rewind fork RUN STEP --schedule S`: a new run identical to RUN
 * through STEP and perturbed by schedule S after it, started from RUN's
 * keyframe before STEP (it shares RUN's keyframes up to there).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "explore/explore.h"
#include "cli/cli.h"
#include "cli/cliutil.h"

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
    static const struct option longopts[] = {
        {"schedule", required_argument, 0, 'P'}, {"schedule-until", required_argument, 0, 'B'},
        {"name", required_argument, 0, 'N'},     {"timeout", required_argument, 0, 't'},
        {"help", no_argument, 0, 'h'},           {0, 0, 0, 0},
    };
    uint64_t schedule = 0, until = UINT64_MAX, step;
    const char *name = NULL;
    double timeout = 0;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (c) {
        case 'P':
            if (cli_parse_step(optarg, &schedule) < 0)
                return cli_error(2, "--schedule needs a schedule number: %s", optarg);
            break;
        case 'B':
            if (cli_parse_step(optarg, &until) < 0)
                return cli_error(2, "--schedule-until needs a step: %s", optarg);
            break;
        case 'N':
            if (!*optarg || strchr(optarg, '/') || optarg[0] == '@' || optarg[0] == '.')
                return cli_error(2, "--name must be non-empty, without '/', not starting with "
                                    "'@' or '.': %s", optarg);
            name = optarg;
            break;
        case 't':
            timeout = strtod(optarg, NULL);
            if (timeout <= 0)
                return cli_error(2, "--timeout must be a positive number of seconds: %s", optarg);
            break;
        case 'h':
            help();
            return 0;
        default:
            return cli_error(2, "see rewind fork --help");
        }
    }
    if (optind != argc - 2)
        return cli_error(2, "fork needs RUN and STEP (see rewind fork --help)");
    struct run_opts o;
    char base[64], err[1024];
    uint64_t steps;
    if (cli_derive(argv[optind], argv[optind + 1], 0, &o, base, &step, &steps) < 0)
        return 2;
    if (until <= step)
        return cli_error(2, "--schedule-until must be after STEP");
    o.quiet = 0;
    o.name = name;
    o.abort = cli_abort_on_signals(timeout);
    struct run_result r;
    if (explore_fork(&o, base, schedule, step, until, step, steps - step, &r, err, sizeof(err)) <
        0)
        return cli_error(r.exit_code ? r.exit_code : 2, "%s", err);
    if (r.diverged)
        fprintf(stderr, "rewind: DETERMINISM VIOLATION: %s\n", r.divergence);
    fprintf(stderr, "rewind: run %s %s:%d after %llu steps, %.3fs virtual, %.3fs wall (fork of %s "
                    "at step %llu, schedule %llu, from its keyframe at step %llu)\n",
            r.id, run_outcome_word(r.outcome), r.exit_code, (unsigned long long)r.steps,
            r.virt_ns / 1e9, r.wall_s, base, (unsigned long long)step,
            (unsigned long long)schedule, (unsigned long long)r.from_step);
    return r.exit_code;
}
