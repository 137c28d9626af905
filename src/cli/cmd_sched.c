/*
 * cmd_sched: `rewind sched RUN [--from S] [--to S] [--json]`: which thread
 * held the guest's CPU between steps, from the context switches the guest
 * kernel reported (rw_sched_switches in include/rewind.h). Text: one row
 * per stretch a thread held the CPU, one lane (column) per thread; JSON:
 * the threads, the stretches and the switches.
 *
 * A stretch is [a, b]: the thread made the port writes that were steps a..b.
 * A thread switched in and out again between two steps (S-1 and S) ran
 * without making a step: its stretch is shown at S-1 with '~' in its lane.
 *
 * Invariants:
 *  1. Stretches are in step order, do not overlap and cover [from, to]
 *     from the first step whose thread is known.
 *  2. Every thread in a stretch or a switch has a lane.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_read.h"
#include "rewind.h"

struct stretch {
    uint64_t from, to;
    uint32_t tid;
    int between; /* ran between steps from and from + 1 without making a step */
};

struct sw {
    uint64_t step;
    uint32_t prev, next;
};

struct lane {
    struct rw_sched_thread t;
    uint64_t steps, stretches;
};

struct state {
    uint64_t from, to;
    struct rw_sched_thread cur;
    int have_cur;
    uint64_t cur_from;
    struct stretch *st;
    size_t nst, capst;
    struct sw *sw;
    size_t nsw, capsw;
    struct lane *lane;
    size_t nlane, caplane;
    int oom;
};

static void *grow(void *v, size_t *cap, size_t n, size_t size)
{
    if (n < *cap)
        return v;
    size_t c = *cap ? *cap * 2 : 64;
    void *w = realloc(v, c * size);
    if (w)
        *cap = c;
    return w;
}

static struct lane *lane_of(struct state *s, const struct rw_sched_thread *t)
{
    for (size_t i = 0; i < s->nlane; i++)
        if (s->lane[i].t.tid == t->tid)
            return &s->lane[i];
    struct lane *l = grow(s->lane, &s->caplane, s->nlane, sizeof(*l));
    if (!l) {
        s->oom = 1;
        return NULL;
    }
    s->lane = l;
    l = &s->lane[s->nlane++];
    memset(l, 0, sizeof(*l));
    l->t = *t;
    return l;
}

static void add_stretch(struct state *s, const struct rw_sched_thread *t, uint64_t a, uint64_t b,
                        int between)
{
    struct lane *l = lane_of(s, t); /* invariant 2 */
    struct stretch *v = grow(s->st, &s->capst, s->nst, sizeof(*v));
    if (!l || !v) {
        s->oom = 1;
        return;
    }
    s->st = v;
    s->st[s->nst++] = (struct stretch){a, b, t->tid, between};
    l->stretches++;
    if (!between)
        l->steps += b - a + 1;
}

static int on_step(void *ctx, const struct rw_sched_step *x)
{
    struct state *s = ctx;
    for (size_t i = 0; i < x->n; i++) {
        struct sw *v = grow(s->sw, &s->capsw, s->nsw, sizeof(*v));
        if (!v) {
            s->oom = 1;
            return 1;
        }
        s->sw = v;
        s->sw[s->nsw++] = (struct sw){x->step, x->sw[i].prev.tid, x->sw[i].next.tid};
        lane_of(s, &x->sw[i].prev);
    }
    if (x->n == 0)
        return 0;
    /* The thread before ran through step - 1 (invariant 1). */
    if (s->have_cur && x->step > s->cur_from)
        add_stretch(s, &s->cur, s->cur_from, x->step - 1, 0);
    /* Threads switched in and out before this step made no step. */
    for (size_t i = 0; i + 1 < x->n; i++)
        add_stretch(s, &x->sw[i].next, x->step - 1, x->step - 1, 1);
    s->cur = x->sw[x->n - 1].next;
    s->have_cur = 1;
    s->cur_from = x->step;
    return s->oom;
}

static void print_json(const struct state *s, const char *id, const struct rw_sched_stats *stats)
{
    printf("{\"run\":\"%s\",\"from\":%" PRIu64 ",\"to\":%" PRIu64 ",\"switch_count\":%" PRIu64
           ",\"lost\":%" PRIu64 ",\n\"threads\":[",
           id, s->from, s->to, stats->switches, stats->lost);
    for (size_t i = 0; i < s->nlane; i++) {
        const struct lane *l = &s->lane[i];
        printf("%s{\"tid\":%u,\"pid\":%u,\"name\":", i ? "," : "", l->t.tid, l->t.pid);
        cli_read_json_str(l->t.name, strlen(l->t.name));
        printf(",\"steps\":%" PRIu64 ",\"stretches\":%" PRIu64 "}", l->steps, l->stretches);
    }
    printf("],\n\"stretches\":[");
    for (size_t i = 0; i < s->nst; i++)
        printf("%s{\"tid\":%u,\"from\":%" PRIu64 ",\"to\":%" PRIu64 ",\"between\":%s}",
               i ? ",\n" : "", s->st[i].tid, s->st[i].from, s->st[i].to,
               s->st[i].between ? "true" : "false");
    printf("],\n\"switches\":[");
    for (size_t i = 0; i < s->nsw; i++)
        printf("%s{\"step\":%" PRIu64 ",\"prev\":%u,\"next\":%u}", i ? ",\n" : "", s->sw[i].step,
               s->sw[i].prev, s->sw[i].next);
    printf("]}\n");
}

static void print_text(const struct state *s, const char *id, const struct rw_sched_stats *stats)
{
    printf("run %s, steps %" PRIu64 "..%" PRIu64 ": %" PRIu64 " context switches", id, s->from,
           s->to, stats->switches);
    if (stats->lost)
        printf(", %" PRIu64 " more lost (the guest's ring was full)", stats->lost);
    printf("\n\n%12s %12s ", "FROM", "TO");
    for (size_t i = 0; i < s->nlane; i++)
        printf(" %7u", s->lane[i].t.tid);
    printf("  THREAD\n");
    for (size_t k = 0; k < s->nst; k++) {
        const struct stretch *x = &s->st[k];
        const struct lane *l = NULL;
        printf("%12" PRIu64 " %12" PRIu64 " ", x->from, x->to);
        for (size_t i = 0; i < s->nlane; i++) {
            int here = s->lane[i].t.tid == x->tid;
            if (here)
                l = &s->lane[i];
            printf(" %7s", here ? (x->between ? "~" : "#") : "|");
        }
        if (l)
            printf("  %u (pid %u %s)", l->t.tid, l->t.pid, l->t.name);
        putchar('\n');
    }
    printf("\n# held the CPU at steps FROM..TO; ~ ran after step FROM without making a step\n");
}

int cmd_sched(int argc, char **argv)
{
    static const struct option lo[] = {{"json", no_argument, 0, 'j'},
                                       {"from", required_argument, 0, 'f'},
                                       {"to", required_argument, 0, 't'},
                                       {"help", no_argument, 0, 'h'},
                                       {0, 0, 0, 0}};
    struct state s = {.from = 0, .to = UINT64_MAX};
    int json = 0, c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
        if (c == 'j')
            json = 1;
        else if (c == 'f' && cli_read_step(optarg, &s.from) < 0)
            return cli_error(2, "--from must be a step number: %s", optarg);
        else if (c == 't' && cli_read_step(optarg, &s.to) < 0)
            return cli_error(2, "--to must be a step number: %s", optarg);
        else if (c == 'h') {
            puts("usage: rewind sched RUN [--from S] [--to S] [--json]\n\nWhich thread held "
                 "the guest's CPU between steps, from the context\nswitches the guest kernel "
                 "reported (one lane per thread; tid 0 is idle).\nA row FROM..TO: that thread "
                 "made the steps FROM..TO; '~': it ran after\nstep FROM and was switched out "
                 "before the next step.\n\n--from S, --to S  the steps to show (default: the "
                 "whole run)\n--json            threads, stretches and switches as JSON");
            return 0;
        } else if (c != 'f' && c != 't')
            return cli_error(2, "see rewind sched --help");
    }
    if (optind + 1 != argc)
        return cli_error(2, "sched needs RUN (see rewind sched --help)");
    if (s.from > s.to)
        return cli_error(2, "--from %" PRIu64 " is after --to %" PRIu64, s.from, s.to);
    struct rw_run_info run;
    if (cli_read_run(argv[optind], &run) < 0)
        return 1;
    if (s.to > run.steps)
        s.to = run.steps;
    if (s.from > s.to) {
        rw_run_info_free(&run);
        return cli_error(2, "--from %" PRIu64 " is past the run's last step %" PRIu64, s.from,
                         run.steps);
    }
    rw_home *h = cli_read_home();
    struct rw_error err;
    struct rw_trace_status st;
    int rc = 0;
    if (s.from > 0) {
        rc = rw_sched_running(h, run.dir, s.from - 1, &s.cur, NULL, &err);
        s.have_cur = rc == 1;
        s.cur_from = s.from;
    }
    struct rw_sched_stats stats = {0};
    if (rc >= 0)
        rc = rw_sched_switches(h, run.dir, s.from, s.to, on_step, &s, &stats, &st, &err);
    if (rc >= 0 && s.have_cur && !s.oom)
        add_stretch(&s, &s.cur, s.cur_from, s.to, 0);
    int code = 0;
    if (rc < 0)
        code = cli_read_fail(1, &err);
    else if (s.oom)
        code = cli_error(1, "out of memory");
    else {
        if (json)
            print_json(&s, run.id, &stats);
        else
            print_text(&s, run.id, &stats);
        cli_read_torn(&st);
    }
    rw_run_info_free(&run);
    free(s.st);
    free(s.sw);
    free(s.lane);
    return code;
}
