/*
 * cmd_diff: `rewind diff A B [--context N] [--json]`: the first event where
 * two runs part, with a few events of context from each side. Exit 1 if
 * they differ, 0 if identical.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "cli_read.h"
#include "rewind.h"

struct side {
    uint64_t mark;
    const char *name;
};

static int show(void *p, const struct rw_event *e)
{
    const struct side *s = p;
    char line[1024];
    rw_event_describe(e, line, sizeof(line));
    printf("  %s %s%10" PRIu64 "  %s\n", s->name, e->index == s->mark ? ">" : " ", e->step, line);
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
    for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
        if (!strcmp(argv[i], "--files")) /* docs/nix.md: the collected files */
            return cmd_diff_files(argc, argv);
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
        if (c == 'c') {
            if (cli_read_step(optarg, &context) < 0)
                return cli_error(2, "--context needs a number: %s", optarg);
        } else if (c == 'j')
            json = 1;
        else if (c == 'h') {
            puts("usage: rewind diff RUN-A RUN-B [--context N] [--json]\n\nThe first event "
                 "where two runs part, with N events of context (default 3)\nfrom each side. "
                 "Exit 0 if identical, 1 if they differ.\n\n       rewind diff --files RUN-A RUN-B [--json]"
                 "\n\nThe files the runs kept with --collect that differ (see diff --files --help).");
            return 0;
        } else
            return cli_error(2, "see rewind diff --help");
    }
    if (argc - optind != 2)
        return cli_error(2, "diff needs two runs (see rewind diff --help)");
    struct rw_run_info a, b;
    if (cli_read_run(argv[optind], &a) < 0)
        return 2;
    rw_run_info_free(&a);
    if (cli_read_run(argv[optind + 1], &b) < 0)
        return 2;
    rw_run_info_free(&b);
    rw_home *h = cli_read_home();
    struct rw_diff d;
    struct rw_error err;
    if (rw_diff(h, a.dir, b.dir, &d, &err) < 0)
        return cli_error(2, "cannot read the traces of %s and %s", argv[optind], argv[optind + 1]);
    if (json) {
        printf("{\"identical\":%s,\"common_events\":%" PRIu64, d.identical ? "true" : "false",
               d.common);
        if (!d.identical)
            printf(",\"event\":%" PRIu64 ",\"step_a\":%" PRIu64 ",\"step_b\":%" PRIu64, d.event,
                   d.step_a, d.step_b);
        puts("}");
        return !d.identical;
    }
    if (d.identical) {
        printf("identical: %" PRIu64 " events\n", d.common);
        return 0;
    }
    printf("the runs part at event %" PRIu64 " (step %" PRIu64 " in A, %" PRIu64
           " in B), after %" PRIu64 " equal events\n",
           d.event, d.step_a, d.step_b, d.common);
    struct rw_event_query q = RW_EVENTS_ALL;
    q.first_index = d.event > context ? d.event - context : 0;
    q.last_index = d.event + context;
    struct side sa = {.mark = d.event, .name = "A"}, sb = {.mark = d.event, .name = "B"};
    struct rw_trace_status st;
    if (rw_events(h, a.dir, &q, show, &sa, &st, &err) < 0)
        cli_read_fail(-1, &err);
    else
        cli_read_torn(&st);
    printf("  --\n");
    if (rw_events(h, b.dir, &q, show, &sb, &st, &err) < 0)
        cli_read_fail(-1, &err);
    else
        cli_read_torn(&st);
    return 1;
}
