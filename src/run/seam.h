/*
 * seam: the run context's test seam (docs/architecture.md, "The run
 * context and its phases"). A test points run_opts.seam at one to run the
 * whole context (ctx.h: prepare, boot, loop, settle, finish, close) over a
 * fake machine instead of /dev/kvm and a guest kernel; the loop's own seam
 * (kvm_vm.enter, which the fake sets) then plays the guest's exits.
 * tests/engine/ctx_test.c is its one user (docs/testing.md, "Tiers").
 *
 * Invariants:
 *  1. NULL in every real run: only a test's own run_opts set it. No config,
 *     stored spec or front end reaches it (it is no field of
 *     include/rewind.h), and nothing that feeds a run's id, trace hash or
 *     RAM hash reads it: with it NULL, every phase does what it did
 *     before the seam existed.
 *  2. It replaces what needs /dev/kvm or a guest kernel, and nothing else:
 *     in run_machine_open, kvm_open, the host's CPU model and the image's
 *     memslot (kvm_map_image); in run_boot, boot_setup. The lock, image,
 *     hashes, initramfs, run directory, platform, record callbacks, loop,
 *     settle, comparison with a stored run and publishing are the real ones.
 *  3. What open makes is closed by kvm_close like a real VM (kvmdev.c
 *     invariant 1): RAM and kvm_run are anonymous mappings of ram_size and
 *     run_size bytes, the fds are -1, and written and dirty are allocated
 *     for RAM's pages; the fake's dirty pages come through kvm_vm.dirty_log.
 */
#ifndef REWIND_RUN_SEAM_H
#define REWIND_RUN_SEAM_H

#include <stddef.h>
#include <stdint.h>

#include "vmm/boot.h"
#include "vmm/kvm.h"

struct run_seam {
    /* In place of kvm_open, the host's CPU model and kvm_map_image: make vm
     * a machine with ram_size bytes of RAM whose exits come from vm->enter
     * (vm->send_vector and vm->dirty_log set too), and put the CPU model's
     * name in model (model_len bytes: it goes into the spec, so the run's
     * id). 0, or -1 with one line in err (the phase PH_KVM: RW_ENOKVM). */
    int (*open)(void *ctx, struct kvm_vm *vm, uint64_t ram_size, char *model, size_t model_len,
                char *err, size_t errlen);
    /* In place of boot_setup: what the guest is booted with (command line,
     * initramfs, RNG seed) handed to the fake. 0, or -1 with err (the
     * phase PH_BOOT: RW_EKERNEL). */
    int (*boot)(void *ctx, struct kvm_vm *vm, const struct boot_config *bc, char *err,
                size_t errlen);
    void *ctx;
};

#endif
