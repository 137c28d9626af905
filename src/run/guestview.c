/*
 * guestview: the guest kernel's view of a VM's memory and registers, the
 * two calls both the debugger (debug.c) and a run's gdb writes
 * (patchapply.c) make: a struct gos over the VM's RAM, and a task's user
 * registers written where they are read from. Declared in debug.h; kept
 * apart from debug.c so that the run context, which applies gdb writes,
 * does not depend on the debugger, which depends on the run context.
 * debug.c's invariants 2 and 3 hold here.
 */
#include <linux/kvm.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>

#include "guestos/gos.h"
#include "run/guestview.h"
#include "vmm/gview.h"
#include "vmm/kvm.h"

/* Is the vCPU in user mode? 1, 0, or -1. */
int guestview_vcpu_user(int vcpu_fd, struct kvm_regs *k)
{
    struct kvm_sregs s;
    if (ioctl(vcpu_fd, KVM_GET_SREGS, &s) < 0 || ioctl(vcpu_fd, KVM_GET_REGS, k) < 0)
        return -1;
    return (s.cs.selector & 3) == 3;
}

static int fail(struct rw_error *err, enum rw_code code, const char *fmt, const char *why)
{
    err->code = code;
    snprintf(err->msg, sizeof(err->msg), fmt, why);
    return -1;
}

int debug_gos_open(struct gos *g, struct kvm_vm *vm, const char *kernel, char *why, size_t n)
{
    struct gos_syms s;
    struct gos_mem mem;
    gview_mem(vm, &mem); /* debug.c invariant 2 */
    if (gos_syms_load(kernel, &s, why, n) < 0 || gos_open(g, &mem, &s, why, n) < 0)
        return -1;
    return 0;
}

/* debug.c invariant 3: where the registers are read from. */
int debug_set_regs(const struct gos *g0, int vcpu_fd, const struct gos_task *t,
                   const struct rw_regs *r, struct rw_error *err)
{
    const uint64_t keep = 0x10100; /* RF, TF */
    struct kvm_regs k;
    int user = t->current ? guestview_vcpu_user(vcpu_fd, &k) : 0;
    if (user < 0)
        return fail(err, RW_EINTERNAL, "%s", "cannot read the vCPU's registers");
    if (user) {
        k.rax = r->rax, k.rbx = r->rbx, k.rcx = r->rcx, k.rdx = r->rdx;
        k.rsi = r->rsi, k.rdi = r->rdi, k.rsp = r->rsp, k.rbp = r->rbp;
        k.r8 = r->r8, k.r9 = r->r9, k.r10 = r->r10, k.r11 = r->r11;
        k.r12 = r->r12, k.r13 = r->r13, k.r14 = r->r14, k.r15 = r->r15;
        k.rip = r->rip;
        k.rflags = (r->rflags & ~keep) | (k.rflags & keep) | 2;
        if (ioctl(vcpu_fd, KVM_SET_REGS, &k) < 0)
            return fail(err, RW_EINTERNAL, "%s", "cannot write the vCPU's registers");
        return 0;
    }
    struct gos_regs g;
    if (gos_user_regs(g0, t, &g) < 0)
        return fail(err, RW_EUSAGE, "thread %s has no user registers (a kernel thread)", t->comm);
    g.rax = r->rax, g.rbx = r->rbx, g.rcx = r->rcx, g.rdx = r->rdx;
    g.rsi = r->rsi, g.rdi = r->rdi, g.rsp = r->rsp, g.rbp = r->rbp;
    g.r8 = r->r8, g.r9 = r->r9, g.r10 = r->r10, g.r11 = r->r11;
    g.r12 = r->r12, g.r13 = r->r13, g.r14 = r->r14, g.r15 = r->r15;
    g.rip = r->rip;
    g.rflags = (r->rflags & ~keep) | (g.rflags & keep) | 2;
    if (gos_set_user_regs(g0, t, &g) < 0)
        return fail(err, RW_EINTERNAL, "cannot write the registers thread %s saved", t->comm);
    return 0;
}
