/*
 * cli_read: what the reading commands (ls, log, ps, events, diff, diverge,
 * remove, gc, export, import, doctor) share: the open home, a run's
 * loading with its error line, step arguments, JSON strings and the
 * warning for a torn trace. Printing only; the engine's part is in
 * include/rewind.h.
 */
#ifndef REWIND_CLI_READ_H
#define REWIND_CLI_READ_H

#include <stddef.h>
#include <stdint.h>

#include "rewind.h"

/* The home named by $REWIND_HOME (else ~/.local/share/rewind), opened on first use and
 * closed when the command returns (main.c). NULL after one error line. */
rw_home *cli_read_home(void);
/* Close it (main, when the command returns). */
void cli_read_home_close(void);

/* Load the run ref into *info (rw_run_info_free it). Returns 0, or -1
 * after one error line. */
int cli_read_run(const char *ref, struct rw_run_info *info);

/* Reads a run's trace (rw_log, rw_events, rw_ps with the caller's
 * arguments in ctx). */
typedef int (*cli_read_trace_fn)(rw_home *h, const char *id, void *ctx, struct rw_trace_status *st,
                                 struct rw_error *err);

/* The shape of log, events and ps: load the run ref (exit 1 if it does not
 * load), print head (if not NULL), or '[' with json, run read, then the
 * error or torn-trace line, and ']' with json. Returns the exit code: 1
 * when the run or its trace could not be read, else 0. */
int cli_read_trace(const char *ref, int json, const char *head, cli_read_trace_fn read, void *ctx);

/* Parse a step number (decimal, no sign). Returns 0 or -1. */
int cli_read_step(const char *s, uint64_t *out);
/* --timeout S: a number of seconds from 1 ms to 30 days (no units) into
 * *out; 0, or -1 when it is
 * not one (the caller prints the one error line). */
int cli_read_seconds(const char *s, double *out);

/* Print the n bytes at s as a JSON string (with quotes) to stdout; bytes
 * >= 0x80 are written as \u00XX (Latin-1), so the result is always valid
 * JSON, even for output that is not UTF-8. */
void cli_read_json_str(const char *s, size_t n);

/* After reading a trace: one warning line if it was torn. */
void cli_read_torn(const struct rw_trace_status *st);

/* Print err's line ("rewind: <msg>") and return code. */
int cli_read_fail(int code, const struct rw_error *err);

#endif
