/*
 * cmd_diff: `rewind diff A B [--context N] [--json]`: the first event where
 * two runs part, with a few events of context from each side. Exit 1 if
 * they differ, 0 if identical.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace/compare.h"
#include "trace/describe.h"
#include "cli/cli.h"
#include "cli/cliutil.h"

struct ctx {
    uint64_t lo, hi, i, mark;
    const char *side;
};

static int show(void *p, const struct trace_entry *e)
{
    struct ctx *c = p;
    uint64_t i = c->i++;
    if (i < c->lo)
        return 0;
    if (i > c->hi)
        return 1;
    char line[1024];
    describe_entry(e, line, sizeof(line));
    printf("  %s %s%10" PRIu64 "  %s\n", c->side, i == c->mark ? ">" : " ", e->step, line);
    return 0;
}

int cmd_diff(int argc, char **argv)
{
    static const struct option lo[] = {{"context", required_argument, 0, 'c'},
                                       {"json", no_argument, 0, 'j'},
                                       {"help", no_argument, 0, 'h'},
                                       {0, 0, 0, 0}};
    uint64_t context = 3;
    int json = 0, c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
        if (c == 'c') {
            if (cli_parse_step(optarg, &context) < 0)
                return cli_error(2, "--context needs a number: %s", optarg);
        } else if (c == 'j')
            json = 1;
        else if (c == 'h') {
            puts("usage: rewind diff RUN-A RUN-B [--context N] [--json]\n\nThe first event "
                 "where two runs part, with N events of context (default 3)\nfrom each side. "
                 "Exit 0 if identical, 1 if they differ.");
            return 0;
        } else
            return cli_error(2, "see rewind diff --help");
    }
    if (argc - optind != 2)
        return cli_error(2, "diff needs two runs (see rewind diff --help)");
    char da[4096], db[4096];
    json_t *ma = cli_load_run(argv[optind], da, sizeof(da));
    if (!ma)
        return 2;
    json_t *mb = cli_load_run(argv[optind + 1], db, sizeof(db));
    json_decref(ma);
    if (!mb)
        return 2;
    json_decref(mb);
    char ta[4200], tb[4200];
    snprintf(ta, sizeof(ta), "%s/trace", da);
    snprintf(tb, sizeof(tb), "%s/trace", db);
    struct trace_difference d;
    if (compare_traces(ta, tb, &d) < 0)
        return cli_error(2, "cannot read the traces of %s and %s", argv[optind], argv[optind + 1]);
    if (json) {
        printf("{\"identical\":%s,\"common_events\":%" PRIu64, d.differ ? "false" : "true",
               d.common);
        if (d.differ)
            printf(",\"event\":%" PRIu64 ",\"step_a\":%" PRIu64 ",\"step_b\":%" PRIu64, d.index,
                   d.step_a, d.step_b);
        puts("}");
        return d.differ;
    }
    if (!d.differ) {
        printf("identical: %" PRIu64 " events\n", d.common);
        return 0;
    }
    printf("the runs part at event %" PRIu64 " (step %" PRIu64 " in A, %" PRIu64
           " in B), after %" PRIu64 " equal events\n",
           d.index, d.step_a, d.step_b, d.common);
    struct ctx ca = {.lo = d.index > context ? d.index - context : 0, .hi = d.index + context,
                     .mark = d.index, .side = "A"};
    struct ctx cb = ca;
    cb.side = "B";
    cli_each_entry(da, show, &ca);
    printf("  --\n");
    cli_each_entry(db, show, &cb);
    return 1;
}
