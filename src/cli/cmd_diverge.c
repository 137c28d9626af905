/*
 * cmd_diverge: `rewind diverge A B`: where two runs that should be equal
 * part, the monitor-debugging tool (docs/determinism.md): first the first
 * differing trace event and its step; then, if both runs were made with
 * --state-log, the first step whose register hash differs and the last and
 * first RAM-hash checkpoints around it.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "cli_read.h"
#include "rewind.h"

static int describe(void *ctx, const struct rw_event *e)
{
    rw_event_describe(e, ctx, 600);
    return 1;
}

/* The event at index of run id in words, or "(trace ended)". */
static void event_at(rw_home *h, const char *id, uint64_t index, char out[600])
{
    struct rw_event_query q = RW_EVENTS_ALL;
    q.first_index = q.last_index = index;
    snprintf(out, 600, "(trace ended)");
    rw_events(h, id, &q, describe, out, NULL, NULL);
}

static void print_states(rw_home *h, const char *a, const char *b)
{
    struct rw_state_diff s;
    rw_diff_states(h, a, b, &s);
    if (!s.recorded) {
        printf("state hashes: not recorded (run both with --state-log K to compare "
               "registers and RAM)\n");
        return;
    }
    if (!s.regs_step && !s.ram_step) {
        printf("state hashes: equal over every step both runs logged\n");
        return;
    }
    if (s.regs_step)
        printf("registers first differ at step %" PRIu64 "\n", s.regs_step);
    if (s.ram_step)
        printf("RAM equal at step %" PRIu64 ", differs at step %" PRIu64 "\n", s.ram_equal_step,
               s.ram_step);
}

int cmd_diverge(int argc, char **argv)
{
    if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        puts("usage: rewind diverge RUN-A RUN-B\n\nFind where two runs that should be "
             "identical part: the first differing\ntrace event and its step; with "
             "--state-log on both runs, also the first\nstep whose register hash differs "
             "and the RAM checkpoints around it.\nExit 0 if identical, 1 if they part.");
        return 0;
    }
    if (argc != 3)
        return cli_error(2, "diverge needs two runs (see rewind diverge --help)");
    rw_home *h = cli_read_home();
    if (!h)
        return 1;
    char a[RW_ID_MAX], b[RW_ID_MAX];
    struct rw_error err;
    if (rw_resolve(h, argv[1], a, &err) < 0 || rw_resolve(h, argv[2], b, &err) < 0)
        return cli_read_fail(2, &err);
    struct rw_diff d;
    if (rw_diff(h, a, b, &d, &err) < 0)
        return cli_error(1, "cannot read the traces of %s and %s (%s)", argv[1], argv[2], err.msg);
    if (d.identical) {
        printf("identical: %" PRIu64 " events\n", d.common);
        print_states(h, a, b);
        return 0;
    }
    char xa[600], xb[600];
    event_at(h, a, d.event, xa);
    event_at(h, b, d.event, xb);
    printf("traces part at event %" PRIu64 " after %" PRIu64 " equal events\n", d.event, d.common);
    printf("  %s: step %" PRIu64 ": %s\n", argv[1], d.step_a, xa);
    printf("  %s: step %" PRIu64 ": %s\n", argv[2], d.step_b, xb);
    print_states(h, a, b);
    return 1;
}
