/*
 * vcpu: see vcpu.h.
 *
 * Invariants:
 *  1. A step is exactly one well-formed OUT (32 bits, count 1) to a platform
 *     port: handle_exit says whether it passed one to platform_port_out, and
 *     nothing else (other exits, host-caused returns of KVM_RUN) moves
 *     p->step.
 *  2. Every exit that is not a step is answered the same way on every host:
 *     reads of unknown ports and MMIO see all ones, writes are dropped, and
 *     the exits KVM cannot continue from end the run as a guest error.
 */

#include "vmm/vcpu.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>

#include "util/check.h"

/* Returns 1 if the exit was a step (invariant 1). */
static int handle_io(struct platform *p)
{
    struct kvm_run *run = p->vm->run;
    uint8_t *data = (uint8_t *)run + run->io.data_offset;
    if (platform_owns_port(run->io.port)) {
        if (run->io.direction != KVM_EXIT_IO_OUT || run->io.size != 4 || run->io.count != 1) {
            platform_guest_error(p, "platform port 0x%x needs a single 32-bit OUT", run->io.port);
            return 0;
        }
        uint32_t v;
        memcpy(&v, data, 4);
        platform_port_out(p, run->io.port, v);
        return 1;
    }
    /* Not ours: no device lives there. Reads see all ones. */
    if (run->io.direction == KVM_EXIT_IO_IN)
        memset(data, 0xff, (size_t)run->io.size * run->io.count);
    return 0;
}

static void handle_mmio(struct platform *p)
{
    struct kvm_run *run = p->vm->run;
    if (!run->mmio.is_write)
        memset(run->mmio.data, 0xff, sizeof(run->mmio.data));
}

static void fatal_exit(struct platform *p, const char *what)
{
    char regs[2048];
    FILE *f = fmemopen(regs, sizeof(regs), "w");
    if (f) {
        kvm_dump_regs(p->vm, f);
        fclose(f);
    } else {
        regs[0] = 0;
    }
    regs[sizeof(regs) - 1] = 0;
    platform_guest_error(p, "%s at step %llu\n%s", what, (unsigned long long)p->step, regs);
}

/* Answer one exit; returns 1 if it was a step (invariant 1). */
static int handle_exit(struct platform *p)
{
    struct kvm_run *run = p->vm->run;
    char what[128];
    switch (run->exit_reason) {
    case KVM_EXIT_IO:
        return handle_io(p);
    case KVM_EXIT_MMIO:
        handle_mmio(p);
        break;
    case KVM_EXIT_INTR:
        platform_host_exit(p);
        break;
    case KVM_EXIT_HLT:
        fatal_exit(p, "the guest executed HLT (not allowed on this platform)");
        break;
    case KVM_EXIT_SHUTDOWN:
        fatal_exit(p, "the guest triple-faulted (KVM_EXIT_SHUTDOWN)");
        break;
    case KVM_EXIT_FAIL_ENTRY:
        snprintf(what, sizeof(what), "KVM entry failed (reason 0x%llx)",
                 (unsigned long long)run->fail_entry.hardware_entry_failure_reason);
        fatal_exit(p, what);
        break;
    case KVM_EXIT_INTERNAL_ERROR:
        snprintf(what, sizeof(what), "KVM internal error (suberror %u)", run->internal.suberror);
        fatal_exit(p, what);
        break;
    default:
        snprintf(what, sizeof(what), "unexpected KVM exit %u", run->exit_reason);
        fatal_exit(p, what);
        break;
    }
    return 0;
}

int vcpu_run(struct platform *p, const struct vcpu_limits *lim)
{
    struct kvm_run *run = p->vm->run;
    while (p->outcome == PLATFORM_RUNNING) {
        if (lim->spin && *lim->spin) {
            p->outcome = PLATFORM_SPIN;
            snprintf(p->message, sizeof(p->message), "no step for the spin limit after step %llu",
                     (unsigned long long)p->step);
            return 0;
        }
        if (lim->abort && *lim->abort) {
            p->outcome = PLATFORM_TIMEOUT;
            snprintf(p->message, sizeof(p->message), "timed out after %llu steps",
                     (unsigned long long)p->step);
            return 0;
        }
        if (lim->max_steps && p->step >= lim->max_steps)
            return 0;
        if (ioctl(p->vm->vcpu_fd, KVM_RUN, 0) < 0) {
            if (errno == EINTR || errno == EAGAIN) {
                uint64_t step = p->step;
                run->immediate_exit = 0;
                platform_host_exit(p);
                RW_ASSERT(p->step == step); /* invariant 1: not a step */
                continue;
            }
            snprintf(p->message, sizeof(p->message), "KVM_RUN: %s", strerror(errno));
            return -1;
        }
        uint64_t step = p->step;
        int stepped = handle_exit(p);
        RW_ASSERT(p->step == step + (uint64_t)stepped); /* invariant 1 */
    }
    return 0;
}
