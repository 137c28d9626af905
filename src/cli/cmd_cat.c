/*
 * cmd_cat: `rewind cat RUN STEP PATH [--pid P]`: the file PATH as it was at
 * STEP, as process P (default: the job) saw it through its root and cwd.
 * The file is read inside a throwaway fork of RUN: restored from the
 * keyframe before STEP, run to STEP, every process frozen, an inspector
 * reads the file; then the fork is dropped. Exit 3 if PATH did not exist.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "explore/explore.h"
#include "cli/cli.h"
#include "cli/cliutil.h"

int cmd_cat(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"pid", required_argument, 0, 'p'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    uint64_t pid = 0, step;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (c) {
        case 'p':
            if (cli_parse_step(optarg, &pid) < 0 || pid == 0)
                return cli_error(2, "--pid needs a process id (see rewind ps): %s", optarg);
            break;
        case 'h':
            puts("usage: rewind cat RUN STEP PATH [--pid P]\n\n"
                 "Print the file PATH as it was at STEP of RUN, as process P (default: the\n"
                 "job) saw it, through its root and working directory. Read in a throwaway\n"
                 "fork of the run; nothing stored changes. Exit 3 if PATH did not exist.");
            return 0;
        default:
            return cli_error(2, "see rewind cat --help");
        }
    }
    if (optind != argc - 3)
        return cli_error(2, "cat needs RUN STEP PATH (see rewind cat --help)");
    const char *path = argv[optind + 2];
    if (!*path)
        return cli_error(2, "PATH is empty");
    struct run_opts o;
    char base[64], err[1024];
    uint64_t steps;
    if (cli_derive(argv[optind], argv[optind + 1], 1, &o, base, &step, &steps) < 0)
        return 2;
    (void)steps;
    o.inspect_kind = "cat";
    o.inspect_at = step;
    o.inspect_pid = pid;
    o.inspect_path = path;
    o.no_keyframes = 1;
    o.throwaway = 1;
    o.from_run = base;
    o.from_step = step;
    o.abort = cli_abort_on_signals(0);
    struct run_result r;
    if (run_execute(&o, &r, err, sizeof(err)) < 0)
        return cli_error(r.exit_code == RUN_EXIT_INTERNAL ? 125 : 2, "%s", err);
    fflush(stdout);
    if (r.inspect_status == 3)
        return cli_error(3, "%s did not exist at step %llu%s", path, (unsigned long long)step,
                         pid ? " (for that process)" : "");
    return r.inspect_status;
}
