/*
 * limits: see limits.h.
 */
#include "input/limits.h"

#include <stdio.h>
#include <string.h>

#include "rewind.h"
#include "util/check.h"

uint64_t run_limits_bytes(uint64_t mb)
{
    return mb > (UINT64_MAX >> 20) ? UINT64_MAX : mb << 20;
}

void run_limits_init(struct run_limits *l, uint64_t max_trace_mb, uint64_t max_disk_mb)
{
    memset(l, 0, sizeof(*l));
    l->max_trace = run_limits_bytes(max_trace_mb ? max_trace_mb : rw_defaults.max_trace_mb);
    l->max_disk = run_limits_bytes(max_disk_mb ? max_disk_mb : rw_defaults.max_disk_mb);
    RW_ASSERT(l->max_trace && l->max_disk); /* invariant 1 */
}

static uint64_t add_sat(uint64_t a, uint64_t b)
{
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static int check(struct run_limits *l)
{
    if (l->hit) /* invariant 2: the first one stays */
        return 0;
    uint64_t disk = add_sat(add_sat(l->trace_bytes, l->kf_bytes), l->states_bytes);
    if (l->kf_unsure && add_sat(disk, l->kf_unsure) > l->max_disk) { /* invariant 3 */
        uint64_t exact = 0;
        if (l->settle && l->settle(l->settle_ctx, &exact) == 0) {
            RW_ASSERT(exact >= l->kf_bytes && exact <= l->kf_bytes + l->kf_unsure);
            l->kf_bytes = exact;
        } else {
            l->kf_bytes = add_sat(l->kf_bytes, l->kf_unsure);
        }
        l->kf_unsure = 0;
        disk = add_sat(add_sat(l->trace_bytes, l->kf_bytes), l->states_bytes);
    }
    if (l->trace_bytes > l->max_trace)
        l->hit = "trace";
    else if (disk > l->max_disk)
        l->hit = "disk";
    return l->hit != NULL;
}

int run_limits_trace(struct run_limits *l, uint32_t reclen)
{
    uint64_t entry = (16 + (uint64_t)reclen + 7) & ~(uint64_t)7; /* as the trace file holds it */
    l->trace_bytes = l->trace_bytes > UINT64_MAX - entry ? UINT64_MAX : l->trace_bytes + entry;
    return check(l);
}

int run_limits_keyframes(struct run_limits *l, uint64_t bytes)
{
    RW_ASSERT(bytes >= l->kf_bytes); /* invariant 2 */
    l->kf_bytes = bytes;
    return check(l);
}

int run_limits_keyframes_unsure(struct run_limits *l, uint64_t known, uint64_t unsure)
{
    RW_ASSERT(known >= l->kf_bytes); /* invariant 2 */
    l->kf_bytes = known;
    l->kf_unsure = unsure;
    return check(l);
}

void run_limits_settler(struct run_limits *l, int (*settle)(void *ctx, uint64_t *kf_bytes),
                        void *ctx)
{
    l->settle = settle;
    l->settle_ctx = ctx;
}

int run_limits_states(struct run_limits *l, uint64_t bytes)
{
    l->states_bytes = l->states_bytes > UINT64_MAX - bytes ? UINT64_MAX : l->states_bytes + bytes;
    return check(l);
}

static void mib(uint64_t bytes, char *out, size_t n)
{
    if (bytes == UINT64_MAX)
        snprintf(out, n, "unlimited");
    else
        snprintf(out, n, "%llu MiB", (unsigned long long)(bytes >> 20));
}

void run_limits_message(const struct run_limits *l, uint64_t step, char *out, size_t n)
{
    RW_ASSERT(l->hit);
    char cap[40];
    int trace = !strcmp(l->hit, "trace");
    char states[64] = "";
    if (l->states_bytes)
        snprintf(states, sizeof(states), ", %llu of state log",
                 (unsigned long long)l->states_bytes);
    mib(trace ? l->max_trace : l->max_disk, cap, sizeof(cap));
    snprintf(out, n,
             "%s limit of %s (--max-%s) hit at step %llu: %llu bytes of trace, %llu of "
             "keyframes and pages%s",
             l->hit, cap, l->hit, (unsigned long long)step, (unsigned long long)l->trace_bytes,
             (unsigned long long)l->kf_bytes, states);
}
