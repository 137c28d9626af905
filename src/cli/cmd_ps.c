/*
 * cmd_ps: `rewind ps RUN [STEP] [--ended] [--json]`: the processes alive at
 * STEP (default: the end), as a tree under init, rebuilt from the trace
 * (rw_ps in include/rewind.h); with --ended, the processes that ended by
 * STEP and how, in words (rw_wait_status_text), from their exit events.
 * The process whose thread held the CPU at STEP (rw_sched_running) is
 * marked '*' (JSON: "ran_tid"), and a last line names that thread.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "cli_read.h"
#include "rewind.h"

struct out {
    uint64_t upto;
    int json, n, ended;
    int ran; /* 1: thread `running` held the CPU at upto */
    struct rw_sched_thread running;
};

static int show(void *ctx, const struct rw_proc *p)
{
    struct out *o = ctx;
    int ran = o->ran && o->running.tid && o->running.pid == p->pid;
    if (o->json) {
        printf("%s{\"pid\":%u,\"ppid\":%u,\"threads\":%d,\"argv\":", o->n++ ? ",\n" : "", p->pid,
               p->ppid, p->threads);
        cli_read_json_str(p->argv, strlen(p->argv));
        if (p->node[0])
            printf(",\"node\":\"%s\"", p->node); /* [a-z0-9-] only (input/nodes.h) */
        if (ran)
            printf(",\"ran_tid\":%u", o->running.tid);
        putchar('}');
    } else {
        printf("%c%7u %7u %7d  %*s%s%s%s%s\n", ran ? '*' : ' ', p->pid, p->ppid, p->threads,
               2 * p->depth, "", p->node[0] ? "[" : "", p->node, p->node[0] ? "] " : "", p->argv);
    }
    return 0;
}

/* One ended process: the exit event of its leader (a thread's exit is not
 * the end of its process). */
static int show_end(void *ctx, const struct rw_event *e)
{
    struct out *o = ctx;
    if (e->tid != e->pid)
        return 0;
    char how[64];
    rw_wait_status_text(e->aux, how, sizeof(how));
    if (o->json) {
        printf("%s{\"pid\":%u,\"step\":%llu,\"status\":%llu,\"status_text\":\"%s\",\"comm\":",
               o->n++ ? ",\n" : "", e->pid, (unsigned long long)e->step, (unsigned long long)e->aux,
               how);
        cli_read_json_str((const char *)e->payload, e->payload_len);
        putchar('}');
    } else {
        printf("%7u %10llu  %-28s %.*s\n", e->pid, (unsigned long long)e->step, how,
               (int)e->payload_len, (const char *)e->payload);
    }
    return 0;
}

static int read_ps(rw_home *h, const char *id, void *ctx, struct rw_trace_status *st,
                   struct rw_error *err)
{
    struct out *o = ctx;
    if (o->ended) {
        struct rw_event_query q = RW_EVENTS_ALL;
        q.to = o->upto;
        q.kind = rw_event_kind("exit");
        return rw_events(h, id, &q, show_end, o, st, err);
    }
    int r = rw_sched_running(h, id, o->upto, &o->running, NULL, err);
    if (r < 0)
        return r;
    o->ran = r;
    if (rw_ps(h, id, o->upto, show, o, st, err) < 0)
        return -1;
    if (o->json)
        return 0;
    if (!o->ran)
        printf("(the trace reports no context switch by then: no thread is marked)\n");
    else if (o->running.tid == 0)
        printf("* held the CPU: nothing (the idle task)\n");
    else
        printf("* held the CPU: thread %u of pid %u (%s)\n", o->running.tid, o->running.pid,
               o->running.name);
    return 0;
}

int cmd_ps(int argc, char **argv)
{
    static const struct option lo[] = {{"json", no_argument, 0, 'j'},
                                       {"ended", no_argument, 0, 'e'},
                                       {"help", no_argument, 0, 'h'},
                                       {0, 0, 0, 0}};
    struct out o = {.upto = UINT64_MAX};
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
        if (c == 'j')
            o.json = 1;
        else if (c == 'e')
            o.ended = 1;
        else if (c == 'h') {
            puts("usage: rewind ps RUN [STEP] [--ended] [--json]\n\nThe process tree alive at STEP "
                 "(default: the end of the run): pid, ppid,\nthreads and argv, rebuilt from "
                 "the trace's fork, exec and exit events.\nThe process whose thread held the CPU "
                 "at STEP (made that step) is\nmarked '*' (JSON: ran_tid), and a last line "
                 "names the thread\n(rewind sched shows them all).\n\n--ended  the processes that "
                 "ended by STEP instead: pid, the step of\n         their end, how they ended "
                 "(\"exited 1\", \"killed by SIGSEGV (core)\")\n         and their command "
                 "name.");
            return 0;
        } else
            return cli_error(2, "see rewind ps --help");
    }
    if (optind >= argc || argc - optind > 2)
        return cli_error(2, "ps needs RUN [STEP] (see rewind ps --help)");
    if (argc - optind == 2 && cli_read_step(argv[optind + 1], &o.upto) < 0)
        return cli_error(2, "STEP must be a step number: %s", argv[optind + 1]);
    char head[80];
    if (o.ended)
        snprintf(head, sizeof(head), "%7s %10s  %-28s %s\n", "PID", "STEP", "END", "COMM");
    else
        snprintf(head, sizeof(head), " %7s %7s %7s  %s\n", "PID", "PPID", "THREADS", "ARGV");
    return cli_read_trace(argv[optind], o.json, head, read_ps, &o);
}
