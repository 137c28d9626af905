/*
 * defaults: the one table of run defaults (rw_defaults: PATH, memory,
 * quantum, keyframe interval, limits, ...) and the words of a run's
 * outcomes, as include/rewind.h declares them. Every other default of a
 * run is read from this table: rw_run_config_init and rw_command_line
 * (src/run/api.c), the run context (src/run/ctx.c), the disk limits
 * (limits.c).
 *
 * Invariants:
 *  1. A default is written once, here (src/run/api.c invariant 1).
 */
#include "input/defaults.h"
#include "rewind.h"

const struct rw_run_defaults rw_defaults = {
    .path_env = RUN_PATH_ENV,
    .home_env = RUN_HOME_ENV,
    .cwd = "/",
    .mem_mib = 512,
    .mem_min_mib = 64,
    .mem_max_mib = 262144, /* KVM_RAM_MAX; the host's MemAvailable is checked per run */
    .quantum_ns = 5000,
    .seed = 0,
    .keyframe_every = 4096, /* measured: bench/RESULTS.md */
    .pct_horizon = 65536,
    .schedules = 64,
    .jobs = 2,
    .max_trace_mb = 4096, /* docs/reliability.md: far above any real suite's trace */
    .max_disk_mb = 16384,
    .spin_limit_s = 60,
};

const char *rw_outcome_word(enum rw_outcome o)
{
    switch (o) {
    case RW_EXITED:
        return "exited";
    case RW_NOT_FOUND:
        return "not-found";
    case RW_NOT_EXEC:
        return "not-executable";
    case RW_INIT_FAILED:
        return "init-failed";
    case RW_PANIC:
        return "panic";
    case RW_GUEST_ERROR:
        return "guest-error";
    case RW_STALLED:
        return "stalled";
    case RW_TIMEOUT:
        return "timeout";
    case RW_STOPPED:
        return "stopped";
    case RW_LIMIT:
        return "limit";
    case RW_SPIN:
        return "spin";
    default:
        return "running";
    }
}
