/* cmd_remove: `rewind remove [--force] RUN...`: delete runs (their
 * directories). A run whose keyframes other runs build on (forks, shell
 * sessions) is kept unless --force: removing it would cut their chains. */
#include <stdio.h>
#include <string.h>

#include "trace/keyframe.h"
#include "home/rundir.h"
#include "home/runref.h"
#include "cli/cli.h"

/* How many runs not being removed name `name` as their keyframes' parent;
 * one of them in `child`. */
static int children(const char *name, char (*dirs)[4096], int ndirs, char *child, size_t n)
{
    char **names = NULL;
    int count = runref_list(cli_home(), &names), found = 0;
    for (int i = 0; i < count; i++) {
        int removed = 0;
        for (int j = 0; j < ndirs; j++) {
            const char *b = strrchr(dirs[j], '/');
            removed |= b && !strcmp(b + 1, names[i]);
        }
        char path[4200];
        snprintf(path, sizeof(path), "%s/runs/%s/keyframes", cli_home(), names[i]);
        struct kf_file k;
        if (removed || kf_open(path, &k) != 0)
            continue;
        if (!strcmp(k.parent, name)) {
            if (!found++)
                snprintf(child, n, "%s", names[i]);
        }
        kf_close_read(&k);
    }
    if (count >= 0)
        runref_free(names, count);
    return found;
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
    char dirs[64][4096], err[512];
    if (argc - 1 > 64)
        return cli_error(2, "remove at most 64 runs at a time");
    /* Resolve all first: a typo removes nothing. */
    for (int i = 1; i < argc; i++)
        if (runref_resolve(cli_home(), argv[i], dirs[i - 1], sizeof(dirs[0]), err,
                           sizeof(err)) < 0)
            return cli_error(1, "%s (nothing removed)", err);
    for (int i = 1; i < argc && !force; i++) {
        char child[256];
        const char *b = strrchr(dirs[i - 1], '/');
        int n = children(b ? b + 1 : dirs[i - 1], dirs, argc - 1, child, sizeof(child));
        if (n)
            return cli_error(1, "run %s has %d fork%s starting from its keyframes (%s%s); remove "
                                "them too, or use --force (nothing removed)",
                             argv[i], n, n > 1 ? "s" : "", child, n > 1 ? ", ..." : "");
    }
    int rc = 0;
    for (int i = 1; i < argc; i++) {
        if (rundir_remove_tree(dirs[i - 1]) < 0)
            rc = cli_error(1, "could not fully remove %s", dirs[i - 1]);
        else
            printf("removed %s\n", strrchr(dirs[i - 1], '/') + 1);
    }
    return rc;
}
