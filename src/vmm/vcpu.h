/*
 * vcpu: the step loop. One thread runs KVM_RUN and handles every exit with
 * one switch over the exit reason. Port accesses to the platform block are
 * steps (platform.c); every other exit is answered in a fixed way that does
 * not depend on the host (reads of unknown ports and MMIO return all ones,
 * writes are dropped), and exits the host causes (signals) are not steps.
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

struct vcpu_limits {
    uint64_t max_steps;           /* 0: no limit */
    struct vcpu_clock *clock;     /* NULL: not measured */
    volatile sig_atomic_t *abort; /* set (e.g. by a timer signal) to end the run */
    volatile sig_atomic_t *spin;  /* set by the spin watchdog: end the run as a spin */
};

/* Run until the platform reports an outcome or the run is aborted. Returns
 * 0 when the run ended (see p->outcome), -1 on a monitor failure (message in
 * p->message). */
int vcpu_run(struct platform *p, const struct vcpu_limits *lim);

/* Answer the exit KVM_RUN left in p->vm->run (one switch over the exit
 * reason); 1 if it was a step. vcpu_run's body, open for tests that drive
 * made-up exits over a fake VM (tests/engine/platform_test.c). */
int vcpu_handle_exit(struct platform *p);

#endif
