/* machine: the state behind rw_machine (src/run/seek.c), shared with the
 * debugging functions of src/run/debug.c. */
#ifndef REWIND_RUN_MACHINE_H
#define REWIND_RUN_MACHINE_H

#include "run/modes.h"

struct rw_machine_debug; /* src/run/debug.c: the guest kernel's view, breakpoints */

struct rw_machine {
    struct run_stored st;
    struct run_ctx c;
    struct rw_result res;
    struct rw_error err; /* the context's own (its failures are copied out) */
    uint64_t step;
    struct rw_machine_debug *dbg; /* NULL until a debugging function needs it */
    int settled;                  /* rw_machine_finish ran run_settle: the machine runs no more */
};

/* gdb's breakpoints and single steps arm KVM's guest debugging, which takes
 * every #DB of the guest, also the single-step traps of the guest kernel's
 * memory-access bursts (docs/determinism.md). rewind watch gives those back
 * (src/vmm/debugreg.h invariant 4); the debugger's own single steps would
 * mix with them, so gdb and watch's stepping refuse such runs with this. */
#define RW_PREEMPT_NO_WATCHSTEP                                                                    \
    "a write seen after its step is not stepped to its writer on a run made with --preempt "       \
    "memory yet (writes inside the guest kernel's bursts are exact); rewind gdb --pid with a "     \
    "watchpoint stops at any write (docs/determinism.md, \"The debugger on such runs\")"
#define RW_PREEMPT_NO_DEBUGGER                                                                     \
    "a run made with --preempt memory cannot be debugged as a whole machine (--kernel) yet: "      \
    "the debug registers would mix with the guest kernel's own single-step bursts; debug a "       \
    "process (--pid), or use where, watch, cat, seek, fork and replay "                            \
    "(docs/determinism.md, \"The debugger on such runs\")"

/* Free m->dbg (rw_machine_close calls it). */
void debug_free(struct rw_machine *m);

#endif
