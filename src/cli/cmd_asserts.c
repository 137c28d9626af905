/*
 * cmd_asserts: `rewind asserts RUN [--json]`: the SDK assertions of a run
 * (docs/sdk.md), its catalog merged with its evaluations, one per line.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "cli_read.h"
#include "rewind.h"

struct out {
    int json, n;
};

/* What this run says of the assertion, in one word. */
static const char *verdict(const struct rw_sdk_assertion *a)
{
    if (a->failed)
        return "FAILED";
    if (!a->hits)
        return "unreached";
    if (a->kind == RW_SDK_SOMETIMES && !a->passes)
        return "never-true";
    return "ok";
}

static int show(void *ctx, const struct rw_sdk_assertion *a)
{
    struct out *o = ctx;
    if (o->json) {
        printf("%s{\"kind\":\"%s\",\"message\":", o->n ? ",\n" : "", rw_sdk_kind_name(a->kind));
        cli_read_json_str(a->msg, strlen(a->msg));
        printf(",\"file\":");
        cli_read_json_str(a->file, strlen(a->file));
        printf(",\"line\":%u,\"catalogued\":%s,\"hits\":%" PRIu64 ",\"passes\":%" PRIu64
               ",\"fails\":%" PRIu64 ",\"first_fail_step\":",
               a->line, a->catalogued ? "true" : "false", a->hits, a->passes, a->fails);
        if (a->first_fail_step == UINT64_MAX)
            printf("null");
        else
            printf("%" PRIu64, a->first_fail_step);
        printf(",\"failed\":%s,\"verdict\":\"%s\"}", a->failed ? "true" : "false", verdict(a));
    } else {
        char where[320], first[24] = "-";
        snprintf(where, sizeof(where), "%s:%u", a->file, a->line);
        if (a->first_fail_step != UINT64_MAX)
            snprintf(first, sizeof(first), "%" PRIu64, a->first_fail_step);
        printf("%-10s %-21s %6" PRIu64 " %6" PRIu64 " %6" PRIu64 " %10s  %s  ", verdict(a),
               rw_sdk_kind_name(a->kind), a->hits, a->passes, a->fails, first, where);
        cli_read_json_str(a->msg, strlen(a->msg));
        printf("%s\n", a->catalogued ? "" : " (not in the catalog)");
    }
    o->n++;
    return 0;
}

static int read_asserts(rw_home *h, const char *id, void *ctx, struct rw_trace_status *st,
                        struct rw_error *err)
{
    memset(st, 0, sizeof(*st));
    return rw_sdk_assertions(h, id, show, ctx, err) < 0 ? -1 : 0;
}

int cmd_asserts(int argc, char **argv)
{
    static const struct option lo[] = {
        {"json", no_argument, 0, 'j'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    struct out o = {0};
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
        switch (c) {
        case 'j':
            o.json = 1;
            break;
        case 'h':
            puts("usage: rewind asserts RUN [--json]\n\n"
                 "The SDK assertions of a run (docs/sdk.md): every assertion its programs\n"
                 "catalogued or evaluated, sorted by source location, with its evaluations\n"
                 "(hits), how many were true (pass) and false (fail), the step of the first\n"
                 "false one, and a verdict for this run: FAILED (an always or\n"
                 "always_or_unreachable was false, or an unreachable was reached), ok,\n"
                 "unreached, or never-true (a sometimes). sometimes and reachable are\n"
                 "judged across the schedules of a check, not by one run.");
            return 0;
        default:
            return cli_error(2, "see rewind asserts --help");
        }
    }
    if (optind != argc - 1)
        return cli_error(2, "asserts needs one run (see rewind asserts --help)");
    const char *head = "VERDICT    KIND                    HITS   PASS   FAIL FIRST-FAIL  WHERE  "
                       "MESSAGE\n";
    return cli_read_trace(argv[optind], o.json, head, read_asserts, &o);
}
