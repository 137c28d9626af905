/*
 * proctree.h: what rw_ps (include/rewind.h) lets a test see of its cost.
 * rw_ps's work is counted, per thread, in the steps of its loops (hash map
 * probes and shifts, rehashing, the report's walk): invariant 3 of
 * proctree.c says it is linear in the events and processes, and a test
 * checks that bound without a clock.
 */
#ifndef REWIND_TRACE_PROCTREE_H
#define REWIND_TRACE_PROCTREE_H

#include <stdint.h>

/* The loop steps of this thread's last rw_ps, and the events it applied. */
void proctree_last_work(uint64_t *steps, uint64_t *events);

#endif
