/* cmd_remove: `rewind remove RUN...`: delete runs (their directories). */
#include <stdio.h>
#include <string.h>

#include "../run/rundir.h"
#include "../run/runref.h"
#include "cli.h"

int cmd_remove(int argc, char **argv)
{
    if (argc < 2)
        return cli_error(2, "remove needs at least one run (see rewind remove --help)");
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        puts("usage: rewind remove RUN...\n\nDelete the named runs. Pages and images they "
             "alone used are freed by rewind gc.");
        return 0;
    }
    char dirs[64][4096], err[512];
    if (argc - 1 > 64)
        return cli_error(2, "remove at most 64 runs at a time");
    /* Resolve all first: a typo removes nothing. */
    for (int i = 1; i < argc; i++)
        if (runref_resolve(cli_home(), argv[i], dirs[i - 1], sizeof(dirs[0]), err,
                           sizeof(err)) < 0)
            return cli_error(1, "%s (nothing removed)", err);
    int rc = 0;
    for (int i = 1; i < argc; i++) {
        if (rundir_remove_tree(dirs[i - 1]) < 0)
            rc = cli_error(1, "could not fully remove %s", dirs[i - 1]);
        else
            printf("removed %s\n", strrchr(dirs[i - 1], '/') + 1);
    }
    return rc;
}
