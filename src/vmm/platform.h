/*
 * platform: the monitor's side of the guest platform ABI
 * (guest/include/rewind_abi.h). It owns the monitor state that the guest can
 * observe: the step counter, virtual time, the one-shot timer, the shared
 * page and the pending-interrupt bits. It is driven only by the vCPU loop,
 * on the vCPU thread, while the vCPU is stopped at a step (docs/determinism.md rules
 * 1, 2 and 4): nothing here reads host time or host randomness.
 *
 * Time: now += quantum at every step; idle jumps to the armed deadline; idle
 * with nothing armed ends the run as stalled.
 */
#ifndef REWIND_VMM_PLATFORM_H
#define REWIND_VMM_PLATFORM_H

#include <stddef.h>
#include <stdint.h>

#include "../../guest/include/rewind_abi.h"
#include "vmm/kvm.h"
#include "input/faults.h"
#include "input/sched.h"

enum platform_outcome {
    PLATFORM_RUNNING = 0,
    PLATFORM_EXITED,      /* the job ended; job_status holds its wait status */
    PLATFORM_NOT_FOUND,   /* the command is not in the root */
    PLATFORM_NOT_EXEC,    /* the command could not be executed */
    PLATFORM_INIT_FAILED, /* rewind-init could not set the job up */
    PLATFORM_PANIC,       /* the guest kernel panicked */
    PLATFORM_GUEST_ERROR, /* the guest broke the platform contract */
    PLATFORM_STALLED,     /* idle with no timer armed */
    PLATFORM_TIMEOUT,     /* wall-clock --timeout */
    PLATFORM_STOPPED,     /* reboot/halt without a job status */
    PLATFORM_LIMIT,       /* the run's disk limit (src/input/limits.h) */
    PLATFORM_SPIN,        /* no step for the spin limit (src/vmm/spin.c) */
};

/* Monitor-side test holes (bits above the guest's REWIND_HOLE_* bits). */
#define PLATFORM_HOLE_TIMER_AT_HOST_EXIT (1ull << 32) /* fire the timer at host-caused exits */
#define PLATFORM_HOLE_HOST_RNG (1ull << 33)           /* boot RNG seed from the host */
#define PLATFORM_HOLE_REFUSE_GO_ON (1ull << 34)    /* a refused port write does not end the run */
#define PLATFORM_HOLE_FAULT_HOST_TIME (1ull << 35) /* a fault's node and length from host time */
#define PLATFORM_HOLE_FAULT_AT_HOST_EXIT (1ull << 36) /* a fault handed over at a host exit */
#define PLATFORM_HOLE_GUEST_MASK 0xffffffffull

/* Called for every well-formed record, in step order. payload has r->len -
 * sizeof(*r) bytes and is only valid during the call. */
typedef void (*platform_record_fn)(void *ctx, uint64_t step, const struct rewind_record *r,
                                   const uint8_t *payload, size_t payload_len);

struct platform {
    struct kvm_vm *vm;
    uint64_t step;       /* steps taken so far; the current step's number */
    uint64_t now_ns;     /* virtual time since boot */
    uint64_t quantum_ns; /* virtual time per step */
    uint64_t epoch_ns;   /* wall clock at now_ns == 0 */
    uint64_t seed, schedule;
    uint64_t test_holes; /* REWIND_HOLE_* for the guest + PLATFORM_HOLE_* (tests only) */
    int timer_armed;
    uint64_t deadline_ns;
    uint64_t shared_gpa; /* 0 until the guest registers it */
    int irq_wanted;      /* the vector is owed to the guest (retry until taken) */
    enum platform_outcome outcome;
    uint64_t job_status;
    /* Port accesses refused as breaches of the contract (platform_refuse). */
    uint64_t refused;
    char message[512];                /* why the run ended, for non-EXITED outcomes */
    struct sched sched;               /* schedule perturbation (no segments: none) */
    uint64_t perturbed;               /* perturbations applied by this process */
    int step_access;                  /* this step's record is a memory-access point (sched.h) */
    uint64_t faulted;                 /* faults handed to the guest by this process (faults.h) */
    struct fault_decision fault_owed; /* test hole FAULT_AT_HOST_EXIT: held for a host exit */
    void (*on_step)(void *ctx, struct platform *p); /* after every step, if set */
    /* At an IDLE step, if set: return 1 when it made an interrupt owed
     * (input delivered), so the guest is not idle after all. */
    int (*on_idle)(void *ctx, struct platform *p);
    platform_record_fn on_record;
    void *record_ctx;
    /* A debugger's hooks (src/run/watch.c): at a KVM_EXIT_DEBUG (never a
     * step; without dbg_exit such an exit ends the run as a guest error) and
     * after every step, after on_step. */
    void (*dbg_exit)(void *ctx, struct platform *p);
    void (*dbg_step)(void *ctx, struct platform *p);
    void *dbg_ctx;
    /* REWIND_PORT_NOTICE was written since the last exit (a burst's end
     * while a debugger resumes: kvm_notice): no step, answered with
     * nothing; the debugger's exited hook reads and clears it. */
    int notice;
    _Alignas(8) uint8_t rec_buf[REWIND_RECORD_MAX]; /* a record copied out of the guest */
};

/* Initialise p for a fresh boot. */
void platform_init(struct platform *p, struct kvm_vm *vm, uint64_t quantum_ns, uint64_t epoch_ns,
                   uint64_t seed);

/* Handle one 32-bit OUT of value to port (one of ours). Afterwards, if
 * p->outcome != PLATFORM_RUNNING the run is over. */
void platform_port_out(struct platform *p, uint16_t port, uint32_t value);

/* A host-caused exit (signal) happened. Does nothing, as rule 2 demands,
 * unless the test hole PLATFORM_HOLE_TIMER_AT_HOST_EXIT is open. */
void platform_host_exit(struct platform *p);

/* Between steps (vCPU stopped at one): ask the guest to inspect (req, len
 * bytes: see rewind_abi.h) and inject the vector now. 0, or -1 if the
 * guest has no shared page yet or req is too long. */
int platform_inspect(struct platform *p, const void *req, size_t len);

/* At a step: hand up to REWIND_SHARED_INPUT_MAX bytes of input to the
 * guest if it took the previous ones. Returns the bytes handed over (0:
 * busy, try at a later step). The vector is injected at the end of the step. */
size_t platform_input(struct platform *p, const void *buf, size_t len);

/* True when port belongs to the rewind port block. */
int platform_owns_port(uint16_t port);

/* End the run as a guest error with a formatted message. */
void platform_guest_error(struct platform *p, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Refuse a port access that breaks the contract (a bad record, port, stop
 * code, registration, access size): count it in p->refused and end the run
 * as a guest error with the message, or, only with the test hole
 * PLATFORM_HOLE_REFUSE_GO_ON, keep the message as the last refusal and let
 * the guest go on (hostile-guest tests send many bad writes in one run). */
void platform_refuse(struct platform *p, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
