/*
 * cmd_cat: `rewind cat RUN STEP PATH [--pid P]`: the file PATH as it was at
 * STEP, as process P (default: the job) saw it through its root and cwd.
 * The file is read inside a throwaway fork of RUN: restored from the
 * keyframe before STEP, run to STEP, every process frozen, an inspector
 * reads the file; then the fork is dropped. Exit 3 if PATH did not exist.
 */
#include <getopt.h>
#include <stdio.h>

#include "cli.h"
#include "rewind.h"

static void help(void)
{
    puts("usage: rewind cat RUN STEP PATH [--pid P] [--timeout S]\n\n"
         "Print the file PATH as it was at STEP of RUN, as process P (default: the\n"
         "job) saw it, through its root and working directory. Read in a throwaway\n"
         "fork of the run; nothing stored changes. Exit 3 if PATH did not exist.\n\n"
         "  --timeout S      give up after S seconds of wall time (default 600; exit 124)\n"
         "  --max-trace MB, --max-disk MB   disk limits of the fork (see rewind run)");
}

int cmd_cat(int argc, char **argv)
{
    struct rw_options o;
    uint64_t step;
    static const struct cli_derived d = {"cat", "pid,timeout,max-trace,max-disk", 3,
                                         "RUN STEP PATH", help};
    rw_home *h;
    int ex = cli_start(argc, argv, &d, &o, &step, &h);
    if (ex >= 0)
        return ex;
    const char *path = argv[optind + 2];
    struct rw_result r;
    struct rw_error err;
    int rc = rw_cat(h, argv[optind], step, path, &o, &r, &err);
    rw_home_close(h);
    if (rc < 0)
        return cli_fail(&err); /* the README's codes: 2 usage, 120 no KVM, ... */
    fflush(stdout);
    if (r.inspect_status == 3)
        return cli_error(3, "%s did not exist at step %llu%s", path, (unsigned long long)step,
                         o.pid ? " (for that process)" : "");
    return r.inspect_status;
}
