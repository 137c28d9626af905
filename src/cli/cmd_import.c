/*
 * cmd_import: `rewind import FILE`: add the run in an archive (from rewind
 * export) to $REWIND_HOME after verifying all of it (docs/formats.md).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "cli_read.h"
#include "rewind.h"

int cmd_import(int argc, char **argv)
{
    const char *in = NULL;
    int json = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            puts("usage: rewind import FILE [--json]\n\n"
                 "Add the run in FILE (written by rewind export; - reads stdin). Every\n"
                 "page and image is re-hashed against its name and the whole file is\n"
                 "checked before anything is added: a damaged, truncated or unsafe\n"
                 "archive adds nothing. A run already here with the same content is\n"
                 "left as it is; one with other content is an error.\n\n"
                 "  --json  print the result as one JSON object");
            return 0;
        } else if (!strcmp(argv[i], "--json"))
            json = 1;
        else if (argv[i][0] == '-' && argv[i][1])
            return cli_error(2, "unknown option '%s' (see rewind import --help)", argv[i]);
        else if (in)
            return cli_error(2, "import takes one file (see rewind import --help)");
        else
            in = argv[i];
    }
    if (!in)
        return cli_error(2, "import needs a file (see rewind import --help)");
    rw_home *h = cli_read_home();
    if (!h)
        return 1;
    struct rw_archive_stats st;
    struct rw_error err;
    if (rw_import(h, in, &st, &err) < 0)
        return cli_error(1, "%s: %s", in, err.msg);
    if (json)
        printf("{\"run\":\"%s\",\"already\":%s,\"runs\":%" PRIu64 ",\"events\":%" PRIu64
               ",\"keyframes\":%" PRIu64 ",\"pages\":%" PRIu64 ",\"images\":%" PRIu64 "}\n",
               st.run, st.already ? "true" : "false", st.runs, st.events, st.keyframes, st.pages,
               st.images);
    else if (st.already)
        printf("run %s is already here, identical (%" PRIu64 " events, %" PRIu64
               " keyframes, %" PRIu64 " pages)\n",
               st.run, st.events, st.keyframes, st.pages);
    else
        printf("imported run %s (%" PRIu64 " events, %" PRIu64 " keyframes, %" PRIu64 " pages)\n",
               st.run, st.events, st.keyframes, st.pages);
    return 0;
}
