/*
 * snapshot: the machine state of a stopped VM other than its RAM: every
 * piece of vCPU state KVM holds (general and special registers, FPU/xsave,
 * XCRs, MSRs, the LAPIC, pending events, debug registers, MP state) and the
 * monitor's platform state (step, clock, timer, shared page, owed vector).
 * With the split irqchip the LAPIC is the only in-kernel interrupt
 * controller, so it is the irqchip.
 *
 * Invariants:
 *  1. Capture happens only at a step, after the pending port instruction
 *     is completed (KVM_RUN with immediate_exit): the saved RIP is past the
 *     OUT, so a restore never executes it twice.
 *  2. Restore into a VM that has a pending port instruction completes it
 *     first, so KVM does not skip an instruction of the restored state.
 *     (Current KVM also guards this: complete_fast_pio_out skips only when
 *     RIP is still the OUT's. We do not rely on it.)
 *  3. Restore forces a guest TLB flush (docs/determinism.md rule 10): KVM flushes only when
 *     CR0/CR3/CR4/EFER change, so sregs are set twice, first with CR4.PGE
 *     toggled.
 *  4. The blob is a fixed little-endian layout with a version; a blob of
 *     another version or size is refused.
 */
#ifndef REWIND_VMM_SNAPSHOT_H
#define REWIND_VMM_SNAPSHOT_H

#include <linux/kvm.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "vmm/platform.h"

#define SNAP_VERSION 1
#define SNAP_MSR_MAX 160

/* Test holes (never outside tests): each breaks one invariant above. */
#define SNAP_HOLE_NO_IO_COMPLETION 1 /* capture with the OUT still pending (1) */
#define SNAP_HOLE_NO_TLB_FLUSH 2     /* restore without the forced flush (3) */

struct snap_platform {
    uint64_t step, now_ns, deadline_ns, shared_gpa;
    uint32_t timer_armed, irq_wanted;
};
/* Invariant 4: the monitor's part of the layout is pinned here. */
_Static_assert(sizeof(struct snap_platform) == 40, "snapshot layout changed: bump SNAP_VERSION");

struct snap {
    uint32_t version, size; /* SNAP_VERSION, sizeof(struct snap) */
    struct snap_platform plat;
    struct kvm_regs regs;
    struct kvm_sregs sregs;
    struct kvm_xsave xsave;
    struct kvm_xcrs xcrs;
    struct kvm_lapic_state lapic;
    struct kvm_vcpu_events events;
    struct kvm_debugregs dregs;
    struct kvm_mp_state mp;
    uint32_t nmsrs, pad;
    struct kvm_msr_entry msrs[SNAP_MSR_MAX];
};

/* Complete a pending port instruction without running guest code. 0 or -1. */
int snap_complete_io(struct kvm_vm *vm);

/* Capture the vCPU of vm and the platform p into s. holes: SNAP_HOLE_*.
 * Returns 0 or -1 with one line in err. */
int snap_capture(struct platform *p, struct snap *s, unsigned holes, char *err, size_t errlen);

/* Restore s into p's VM and p (RAM is the caller's). Returns 0 or -1. */
int snap_restore(struct platform *p, const struct snap *s, unsigned holes, char *err,
                 size_t errlen);

/* Tests and diagnosis (bench/RESULTS.md, "Speed (issue 17)"): write every
 * piece of vCPU and VM state KVM exposes for vm, the kvm_run fields and the
 * platform p as text lines "name offset hex" to f, without changing any of
 * it (no KVM_RUN: the pending port instruction, if any, stays pending), so
 * two dumps of machines that should be equal can be compared with diff(1).
 * 0 or -1 + err. */
int snap_dump(struct platform *p, FILE *f, char *err, size_t errlen);

/* Check that a blob read from disk is a snap of this version. 0 or -1. */
int snap_check(const void *blob, size_t len, char *err, size_t errlen);

#endif
