/*
 * vcpu: see vcpu.h.
 */

#include "vmm/vcpu.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>

static void handle_io(struct platform *p)
{
    struct kvm_run *run = p->vm->run;
    uint8_t *data = (uint8_t *)run + run->io.data_offset;
    if (platform_owns_port(run->io.port)) {
        if (run->io.direction != KVM_EXIT_IO_OUT || run->io.size != 4 || run->io.count != 1) {
            platform_guest_error(p, "platform port 0x%x needs a single 32-bit OUT", run->io.port);
            return;
        }
        uint32_t v;
        memcpy(&v, data, 4);
        platform_port_out(p, run->io.port, v);
        return;
    }
    /* Not ours: no device lives there. Reads see all ones. */
    if (run->io.direction == KVM_EXIT_IO_IN)
        memset(data, 0xff, (size_t)run->io.size * run->io.count);
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

static void handle_exit(struct platform *p)
{
    struct kvm_run *run = p->vm->run;
    char what[128];
    switch (run->exit_reason) {
    case KVM_EXIT_IO:
        handle_io(p);
        break;
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
}

int vcpu_run(struct platform *p, const struct vcpu_limits *lim)
{
    struct kvm_run *run = p->vm->run;
    while (p->outcome == PLATFORM_RUNNING) {
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
                run->immediate_exit = 0;
                platform_host_exit(p);
                continue;
            }
            snprintf(p->message, sizeof(p->message), "KVM_RUN: %s", strerror(errno));
            return -1;
        }
        handle_exit(p);
    }
    return 0;
}
