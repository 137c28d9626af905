/*
 * faults: fault injection as schedule decisions (docs/faults.md, "Faults").
 * At a step of a perturbation window (sched.h) the schedule may inject a
 * fault into one node: kill it (and, when the node has a restart command,
 * have rewind-init run that after a delay), pause it for a while of
 * virtual time, cut it off the network (partition) for a while, step its
 * wall clock forward or back (clock), degrade its link for a while
 * with netem (net: delay, loss, duplication or reordering), make its
 * writes or syncs on the files of a glob fail for a while (disk: EIO or
 * ENOSPC), split the network in two sides for a while (split: the
 * node and the others of its side reach no node of the other side), or
 * cut its power (power: a kill whose node also loses its writes made
 * since their file's last sync, on the files of the same glob; a restart
 * as a kill's).
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
 *     1..s->fault_nodes and, for a pause, a partition, a net, a disk or a
 *     split fault, a length in [FAULT_PAUSE_MIN_NS, FAULT_PAUSE_MAX_NS];
 *     for a clock, a step whose size is in [FAULT_CLOCK_MIN_NS,
 *     FAULT_CLOCK_MAX_NS], either way; for a kill and a power cut, 0 when
 *     the node has no restart (bit node - 1 of s->fault_restart clear),
 *     else a restart delay in [FAULT_PAUSE_MIN_NS, FAULT_PAUSE_MAX_NS].
 *     A power cut is drawn as a kill is: the node and the delay from the
 *     same bits (the kernel undoes the writes; the decision has nothing
 *     more). arg is 0 but for
 *     a net, a disk and a split fault. A split's arg is its first side,
 *     bit i - 1 set for node i: with n = s->fault_nodes >= 2 nodes, a
 *     non-empty proper subset of them (0 < arg < (1 << n) - 1), and node is
 *     its lowest (bit node - 1 is arg's lowest bit set); with one node,
 *     arg is 0 (a split needs two nodes: the guest kernel ignores it) and
 *     node is 1. A disk fault's arg is its mode, an enum
 *     rewind_disk_mode: REWIND_DISK_EIO, REWIND_DISK_ENOSPC or
 *     REWIND_DISK_SYNC. A net fault's arg is REWIND_NET_ARG(mode, percent,
 *     delay_ms) with a mode of enum rewind_net_mode and: delay, delay_ms
 *     in [1, FAULT_NET_DELAY_MAX_MS] and percent 0; loss and duplicate,
 *     percent in [FAULT_NET_PERCENT_MIN, FAULT_NET_PERCENT_MAX] and
 *     delay_ms 0; reorder, percent as for loss and delay_ms
 *     FAULT_NET_REORDER_MS.
 *  3. A step of a window carries a fault with probability
 *     fault_rate / horizon (1 if fault_rate >= horizon), so a schedule over
 *     its horizon meets fault_rate faults on average.
 *  4. Settings without net and without restarts decide bit for bit as
 *     before either existed, settings without disk as before disk existed,
 *     settings without split as before split existed, and settings without
 *     power as before power existed (tests/unit/faults_test.c pins
 *     decisions of the older code): the step, kind, node and length come
 *     from the same bits of the same draws, and a restart delay or a net,
 *     disk or split fault's arg only fills what was 0 for a kill (or a
 *     power cut) or what net, disk or split alone has. A new kind goes
 *     last in the canonical order, so it changes only what a list naming
 *     it (or "all") draws. (A split's node is its side's lowest, drawn with
 *     the side; the kinds before it keep the drawn node.)
 *  5. The disk glob (s->fault_disk_glob) is not an input of a decision. It
 *     is set exactly when s->fault_kinds has disk or power
 *     (FAULT_KINDS_GLOB: the files a disk fault fails are the files a
 *     power cut undoes the writes of), and then it is a word the guest
 *     kernel's command line can carry unquoted
 *     (faults_disk_glob_valid): 1..SCHED_DISK_GLOB_MAX printable ASCII
 *     bytes, no space, no quote.
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
    FAULT_NET = REWIND_FAULT_NET,
    FAULT_DISK = REWIND_FAULT_DISK,
    FAULT_SPLIT = REWIND_FAULT_SPLIT,
    FAULT_POWER = REWIND_FAULT_POWER,
};

#define FAULT_KINDS_ALL                                                                            \
    ((1u << FAULT_KILL) | (1u << FAULT_PAUSE) | (1u << FAULT_PARTITION) | (1u << FAULT_CLOCK) |    \
     (1u << FAULT_NET) | (1u << FAULT_DISK) | (1u << FAULT_SPLIT) | (1u << FAULT_POWER))
/* The kinds that act on the disk glob's files: with one of them the spec has
 * a disk_glob and the kernel's command line rewind.diskglob= (invariant 5). */
#define FAULT_KINDS_GLOB ((1u << FAULT_DISK) | (1u << FAULT_POWER))
#define FAULT_RATE_DEFAULT 2u
#define FAULT_RATE_MAX 1000u
#define FAULT_PAUSE_MIN_NS 10000000ull     /* 10 ms */
#define FAULT_PAUSE_MAX_NS 1280000000ull   /* 1.28 s: 10 ms << 7 */
#define FAULT_CLOCK_MIN_NS 1000000000ull   /* a clock step: 1 s .. */
#define FAULT_CLOCK_MAX_NS 128000000000ull /* .. 128 s: 1 s << 7 */
#define FAULT_NET_DELAY_MAX_MS 128u        /* a net delay: 1 ms .. 128 ms (1 << 7) */
#define FAULT_NET_PERCENT_MIN 10u          /* loss, duplicate, reorder: 10% .. */
#define FAULT_NET_PERCENT_MAX 80u          /* .. 80%, in steps of 10 */
#define FAULT_NET_REORDER_MS 10u           /* reorder: the delay of the packets held back */
#define FAULT_DISK_GLOB_DEFAULT "*" /* disk faults, power cuts without --disk-glob: every file */

struct fault_decision {
    enum fault_kind kind;
    uint32_t node; /* 1..fault_nodes */
    uint64_t ns;   /* a pause's, a partition's, a net, a disk or a split fault's length; a
                      clock's step (int64_t); a kill's or a power cut's restart delay (0:
                      no restart) */
    uint32_t arg;  /* a net fault's REWIND_NET_ARG(mode, percent, delay_ms); a disk fault's
                      enum rewind_disk_mode; a split's first side (bit i - 1: node i; 0 with
                      one node); else 0 */
};

/* "kill,pause,partition,clock,net,disk,split,power" (any order, no repeats) or "all" into
 * bits. 0, or -1 with why filled. */
int faults_parse(const char *list, uint32_t *kinds, char *why, size_t why_len);

/* The canonical list of kinds ("kill,pause,partition,clock,net,disk,split,power"): the
 * spec's form. */
void faults_format(uint32_t kinds, char *buf, size_t len);

/* The fault at step (invariants 1-5). */
struct fault_decision faults_decide(const struct sched *s, uint64_t step);

/* Words for a decision: "killed node n1 (SIGKILL to each of its processes)",
 * "paused node n2 for 120.000 ms of virtual time", "degraded node n2's link for
 * 160.000 ms: 40% of its packets lost", "made node n1's disk fail for 160.000
 * ms: its writes and syncs get EIO", "split nodes 1,3 from the rest for
 * 160.000 ms" (a split names its side by numbers: node_name is one node's;
 * at most 78 bytes with 16 nodes, so check's report keeps them whole), "cut
 * node n1's power (SIGKILL to each of its processes; its writes since their
 * last sync undone)" (a kill's and a power cut's restart add "; its restart
 * command runs 40.000 ms later": at most 153 bytes with a name of
 * NODE_NAME_MAX bytes, so check's report keeps them whole unless the step
 * also carries a perturbation, when it keeps 90 bytes of them, as of a
 * kill's). node_name: the node's name, or NULL for "node 2". */
void faults_describe(const struct fault_decision *d, const char *node_name, char *buf, size_t len);

/* "kill", "pause", "continue", "partition", "heal", "clock", "net", "clear",
 * "restart", "disk", "mend", "split", "join", "power", "lost" for a
 * REWIND_FAULT_* value; NULL if unknown. */
const char *faults_kind_name(uint32_t kind);

/* "delay", "loss", "duplicate", "reorder" for an enum rewind_net_mode; NULL if
 * unknown. */
const char *faults_net_mode_name(uint32_t mode);

/* What a net fault's arg does to the link, in words ("40% of its packets
 * lost", "every packet 8 ms late", "20% of its packets sent twice", "30% of
 * its packets sent at once, the rest 10 ms late"): 0, or -1 (buf "") when
 * rewind_abi.h does not allow arg: an unknown mode, a percent above 100 or a
 * delay above 1000 ms (a trace's arg is untrusted). */
int faults_net_words(uint32_t arg, char *buf, size_t len);

/* "eio", "enospc", "sync" for an enum rewind_disk_mode; NULL if unknown. */
const char *faults_disk_mode_name(uint32_t mode);

/* What a disk fault's mode does to the node's calls, in words: "its writes
 * and syncs get EIO" (REWIND_DISK_EIO), "its writes get ENOSPC (no space)"
 * (REWIND_DISK_ENOSPC), "its syncs get EIO" (REWIND_DISK_SYNC): 0, or -1
 * (buf "") for a mode rewind_abi.h does not have (a trace's arg is
 * untrusted). */
int faults_disk_words(uint32_t mode, char *buf, size_t len);

/* A split's side in words: "node 1", "nodes 1,3", "nodes 1,2,...,15" (bit
 * i - 1 of side: node i): 0, or -1 (buf "") when side cannot be a split's
 * first side: 0, a node above REWIND_NODES_MAX, or every node of
 * REWIND_NODES_MAX (a trace's arg is untrusted; the run's node count is not
 * known here). */
int faults_split_words(uint32_t side, char *buf, size_t len);

/* Invariant 5: 1 when glob can be the disk glob (1..SCHED_DISK_GLOB_MAX
 * bytes, each printable ASCII but space and quotes: one word of the guest
 * kernel's command line, the rule of --track-writes), else 0. */
int faults_disk_glob_valid(const char *glob);

#endif
