/*
 * cliutil: the trace walk of the commands that read runs. (cli.h declares
 * the helpers that need nothing of the engine but rewind.h.)
 */
#ifndef REWIND_CLI_UTIL_H
#define REWIND_CLI_UTIL_H

#include <jansson.h>
#include <signal.h>
#include <stdint.h>

#include "cli/cli.h"
#include "trace/trace.h"

/* Call fn for every trace entry of the run in dir, in order, until fn
 * returns non-zero. Returns 0, or -1 after printing one error line (missing
 * or foreign trace). A torn tail is reported with one warning line. */
int cli_each_entry(const char *dir, int (*fn)(void *ctx, const struct trace_entry *e), void *ctx);

#endif
