/*
 * rewind_test.h: what only rewind's own tests use of librewind, kept out of
 * the API (include/rewind.h) so that no program relies on it by accident.
 * A determinism hole breaks determinism on purpose: the negative twins of
 * docs/determinism.md open one and show that the check it defeats fails.
 */
#ifndef REWIND_TEST_H
#define REWIND_TEST_H

#include <stdint.h>

#include "rewind.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The holes a run or a mode that starts from a stored run opens: point
 * rw_run_config.test or rw_options.test at one (NULL: none). */
struct rw_test_knobs {
    uint64_t holes;      /* a run's determinism holes (part of its spec) */
    unsigned snap_holes; /* keyframe holes (the kf-... and restore-... names) */
};

/* Open the named determinism hole in k ("host-tsc", "timer-at-host-exit",
 * "host-rng", "kf-no-io-completion", "restore-no-tlb-flush", and for
 * hostile-guest tests "guest-hostile", "refuse-go-on"). 0, or -1 if the
 * name is unknown. */
int rw_test_hole(struct rw_test_knobs *k, const char *name);

#ifdef __cplusplus
}
#endif

#endif
