/*
 * patchapply: a run's gdb writes (src/input/patch.h, the input) applied to
 * its machine at their step (ctx.c's on_step; patch.h invariant 2).
 */
#ifndef REWIND_RUN_PATCHAPPLY_H
#define REWIND_RUN_PATCHAPPLY_H

#include <stddef.h>

#include "rewind.h"

struct kvm_vm;

/* Apply p's writes to the machine of vm (its guest kernel's ELF at
 * kernel). 0, or -1 with why (which write, and why it failed). */
int patch_apply(const struct rw_patch *p, struct kvm_vm *vm, const char *kernel, char *why,
                size_t n);

#endif
