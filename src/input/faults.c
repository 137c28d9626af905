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
    [REWIND_FAULT_NET] = "net",           [REWIND_FAULT_CLEAR] = "clear",
    [REWIND_FAULT_RESTART] = "restart",   [REWIND_FAULT_DISK] = "disk",
    [REWIND_FAULT_MEND] = "mend",         [REWIND_FAULT_SPLIT] = "split",
    [REWIND_FAULT_JOIN] = "join",         [REWIND_FAULT_POWER] = "power",
    [REWIND_FAULT_LOST] = "lost",
};

static const char *const net_mode_names[] = {
    [REWIND_NET_DELAY] = "delay",
    [REWIND_NET_LOSS] = "loss",
    [REWIND_NET_DUPLICATE] = "duplicate",
    [REWIND_NET_REORDER] = "reorder",
};

static const char *const disk_mode_names[] = {
    [REWIND_DISK_EIO] = "eio",
    [REWIND_DISK_ENOSPC] = "enospc",
    [REWIND_DISK_SYNC] = "sync",
};

/* A disk fault's words by mode: faults_describe's and the trace's
 * (describe.c) say the same. */
static const char *const disk_mode_words[] = {
    [REWIND_DISK_EIO] = "its writes and syncs get EIO",
    [REWIND_DISK_ENOSPC] = "its writes get ENOSPC (no space)",
    [REWIND_DISK_SYNC] = "its syncs get EIO",
};

/* The kinds a schedule can inject, in the spec's order (a new kind goes
 * last: the order is the kinds list's canonical form, and the pick of a
 * kind counts the kinds given in this order, invariant 4). */
static const uint32_t injectable[] = {FAULT_KILL, FAULT_PAUSE, FAULT_PARTITION, FAULT_CLOCK,
                                      FAULT_NET,  FAULT_DISK,  FAULT_SPLIT,     FAULT_POWER};
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

const char *faults_net_mode_name(uint32_t mode)
{
    if (mode >= sizeof(net_mode_names) / sizeof(net_mode_names[0]))
        return NULL;
    return net_mode_names[mode];
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
                     "--faults takes a list of kill, pause, partition, clock, net, disk, split, "
                     "power (or all): '%.*s'",
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

/* A net fault's arg from its draw r2 (bits 36 and up: the length has bits
 * 32..34): the mode, then its delay or its percentage (invariant 2). */
static uint32_t net_arg(uint64_t r2)
{
    uint32_t mode = 1 + (uint32_t)((r2 >> 36) % 4), percent = 0, delay_ms = 0;
    if (mode == REWIND_NET_DELAY)
        delay_ms = 1u << ((r2 >> 40) % 8); /* 1 .. 128 ms, 8 octaves */
    else
        percent = FAULT_NET_PERCENT_MIN * (1 + (uint32_t)((r2 >> 44) % 8)); /* 10 .. 80% */
    if (mode == REWIND_NET_REORDER)
        delay_ms = FAULT_NET_REORDER_MS;
    return REWIND_NET_ARG(mode, percent, delay_ms);
}

/* A split's first side from its draw r2 (bits 36 and up, as net's and
 * disk's mode; the length has bits 32..34) among s's n nodes: bit i - 1
 * for node i, a non-empty proper subset (1 .. 2^n - 2), each equally
 * likely but for the modulo's bias, below 2^-12 with 16 nodes; 0 with
 * fewer than two nodes (invariant 2). */
static uint32_t split_side(const struct sched *s, uint64_t r2)
{
    uint32_t n = s->fault_nodes;
    RW_ASSERT(n >= 1 && n <= REWIND_NODES_MAX); /* the shift below */
    if (n < 2)
        return 0;
    return 1 + (uint32_t)((r2 >> 36) % ((1u << n) - 2));
}

/* Whether a decision of kind k kills its node: a kill, or a power cut (a
 * kill whose node also loses its unsynced writes), drawn alike (invariant 2). */
static int kills(enum fault_kind k)
{
    return k == FAULT_KILL || k == FAULT_POWER;
}

/* Invariant 2 for a decision d of s. */
static void faults_check(const struct sched *s, const struct fault_decision *d)
{
    RW_ASSERT(d->kind != FAULT_NONE && d->node >= 1 && d->node <= s->fault_nodes);
    int restarts = kills(d->kind) && ((s->fault_restart >> (d->node - 1)) & 1);
    if (kills(d->kind) && !restarts)
        RW_ASSERT(d->ns == 0);
    else if (d->kind != FAULT_CLOCK)
        RW_ASSERT(d->ns >= FAULT_PAUSE_MIN_NS && d->ns <= FAULT_PAUSE_MAX_NS);
    else
        RW_ASSERT(clock_size(d->ns) >= (long long)FAULT_CLOCK_MIN_NS &&
                  clock_size(d->ns) <= (long long)FAULT_CLOCK_MAX_NS);
    RW_ASSERT(d->kind == FAULT_NET || d->kind == FAULT_DISK || d->kind == FAULT_SPLIT ||
              d->arg == 0);
    if (d->kind == FAULT_DISK)
        RW_ASSERT(d->arg >= REWIND_DISK_EIO && d->arg <= REWIND_DISK_SYNC);
    if (d->kind == FAULT_SPLIT && s->fault_nodes < 2) /* a split needs two nodes */
        RW_ASSERT(d->arg == 0 && d->node == 1);
    else if (d->kind == FAULT_SPLIT) /* a non-empty proper subset, named by its lowest node */
        RW_ASSERT(d->arg != 0 && d->arg < (1u << s->fault_nodes) - 1 &&
                  d->node == 1 + (uint32_t)__builtin_ctz(d->arg));
    if (d->kind != FAULT_NET)
        return;
    uint32_t mode = REWIND_NET_MODE(d->arg), pc = REWIND_NET_PERCENT(d->arg),
             ms = REWIND_NET_DELAY_MS(d->arg);
    int pc_ok = pc >= FAULT_NET_PERCENT_MIN && pc <= FAULT_NET_PERCENT_MAX && pc % 10 == 0;
    RW_ASSERT(mode >= REWIND_NET_DELAY && mode <= REWIND_NET_REORDER);
    RW_ASSERT(mode != REWIND_NET_DELAY || (pc == 0 && ms >= 1 && ms <= FAULT_NET_DELAY_MAX_MS));
    RW_ASSERT(mode != REWIND_NET_LOSS || (pc_ok && ms == 0));
    RW_ASSERT(mode != REWIND_NET_DUPLICATE || (pc_ok && ms == 0));
    RW_ASSERT(mode != REWIND_NET_REORDER || (pc_ok && ms == FAULT_NET_REORDER_MS));
}

struct fault_decision faults_decide(const struct sched *s, uint64_t step)
{
    struct fault_decision d = {FAULT_NONE, 0, 0, 0};
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
        if (d.kind == FAULT_PAUSE || d.kind == FAULT_PARTITION || d.kind == FAULT_NET ||
            d.kind == FAULT_DISK || d.kind == FAULT_SPLIT) /* 10 ms .. 1.28 s, 8 octaves */
            d.ns = FAULT_PAUSE_MIN_NS << ((r2 >> 32) % 8);
        /* A kill's or a power cut's restart delay, from the same bits (invariant 4). */
        if (kills(d.kind) && (s->fault_restart >> (d.node - 1)) & 1)
            d.ns = FAULT_PAUSE_MIN_NS << ((r2 >> 32) % 8);
        if (d.kind == FAULT_CLOCK) { /* 1 s .. 128 s, 8 octaves, forward or back */
            uint64_t m = FAULT_CLOCK_MIN_NS << ((r2 >> 32) % 8);
            d.ns = (r2 >> 40) & 1 ? (uint64_t)(-(int64_t)m) : m;
        }
        if (d.kind == FAULT_NET)
            d.arg = net_arg(r2);
        if (d.kind == FAULT_DISK) /* bits 36 and up, as net's mode: EIO, ENOSPC, sync */
            d.arg = REWIND_DISK_EIO + (uint32_t)((r2 >> 36) % 3);
        if (d.kind == FAULT_SPLIT) { /* the first side; its lowest node names it (invariant 2) */
            d.arg = split_side(s, r2);
            if (d.arg)
                d.node = 1 + (uint32_t)__builtin_ctz(d.arg);
        }
        faults_check(s, &d);
        return d;
    }
    return d;
}

/* faults_describe's words for a split: at most 78 bytes for a side drawn
 * among 16 nodes ("nodes 2,3,...,16", a length of 1280.000 ms), so check's
 * report, which keeps 90 bytes of them, cuts none. */
static void split_describe(const struct fault_decision *d, char *buf, size_t len)
{
    char side[64];
    double ms = (double)d->ns / 1e6;
    if (d->arg == 0)
        snprintf(buf, len, "split nothing for %.3f ms (a split needs two nodes)", ms);
    else if (faults_split_words(d->arg, side, sizeof(side)) < 0)
        snprintf(buf, len, "split side %#x from the rest for %.3f ms", d->arg, ms);
    else
        snprintf(buf, len, "split %s from the rest for %.3f ms", side, ms);
}

void faults_describe(const struct fault_decision *d, const char *node_name, char *buf, size_t len)
{
    char nm[48];
    if (node_name)
        snprintf(nm, sizeof(nm), "%s", node_name);
    else
        snprintf(nm, sizeof(nm), "%u", d->node);
    char words[96];
    switch (d->kind) {
    case FAULT_KILL:
    case FAULT_POWER: { /* a power cut: a kill's words, and the undo (docs/faults.md) */
        char head[192];
        if (d->kind == FAULT_POWER)
            snprintf(head, sizeof(head),
                     "cut node %s's power (SIGKILL to each of its processes; its writes since "
                     "their last sync undone)",
                     nm);
        else
            snprintf(head, sizeof(head), "killed node %s (SIGKILL to each of its processes)", nm);
        if (d->ns)
            snprintf(buf, len, "%s; its restart command runs %.3f ms later", head,
                     (double)d->ns / 1e6);
        else
            snprintf(buf, len, "%s", head);
        break;
    }
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
    case FAULT_NET:
        if (faults_net_words(d->arg, words, sizeof(words)) < 0)
            snprintf(words, sizeof(words), "arg %#x", d->arg);
        snprintf(buf, len, "degraded node %s's link for %.3f ms: %s", nm, (double)d->ns / 1e6,
                 words);
        break;
    case FAULT_DISK:
        if (faults_disk_words(d->arg, words, sizeof(words)) < 0)
            snprintf(words, sizeof(words), "mode %u", d->arg);
        snprintf(buf, len, "made node %s's disk fail for %.3f ms: %s", nm, (double)d->ns / 1e6,
                 words);
        break;
    case FAULT_SPLIT: /* numbers: only the one node's name is known here */
        split_describe(d, buf, len);
        break;
    default:
        snprintf(buf, len, "nothing");
        break;
    }
}

int faults_net_words(uint32_t arg, char *buf, size_t len)
{
    uint32_t mode = REWIND_NET_MODE(arg), pc = REWIND_NET_PERCENT(arg),
             ms = REWIND_NET_DELAY_MS(arg);
    buf[0] = 0;
    if (pc > 100 || ms > 1000) /* rewind_abi.h's ranges */
        return -1;
    switch (mode) {
    case REWIND_NET_DELAY:
        snprintf(buf, len, "every packet %u ms late", ms);
        return 0;
    case REWIND_NET_LOSS:
        snprintf(buf, len, "%u%% of its packets lost", pc);
        return 0;
    case REWIND_NET_DUPLICATE:
        snprintf(buf, len, "%u%% of its packets sent twice", pc);
        return 0;
    case REWIND_NET_REORDER:
        snprintf(buf, len, "%u%% of its packets sent at once, the rest %u ms late", pc, ms);
        return 0;
    default:
        return -1;
    }
}

const char *faults_disk_mode_name(uint32_t mode)
{
    if (mode >= sizeof(disk_mode_names) / sizeof(disk_mode_names[0]))
        return NULL;
    return disk_mode_names[mode];
}

int faults_disk_words(uint32_t mode, char *buf, size_t len)
{
    buf[0] = 0;
    if (mode >= sizeof(disk_mode_words) / sizeof(disk_mode_words[0]) || !disk_mode_words[mode])
        return -1;
    snprintf(buf, len, "%s", disk_mode_words[mode]);
    return 0;
}

int faults_disk_glob_valid(const char *glob)
{
    size_t n = strlen(glob);
    if (!n || n > SCHED_DISK_GLOB_MAX)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (glob[i] <= ' ' || glob[i] > '~' || glob[i] == '"' || glob[i] == '\'')
            return 0;
    return 1;
}

int faults_split_words(uint32_t side, char *buf, size_t len)
{
    buf[0] = 0;
    if (side == 0 || side >= (1u << REWIND_NODES_MAX) - 1) /* no node, one too high, or all */
        return -1;
    const char *sep = side & (side - 1) ? "nodes " : "node ";
    size_t o = 0;
    for (unsigned i = 0; i < REWIND_NODES_MAX && o < len; i++) {
        if (!((side >> i) & 1))
            continue;
        int w = snprintf(buf + o, len - o, "%s%u", sep, i + 1);
        if (w < 0)
            break;
        o += (size_t)w;
        sep = ",";
    }
    return 0;
}
