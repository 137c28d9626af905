/*
 * cmd_events: `rewind events RUN [--from S] [--to S] [--kind K] [--json]`:
 * the run's events with their steps, from the trace alone.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "cli_read.h"
#include "rewind.h"

struct out {
    struct rw_event_query q;
    int json, n;
};

/* A split's first side (bit i - 1: node i) as ,"split":{"side":[1,3]}. */
static void split_side_json(uint32_t side)
{
    const char *sep = "";
    printf(",\"split\":{\"side\":[");
    for (unsigned i = 0; i < 32; i++)
        if ((side >> i) & 1) {
            printf("%s%u", sep, i + 1);
            sep = ",";
        }
    printf("]}");
}

static int show(void *ctx, const struct rw_event *e)
{
    struct out *o = ctx;
    if (o->json) {
        printf("%s{\"step\":%llu,\"kind\":\"%s\",\"pid\":%u,\"tid\":%u,\"aux\":%llu,\"flags\":%u,"
               "\"payload\":",
               o->n ? ",\n" : "", (unsigned long long)e->step, e->kind_name, e->pid, e->tid,
               (unsigned long long)e->aux, e->flags);
        cli_read_json_str((const char *)e->payload, e->payload_len);
        if (e->node)
            printf(",\"node\":\"%s\"", e->node);
        if (e->kind == (unsigned)rw_event_kind("exit")) { /* aux stays the raw wait status */
            char how[64];
            rw_wait_status_text(e->aux, how, sizeof(how));
            printf(",\"status_text\":\"%s\"", how);
        }
        struct rw_fault_event f; /* docs/faults.md: a net fault's link, a disk fault's calls,
                                    a split's first side, a kill's or a power cut's restart,
                                    the writes a power cut undid */
        if (rw_event_fault(e, &f) == 0) {
            if (f.net_mode)
                printf(",\"net\":{\"mode\":\"%s\",\"percent\":%u,\"delay_ms\":%u}", f.net_mode,
                       f.net_percent, f.net_delay_ms);
            if (f.disk_mode) /* a constant name: "eio", "enospc", "sync" */
                printf(",\"disk\":{\"mode\":\"%s\"}", f.disk_mode);
            if (f.split_side) /* its nodes by number, lowest first */
                split_side_json(f.split_side);
            if ((!strcmp(f.kind, "kill") || !strcmp(f.kind, "power")) && f.ns)
                printf(",\"restart_ns\":%llu", (unsigned long long)f.ns);
            if (!strcmp(f.kind, "lost"))
                printf(",\"lost\":{\"bytes\":%llu,\"files\":%u,\"not_undone\":%u}",
                       (unsigned long long)f.lost_bytes, f.lost_files, f.lost_kept);
            if (!strcmp(f.kind, "restart"))
                printf(",\"leader_pid\":%u", f.leader_pid);
        }
        putchar('}');
    } else {
        char line[1024];
        rw_event_describe(e, line, sizeof(line));
        printf("%10llu  %s%s%s%s\n", (unsigned long long)e->step, e->node ? "[" : "",
               e->node ? e->node : "", e->node ? "] " : "", line);
    }
    o->n++;
    return 0;
}

static int read_events(rw_home *h, const char *id, void *ctx, struct rw_trace_status *st,
                       struct rw_error *err)
{
    struct out *o = ctx;
    return rw_events(h, id, &o->q, show, o, st, err);
}

int cmd_events(int argc, char **argv)
{
    static const struct option lo[] = {
        {"from", required_argument, 0, 'f'}, {"to", required_argument, 0, 't'},
        {"kind", required_argument, 0, 'k'}, {"json", no_argument, 0, 'j'},
        {"help", no_argument, 0, 'h'},       {0, 0, 0, 0}};
    struct out o = {.q = RW_EVENTS_ALL};
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
        switch (c) {
        case 'f':
            if (cli_read_step(optarg, &o.q.from) < 0)
                return cli_error(2, "--from needs a step number: %s", optarg);
            break;
        case 't':
            if (cli_read_step(optarg, &o.q.to) < 0)
                return cli_error(2, "--to needs a step number: %s", optarg);
            break;
        case 'k':
            if (!(o.q.kind = rw_event_kind(optarg)))
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
                 "output, exec, fork, exit, signal, open, unlink, rename, mark, assert, init,\n"
                 "sched, write, access (memory-access points: --preempt memory).");
            return 0;
        default:
            return cli_error(2, "see rewind events --help");
        }
    }
    if (optind != argc - 1)
        return cli_error(2, "events needs one run (see rewind events --help)");
    return cli_read_trace(argv[optind], o.json, NULL, read_events, &o);
}
