/* guestview: the guest kernel's view of a VM, shared by the debugger
 * (debug.c) and a run's gdb writes (patchapply.c); see guestview.c. */
#ifndef REWIND_RUN_GUESTVIEW_H
#define REWIND_RUN_GUESTVIEW_H

#include <stddef.h>

#include "guestos/gos.h"
#include "rewind.h"

struct kvm_vm;
struct kvm_regs;

/* Is the vCPU (vcpu_fd) in user mode? 1, 0, or -1; *k its registers. */
int guestview_vcpu_user(int vcpu_fd, struct kvm_regs *k);

/* Open g over vm's RAM with the symbols of the kernel at path kernel
 * (what debug_gos does; a run's gdb writes use it too: patchapply.c).
 * 0 or -1 (why). */
int debug_gos_open(struct gos *g, struct kvm_vm *vm, const char *kernel, char *why, size_t n);
/* Write task t's user registers where they are read from (debug.c
 * invariant 3): the vCPU (vcpu_fd) when t is on it in user mode, else the
 * pt_regs its kernel saved. 0 or -1 with err. */
int debug_set_regs(const struct gos *g, int vcpu_fd, const struct gos_task *t,
                   const struct rw_regs *r, struct rw_error *err);

#endif
