/*
 * sched: schedule perturbation. A run's perturbation is a list of segments
 * (schedule s, window [from, until), horizon h); at a step inside a
 * segment's window the monitor may ask the guest to reschedule, stall the
 * current task for a while of virtual time, or add slack to a timer armed
 * at that step. Every decision is a pure function of (seed, s, h, step):
 * nothing here reads the host, so a perturbed run is as deterministic as
 * any other, and narrowing a window keeps every decision inside it.
 *
 * Strategies, by s (s = 0 is never perturbed):
 *  - odd s, "random": each step is perturbed with probability 1/16; the
 *    action and its size come from the same hash.
 *  - even s, "pct": PCT-style priority change points: SCHED_PCT_POINTS
 *    steps drawn uniformly from [origin, origin + h) (origin is fixed when
 *    a window is narrowed, so the points stay put); at each, the running task
 *    is pushed down (a long stall and a reschedule), as if its priority
 *    dropped below every other runnable task's.
 *  Memory-access points (the step's record is an access: --preempt memory,
 *  docs/determinism.md): under "random" such a step is perturbed with a
 *  density of its own, 1/2, 1/4, 1/8 or 1/16 by s (a race between two
 *  accesses needs the one point between them), always as a yield, so
 *  another thread runs before the access while this one stays runnable (a
 *  stall would let the other run alone, with no point, to its end);
 *  under both strategies
 *  the schedule also chooses the burst that follows the point (1 user
 *  instruction three times in four, else 2, 4, 8 or 16), so that two accesses a
 *  few instructions apart fall on either side of a point in some schedules.
 *
 * Invariants:
 *  1. sched_decide(step, access) depends only on the segment containing
 *     step, the seed and whether the step is an access point; steps outside
 *     every span get SCHED_NONE and burst 0 (the guest draws its own), steps
 *     of a span outside its window SCHED_NONE and the segment's burst.
 *  2. Segments are ordered and their spans do not overlap (a fork
 *     truncates its parent's segments at the fork step before appending
 *     its own).
 *  3. A segment's actions lie in its span: span_from <= from <= until <=
 *     span_until. In the span outside [from, until) a step keeps the
 *     segment's burst and has no action, so a narrowing probe (a window of
 *     a schedule's actions) is the schedule's own run but for the actions
 *     it leaves out: its bursts, drawn from the span, are the schedule's
 *     (docs/determinism.md, "Narrowing").
 */
#ifndef REWIND_INPUT_SCHED_H
#define REWIND_INPUT_SCHED_H

#include <stddef.h>
#include <stdint.h>

#include "../../guest/include/rewind_abi.h"

#define SCHED_MAX_SEGMENTS 16
#define SCHED_PCT_POINTS 3
#define SCHED_DISK_GLOB_MAX 200 /* a disk fault glob's bytes (faults.h) */

enum sched_action {
    SCHED_NONE = 0,
    SCHED_PREEMPT,     /* reschedule the current task */
    SCHED_STALL,       /* stall the current task for stall_ns, and reschedule */
    SCHED_TIMER_SLACK, /* if this step arms a timer, add slack_ns to it */
    SCHED_YIELD,       /* the current task yields the CPU and stays runnable */
};

struct sched_segment {
    uint64_t schedule, from, until; /* its actions' window; until: UINT64_MAX for open */
    uint64_t origin, horizon;       /* pct draws its points from [origin, origin + horizon) */
    /* The steps the segment covers: its bursts, and where a fork starts
     * (invariant 3); [from, until) but in a narrowing probe. */
    uint64_t span_from, span_until;
};

struct sched {
    uint64_t seed;
    unsigned n;
    struct sched_segment seg[SCHED_MAX_SEGMENTS];
    /* Faults (src/input/faults.h): the kinds a window may inject (bits
     * 1 << FAULT_*; 0: none), how many per horizon on average, and the
     * run's node count (from the spec's nodes). */
    uint32_t fault_kinds, fault_rate, fault_nodes;
    /* Bit i - 1 set when node i has a restart command (the spec's nodes,
     * input/nodes.h): a kill or a power cut of it gets a restart delay
     * (faults.h). */
    uint32_t fault_restart;
    /* The files disk faults fail and power cuts undo the unsynced writes
     * of (docs/faults.md, "Disk faults"): a glob of 1..SCHED_DISK_GLOB_MAX
     * printable bytes without spaces or quotes when fault_kinds has disk or
     * power (the spec's faults "disk_glob", the guest kernel's
     * rewind.diskglob=), else "" (faults.h invariant 5). The decisions
     * never read it. */
    char fault_disk_glob[SCHED_DISK_GLOB_MAX + 1];
};

struct sched_decision {
    enum sched_action action;
    uint64_t ns;    /* stall or slack length */
    uint32_t burst; /* an access point's burst (1..16 instructions); 0: the guest's */
};

/* Invariant 3 for one segment, and a span that is not empty: 1 or 0 (also
 * for a segment read from an untrusted spec). */
int sched_segment_valid(const struct sched_segment *g);

/* Append a segment whose actions are in [from, until) and whose span
 * (bursts) is [span_from, span_until) (invariant 3); earlier segments end
 * where the span starts. 0, or -1 if full or the windows are malformed. */
int sched_push_span(struct sched *s, uint64_t schedule, uint64_t span_from, uint64_t span_until,
                    uint64_t from, uint64_t until, uint64_t origin, uint64_t horizon);

/* The segment of schedule in [from, until), its span the same window. */
static inline struct sched_segment sched_window(uint64_t schedule, uint64_t from, uint64_t until,
                                                uint64_t origin, uint64_t horizon)
{
    return (struct sched_segment){schedule, from, until, origin, horizon, from, until};
}

/* Schedule 0 from step at: every segment ends there (a fork without a
 * schedule of its own). */
void sched_end_at(struct sched *s, uint64_t at);

/* The decision at step (SCHED_NONE outside every window); access: the
 * step's record is a memory-access point (REWIND_REC_ACCESS). */
struct sched_decision sched_decide(const struct sched *s, uint64_t step, int access);

/* The decisions' hash: splitmix64's finalizer, and it folded over five
 * words (faults.c draws from it with a salt of its own). */
uint64_t sched_mix(uint64_t x);
uint64_t sched_h5(uint64_t a, uint64_t b, uint64_t c, uint64_t d, uint64_t e);

/* "random" or "pct" for schedule number s ("none" for 0). */
const char *sched_strategy(uint64_t s);

/* Words for a decision: "stalled the running task for 2.000 ms". */
void sched_describe(const struct sched_decision *d, char *buf, unsigned len);

/* Append segment (schedule, from, until, origin, horizon) after truncating
 * every earlier window at from. Returns 0, or -1 if full or the window is
 * empty. */
int sched_push(struct sched *s, uint64_t schedule, uint64_t from, uint64_t until, uint64_t origin,
               uint64_t horizon);

/*
 * Context switches (rewind_abi.h, "Context switches"): the guest kernel
 * appends each switch to the shared page's ring without a port exit; the
 * platform drains the ring at the start of every step into one
 * REWIND_REC_SCHED record at that step.
 *
 * Invariants:
 *  3. The ring is guest memory, untrusted: sw_count is read once, and a
 *     count above REWIND_SW_MAX or a tid above REWIND_TID_MAX is refused
 *     (-1), never copied.
 *  4. The ring is emptied (sw_count = sw_lost = 0) whatever the outcome, so
 *     a switch is reported at exactly one step.
 *  5. A record is made only when the guest made a switch or lost one: a
 *     step without switches adds nothing to the trace.
 */

/* Drain sh's ring into rec (REWIND_RECORD_MAX bytes): 1 with a SCHED
 * record in rec (pid 0, tid 0, aux = switches lost, payload = the
 * entries), 0 when the ring is empty, -1 with why filled when it breaks the
 * contract. */
int sched_drain_switches(struct rewind_shared *sh, struct rewind_record *rec, char *why,
                         size_t why_len);

#endif
