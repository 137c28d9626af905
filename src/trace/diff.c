/*
 * diff: where two runs part (rw_diff and rw_diff_states in
 * include/rewind.h): the first differing trace event (compare.h), and the
 * first differing entry of their state logs.
 *
 * State log format ("states" in a run made with --state-log),
 * little-endian, a sequence of 16-byte entries:
 *   u64 step | bit 63 set for a RAM checkpoint, clear for registers
 *   u64 hash of the registers or of RAM at that step
 *
 * Invariants:
 *  1. Both logs are read in lockstep; the comparison stops at the first
 *     differing step word (the runs logged different steps) or at the first
 *     differing RAM checkpoint.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "util/apierr.h"
#include "util/homepath.h"
#include "rewind.h"
#include "trace/compare.h"
#include "util/bytes.h"
#include "util/check.h"

#define STATES_RAM (1ull << 63)

int rw_diff(rw_home *h, const char *a, const char *b, struct rw_diff *d, struct rw_error *err)
{
    RW_ASSERT(h && a && b && d);
    char ta[PATH_MAX], tb[PATH_MAX];
    memset(d, 0, sizeof(*d));
    if (home_path(ta, sizeof(ta), rw_home_path(h), HOME_RUNS, a, "trace") < 0 ||
        home_path(tb, sizeof(tb), rw_home_path(h), HOME_RUNS, b, "trace") < 0)
        return apierr_set(err, RW_EUSAGE, "missing");
    struct trace_difference t;
    int rc = compare_traces(ta, tb, &t);
    if (rc < 0)
        return apierr_set(err, RW_EINTERNAL, "%s", rc == -2 ? "not a trace file" : "missing");
    d->identical = !t.differ;
    d->common = t.common;
    d->event = t.index;
    d->step_a = t.step_a;
    d->step_b = t.step_b;
    RW_ASSERT(d->identical || d->event == d->common);
    return 0;
}

static FILE *open_states(rw_home *h, const char *id)
{
    char p[PATH_MAX];
    if (home_path(p, sizeof(p), rw_home_path(h), HOME_RUNS, id, "states") < 0)
        return NULL;
    return fopen(p, "rb");
}

int rw_diff_states(rw_home *h, const char *a, const char *b, struct rw_state_diff *d)
{
    memset(d, 0, sizeof(*d));
    FILE *fa = open_states(h, a), *fb = open_states(h, b);
    if (!fa || !fb) {
        if (fa)
            fclose(fa);
        if (fb)
            fclose(fb);
        return 0;
    }
    d->recorded = 1;
    uint8_t ea[16], eb[16];
    while (fread(ea, sizeof(ea), 1, fa) == 1 && fread(eb, sizeof(eb), 1, fb) == 1) {
        uint64_t wa = bytes_get_u64(ea), wb = bytes_get_u64(eb);
        uint64_t step = wa & ~STATES_RAM;
        int ram = (wa & STATES_RAM) != 0;
        if (wa != wb) {
            d->regs_step = d->regs_step ? d->regs_step : step;
            break;
        }
        if (bytes_get_u64(ea + 8) == bytes_get_u64(eb + 8)) {
            if (ram)
                d->ram_equal_step = step;
            continue;
        }
        if (ram && !d->ram_step)
            d->ram_step = step;
        if (!ram && !d->regs_step)
            d->regs_step = step;
        if (d->ram_step)
            break;
    }
    fclose(fa);
    fclose(fb);
    return 0;
}
