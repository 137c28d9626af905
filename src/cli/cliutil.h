/*
 * cliutil: small helpers shared by the commands that read runs: open a
 * run's manifest, walk its trace, parse a step argument.
 */
#ifndef REWIND_CLI_UTIL_H
#define REWIND_CLI_UTIL_H

#include <jansson.h>
#include <signal.h>
#include <stdint.h>

#include "trace/trace.h"

/* Resolve ref and load its manifest. Returns the manifest (caller decrefs)
 * with the run directory in dir, or NULL after printing one error line. */
json_t *cli_load_run(const char *ref, char *dir, size_t dirlen);

/* Call fn for every trace entry of the run in dir, in order, until fn
 * returns non-zero. Returns 0, or -1 after printing one error line (missing
 * or foreign trace). A torn tail is reported with one warning line. */
int cli_each_entry(const char *dir, int (*fn)(void *ctx, const struct trace_entry *e), void *ctx);

/* Parse a step number. Returns 0 or -1. */
int cli_parse_step(const char *s, uint64_t *out);

/* Print s as a JSON string (with quotes) to stdout. */
void cli_json_str(const char *s, size_t n);

struct run_opts;
/* --test-hole NAME: only with REWIND_TEST_HOLES=1 (rewind's own negative
 * tests). Sets the bit in o. Returns 0, or -1 after one error line. */
int cli_test_hole(const char *name, struct run_opts *o);

/* Stop a run on SIGINT/SIGTERM and after timeout_s seconds (0: never).
 * Returns the flag for run_opts.abort. */
volatile sig_atomic_t *cli_abort_on_signals(double timeout_s);

/* For commands that derive a run from a stored one (fork, cat, shell):
 * parse STEP (positive, below the run's step count; with inspect, not
 * before the job's command runs), resolve ref to its directory name (in
 * base, 64 bytes) and load its options (kernel and init checked). Returns
 * 0, or -1 after one error line (usage errors: exit 2). *steps gets the
 * run's step count. */
int cli_derive(const char *ref, const char *step_arg, int inspect, struct run_opts *o,
               char base[64], uint64_t *step, uint64_t *steps);

#endif
