/*
 * watchstep: the writers of the changes `rewind watch` saw after a step
 * without a hardware watchpoint hit, found by single-stepping those steps'
 * stretches (watchstep.c).
 */
#ifndef REWIND_RUN_WATCHSTEP_H
#define REWIND_RUN_WATCHSTEP_H

#include "rewind.h"

/* After this many stretches that passed their budget, the rest stay seen. */
#define WATCHSTEP_DEAR_MAX 2

struct watchstep_config {
    uint32_t pid;
    uint64_t addr, len;
    uint64_t budget; /* debug exits per stretch (0: no limit) */
    volatile sig_atomic_t *abort;
};

struct watchstep_stats {
    uint64_t refined;     /* seen rows whose writers were found */
    uint64_t left;        /* seen rows left as seen (over the budget, or not reproduced) */
    uint64_t debug_exits; /* taken by the single-stepped stretches */
};

/* Replace each row of hits[0..*n) that is not exact by the writes its
 * stretch shows under the trap flag, in place (*hits reallocated). 0 or -1
 * with err (the rows unchanged). */
int watchstep_refine(rw_home *h, const char *name, const struct watchstep_config *c,
                     struct rw_watch_hit **hits, size_t *n, struct watchstep_stats *stats,
                     struct rw_error *err);

#endif
