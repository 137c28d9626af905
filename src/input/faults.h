/*
 * faults: fault injection as schedule decisions (docs/faults.md, "Faults").
 * At a step of a perturbation window (sched.h) the schedule may inject a
 * fault into one node: kill it, pause it for a while of virtual time, cut
 * it off the network (partition) for a while, or step its wall clock
 * forward or back (clock).
 * Whether, which kind, which node and how long are a pure function of
 * (seed, schedule, horizon, step) and the fault settings of the spec, drawn
 * from the same splitmix64 stream as the perturbations (sched.c) with a
 * salt of their own, so a run with faults is as deterministic as any other,
 * a narrowing probe keeps or drops a fault with its step, and a fork from
 * before a fault's step meets it again.
 *
 * Invariants:
 *  1. faults_decide(s, step) depends only on s's fault settings, the seed
 *     and the segment whose action window [from, until) holds step; every
 *     other step (schedule 0, outside every window, no kinds, no nodes)
 *     gets FAULT_NONE.
 *  2. A decision names a kind of s->fault_kinds, a node in
 *     1..s->fault_nodes and, for a pause or a partition, a length in
 *     [FAULT_PAUSE_MIN_NS, FAULT_PAUSE_MAX_NS]; for a clock, a step whose
 *     size is in [FAULT_CLOCK_MIN_NS, FAULT_CLOCK_MAX_NS], either way.
 *  3. A step of a window carries a fault with probability
 *     fault_rate / horizon (1 if fault_rate >= horizon), so a schedule over
 *     its horizon meets fault_rate faults on average.
 */
#ifndef REWIND_INPUT_FAULTS_H
#define REWIND_INPUT_FAULTS_H

#include <stddef.h>
#include <stdint.h>

#include "input/sched.h"

enum fault_kind {
    FAULT_NONE = 0,
    FAULT_KILL = REWIND_FAULT_KILL,
    FAULT_PAUSE = REWIND_FAULT_PAUSE,
    FAULT_PARTITION = REWIND_FAULT_PARTITION,
    FAULT_CLOCK = REWIND_FAULT_CLOCK,
};

#define FAULT_KINDS_ALL                                                                            \
    ((1u << FAULT_KILL) | (1u << FAULT_PAUSE) | (1u << FAULT_PARTITION) | (1u << FAULT_CLOCK))
#define FAULT_RATE_DEFAULT 2u
#define FAULT_RATE_MAX 1000u
#define FAULT_PAUSE_MIN_NS 10000000ull     /* 10 ms */
#define FAULT_PAUSE_MAX_NS 1280000000ull   /* 1.28 s: 10 ms << 7 */
#define FAULT_CLOCK_MIN_NS 1000000000ull   /* a clock step: 1 s .. */
#define FAULT_CLOCK_MAX_NS 128000000000ull /* .. 128 s: 1 s << 7 */

struct fault_decision {
    enum fault_kind kind;
    uint32_t node; /* 1..fault_nodes */
    uint64_t ns;   /* a pause's or a partition's length; a clock's step (int64_t) */
};

/* "kill,pause,partition,clock" (any order, no repeats) or "all" into bits. 0, or -1 with
 * why filled. */
int faults_parse(const char *list, uint32_t *kinds, char *why, size_t why_len);

/* The canonical list of kinds ("kill,pause,partition,clock"): the spec's form. */
void faults_format(uint32_t kinds, char *buf, size_t len);

/* The fault at step (invariants 1-3). */
struct fault_decision faults_decide(const struct sched *s, uint64_t step);

/* Words for a decision: "killed node n1", "paused node n2 for 120.000 ms".
 * node_name: the node's name, or NULL for "node 2". */
void faults_describe(const struct fault_decision *d, const char *node_name, char *buf, size_t len);

/* "kill", "pause", "continue", "partition", "heal", "clock" for a REWIND_FAULT_*
 * value; NULL if unknown. */
const char *faults_kind_name(uint32_t kind);

#endif
