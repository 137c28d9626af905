/*
 * compare: where two traces part. Reads both traces in step order and
 * returns the first entry at which they differ (step, kind, pid, tid, aux or
 * payload), or that one ended early.
 */
#ifndef REWIND_TRACE_COMPARE_H
#define REWIND_TRACE_COMPARE_H

#include <stdint.h>

struct trace_difference {
    int differ;        /* 0: identical; 1: they part */
    uint64_t index;    /* 0-based entry index where they part */
    uint64_t step_a, step_b; /* the steps of that entry on each side (0 if ended) */
    uint64_t common;   /* entries equal before the difference */
};

/* Compare the trace files a and b. Returns 0 and fills d, or -1 if either
 * cannot be opened (errno) or is not a trace (-2). */
int compare_traces(const char *a, const char *b, struct trace_difference *d);

#endif
