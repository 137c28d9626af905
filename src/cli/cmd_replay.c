/*
 * cmd_replay: `rewind replay RUN`: run the stored spec again and compare
 * every record with the stored trace. Prints `identical: N events over S
 * steps` and exits 0, or where the runs part and exits 1 (the new run is
 * kept as <id>~N for `rewind diff`).
 */
#include <stdio.h>
#include <string.h>

#include "../run/runner.h"
#include "cli.h"
#include "cliutil.h"

int cmd_replay(int argc, char **argv)
{
    if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        puts("usage: rewind replay RUN\n\nRun RUN's spec again (same kernel, init and root "
             "image) and compare every\nrecord. Exit 0 when identical, 1 when the runs part.");
        return 0;
    }
    if (argc != 2)
        return cli_error(2, "replay needs one run (see rewind replay --help)");
    char dir[4096], err[1024];
    json_t *m = cli_load_run(argv[1], dir, sizeof(dir));
    if (!m)
        return 2;
    struct run_opts o = {0};
    json_t *spec = json_object_get(m, "spec");
    if (run_opts_from_spec(spec, cli_home(), &o, err, sizeof(err)) < 0) {
        json_decref(m);
        return cli_error(2, "%s", err);
    }
    o.kernel = cli_artifact("REWIND_KERNEL", "kernel/vmlinux");
    o.init = cli_artifact("REWIND_INIT", "rewind-init");
    if (run_check_artifacts(&o, spec, err, sizeof(err)) < 0) {
        json_decref(m);
        return cli_error(2, "cannot replay: %s", err);
    }
    json_decref(m);
    o.quiet = 1;
    o.replay = 1;
    struct run_result r;
    if (run_execute(&o, &r, err, sizeof(err)) < 0)
        return cli_error(r.exit_code, "%s", err);
    if (!r.had_stored)
        return cli_error(2, "the stored run disappeared during the replay");
    if (r.diverged) {
        printf("parts: %s\n", r.divergence);
        return 1;
    }
    printf("identical: %llu events over %llu steps\n", (unsigned long long)r.events,
           (unsigned long long)r.steps);
    return 0;
}
