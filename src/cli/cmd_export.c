/*
 * cmd_export: `rewind export RUN [-o FILE] [--replayable]`: write a run as
 * one archive file (format and checks in docs/formats.md).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "cli_read.h"
#include "rewind.h"

static void usage(void)
{
    puts("usage: rewind export RUN [-o FILE] [--replayable [--without-image]]\n\n"
         "Write the run as one file (default RUN.rewind here; -o - writes to stdout):\n"
         "its manifest, spec, trace and states, enough for ls, show, log, ps, events\n"
         "and diff on another machine after rewind import.\n\n"
         "  -o FILE          where to write the archive\n"
         "  --replayable     also the keyframes of the run's chain (and of the runs it\n"
         "                   was forked from), every page they name and the root image,\n"
         "                   so rewind replay works after import\n"
         "  --without-image  with --replayable: leave the root image out (most of\n"
         "                   the archive's bytes); import then needs it in its home\n"
         "                   already, as a home that ran the same root has it");
}

int cmd_export(int argc, char **argv)
{
    const char *ref = NULL, *out = NULL;
    int replayable = 0, no_image = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage();
            return 0;
        } else if (!strcmp(argv[i], "--replayable"))
            replayable = 1;
        else if (!strcmp(argv[i], "--without-image"))
            no_image = 1;
        else if (!strcmp(argv[i], "-o") || !strcmp(argv[i], "--output")) {
            if (++i == argc)
                return cli_error(2, "-o needs a file name (or - for stdout)");
            out = argv[i];
        } else if (argv[i][0] == '-' && argv[i][1])
            return cli_error(2, "unknown option '%s' (see rewind export --help)", argv[i]);
        else if (ref)
            return cli_error(2, "export takes one run (see rewind export --help)");
        else
            ref = argv[i];
    }
    if (!ref)
        return cli_error(2, "export needs a run (see rewind export --help)");
    if (no_image && !replayable)
        return cli_error(2, "--without-image goes with --replayable (an archive without "
                            "--replayable holds no image)");
    rw_home *h = cli_read_home();
    if (!h)
        return 1;
    char name[RW_ID_MAX], def[128];
    struct rw_error err;
    if (rw_resolve(h, ref, name, &err) < 0)
        return cli_read_fail(1, &err);
    if (!out) {
        snprintf(def, sizeof(def), "%s.rewind", name);
        out = def;
    }
    struct rw_archive_stats st;
    if (rw_export(h, name,
                  (replayable ? RW_EXPORT_REPLAYABLE : 0) | (no_image ? RW_EXPORT_NO_IMAGE : 0),
                  out, &st, &err) < 0)
        return cli_read_fail(1, &err);
    fprintf(strcmp(out, "-") ? stdout : stderr,
            "exported run %s to %s (%" PRIu64 " events, %" PRIu64 " keyframes, %" PRIu64
            " pages, %" PRIu64 " images, %" PRIu64 " bytes)\n",
            st.run, strcmp(out, "-") ? out : "stdout", st.events, st.keyframes, st.pages, st.images,
            st.bytes);
    return 0;
}
