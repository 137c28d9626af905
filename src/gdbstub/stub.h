/* stub: `rewind gdb`'s GDB remote-protocol server over one connection, on
 * a throwaway machine paused at a step of a stored run (rw_seek), showing
 * one process as gdb expects a Linux process; forward with hardware
 * breakpoints and single steps, backward by replaying from a step before.
 * A front end: include/rewind.h only. docs/debugging.md. */
#ifndef REWIND_GDBSTUB_STUB_H
#define REWIND_GDBSTUB_STUB_H

#include <signal.h>
#include <stdint.h>
#include <stdio.h>

#include "rewind.h"

struct gdbs_config {
    rw_home *h;
    const char *ref;  /* the run */
    uint64_t step;    /* where the session starts */
    uint32_t pid;     /* the process shown (resolved: never 0 unless kernel) */
    int kernel;       /* the whole machine: one thread (the vCPU), kernel memory */
    uint64_t history; /* the first step reverse execution may reach */
    volatile sig_atomic_t *abort;
    /* Ctrl-C (may be NULL): set with *abort to stop the running command
     * only; the stub clears both after it reported the stop, unless
     * *stopping (--timeout, SIGTERM: the session ends) is set. */
    volatile sig_atomic_t *interrupt, *stopping;
    FILE *notes;           /* one line per notice ("rewind: ..."), or NULL */
    const char *exe;       /* the program's path in the guest (qXfer:exec-file) */
    const char *exe_local; /* a host copy of it, or NULL (vFile copies it on demand) */
    /* --keep: gdb's writes at the session's start are appended here
     * (rw_patch_base began it); a write after the machine ran is refused
     * (stub.c invariant 9). NULL: writes are not kept. */
    struct rw_patch *keep;
    /* continue and step end the run as spin when it makes no step for this
     * many seconds of wall time (rw_resume.spin_limit_s; 0: never). */
    double spin_limit_s;
};

struct gdbs_result {
    int ended;      /* the run reached its end during the session */
    uint64_t steps; /* where the machine stood when the session ended */
    uint64_t debug_exits;
    uint64_t replays;          /* machines restored for reverse execution */
    uint64_t windows_given_up; /* of those, counting windows over their budget */
    int modified;              /* gdb wrote registers or memory (M, G, P): the machine's
                                  run is no longer the stored run's */
    char trace_hash[65];       /* with finish: the trace hash of the run to its end */
};

struct gdbs_session;

/* Pause a throwaway machine at cfg->step (rw_seek) showing cfg->pid.
 * 0 with *s, or -1 with err (RW_EUSAGE: no such step or process). The
 * session keeps cfg and res (not copies): both must outlive it, up to
 * gdbs_end. */
int gdbs_start(const struct gdbs_config *cfg, struct gdbs_result *res, struct gdbs_session **s,
               struct rw_error *err);
/* Serve one gdb connection, reading packets from rfd and writing to wfd
 * (the same socket, or stdin and stdout), until gdb detaches, kills or
 * closes. */
void gdbs_serve(struct gdbs_session *s, int rfd, int wfd);
/* End the session; with finish, first run the machine to the run's end and
 * put its trace hash and steps in the result. Frees s. 0 or -1 with err. */
int gdbs_end(struct gdbs_session *s, int finish, struct rw_error *err);

#endif
