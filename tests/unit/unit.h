/*
 * unit.h - minimal test harness for tests/unit (docs/testing.md).
 *
 * CHECK(cond, msg) counts one passed or failed check; SKIP(msg) counts one
 * case that could not run here (no /dev/kvm, not root, ...), printed so the
 * reader sees what was not tested; unit_done() prints the tally.
 *
 * Invariants:
 *  1. Every CHECK is counted exactly once, as passed or failed.
 *  2. The last line on stdout is "N passed, N failed, N skipped", the format
 *     tests/run-all.sh and tests/system/run.sh add up; the exit status is
 *     nonzero iff a check failed (a skip never fails the binary).
 */
#ifndef REWIND_TESTS_UNIT_H
#define REWIND_TESTS_UNIT_H

#include <stdio.h>

static int unit_passed, unit_failed, unit_skipped;

#define CHECK(cond, msg)                                                                           \
    do {                                                                                           \
        if (cond) {                                                                                \
            unit_passed++;                                                                         \
        } else {                                                                                   \
            unit_failed++;                                                                         \
            fprintf(stderr, "FAIL %s:%d: %s (%s)\n", __FILE__, __LINE__, (msg), #cond);            \
        }                                                                                          \
    } while (0)

/* Count one case as skipped and say why; the caller then returns from it. */
#define SKIP(msg)                                                                                  \
    do {                                                                                           \
        unit_skipped++;                                                                            \
        fprintf(stderr, "SKIP %s:%d: %s\n", __FILE__, __LINE__, (msg));                            \
    } while (0)

/* Print the tally; use as `return unit_done();` at the end of main. */
static inline int unit_done(void)
{
    fflush(stderr);
    printf("%d passed, %d failed, %d skipped\n", unit_passed, unit_failed, unit_skipped);
    return unit_failed ? 1 : 0;
}

#endif
