/*
 * describe: one line of words for a trace entry, for diff, diverge and
 * events: "output fd 1 pid 12/12: \"hello\\n\"".
 */
#ifndef REWIND_TRACE_DESCRIBE_H
#define REWIND_TRACE_DESCRIBE_H

#include <stddef.h>
#include <stdint.h>

#include "trace/trace.h"

/* The kind's name ("output", "exec", ...: constant storage), or "kind-N"
 * written into buf (RW_KIND_NAME_MAX bytes) and buf returned. */
const char *describe_kind(unsigned kind, char *buf);

/* Kind name to number; 0 if unknown. */
unsigned describe_kind_number(const char *name);

/* A signal's name ("SIGSEGV") as Linux numbers it on x86_64, or NULL. */
const char *describe_signal_name(unsigned sig);

/* A wait status (as the guest's exit event carries it in aux: exit(1) is
 * 256) in words: "exited 1", "killed by SIGSEGV (core)", "killed by signal
 * 77". Always NUL-terminated. */
void describe_wait_status(uint64_t status, char *out, size_t n);

/* Write a one-line description of e into out (always NUL-terminated). */
void describe_entry(const struct trace_entry *e, char *out, size_t n);

#endif
