/*
 * probe: measure whether /dev/kvm runs guest kernel mode natively.
 *
 * The guest is 2 MiB of RAM at guest-physical 0, entered directly in 64-bit
 * long mode at CPL 0 (the vCPU's registers are set by KVM_SET_SREGS; no
 * firmware, no mode switches). Layout:
 *
 *   0x0500  GDT: null, 64-bit code (0x08), data (0x10)
 *   0x1000  PML4 -> 0x2000 PDPT -> 0x3000 PD, one 2 MiB page identity-mapped
 *   0x8000  code:
 *             loop:  dec rcx ; jnz loop       48 ff c9  75 fb
 *                    out 0x10, al             e6 10      "loop done"
 *             exits: out 0x11, al ; jmp exits e6 11  eb fc
 *
 * Phases (probe_run):
 *   1. warm-up: RCX = 1000, run to the OUT to port 0x10 (first entry costs).
 *   2. loop:    RCX = 2^62, run for LOOP_WALL_S; iterations = 2^62 - RCX.
 *   3. exits:   RIP = exits, count OUT exits to port 0x11 for EXITS_WALL_S.
 *
 * Invariants:
 *   1. The probe never blocks unboundedly: a per-thread periodic timer sends
 *      SIGALRM every TICK_NS, whose (empty) handler makes KVM_RUN return
 *      EINTR, and each phase checks its wall-clock budget after every return.
 *      A tick lost in the window before KVM_RUN only delays the stop by one
 *      tick, so no shared state with the handler is needed.
 *   2. Everything probe_run acquires (fds, mappings, timer, signal action and
 *      mask) is released by probe_close, whatever phase failed.
 */
#ifndef _GNU_SOURCE /* the Makefile defines it; the one-line build does not */
#define _GNU_SOURCE
#endif
#include "vmm/probe.h"

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "util/fail.h"
#include "vmm/kvm.h"

#ifndef sigev_notify_thread_id
#define sigev_notify_thread_id _sigev_un._tid
#endif

enum {
    MEM_SIZE = 0x200000,
    GDT_GPA = 0x500,
    PML4_GPA = 0x1000,
    PDPT_GPA = 0x2000,
    PD_GPA = 0x3000,
    CODE_GPA = 0x8000,
    EXITS_OFF = 7, /* offset of the `exits:` label in code[] */
    PORT_LOOP_DONE = 0x10,
    PORT_EXIT = 0x11,
    WARMUP_ITERS = 1000,
    MAX_EXITS = 200000,
};

#define LOOP_ITERS (1ull << 62)
#define LOOP_WALL_S 0.5
#define EXITS_WALL_S 0.25
#define TICK_NS 20000000L

static const uint8_t code[] = {
    0x48, 0xff,           0xc9, /* loop: dec rcx */
    0x75, 0xfb,                 /*       jnz loop */
    0xe6, PORT_LOOP_DONE,       /*       out 0x10, al */
    0xe6, PORT_EXIT,            /* exits: out 0x11, al */
    0xeb, 0xfc,                 /*       jmp exits */
};

struct probe_vm {
    struct kvm_vm vm; /* opened, given RAM and a vCPU, and closed by kvmdev.c */
    timer_t timer;
    int have_timer, have_sigaction, have_mask;
    struct sigaction old_action;
    sigset_t old_mask;
};

#define fail util_fail

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void on_tick(int sig)
{
    (void)sig; /* only here so that KVM_RUN returns EINTR */
}

/* Give the vCPU the host's supported CPUID, so that long mode (EFER.LME) is
 * a valid state for it on every KVM version. */
static int set_cpuid(struct probe_vm *p, char *err, size_t errlen)
{
    struct kvm_cpuid2 *cpuid = kvm_supported_cpuid(p->vm.kvm_fd);
    if (!cpuid)
        return fail(err, errlen, "KVM_GET_SUPPORTED_CPUID failed: %s", strerror(errno));
    int rc = ioctl(p->vm.vcpu_fd, KVM_SET_CPUID2, cpuid);
    int e = errno;
    free(cpuid);
    if (rc < 0)
        return fail(err, errlen, "KVM_SET_CPUID2 failed: %s", strerror(e));
    return 0;
}

static void build_guest(uint8_t *mem)
{
    static const uint64_t gdt[] = {0, 0x00af9a000000ffffull, 0x00cf92000000ffffull};
    uint64_t pml4e = PDPT_GPA | 0x3, pdpte = PD_GPA | 0x3, pde = 0x83; /* P|RW, 2M page */

    memcpy(mem + GDT_GPA, gdt, sizeof(gdt));
    memcpy(mem + PML4_GPA, &pml4e, sizeof(pml4e));
    memcpy(mem + PDPT_GPA, &pdpte, sizeof(pdpte));
    memcpy(mem + PD_GPA, &pde, sizeof(pde));
    memcpy(mem + CODE_GPA, code, sizeof(code));
}

static struct kvm_segment flat_segment(uint16_t selector, uint8_t type, int code64)
{
    struct kvm_segment s;

    memset(&s, 0, sizeof(s));
    s.base = 0;
    s.limit = 0xffffffff;
    s.selector = selector;
    s.type = type;
    s.present = 1;
    s.dpl = 0;
    s.s = 1;
    s.l = (uint8_t)code64;
    s.db = (uint8_t)!code64;
    s.g = 1;
    return s;
}

static int set_long_mode(struct probe_vm *p, char *err, size_t errlen)
{
    struct kvm_sregs sregs;

    if (ioctl(p->vm.vcpu_fd, KVM_GET_SREGS, &sregs) < 0)
        return fail(err, errlen, "KVM_GET_SREGS failed: %s", strerror(errno));
    sregs.cs = flat_segment(0x08, 11, 1);
    sregs.ds = sregs.es = sregs.fs = sregs.gs = sregs.ss = flat_segment(0x10, 3, 0);
    sregs.gdt.base = GDT_GPA;
    sregs.gdt.limit = 3 * 8 - 1;
    sregs.cr3 = PML4_GPA;
    sregs.cr4 = 1u << 5;                                        /* PAE */
    sregs.cr0 = (1u << 0) | (1u << 4) | (1u << 5) | (1u << 31); /* PE ET NE PG */
    sregs.efer = (1u << 8) | (1u << 10);                        /* LME LMA */
    if (ioctl(p->vm.vcpu_fd, KVM_SET_SREGS, &sregs) < 0)
        return fail(err, errlen, "KVM_SET_SREGS (64-bit mode) failed: %s", strerror(errno));
    return 0;
}

static int set_regs(struct probe_vm *p, uint64_t rip, uint64_t rcx, char *err, size_t errlen)
{
    struct kvm_regs regs;

    memset(&regs, 0, sizeof(regs));
    regs.rip = rip;
    regs.rcx = rcx;
    regs.rflags = 0x2;
    regs.rsp = MEM_SIZE;
    if (ioctl(p->vm.vcpu_fd, KVM_SET_REGS, &regs) < 0)
        return fail(err, errlen, "KVM_SET_REGS failed: %s", strerror(errno));
    return 0;
}

static int get_rcx(struct probe_vm *p, uint64_t *rcx, char *err, size_t errlen)
{
    struct kvm_regs regs;

    if (ioctl(p->vm.vcpu_fd, KVM_GET_REGS, &regs) < 0)
        return fail(err, errlen, "KVM_GET_REGS failed: %s", strerror(errno));
    *rcx = regs.rcx;
    return 0;
}

static int start_timer(struct probe_vm *p, char *err, size_t errlen)
{
    struct sigaction sa;
    struct sigevent sev;
    struct itimerspec its;
    sigset_t unblock;

    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_tick;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGALRM, &sa, &p->old_action) < 0)
        return fail(err, errlen, "sigaction(SIGALRM) failed: %s", strerror(errno));
    p->have_sigaction = 1;
    sigemptyset(&unblock);
    sigaddset(&unblock, SIGALRM);
    if (pthread_sigmask(SIG_UNBLOCK, &unblock, &p->old_mask) != 0)
        return fail(err, errlen, "cannot unblock SIGALRM");
    p->have_mask = 1;
    memset(&sev, 0, sizeof(sev));
    sev.sigev_notify = SIGEV_THREAD_ID;
    sev.sigev_signo = SIGALRM;
    sev.sigev_notify_thread_id = gettid();
    if (timer_create(CLOCK_MONOTONIC, &sev, &p->timer) < 0)
        return fail(err, errlen, "timer_create failed: %s", strerror(errno));
    p->have_timer = 1;
    its.it_value.tv_sec = 0;
    its.it_value.tv_nsec = TICK_NS;
    its.it_interval = its.it_value;
    if (timer_settime(p->timer, 0, &its, NULL) < 0)
        return fail(err, errlen, "timer_settime failed: %s", strerror(errno));
    return 0;
}

/* One KVM_RUN. Returns the exit reason (KVM_EXIT_INTR when a tick stopped
 * it), or -1 with err set. */
static int run_once(struct probe_vm *p, char *err, size_t errlen)
{
    if (ioctl(p->vm.vcpu_fd, KVM_RUN, 0) < 0) {
        if (errno == EINTR || errno == EAGAIN)
            return KVM_EXIT_INTR;
        return fail(err, errlen, "KVM_RUN failed: %s", strerror(errno));
    }
    return (int)p->vm.run->exit_reason;
}

/* Returns 1 if the exit is the OUT to `port` the code should make next,
 * 0 for a tick, -1 (err set) for anything else. */
static int expect_out(struct probe_vm *p, int reason, uint16_t port, char *err, size_t errlen)
{
    if (reason < 0)
        return -1;
    if (reason == KVM_EXIT_INTR)
        return 0;
    if (reason == KVM_EXIT_IO && p->vm.run->io.direction == KVM_EXIT_IO_OUT &&
        p->vm.run->io.port == port)
        return 1;
    if (reason == KVM_EXIT_IO)
        return fail(err, errlen, "probe guest made an unexpected I/O to port 0x%x",
                    p->vm.run->io.port);
    if (reason == KVM_EXIT_FAIL_ENTRY)
        return fail(err, errlen, "KVM could not enter the probe guest (hardware reason 0x%llx)",
                    (unsigned long long)p->vm.run->fail_entry.hardware_entry_failure_reason);
    if (reason == KVM_EXIT_INTERNAL_ERROR)
        return fail(err, errlen, "KVM internal error %u in the probe guest",
                    p->vm.run->internal.suberror);
    return fail(err, errlen, "probe guest stopped with KVM exit reason %d", reason);
}

static int warm_up(struct probe_vm *p, char *err, size_t errlen)
{
    double deadline = now_s() + LOOP_WALL_S;
    int rc;

    if (set_regs(p, CODE_GPA, WARMUP_ITERS, err, errlen) < 0)
        return -1;
    while ((rc = expect_out(p, run_once(p, err, errlen), PORT_LOOP_DONE, err, errlen)) == 0) {
        if (now_s() > deadline)
            return 0; /* so slow that even the warm-up did not end: measured next */
    }
    return rc < 0 ? -1 : 0;
}

static int measure_loop(struct probe_vm *p, double *iters_per_s, char *err, size_t errlen)
{
    double t0, t1;
    uint64_t rcx = LOOP_ITERS;
    int rc;

    if (set_regs(p, CODE_GPA, LOOP_ITERS, err, errlen) < 0)
        return -1;
    t0 = now_s();
    do {
        rc = expect_out(p, run_once(p, err, errlen), PORT_LOOP_DONE, err, errlen);
        t1 = now_s();
    } while (rc == 0 && t1 - t0 < LOOP_WALL_S);
    if (rc < 0 || get_rcx(p, &rcx, err, errlen) < 0)
        return -1;
    *iters_per_s = (double)(LOOP_ITERS - rcx) / (t1 - t0);
    return 0;
}

static int measure_exits(struct probe_vm *p, double *exit_us, char *err, size_t errlen)
{
    double t0, t1;
    long exits = 0;
    int rc;

    if (set_regs(p, CODE_GPA + EXITS_OFF, 0, err, errlen) < 0)
        return -1;
    t0 = now_s();
    do {
        rc = expect_out(p, run_once(p, err, errlen), PORT_EXIT, err, errlen);
        if (rc < 0)
            return -1;
        exits += rc;
        t1 = now_s();
    } while (exits < MAX_EXITS && t1 - t0 < EXITS_WALL_S);
    if (exits == 0)
        return fail(err, errlen, "the probe guest made no I/O exit in %.2f s", t1 - t0);
    *exit_us = (t1 - t0) * 1e6 / (double)exits;
    return 0;
}

static void judge(struct probe_result *r)
{
    double m = r->cpl0_iters_per_s / 1e6, limit = PROBE_NATIVE_ITERS_PER_S / 1e6;

    r->native = r->cpl0_iters_per_s >= PROBE_NATIVE_ITERS_PER_S;
    if (r->native)
        snprintf(r->why, sizeof(r->why),
                 "guest kernel code runs natively: CPL 0 loop at %.0f M iter/s (>= %.0f M)", m,
                 limit);
    else
        snprintf(r->why, sizeof(r->why),
                 "this /dev/kvm emulates guest kernel code: CPL 0 loop at %.2f M iter/s "
                 "(< %.0f M); a Linux guest will not boot usefully here",
                 m, limit);
}

static void probe_close(struct probe_vm *p)
{
    if (p->have_timer)
        timer_delete(p->timer);
    if (p->have_mask)
        pthread_sigmask(SIG_SETMASK, &p->old_mask, NULL);
    if (p->have_sigaction)
        sigaction(SIGALRM, &p->old_action, NULL);
    kvm_close(&p->vm);
}

static int probe_measure(struct probe_vm *p, struct probe_result *r, char *err, size_t errlen)
{
    if (kvm_create_vm(&p->vm, err, errlen) < 0 ||
        kvm_map_ram(&p->vm, MEM_SIZE, 0, err, errlen) < 0 ||
        kvm_create_vcpu(&p->vm, err, errlen) < 0 || set_cpuid(p, err, errlen) < 0)
        return -1;
    build_guest(p->vm.ram);
    if (set_long_mode(p, err, errlen) < 0 || start_timer(p, err, errlen) < 0 ||
        warm_up(p, err, errlen) < 0 || measure_loop(p, &r->cpl0_iters_per_s, err, errlen) < 0 ||
        measure_exits(p, &r->exit_us, err, errlen) < 0)
        return -1;
    judge(r);
    return 0;
}

int probe_run(struct probe_result *r, char *err, size_t errlen)
{
    struct probe_vm p;
    int rc;

    memset(&p, 0, sizeof(p));
    kvm_init(&p.vm);
    memset(r, 0, sizeof(*r));
    if (errlen > 0)
        err[0] = '\0';
    rc = probe_measure(&p, r, err, errlen);
    probe_close(&p);
    return rc;
}
