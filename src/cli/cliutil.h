/*
 * cliutil: small helpers shared by the commands that read runs: open a
 * run's manifest, walk its trace, print a JSON string. (The helpers of the
 * commands that run are declared in cli.h.)
 */
#ifndef REWIND_CLI_UTIL_H
#define REWIND_CLI_UTIL_H

#include <jansson.h>
#include <signal.h>
#include <stdint.h>

#include "cli/cli.h"
#include "trace/trace.h"

/* Resolve ref and load its manifest. Returns the manifest (caller decrefs)
 * with the run directory in dir, or NULL after printing one error line. */
json_t *cli_load_run(const char *ref, char *dir, size_t dirlen);

/* Call fn for every trace entry of the run in dir, in order, until fn
 * returns non-zero. Returns 0, or -1 after printing one error line (missing
 * or foreign trace). A torn tail is reported with one warning line. */
int cli_each_entry(const char *dir, int (*fn)(void *ctx, const struct trace_entry *e), void *ctx);

/* Print s as a JSON string (with quotes) to stdout. */
void cli_json_str(const char *s, size_t n);

#endif
