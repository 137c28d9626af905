/*
 * cmd_log: `rewind log RUN [STEP] [--steps] [--json]`: what the job wrote
 * to stdout and stderr up to STEP (default: the end), from the trace.
 * --steps prefixes each chunk with its step, pid (and node) and fd; --node
 * keeps one node's output.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "cli_read.h"
#include "rewind.h"

struct q {
    uint64_t upto;
    int steps, json, n;
    const char *node; /* --node: only this node's output ("job": the job's, outside every node) */
};

static int show(void *ctx, const struct rw_event *e)
{
    struct q *q = ctx;
    if (q->node && strcmp(q->node, e->node ? e->node : "job"))
        return 0;
    if (q->json) {
        printf("%s{\"step\":%llu,\"pid\":%u,\"fd\":%llu,", q->n ? ",\n" : "",
               (unsigned long long)e->step, e->pid, (unsigned long long)e->aux);
        if (e->node)
            printf("\"node\":\"%s\",", e->node);
        fputs("\"text\":", stdout);
        cli_read_json_str((const char *)e->payload, e->payload_len);
        putchar('}');
    } else {
        if (q->steps)
            printf("[%llu %u %s%s%s] ", (unsigned long long)e->step, e->pid, e->node ? e->node : "",
                   e->node ? " " : "", e->aux == 2 ? "err" : "out");
        fwrite(e->payload, 1, e->payload_len, stdout);
        if (q->steps && (e->payload_len == 0 || e->payload[e->payload_len - 1] != '\n'))
            putchar('\n');
    }
    q->n++;
    return 0;
}

static int read_log(rw_home *h, const char *id, void *ctx, struct rw_trace_status *st,
                    struct rw_error *err)
{
    const struct q *q = ctx;
    return rw_log(h, id, q->upto, show, ctx, st, err);
}

int cmd_log(int argc, char **argv)
{
    static const struct option lo[] = {{"steps", no_argument, 0, 's'},
                                       {"json", no_argument, 0, 'j'},
                                       {"node", required_argument, 0, 'n'},
                                       {"help", no_argument, 0, 'h'},
                                       {0, 0, 0, 0}};
    struct q q = {.upto = UINT64_MAX};
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
        if (c == 's')
            q.steps = 1;
        else if (c == 'j')
            q.json = 1;
        else if (c == 'n')
            q.node = optarg;
        else if (c == 'h') {
            puts("usage: rewind log RUN [STEP] [--steps] [--node NAME] [--json]\n\nThe job's "
                 "output (stdout and stderr, in order) up to STEP, from the trace.\n--steps "
                 "prefixes each chunk with [step pid out|err] ([step pid node out|err] for a\n"
                 "node's process).\n--node NAME: only what node NAME's processes wrote ('job': "
                 "the job's, outside\nevery node; docs/faults.md).");
            return 0;
        } else
            return cli_error(2, "see rewind log --help");
    }
    if (optind >= argc || argc - optind > 2)
        return cli_error(2, "log needs RUN [STEP] (see rewind log --help)");
    if (argc - optind == 2 && cli_read_step(argv[optind + 1], &q.upto) < 0)
        return cli_error(2, "STEP must be a step number: %s", argv[optind + 1]);
    return cli_read_trace(argv[optind], q.json, NULL, read_log, &q);
}
