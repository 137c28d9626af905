/* debugreg.h - hardware watchpoints on the vCPU and the reads a watcher
 * needs between exits (docs/debugging.md): up to four write watchpoints set
 * through KVM_SET_GUEST_DEBUG (DR0-3 and DR7 of the host's view, hidden from
 * the guest), which of them a KVM_EXIT_DEBUG reports, and guest memory read
 * through the 4-level page tables at a CR3 (any process's, not only the
 * running one's). Nothing here changes guest state. */
#ifndef REWIND_VMM_DEBUGREG_H
#define REWIND_VMM_DEBUGREG_H

#include <stddef.h>
#include <stdint.h>

#include "vmm/kvm.h"

#define DEBUGREG_MAX 4 /* DR0..DR3 */

/* [addr, addr + len) split into at most DEBUGREG_MAX naturally aligned
 * pieces of 1, 2, 4 or 8 bytes (the sizes DR7 can watch). Returns the count,
 * or 0 if the range is empty, wraps, or needs more than DEBUGREG_MAX. */
unsigned debugreg_split(uint64_t addr, uint64_t len, uint64_t at[DEBUGREG_MAX],
                        unsigned size[DEBUGREG_MAX]);

/* Watch writes to the n pieces (n 0: guest debugging off). 0 or -1 (errno). */
int debugreg_arm(struct kvm_vm *vm, const uint64_t *at, const unsigned *size, unsigned n);

/* After KVM_EXIT_DEBUG: the mask of watchpoints (bit i: DRi) that fired,
 * from DR6; 0 if the exit was not one of ours. */
unsigned debugreg_fired(const struct kvm_run *run);

/* After KVM_EXIT_DEBUG: if the exit is also (or only) a single-step trap
 * of the guest's own (DR6.BS: the guest kernel's memory-access bursts set
 * TF on its user tasks, docs/determinism.md), give it back to the guest as
 * the #DB it would have taken without a debugger: DR6 as the guest reads it
 * says BS, and the exception is injected at the next entry (invariant 4).
 * 1 if given back, 0 if there was none, -1 (errno) if KVM refused. */
int debugreg_give_back(struct kvm_vm *vm);

/* The guest-physical address of linear address gva in the page tables at
 * cr3 (4-level paging, 4 KiB, 2 MiB and 1 GiB pages). 0 or -1 (not mapped,
 * or a table outside guest RAM). */
int debugreg_translate(const struct kvm_vm *vm, uint64_t cr3, uint64_t gva, uint64_t *gpa);

/* Read n bytes at gva through the page tables at cr3, page by page. 0 or -1. */
int debugreg_read(const struct kvm_vm *vm, uint64_t cr3, uint64_t gva, void *out, size_t n);

#endif
