/* unit.h - minimal test harness: CHECK(cond, msg) counts, unit_done() reports. */
#ifndef REWIND_TESTS_UNIT_H
#define REWIND_TESTS_UNIT_H

#include <stdio.h>

static int unit_passed, unit_failed;

#define CHECK(cond, msg)                                                                           \
    do {                                                                                           \
        if (cond) {                                                                                \
            unit_passed++;                                                                         \
        } else {                                                                                   \
            unit_failed++;                                                                         \
            fprintf(stderr, "FAIL %s:%d: %s (%s)\n", __FILE__, __LINE__, (msg), #cond);            \
        }                                                                                          \
    } while (0)

/* Print the tally; use as `return unit_done();` at the end of main. */
static inline int unit_done(void)
{
    printf("%d passed, %d failed\n", unit_passed, unit_failed);
    return unit_failed ? 1 : 0;
}

#endif
