/*
 * checkrec: a check as a record of its own, $REWIND_HOME/checks/<id>.json
 * (home_path HOME_CHECKS): what was checked (the base run, the step the
 * schedules start after, the options), what it found (the report's
 * summary and the property tallies) and every run it made (schedules and
 * probes), so `rewind ls` can show a check as one line and `rewind show
 * CHECK` can say what it found.
 *
 * Invariants:
 *  1. The id is the first 16 hex digits of the SHA-256 of the canonical
 *     JSON of what was checked (base run, start step, schedules, options):
 *     the same check run again has the same id and replaces its record.
 *  2. A record is written whole or not at all (io_write_file_atomic): a
 *     crash leaves the previous record or none, never a torn one.
 *  3. Records are untrusted when read: a file that does not parse, or
 *     whose fields have the wrong types, is skipped by the listing and
 *     refused by rw_check_record with one line.
 */
#ifndef REWIND_EXPLORE_CHECKREC_H
#define REWIND_EXPLORE_CHECKREC_H

#include <stddef.h>
#include <stdint.h>

#include "rewind.h"

struct checkrec_opts {
    const char *base;                /* the base run's directory name */
    uint64_t start;                  /* schedules fork after this step */
    uint64_t schedules;              /* N asked for */
    uint64_t first;                  /* the first schedule (1, or a range's start) */
    int keep_going, vary_seed, from; /* from: --from gave the start step */
};

/* Save the record of a finished check; its id in id. runs: the runs it
 * made (schedules, probes). 0 or -1 with err. */
int checkrec_save(const char *home, const struct checkrec_opts *o,
                  const struct rw_check_report *rep, char (*runs)[RW_ID_MAX], size_t nruns,
                  char id[RW_ID_MAX], char *err, size_t errlen);

#endif
