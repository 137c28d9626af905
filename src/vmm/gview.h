/*
 * gview: a VM's RAM as src/guestos reads it (struct gos_mem over kvm_gpa and
 * kvm_gpa_w), so that every guest-virtual read of the monitor walks the
 * guest's page tables in one place: gos_translate and gos_vread
 * (src/guestos/gos.c). The debugger (src/run/guestview.c), the watchpoints'
 * reads (debugreg.c) and the spin watchdog's current task (spin.c) use it.
 *
 * Invariants:
 *  1. Guest memory is reached only through kvm_gpa/kvm_gpa_w (bounds
 *     checked against guest RAM); a write marks its pages written.
 *  2. A read-only view (gview_mem_ro) has no write function: guestos
 *     refuses writes through it.
 */
#ifndef REWIND_VMM_GVIEW_H
#define REWIND_VMM_GVIEW_H

#include <stddef.h>
#include <stdint.h>

#include "guestos/gos.h"

struct kvm_vm;

/* vm's RAM, read and written. */
void gview_mem(struct kvm_vm *vm, struct gos_mem *m);
/* vm's RAM, read only (invariant 2). */
void gview_mem_ro(const struct kvm_vm *vm, struct gos_mem *m);

/* n bytes at guest-virtual gva through the page tables at cr3 (gos_vread
 * over vm's RAM). 0, or -1 when any of it is not mapped. */
int gview_read(const struct kvm_vm *vm, uint64_t cr3, uint64_t gva, void *out, size_t n);

#endif
