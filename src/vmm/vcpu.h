/*
 * vcpu: the step loop, the only KVM_RUN loop of the engine. One thread runs
 * KVM_RUN and handles every exit with one switch over the exit reason. Port
 * accesses to the platform block are steps (platform.c); every other exit is
 * answered in a fixed way that does not depend on the host (reads of unknown
 * ports and MMIO return all ones, writes are dropped), and exits the host
 * causes (signals) are not steps. A debugger (src/run/debug.c) runs the same
 * loop with hooks (struct vcpu_hooks), so the halt watchdog and the spin
 * watch hold under it too.
 */
#ifndef REWIND_VMM_VCPU_H
#define REWIND_VMM_VCPU_H

#include <signal.h>

#include "vmm/platform.h"

/* The monitor's own timers (a developer's measurement, REWIND_TIMING):
 * wall time inside KVM_RUN and outside it (the monitor's work between
 * exits), and the KVM_RUN calls made. */
struct vcpu_clock {
    uint64_t in_run_ns, monitor_ns, runs;
};

/* A hook's answer: what the loop does next. */
enum vcpu_verdict {
    VCPU_GO,   /* run on */
    VCPU_STOP, /* vcpu_run returns 0 now, the run still going (the hook's owner knows why) */
    VCPU_FAIL, /* vcpu_run returns -1 now (the hook's owner keeps the message) */
};

/* A debugger's hooks on the loop (src/run/debug.c). Each is optional (NULL:
 * VCPU_GO) and is called on the vCPU thread with ctx. The run's own ends
 * come first: an outcome, the spin watch and lim->abort are checked before
 * enter, and a STOP or FAIL verdict never changes p->outcome. */
struct vcpu_hooks {
    void *ctx;
    /* Before each KVM_RUN, once the outcome, spin and abort checks passed
     * and before the max_steps check: may set guest-debug or trap-flag state
     * for the next entry, or stop before it. */
    enum vcpu_verdict (*enter)(void *ctx, struct platform *p);
    /* At each KVM_EXIT_DEBUG, which is then never a step and never reaches
     * vcpu_handle_exit (p->step is asserted unchanged around the call). */
    enum vcpu_verdict (*debug)(void *ctx, struct platform *p);
    /* After each other exit of KVM_RUN (not a host-caused return), once
     * vcpu_handle_exit answered it; stepped is its verdict (1: a step). */
    enum vcpu_verdict (*exited)(void *ctx, struct platform *p, int stepped);
};

struct vcpu_limits {
    uint64_t max_steps;             /* 0: no limit */
    struct vcpu_clock *clock;       /* NULL: not measured */
    volatile sig_atomic_t *abort;   /* set (e.g. by a timer signal) to end the run */
    volatile sig_atomic_t *spin;    /* set by the spin watchdog: end the run as a spin */
    const struct vcpu_hooks *hooks; /* NULL: none */
};

/* Run until the platform reports an outcome, the run is aborted, max_steps
 * is reached or a hook says STOP. Returns 0 then (see p->outcome), -1 on a
 * monitor failure (message in p->message) or a hook's FAIL. */
int vcpu_run(struct platform *p, const struct vcpu_limits *lim);

/* Answer the exit KVM_RUN left in p->vm->run (one switch over the exit
 * reason); 1 if it was a step. vcpu_run's body, open for tests that drive
 * made-up exits over a fake VM (tests/engine/platform_test.c). */
int vcpu_handle_exit(struct platform *p);

#endif
