/*
 * cmd_log: `rewind log RUN [STEP] [--steps] [--json]`: what the job wrote
 * to stdout and stderr up to STEP (default: the end), from the trace.
 * --steps prefixes each chunk with its step, pid and fd.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/cliutil.h"

struct q {
    uint64_t upto;
    int steps, json, n;
};

static int show(void *ctx, const struct trace_entry *e)
{
    struct q *q = ctx;
    if (e->step > q->upto)
        return 1;
    if (e->rec.kind != REWIND_REC_OUTPUT)
        return 0;
    if (q->json) {
        printf("%s{\"step\":%llu,\"pid\":%u,\"fd\":%llu,\"text\":", q->n ? ",\n" : "",
               (unsigned long long)e->step, e->rec.pid, (unsigned long long)e->rec.aux);
        cli_json_str((const char *)e->payload, e->payload_len);
        putchar('}');
    } else {
        if (q->steps)
            printf("[%llu %u %s] ", (unsigned long long)e->step, e->rec.pid,
                   e->rec.aux == 2 ? "err" : "out");
        fwrite(e->payload, 1, e->payload_len, stdout);
        if (q->steps && (e->payload_len == 0 || e->payload[e->payload_len - 1] != '\n'))
            putchar('\n');
    }
    q->n++;
    return 0;
}

int cmd_log(int argc, char **argv)
{
    static const struct option lo[] = {{"steps", no_argument, 0, 's'},
                                       {"json", no_argument, 0, 'j'},
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
        else if (c == 'h') {
            puts("usage: rewind log RUN [STEP] [--steps] [--json]\n\nThe job's output (stdout "
                 "and stderr, in order) up to STEP, from the trace.\n--steps prefixes each "
                 "chunk with [step pid out|err].");
            return 0;
        } else
            return cli_error(2, "see rewind log --help");
    }
    if (optind >= argc || argc - optind > 2)
        return cli_error(2, "log needs RUN [STEP] (see rewind log --help)");
    if (argc - optind == 2 && cli_parse_step(argv[optind + 1], &q.upto) < 0)
        return cli_error(2, "STEP must be a step number: %s", argv[optind + 1]);
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
