/*
 * cmd_verify: `rewind verify [--json]`: re-hash every page of the page store
 * with SHA-256 and check that every page the runs' keyframes name is there
 * (rw_verify). A keyframe restore trusts the content checksum of the pages
 * this store compressed; this is the full check. Exit 0 when all is well, 1
 * when a page is bad or missing.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "cli_read.h"
#include "rewind.h"

int cmd_verify(int argc, char **argv)
{
    int json = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json"))
            json = 1;
        else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            puts("usage: rewind verify [--json]\n\n"
                 "Re-hash every page of the page store with SHA-256 and check that every\n"
                 "page the runs' keyframes name is in it. (Restoring a keyframe checks the\n"
                 "pages this store compressed by their zstd content checksum only; imports\n"
                 "and exports re-hash every page.) Changes nothing. Exit 0 when every page\n"
                 "is good and present, 1 when one is not.\n\n"
                 "  --json  print the result as one JSON object");
            return 0;
        } else
            return cli_error(2, "unknown argument '%s' (see rewind verify --help)", argv[i]);
    }
    rw_home *h = cli_read_home();
    if (!h)
        return 1;
    struct rw_verify_report r;
    struct rw_error err;
    if (rw_verify(h, &r, &err) < 0)
        return cli_read_fail(1, &err);
    int ok = !r.bad && !r.missing && !r.unreadable_runs;
    if (json) {
        printf("{\"ok\":%s,\"store\":%s,\"pages\":%" PRIu64 ",\"checksummed\":%" PRIu64
               ",\"bad\":%" PRIu64 ",\"first_bad\":",
               ok ? "true" : "false", r.no_store ? "false" : "true", r.pages, r.summed, r.bad);
        if (r.bad)
            printf("\"%s\"", r.first_bad);
        else
            fputs("null", stdout);
        printf(",\"runs\":%" PRIu64 ",\"pages_named\":%" PRIu64 ",\"missing\":%" PRIu64
               ",\"first_missing\":",
               r.runs, r.named, r.missing);
        if (r.missing)
            printf("{\"run\":\"%s\",\"page\":\"%s\"}", r.missing_run, r.first_missing);
        else
            fputs("null", stdout);
        printf(",\"unreadable_runs\":%" PRIu64 "}\n", r.unreadable_runs);
        return ok ? 0 : 1;
    }
    if (r.no_store) {
        puts("verify: no page store yet: nothing to check");
        return 0;
    }
    printf("verify: %" PRIu64 " pages re-hashed (%" PRIu64 " with a content checksum): %" PRIu64
           " bad\n",
           r.pages, r.summed, r.bad);
    if (r.bad)
        printf("verify: bad page %s (no stored copy has its contents)\n", r.first_bad);
    printf("verify: %" PRIu64 " runs' keyframes name %" PRIu64 " pages: %" PRIu64 " missing\n",
           r.runs, r.named, r.missing);
    if (r.missing)
        printf("verify: run %s names page %s, which the store lacks\n", r.missing_run,
               r.first_missing);
    if (r.unreadable_runs)
        printf("verify: %" PRIu64 " runs' keyframes could not be read\n", r.unreadable_runs);
    return ok ? 0 : 1;
}
