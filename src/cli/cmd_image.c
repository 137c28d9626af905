/*
 * cmd_image: `rewind image ROOT [--json]`: make ROOT's image now, as
 * `rewind run --root ROOT` would, keep it in the home and print its id (the
 * spec's "image"). A later run of an unchanged ROOT only looks at the
 * files' metadata. Progress is shown on a terminal.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "cli_read.h"
#include "rewind.h"

static const char usage_text[] =
    "usage: rewind image ROOT [--json]\n\n"
    "Make the erofs image of ROOT (a directory, a tarball or an erofs image)\n"
    "ahead of a run, keep it in the home and print its id: the \"image\" of\n"
    "the spec of every run with --root ROOT. The image is cached: a directory\n"
    "or tarball seen before is not read again unless it changed (a file index\n"
    "keyed by path, size, times, inode and mode), and a changed file is read\n"
    "again. A terminal shows the progress (bytes, rate, ETA).\n\n"
    "  --json  print {\"id\", \"path\", \"size\", \"built\"} as one JSON object\n";

int cmd_image(int argc, char **argv)
{
    int json = 0;
    const char *root = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json"))
            json = 1;
        else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            fputs(usage_text, stdout);
            return 0;
        } else if (argv[i][0] == '-' && argv[i][1])
            return cli_error(2, "unknown option '%s' (see rewind image --help)", argv[i]);
        else if (root)
            return cli_error(2, "one ROOT only: '%s' is extra (see rewind image --help)", argv[i]);
        else
            root = argv[i];
    }
    if (!root)
        return cli_error(2, "which root? usage: rewind image ROOT [--json]");
    rw_home *h = cli_open_home();
    if (!h)
        return 125;
    struct rw_image_info info;
    struct rw_error err;
    int rc = rw_image(h, root, &cli_stdio, &info, &err);
    rw_home_close(h);
    if (rc < 0)
        return cli_fail(&err);
    if (json) {
        fputs("{\"id\":", stdout);
        cli_read_json_str(info.id, strlen(info.id));
        fputs(",\"path\":", stdout);
        cli_read_json_str(info.path, strlen(info.path));
        printf(",\"size\":%" PRIu64 ",\"built\":%s}\n", info.size, info.built ? "true" : "false");
    } else {
        puts(info.id);
    }
    return 0;
}
