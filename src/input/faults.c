/*
 * faults: see faults.h. Draws share sched.c's hash (splitmix64 over seed,
 * schedule, horizon, step and a salt); the salt 4 is the faults' own.
 */
#include "input/faults.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "input/nodes.h"
#include "util/check.h"

_Static_assert(NODES_MAX == REWIND_NODES_MAX, "the spec's nodes are the kernel's nodes");

static const char *const kind_names[] = {
    [REWIND_FAULT_KILL] = "kill",         [REWIND_FAULT_PAUSE] = "pause",
    [REWIND_FAULT_CONTINUE] = "continue", [REWIND_FAULT_PARTITION] = "partition",
    [REWIND_FAULT_HEAL] = "heal",         [REWIND_FAULT_CLOCK] = "clock",
};

/* The kinds a schedule can inject, in the spec's order. */
static const uint32_t injectable[] = {FAULT_KILL, FAULT_PAUSE, FAULT_PARTITION, FAULT_CLOCK};
#define NINJECT (sizeof(injectable) / sizeof(injectable[0]))

/* A clock fault's step, signed in ns, as its size. */
static long long clock_size(uint64_t ns)
{
    return llabs((long long)(int64_t)ns);
}

const char *faults_kind_name(uint32_t kind)
{
    if (kind >= sizeof(kind_names) / sizeof(kind_names[0]))
        return NULL;
    return kind_names[kind];
}

int faults_parse(const char *list, uint32_t *kinds, char *why, size_t why_len)
{
    *kinds = 0;
    if (!strcmp(list, "all")) {
        *kinds = FAULT_KINDS_ALL;
        return 0;
    }
    const char *p = list;
    for (;;) {
        size_t n = strcspn(p, ",");
        uint32_t bit = 0;
        for (size_t i = 0; i < NINJECT; i++) {
            uint32_t k = injectable[i];
            if (n == strlen(kind_names[k]) && !strncmp(p, kind_names[k], n))
                bit = 1u << k;
        }
        if (!bit) {
            snprintf(why, why_len,
                     "--faults takes a list of kill, pause, partition, clock (or all): '%.*s'",
                     (int)(n > 40 ? 40 : n), p);
            return -1;
        }
        if (*kinds & bit) {
            snprintf(why, why_len, "--faults names %.*s twice", (int)n, p);
            return -1;
        }
        *kinds |= bit;
        if (!p[n])
            return 0;
        p += n + 1;
    }
}

void faults_format(uint32_t kinds, char *buf, size_t len)
{
    size_t o = 0;
    buf[0] = 0;
    for (size_t i = 0; i < NINJECT; i++)
        if (kinds & (1u << injectable[i])) {
            int w = snprintf(buf + o, len - o, "%s%s", o ? "," : "", kind_names[injectable[i]]);
            if (w < 0 || (size_t)w >= len - o)
                return;
            o += (size_t)w;
        }
}

struct fault_decision faults_decide(const struct sched *s, uint64_t step)
{
    struct fault_decision d = {FAULT_NONE, 0, 0};
    uint32_t kinds = s->fault_kinds & FAULT_KINDS_ALL;
    if (!kinds || !s->fault_nodes || !s->fault_rate)
        return d;
    for (unsigned i = 0; i < s->n; i++) {
        const struct sched_segment *g = &s->seg[i];
        if (step < g->from || step >= g->until || g->schedule == 0)
            continue; /* invariant 1 */
        uint64_t h = g->horizon ? g->horizon : 1;
        uint64_t r = sched_h5(s->seed, g->schedule, g->horizon, step, 4);
        if (r % h >= s->fault_rate) /* invariant 3 */
            return d;
        uint64_t r2 = sched_mix(r);
        uint32_t n = (uint32_t)__builtin_popcount(kinds), pick = (uint32_t)(r2 % n);
        for (size_t i = 0; i < NINJECT; i++)
            if ((kinds & (1u << injectable[i])) && pick-- == 0)
                d.kind = (enum fault_kind)injectable[i];
        d.node = 1 + (uint32_t)((r2 >> 16) % s->fault_nodes);
        if (d.kind == FAULT_PAUSE || d.kind == FAULT_PARTITION) /* 10 ms .. 1.28 s, 8 octaves */
            d.ns = FAULT_PAUSE_MIN_NS << ((r2 >> 32) % 8);
        if (d.kind == FAULT_CLOCK) { /* 1 s .. 128 s, 8 octaves, forward or back */
            uint64_t m = FAULT_CLOCK_MIN_NS << ((r2 >> 32) % 8);
            d.ns = (r2 >> 40) & 1 ? (uint64_t)(-(int64_t)m) : m;
        }
        RW_ASSERT(d.kind != FAULT_NONE && d.node >= 1 && d.node <= s->fault_nodes); /* 2 */
        RW_ASSERT(d.kind == FAULT_KILL || d.kind == FAULT_CLOCK ||
                  (d.ns >= FAULT_PAUSE_MIN_NS && d.ns <= FAULT_PAUSE_MAX_NS)); /* 2 */
        RW_ASSERT(d.kind != FAULT_CLOCK ||
                  (clock_size(d.ns) >= (long long)FAULT_CLOCK_MIN_NS &&
                   clock_size(d.ns) <= (long long)FAULT_CLOCK_MAX_NS)); /* 2 */
        return d;
    }
    return d;
}

void faults_describe(const struct fault_decision *d, const char *node_name, char *buf, size_t len)
{
    char nm[48];
    if (node_name)
        snprintf(nm, sizeof(nm), "%s", node_name);
    else
        snprintf(nm, sizeof(nm), "%u", d->node);
    switch (d->kind) {
    case FAULT_KILL:
        snprintf(buf, len, "killed node %s (SIGKILL to each of its processes)", nm);
        break;
    case FAULT_PAUSE:
        snprintf(buf, len, "paused node %s for %.3f ms of virtual time", nm, (double)d->ns / 1e6);
        break;
    case FAULT_PARTITION:
        snprintf(buf, len, "cut node %s off the network for %.3f ms of virtual time", nm,
                 (double)d->ns / 1e6);
        break;
    case FAULT_CLOCK:
        snprintf(buf, len, "stepped node %s's wall clock %s by %.3f s", nm,
                 (int64_t)d->ns < 0 ? "back" : "forward", (double)clock_size(d->ns) / 1e9);
        break;
    default:
        snprintf(buf, len, "nothing");
        break;
    }
}
