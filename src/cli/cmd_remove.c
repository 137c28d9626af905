/* cmd_remove: `rewind remove [--force] RUN...`: delete runs (their
 * directories). A run whose keyframes other runs build on (forks, shell
 * sessions) is kept unless --force: removing it would cut their chains. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "cli_read.h"
#include "rewind.h"

static void report(void *ctx, const char *id, const char *path, int removed)
{
    (void)ctx;
    if (removed)
        printf("removed %s\n", id);
    else
        cli_error(1, "could not fully remove %s", path);
}

int cmd_remove(int argc, char **argv)
{
    int force = argc > 1 && !strcmp(argv[1], "--force");
    if (force) {
        argv++;
        argc--;
    }
    if (argc < 2)
        return cli_error(2, "remove needs at least one run (see rewind remove --help)");
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        puts("usage: rewind remove [--force] RUN...\n\nDelete the named runs. Pages and "
             "images they alone used are freed by rewind gc.\nA run that forks or shell "
             "sessions start from is kept unless --force (they\nwould still replay from "
             "boot, but lose the keyframes before their fork).");
        return 0;
    }
    if (argc - 1 > RW_REMOVE_MAX)
        return cli_error(2, "remove at most %d runs at a time", RW_REMOVE_MAX);
    rw_home *h = cli_read_home();
    if (!h)
        return 1;
    struct rw_error err;
    int rc = rw_remove(h, (const char *const *)argv + 1, argc - 1, force, report, NULL, &err);
    return rc < 0 ? cli_read_fail(1, &err) : rc;
}
