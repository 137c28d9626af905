/* spin.h - a guest that makes no step: the watchdog that notices it (no
 * step for --spin-limit seconds of wall time) and the look at where the
 * vCPU is (registers, and the current task as the guest kernel knows it).
 * docs/determinism.md, "A guest that spins", says why a spin cannot be
 * ended at a deterministic point today. */
#ifndef REWIND_VMM_SPIN_H
#define REWIND_VMM_SPIN_H

#include <pthread.h>
#include <signal.h>
#include <stdint.h>

#include "vmm/kvm.h"

struct spin_watch {
    pthread_t thread, target;
    volatile int stop;
    int on;
    const uint64_t *step; /* the platform's step counter */
    double limit_s;
    struct kvm_run *run;
    volatile sig_atomic_t fired; /* 1: no step for limit_s; the vCPU is being stopped */
};

/* Watch *step from a thread; when it has not moved for limit_s seconds of
 * wall time, set w->fired and kick the calling (vCPU) thread out of KVM_RUN
 * (SIGUSR1, immediate_exit) until spin_watch_stop. limit_s 0: off.
 * Returns 0, or -1 (errno) if the thread cannot start. */
int spin_watch_start(struct spin_watch *w, const uint64_t *step, double limit_s,
                     struct kvm_run *run);
void spin_watch_stop(struct spin_watch *w);

/* Where a stopped vCPU is. */
struct spin_where {
    int user; /* 1: user mode (CPL 3), 0: kernel */
    uint64_t rip;
    int have_task; /* pid, tgid and comm were read from the guest kernel */
    uint32_t pid, tgid;
    char comm[17];
    int have_func; /* kernel mode: rip's function in the guest kernel */
    char func[128];
    uint64_t func_off;
};

/* Read registers and the current task (the kernel's current_task, found in
 * the ELF at kernel_path; the offsets of pid and comm in task_struct found
 * in init_task, see spin.c). Returns 0 (have_task may still be 0, with why
 * saying what failed), or -1 if the registers cannot be read. */
int spin_where(struct kvm_vm *vm, const char *kernel_path, struct spin_where *w, char *why,
               size_t n);

/* Where the guest kernel keeps the current task and its ids, found as
 * spin_where finds them (the design note of spin.c): the address of
 * current_task and the offsets of pid (tgid follows it) and comm in
 * task_struct. 0 or -1 with why. */
struct spin_layout {
    uint64_t current_task;
    size_t pid_off, comm_off;
};
int spin_layout_find(struct kvm_vm *vm, const char *kernel_path, struct spin_layout *l, char *why,
                     size_t n);

#endif
