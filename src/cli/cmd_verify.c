/*
 * cmd_verify: `rewind verify [--json]`: re-hash every page of the page store
 * with SHA-256 and check that every page the runs' keyframes name is there
 * (rw_verify). A keyframe restore trusts the content checksum of the pages
 * this store compressed; this is the full check. It also checks every file
 * of every run and the root images they name (verifyapi.c inv. 3). Exit 0
 * when all is well, 1 when a page is bad or missing or a run is damaged.
 */
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_read.h"
#include "rewind.h"

/* {"run": ..., "what": ...}: what a damaged file said, made valid UTF-8
 * (cli_tty) for jansson to escape */
static void cli_json_damage(const char *run, const char *what)
{
    json_t *o = json_pack("{s:s,s:s}", "run", cli_tty(run), "what", cli_tty(what));
    char *t = o ? json_dumps(o, JSON_COMPACT) : NULL;
    fputs(t ? t : "null", stdout);
    free(t);
    json_decref(o);
}

static void print_damage(const struct rw_verify_report *r)
{
    printf("verify: %" PRIu64 " runs' files checked, %" PRIu64 " root images re-hashed: %" PRIu64
           " runs damaged, %" PRIu64 " images bad\n",
           r->runs_checked, r->images_checked, r->damaged_runs, r->bad_images);
    if (r->damaged_runs)
        printf("verify: run %s: %s\n", cli_tty(r->damaged_run), cli_tty(r->damage));
}

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
                 "and exports re-hash every page.) Also check every run's manifest, spec,\n"
                 "trace (against its hash), keyframes and root image. Changes nothing.\n"
                 "Exit 0 when every page is good and present and no run is damaged, 1\n"
                 "otherwise.\n\n"
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
    int ok = !r.bad && !r.missing && !r.unreadable_runs && !r.damaged_runs;
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
        if (r.missing) {
            fputs("{\"run\":", stdout); /* a directory's name: any bytes */
            cli_read_json_str(r.missing_run, strlen(r.missing_run));
            printf(",\"page\":\"%s\"}", r.first_missing);
        } else
            fputs("null", stdout);
        printf(",\"unreadable_runs\":%" PRIu64 ",\"runs_checked\":%" PRIu64
               ",\"damaged_runs\":%" PRIu64 ",\"images_checked\":%" PRIu64
               ",\"bad_images\":%" PRIu64 ",\"first_damaged\":",
               r.unreadable_runs, r.runs_checked, r.damaged_runs, r.images_checked, r.bad_images);
        if (r.damaged_runs)
            cli_json_damage(r.damaged_run, r.damage);
        else
            fputs("null", stdout);
        puts("}");
        return ok ? 0 : 1;
    }
    if (r.no_store) {
        puts("verify: no page store yet: nothing to check");
        print_damage(&r);
        return ok ? 0 : 1;
    }
    printf("verify: %" PRIu64 " pages re-hashed (%" PRIu64 " with a content checksum): %" PRIu64
           " bad\n",
           r.pages, r.summed, r.bad);
    if (r.bad)
        printf("verify: bad page %s (no stored copy has its contents)\n", r.first_bad);
    printf("verify: %" PRIu64 " runs' keyframes name %" PRIu64 " pages: %" PRIu64 " missing\n",
           r.runs, r.named, r.missing);
    if (r.missing)
        printf("verify: run %s names page %s, which the store lacks\n", cli_tty(r.missing_run),
               r.first_missing);
    if (r.unreadable_runs)
        printf("verify: %" PRIu64 " runs' keyframes could not be read\n", r.unreadable_runs);
    print_damage(&r);
    return ok ? 0 : 1;
}
