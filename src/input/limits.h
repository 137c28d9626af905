/*
 * limits: the caps on what one run may add to the disk (docs/reliability.md).
 * A guest decides how much trace it writes (every output byte is a record)
 * and how many new pages its keyframes add to the page store; without a cap
 * a hostile or runaway job fills the disk. Two caps, in MiB, set per run
 * (`--max-trace`, `--max-disk`; 0 takes rw_defaults):
 *
 *   trace  the bytes of trace entries this run's records add
 *   disk   those plus the keyframes file, the compressed pages this run
 *          appended to the store and the --state-log file ("states")
 *
 * A cap hit ends the run at the end of that step with the outcome "limit"
 * (exit code RW_ELIMIT); its message names the cap. The run is kept like a
 * timed-out one: cut short, never a reference for a complete run.
 *
 * Invariants:
 *  1. A cap is never 0 once set: 0 asks for the default, and a cap too
 *     large to count in bytes becomes UINT64_MAX (no wrap of mb << 20).
 *  2. The counts only grow, and the first cap hit is the one reported.
 *  3. Keyframes stored off the step path (src/run/kfcap.h invariant 6) are
 *     counted as known bytes plus at most kf_unsure more still in flight: a
 *     check that stays under a cap with both stays under it with the exact
 *     count too; one that would not asks settle for the exact count first
 *     (a join), so a cap is hit at the step it would be hit with the
 *     keyframes stored synchronously.
 */
#ifndef REWIND_INPUT_LIMITS_H
#define REWIND_INPUT_LIMITS_H

#include <stddef.h>
#include <stdint.h>

struct run_limits {
    uint64_t max_trace, max_disk; /* bytes */
    uint64_t trace_bytes;         /* trace entries this run added */
    uint64_t kf_bytes;            /* keyframes file + pages appended to the store */
    uint64_t states_bytes;        /* the --state-log file */
    uint64_t kf_unsure;           /* at most this many more keyframe bytes (invariant 3) */
    int (*settle)(void *ctx, uint64_t *kf_bytes); /* the exact count, or NULL */
    void *settle_ctx;
    const char *hit; /* NULL, "trace" or "disk" */
};

/* Bytes of mb MiB, saturating (invariant 1); 0 stays 0. */
uint64_t run_limits_bytes(uint64_t mb);
/* Caps from MiB (0: rw_defaults.max_trace_mb / max_disk_mb). */
void run_limits_init(struct run_limits *l, uint64_t max_trace_mb, uint64_t max_disk_mb);
/* Count one trace entry whose record is reclen bytes. 1 when a cap is hit
 * by it (only once), else 0. */
int run_limits_trace(struct run_limits *l, uint32_t reclen);
/* The keyframe side now holds bytes in all. 1 when a cap is hit by it. */
int run_limits_keyframes(struct run_limits *l, uint64_t bytes);
/* The keyframe side holds known bytes and at most unsure more (invariant
 * 3); settle, set by run_limits_settler, gives the exact count. 1 when a
 * cap is hit. */
int run_limits_keyframes_unsure(struct run_limits *l, uint64_t known, uint64_t unsure);
/* Who gives the exact count of keyframe bytes (0, or -1: count the worst). */
void run_limits_settler(struct run_limits *l, int (*settle)(void *ctx, uint64_t *kf_bytes),
                        void *ctx);
/* The --state-log file grew by bytes. 1 when a cap is hit by it. */
int run_limits_states(struct run_limits *l, uint64_t bytes);
/* One line naming the cap hit ("trace limit of 1 MiB (--max-trace) hit ..."). */
void run_limits_message(const struct run_limits *l, uint64_t step, char *out, size_t n);

#endif
