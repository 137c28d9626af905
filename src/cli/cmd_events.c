/*
 * cmd_events: `rewind events RUN [--from S] [--to S] [--kind K] [--json]`:
 * the run's events with their steps, from the trace alone.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "trace/describe.h"
#include "cli/cli.h"
#include "cli/cliutil.h"

struct q {
    uint64_t from, to;
    unsigned kind;
    int json, n;
};

static int show(void *ctx, const struct trace_entry *e)
{
    struct q *q = ctx;
    if (e->step < q->from)
        return 0;
    if (e->step > q->to)
        return 1;
    if (q->kind && e->rec.kind != q->kind)
        return 0;
    if (q->json) {
        printf("%s{\"step\":%llu,\"kind\":\"%s\",\"pid\":%u,\"tid\":%u,\"aux\":%llu,\"flags\":%u,"
               "\"payload\":",
               q->n ? ",\n" : "", (unsigned long long)e->step, describe_kind(e->rec.kind),
               e->rec.pid, e->rec.tid, (unsigned long long)e->rec.aux, e->rec.flags);
        cli_json_str((const char *)e->payload, e->payload_len);
        putchar('}');
    } else {
        char line[1024];
        describe_entry(e, line, sizeof(line));
        printf("%10llu  %s\n", (unsigned long long)e->step, line);
    }
    q->n++;
    return 0;
}

int cmd_events(int argc, char **argv)
{
    static const struct option lo[] = {{"from", required_argument, 0, 'f'},
                                       {"to", required_argument, 0, 't'},
                                       {"kind", required_argument, 0, 'k'},
                                       {"json", no_argument, 0, 'j'},
                                       {"help", no_argument, 0, 'h'},
                                       {0, 0, 0, 0}};
    struct q q = {.to = UINT64_MAX};
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
        switch (c) {
        case 'f':
            if (cli_parse_step(optarg, &q.from) < 0)
                return cli_error(2, "--from needs a step number: %s", optarg);
            break;
        case 't':
            if (cli_parse_step(optarg, &q.to) < 0)
                return cli_error(2, "--to needs a step number: %s", optarg);
            break;
        case 'k':
            if (!(q.kind = describe_kind_number(optarg)))
                return cli_error(2, "unknown kind '%s' (console output exec fork exit signal "
                                    "open unlink rename mark assert init)", optarg);
            break;
        case 'j':
            q.json = 1;
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
    char dir[4096];
    json_t *m = cli_load_run(argv[optind], dir, sizeof(dir));
    if (!m)
        return 1;
    json_decref(m);
    if (q.json)
        putchar('[');
    int rc = cli_each_entry(dir, show, &q);
    if (q.json)
        puts("]");
    return rc < 0 ? 1 : 0;
}
