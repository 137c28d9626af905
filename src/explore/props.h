/*
 * props: the properties of a run, said from outside the program
 * (docs/tutorials/properties.md), and their verdicts over a stored run.
 *
 * A property is one of:
 *   exit=N          the job exited with status N
 *   outcome=WORD    the run ended so (rw_outcome_word: exited, timeout, ...)
 *   output~ERE      the job's output (stdout and stderr records, in order)
 *                   matches the POSIX extended regular expression ERE
 *                   (REG_NEWLINE: ^ and $ match at line ends)
 *   file:PATH~ERE   the file PATH in the VM, read by rewind-init after the
 *                   job (and after the --property command), matches ERE
 *   --property CMD  `/bin/sh -c CMD` run by rewind-init in the job's root,
 *                   cwd and env after the job ended: exit status 0 passes
 *
 * What rewind-init reports (guest/init/init.c) arrives as marks written by
 * PID 1 (the job is never PID 1), each starting with a tag line:
 *   "rewind-init:property-output\n" + bytes      (the command's output)
 *   "rewind-init:property-exit\n" + N            (its exit code; 128+sig)
 *   "rewind-init:file:I\n" + bytes               (part of file I's content)
 *   "rewind-init:file-missing:I\n" + reason      (file I could not be read)
 * where I counts the file properties from 0 in the order of expect.
 *
 * Invariants:
 *  1. A verdict is a pure function of the stored run (its manifest and its
 *     trace): judging a run twice gives the same verdicts.
 *  2. Only marks of PID 1 are read as rewind-init's: a job cannot forge one.
 *  3. Everything read from the run is untrusted: lengths are bounded
 *     (PROPS_OUTPUT_MAX per text), indexes checked against the spec.
 */
#ifndef REWIND_EXPLORE_PROPS_H
#define REWIND_EXPLORE_PROPS_H

#include <stddef.h>
#include <stdint.h>

#include "rewind.h"

#define PROPS_OUTPUT_MAX (8u << 20)

/* Judge run `name` (a directory under runs/) of home by the properties of
 * its spec: up to max verdicts into v, their count in *n (0: the spec has
 * none). 0, or -1 with err (the run is unreadable). */
int explore_props_judge(const char *home, const char *name, struct rw_prop_verdict *v, int max,
                        int *n, char *err, size_t errlen);

/* The last step present in the trace of run `name` (0 if none): the bound
 * for loops over a run's steps (the manifest's "steps" is untrusted). */
uint64_t explore_trace_last_step(const char *home, const char *name);

/* Wilson score interval at 95% for k failures of n: [*lo, *hi] in [0, 1]. */
void explore_wilson(uint64_t k, uint64_t n, double *lo, double *hi);

#endif
