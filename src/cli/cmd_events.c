/*
 * cmd_events: `rewind events RUN [--from S] [--to S] [--kind K] [--json]`:
 * the run's events with their steps, from the trace alone.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/cli_read.h"
#include "rewind.h"

struct out {
    int json, n;
};

static int show(void *ctx, const struct rw_event *e)
{
    struct out *o = ctx;
    if (o->json) {
        printf("%s{\"step\":%llu,\"kind\":\"%s\",\"pid\":%u,\"tid\":%u,\"aux\":%llu,\"flags\":%u,"
               "\"payload\":",
               o->n ? ",\n" : "", (unsigned long long)e->step, e->kind_name, e->pid, e->tid,
               (unsigned long long)e->aux, e->flags);
        cli_read_json_str((const char *)e->payload, e->payload_len);
        putchar('}');
    } else {
        char line[1024];
        rw_event_describe(e, line, sizeof(line));
        printf("%10llu  %s\n", (unsigned long long)e->step, line);
    }
    o->n++;
    return 0;
}

int cmd_events(int argc, char **argv)
{
    static const struct option lo[] = {
        {"from", required_argument, 0, 'f'}, {"to", required_argument, 0, 't'},
        {"kind", required_argument, 0, 'k'}, {"json", no_argument, 0, 'j'},
        {"help", no_argument, 0, 'h'},       {0, 0, 0, 0}};
    struct rw_event_query q = RW_EVENTS_ALL;
    struct out o = {0};
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
        switch (c) {
        case 'f':
            if (cli_read_step(optarg, &q.from) < 0)
                return cli_error(2, "--from needs a step number: %s", optarg);
            break;
        case 't':
            if (cli_read_step(optarg, &q.to) < 0)
                return cli_error(2, "--to needs a step number: %s", optarg);
            break;
        case 'k':
            if (!(q.kind = rw_event_kind(optarg)))
                return cli_error(2,
                                 "unknown kind '%s' (console output exec fork exit signal "
                                 "open unlink rename mark assert init)",
                                 optarg);
            break;
        case 'j':
            o.json = 1;
            break;
        case 'h':
            puts("usage: rewind events RUN [--from STEP] [--to STEP] [--kind KIND] [--json]\n\n"
                 "The run's events in step order, from its trace. KIND is one of console,\n"
                 "output, exec, fork, exit, signal, open, unlink, rename, mark, assert, init.");
            return 0;
        default:
            return cli_error(2, "see rewind events --help");
        }
    }
    if (optind != argc - 1)
        return cli_error(2, "events needs one run (see rewind events --help)");
    struct rw_run_info run;
    if (cli_read_run(argv[optind], &run) < 0)
        return 1;
    rw_run_info_free(&run);
    struct rw_trace_status st;
    struct rw_error err;
    if (o.json)
        putchar('[');
    int rc = rw_events(cli_read_home(), run.dir, &q, show, &o, &st, &err);
    if (rc < 0)
        cli_read_fail(1, &err);
    else
        cli_read_torn(&st);
    if (o.json)
        puts("]");
    return rc < 0 ? 1 : 0;
}
