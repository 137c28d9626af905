/*
 * cmd_replay: `rewind replay RUN [--from STEP]`: run the stored spec again,
 * from boot or from the keyframe at or before STEP, and compare every record
 * and the final RAM with the stored run. Prints `identical: N events over S
 * steps` and exits 0, or where the runs part and exits 1 (the new run is
 * kept as <id>~N for `rewind diff`). --verify-restores N also restores N of
 * the replay's keyframes in place and runs each to the end (the restore
 * differential).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run/runner.h"
#include "cli/cli.h"
#include "cli/cliutil.h"

static void help(void)
{
    puts("usage: rewind replay RUN [--from STEP] [--verify-restores N] [--timeout S]\n"
         "\n"
         "Run RUN's spec again (same kernel, init and root image) and compare every\n"
         "record, the step count and the final RAM. Exit 0 when identical, 1 when the\n"
         "runs part.\n"
         "\n"
         "  --from STEP          start from RUN's keyframe at or before STEP instead of\n"
         "                       booting (the history before it is RUN's own)\n"
         "  --verify-restores N  then restore N of the replay's keyframes, evenly spaced,\n"
         "                       into the same VM, run each to the end and compare\n"
         "  --timeout S          give up after S seconds of wall time");
}

int cmd_replay(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"from", required_argument, 0, 'f'}, {"verify-restores", required_argument, 0, 'v'},
        {"timeout", required_argument, 0, 't'}, {"test-hole", required_argument, 0, 'H'},
        {"help", no_argument, 0, 'h'}, {0, 0, 0, 0},
    };
    struct run_opts o = {0};
    uint64_t from = 0;
    int have_from = 0;
    double timeout = 0;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (c) {
        case 'f':
            if (cli_parse_step(optarg, &from) < 0)
                return cli_error(2, "--from needs a step number: %s", optarg);
            have_from = 1;
            break;
        case 'v':
            if (cli_parse_step(optarg, &o.verify_restores) < 0 || !o.verify_restores)
                return cli_error(2, "--verify-restores needs a positive count: %s", optarg);
            break;
        case 't':
            timeout = strtod(optarg, NULL);
            if (timeout <= 0)
                return cli_error(2, "--timeout must be a positive number of seconds: %s",
                                 optarg);
            break;
        case 'H':
            if (cli_test_hole(optarg, &o) < 0)
                return 2;
            break;
        case 'h':
            help();
            return 0;
        default:
            return cli_error(2, "see rewind replay --help");
        }
    }
    if (optind != argc - 1)
        return cli_error(2, "replay needs one run (see rewind replay --help)");
    if (o.test_holes)
        return cli_error(2, "replay takes only the keyframe test holes");
    char dir[4096], err[1024];
    json_t *m = cli_load_run(argv[optind], dir, sizeof(dir));
    if (!m)
        return 2;
    json_t *spec = json_object_get(m, "spec");
    unsigned holes = o.snap_holes;
    uint64_t verify = o.verify_restores;
    if (run_opts_from_spec(spec, cli_home(), &o, err, sizeof(err)) < 0) {
        json_decref(m);
        return cli_error(2, "%s", err);
    }
    o.snap_holes = holes;
    o.verify_restores = verify;
    o.kf_every = (uint64_t)json_integer_value(json_object_get(m, "keyframe_every"));
    o.kernel = cli_artifact("REWIND_KERNEL", "kernel/vmlinux");
    o.init = cli_artifact("REWIND_INIT", "rewind-init");
    if (run_check_artifacts(&o, spec, err, sizeof(err)) < 0) {
        json_decref(m);
        return cli_error(2, "cannot replay: %s", err);
    }
    static char parent[64];
    const char *par = json_string_value(json_object_get(m, "parent"));
    snprintf(parent, sizeof(parent), "%s", par ? par : "");
    json_decref(m);
    const char *base = strrchr(dir, '/');
    base = base ? base + 1 : dir;
    if (have_from) {
        o.from_run = base;
        o.from_step = from;
    }
    static char inputs[4200];
    if (o.inspect_kind && have_from && from > o.inspect_at)
        return cli_error(2, "this is a shell session from step %llu: replay it --from a step "
                            "up to that one", (unsigned long long)o.inspect_at);
    if (o.inspect_kind) { /* a shell session: its keystrokes come from its inputs file */
        snprintf(inputs, sizeof(inputs), "%s/inputs", dir);
        o.session_replay = inputs;
        if (!have_from && parent[0]) {
            o.from_run = parent;
            o.from_step = o.inspect_at;
        }
    }
    o.quiet = 1;
    o.replay = 1;
    o.abort = cli_abort_on_signals(timeout);
    struct run_result r;
    if (run_execute(&o, &r, err, sizeof(err)) < 0)
        return cli_error(r.exit_code == 2 ? 2 : r.exit_code, "%s", err);
    if (!r.had_stored)
        return cli_error(2, "the stored run disappeared during the replay");
    int bad = r.diverged || r.restores_failed;
    if (r.diverged)
        printf("parts: %s\n", r.divergence);
    else if (have_from)
        printf("identical: %llu events over %llu steps (from the keyframe at step %llu, "
               "restored in %.3f s)\n", (unsigned long long)r.events, (unsigned long long)r.steps,
               (unsigned long long)r.from_step, r.restore_s);
    else
        printf("identical: %llu events over %llu steps\n", (unsigned long long)r.events,
               (unsigned long long)r.steps);
    if (o.verify_restores)
        printf("restores: %llu checked, %llu differ\n", (unsigned long long)r.restores_checked,
               (unsigned long long)r.restores_failed);
    return bad ? 1 : 0;
}
