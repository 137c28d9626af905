/*
 * debug: a paused machine (rw_seek) seen as the guest kernel sees it: its
 * threads, a thread's user registers, a process's memory (src/guestos over
 * the VM's RAM). docs/debugging.md.
 *
 * Invariants:
 *  1. The guest kernel's offsets are found once per machine (gos_open) and
 *     the task list is read again at each call: the machine may have run.
 *  2. Guest memory is reached only through kvm_gpa/kvm_gpa_w (bounds
 *     checked), and writes mark the pages written (a kept fork's keyframes
 *     see them).
 *  3. A thread's registers come from the vCPU only when it is the one on
 *     the CPU and the vCPU is in user mode; otherwise from the pt_regs the
 *     kernel saved when it entered the kernel.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>

#include "guestos/gos.h"
#include "run/debug.h"
#include "run/machine.h"
#include "util/check.h"
#include "vmm/vcpu.h"

struct rw_machine_debug {
    struct gos g;
    uint64_t dr[4], dr7; /* the debug registers as last set */
    int open;
    struct gos_task *tasks;
    size_t ntasks;
};

void debug_free(struct rw_machine *m)
{
    if (!m->dbg)
        return;
    free(m->dbg->tasks);
    free(m->dbg);
    m->dbg = NULL;
}

static int fail(struct rw_error *err, enum rw_code code, const char *fmt, const char *why)
{
    err->code = code;
    snprintf(err->msg, sizeof(err->msg), fmt, why);
    return -1;
}

struct gos *debug_gos(rw_machine *m, struct rw_error *err)
{
    if (!m->dbg) {
        m->dbg = calloc(1, sizeof(*m->dbg));
        if (m->dbg)
            m->dbg->tasks = calloc(GOS_TASKS_MAX, sizeof(struct gos_task));
        if (!m->dbg || !m->dbg->tasks) {
            debug_free(m);
            fail(err, RW_EINTERNAL, "%s", "out of memory");
            return NULL;
        }
    }
    if (!m->dbg->open) { /* invariant 1 */
        char why[300];
        if (debug_gos_open(&m->dbg->g, &m->c.vm, m->st.o.kernel, why, sizeof(why)) < 0) {
            fail(err, RW_EINTERNAL, "cannot read the guest kernel's tasks: %s", why);
            return NULL;
        }
        m->dbg->open = 1;
    }
    return &m->dbg->g;
}

int debug_tasks(rw_machine *m, const struct gos_task **tasks, size_t *n, struct rw_error *err)
{
    struct gos *g = debug_gos(m, err);
    if (!g)
        return -1;
    char why[300];
    if (gos_tasks(g, m->dbg->tasks, GOS_TASKS_MAX, &m->dbg->ntasks, why, sizeof(why)) < 0)
        return fail(err, RW_EINTERNAL, "cannot read the guest kernel's tasks: %s", why);
    *tasks = m->dbg->tasks;
    *n = m->dbg->ntasks;
    return 0;
}

const struct gos_task *debug_task(rw_machine *m, uint32_t tid, struct rw_error *err)
{
    const struct gos_task *t;
    size_t n;
    if (debug_tasks(m, &t, &n, err) < 0)
        return NULL;
    for (size_t i = 0; i < n; i++)
        if (t[i].pid == tid)
            return &t[i];
    err->code = RW_EUSAGE;
    snprintf(err->msg, sizeof(err->msg), "no thread %u at step %llu", tid,
             (unsigned long long)m->c.p->step);
    return NULL;
}

int rw_machine_threads(rw_machine *m, struct rw_thread *out, size_t max, size_t *count,
                       struct rw_error *err)
{
    const struct gos_task *t;
    size_t n;
    if (debug_tasks(m, &t, &n, err) < 0)
        return -1;
    *count = n;
    for (size_t i = 0; i < n && i < max; i++) {
        out[i] = (struct rw_thread){.tid = t[i].pid,
                                    .pid = t[i].tgid,
                                    .state = t[i].state,
                                    .current = t[i].current,
                                    .kernel = t[i].kernel_thread};
        memcpy(out[i].comm, t[i].comm, sizeof(out[i].comm));
    }
    return 0;
}

/* Is the vCPU in user mode? 1, 0, or -1. */
static int vcpu_user(int vcpu_fd, struct kvm_regs *k)
{
    struct kvm_sregs s;
    if (ioctl(vcpu_fd, KVM_GET_SREGS, &s) < 0 || ioctl(vcpu_fd, KVM_GET_REGS, k) < 0)
        return -1;
    return (s.cs.selector & 3) == 3;
}

int rw_machine_user_regs(rw_machine *m, uint32_t tid, struct rw_uregs *r, struct rw_error *err)
{
    const struct gos_task *t = debug_task(m, tid, err);
    if (!t)
        return -1;
    memset(r, 0, sizeof(*r));
    struct kvm_regs k;
    int user = t->current ? vcpu_user(m->c.vm.vcpu_fd, &k) : 0;
    if (user < 0)
        return fail(err, RW_EINTERNAL, "%s", "cannot read the vCPU's registers");
    if (user) { /* invariant 3 */
        struct kvm_sregs s;
        if (ioctl(m->c.vm.vcpu_fd, KVM_GET_SREGS, &s) < 0)
            return fail(err, RW_EINTERNAL, "%s", "cannot read the vCPU's registers");
        r->r = (struct rw_regs){k.rax, k.rbx, k.rcx, k.rdx, k.rsi, k.rdi, k.rsp, k.rbp, k.r8,
                                k.r9,  k.r10, k.r11, k.r12, k.r13, k.r14, k.r15, k.rip, k.rflags};
        r->cs = s.cs.selector;
        r->ss = s.ss.selector;
        r->fs_base = s.fs.base;
        return 0;
    }
    struct gos_regs g;
    if (gos_user_regs(&m->dbg->g, t, &g) < 0)
        return fail(err, RW_EUSAGE, "thread %s has no user registers (a kernel thread)", t->comm);
    r->r = (struct rw_regs){g.rax, g.rbx, g.rcx, g.rdx, g.rsi, g.rdi, g.rsp, g.rbp, g.r8,
                            g.r9,  g.r10, g.r11, g.r12, g.r13, g.r14, g.r15, g.rip, g.rflags};
    r->cs = g.cs;
    r->ss = g.ss;
    r->orig_rax = g.orig_rax;
    r->in_kernel = 1;
    return 0;
}

/* Invariant 3 for writes: the registers are written where they are read
 * from (the vCPU, or the pt_regs the kernel saved); the trap and resume
 * flags stay the debugger's own (rw_machine_resume's). */
int rw_machine_set_user_regs(rw_machine *m, uint32_t tid, const struct rw_regs *r,
                             struct rw_error *err)
{
    const struct gos_task *t = debug_task(m, tid, err);
    if (!t)
        return -1;
    return debug_set_regs(&m->dbg->g, m->c.vm.vcpu_fd, t, r, err);
}

/* The page table of process pid (any of its threads). 0 or -1 with err. */
int debug_pgd(rw_machine *m, uint32_t pid, uint64_t *pgd, struct rw_error *err)
{
    const struct gos_task *t;
    size_t n;
    if (debug_tasks(m, &t, &n, err) < 0)
        return -1;
    for (size_t i = 0; i < n; i++)
        if (t[i].tgid == pid && !t[i].kernel_thread) {
            *pgd = t[i].pgd;
            return 0;
        }
    err->code = RW_EUSAGE;
    snprintf(err->msg, sizeof(err->msg), "no process %u at step %llu", pid,
             (unsigned long long)m->c.p->step);
    return -1;
}

/* The page table of pid, or with pid 0 the vCPU's (CR3). 0 or -1. */
static int pgd_of(rw_machine *m, uint32_t pid, uint64_t *pgd)
{
    struct rw_error err;
    if (!debug_gos(m, &err))
        return -1;
    if (pid)
        return debug_pgd(m, pid, pgd, &err);
    struct kvm_sregs s;
    if (ioctl(m->c.vm.vcpu_fd, KVM_GET_SREGS, &s) < 0)
        return -1;
    *pgd = s.cr3 & 0x000ffffffffff000ull;
    return 0;
}

size_t rw_machine_read(rw_machine *m, uint32_t pid, uint64_t addr, void *buf, size_t n)
{
    uint64_t pgd;
    if (pgd_of(m, pid, &pgd) < 0)
        return 0;
    return gos_vread(&m->dbg->g, pgd, addr, buf, n);
}

size_t rw_machine_write(rw_machine *m, uint32_t pid, uint64_t addr, const void *buf, size_t n)
{
    uint64_t pgd;
    if (pgd_of(m, pid, &pgd) < 0)
        return 0;
    return gos_vwrite(&m->dbg->g, pgd, addr, buf, n);
}

long rw_machine_auxv(rw_machine *m, uint32_t pid, void *buf, size_t max, struct rw_error *err)
{
    const struct gos_task *t;
    size_t n;
    if (debug_tasks(m, &t, &n, err) < 0)
        return -1;
    for (size_t i = 0; i < n; i++) {
        if (t[i].tgid != pid || t[i].kernel_thread)
            continue;
        uint64_t w[GOS_AUXV_WORDS];
        size_t nw;
        if (gos_auxv(&m->dbg->g, &t[i], w, GOS_AUXV_WORDS, &nw) < 0)
            return fail(err, RW_EUSAGE, "%s",
                        "the process's auxiliary vector was not found in its mm_struct");
        size_t bytes = nw * 8 < max ? nw * 8 : max;
        memcpy(buf, w, bytes);
        return (long)bytes;
    }
    err->code = RW_EUSAGE;
    snprintf(err->msg, sizeof(err->msg), "no process %u at step %llu", pid,
             (unsigned long long)m->c.p->step);
    return -1;
}

/* ---- Running on under a debugger (rw_machine_resume) ----
 *
 * Invariants (continued):
 *  4. A debug exit is never a step: only vcpu_handle_exit moves p->step,
 *     and it is never called for KVM_EXIT_DEBUG (asserted around each).
 *  5. Debug register slot 3 is rewind's own (the return of a stepped
 *     thread to user mode); the caller's breakpoints use slots 0..2.
 *  6. Guest debugging is switched off again before rw_machine_resume
 *     returns: a machine that runs on without a debugger takes no debug
 *     exits.
 *
 * Two ways to run: the whole machine (pid 0, --kernel) uses the debug
 * registers above. A process (pid P) uses the trap flag instead, because
 * the debug registers never fire on some KVMs (the test host's, QEMU's
 * software CPU under nested SVM: docs/debugging.md) while single-step
 * traps do, and an int3 is not intercepted there either:
 *  7. While rw_machine_resume runs, every thread of P has RFLAGS.TF set in
 *     its saved user registers (and the vCPU's, when P runs in user mode),
 *     so each user instruction of P ends in a #DB that KVM hands to the
 *     monitor (KVM_GUESTDBG_USE_HW_BP intercepts #DB): breakpoints,
 *     watchpoints and single steps are checked there, in P alone. The
 *     guest never receives such a #DB.
 *  8. Before rw_machine_resume returns, TF is cleared again in every user
 *     task's saved registers (a fork of P inherits it) and in the vCPU:
 *     the machine handed back is exactly the run's, and a machine that runs
 *     on without a debugger never traps.
 *  9. Watchpoints are compared after each instruction of P and after every
 *     step (a write by the kernel or another process is seen at the next
 *     step): a change is never missed.
 * 10. At every step while rw_machine_resume runs a process, every thread
 *     of P has TF in its saved user registers again (tf_step): the guest
 *     kernel takes it away at an execve and a signal's delivery, and a
 *     thread created while the machine was armed may have copied its
 *     parent's registers before TF was set in them.
 * 11. A CPUID of P (emulated by KVM, which would queue the single-step
 *     trap of an emulated instruction into the guest: a SIGTRAP) runs with
 *     KVM_GUESTDBG_SINGLESTEP on, so its trap is a debug exit like any
 *     other; it is switched off at that exit and TF set again.
 * 12. `syscall` saves the user's flags in r11, TF included when P runs
 *     under it: that bit is taken out of r11 again, in the vCPU at the
 *     thread's first trap after its `syscall` returned, and in the saved
 *     registers of a thread still inside a system call when TF is cleared
 *     (invariant 8), so the registers P sees are those of the run without
 *     the debugger.
 * 13. At a debug exit of a process the vCPU's registers are read from
 *     kvm_run, where KVM wrote them at the exit (KVM_CAP_SYNC_REGS; the two
 *     ioctls when KVM lacks it), never written through it (kvm_dirty_regs
 *     stays 0: writes go through KVM_SET_REGS), and only while
 *     rw_machine_resume runs (kvm_valid_regs is 0 again when it returns).
 *     At the exit after a CPUID the monitor has set TF again since KVM
 *     wrote them (KVM hid it under its own single step): that exit reads
 *     them with the ioctls, so no stale flags can be written back.
 * 14. With r->max_debug_exits, a process's resume stops (RW_STOP_BUDGET)
 *     before its next KVM_RUN once it took that many debug exits, never
 *     inside a system call's entry (as for an abort), so a budget reached
 *     at that entry's exit is passed by one exit, the next: the machine is then
 *     at no position a caller can name again, and reverse execution only
 *     closes it (src/gdbstub/stub.c invariant 6).
 * 15. A watchpoint stop after a user instruction of thread T is `direct`
 *     only when the exit before it was T's previous user instruction: no
 *     other exit, no kernel entry (a system call's #DB) and no other
 *     thread in between, so the change is that instruction's. Otherwise
 *     the kernel or another thread may have made it since.
 */

#define INTERNAL_SLOT 3

static int set_debug_skip(rw_machine *m, const struct rw_watch *w, int nw, int internal,
                          uint64_t internal_addr, int single, int skip, uint64_t skip_rip);

static int set_debug(rw_machine *m, const struct rw_watch *w, int nw, int internal,
                     uint64_t internal_addr, int single)
{
    return set_debug_skip(m, w, nw, internal, internal_addr, single, 0, 0);
}

/* Arm the debug registers; with skip, leave out the instruction
 * breakpoints at skip_rip (the vCPU is there and must run it: stepping
 * over a breakpoint without relying on RFLAGS.RF). */
static int set_debug_skip(rw_machine *m, const struct rw_watch *w, int nw, int internal,
                          uint64_t internal_addr, int single, int skip, uint64_t skip_rip)
{
    struct kvm_guest_debug d;
    memset(&d, 0, sizeof(d));
    uint64_t dr7 = 0;
    for (int i = 0; i < nw; i++) {
        if (skip && w[i].kind == RW_BREAK && w[i].addr == skip_rip)
            continue;
        unsigned len = w[i].kind == RW_BREAK ? 0
                       : w[i].len == 8       ? 2
                       : w[i].len == 4       ? 3
                                             : w[i].len - 1;
        d.arch.debugreg[i] = w[i].addr;
        dr7 |= 1ull << (2 * i);
        dr7 |= (uint64_t)w[i].kind << (16 + 4 * i);
        dr7 |= (uint64_t)len << (18 + 4 * i);
    }
    if (internal && !(skip && internal_addr == skip_rip)) {
        d.arch.debugreg[INTERNAL_SLOT] = internal_addr; /* invariant 5 */
        dr7 |= 1ull << (2 * INTERNAL_SLOT);
    }
    d.arch.debugreg[7] = dr7;
    m->dbg->dr7 = dr7;
    memcpy(m->dbg->dr, d.arch.debugreg, sizeof(m->dbg->dr));
    if (dr7 || single)
        d.control = KVM_GUESTDBG_ENABLE | KVM_GUESTDBG_USE_HW_BP;
    if (single)
        d.control |= KVM_GUESTDBG_SINGLESTEP;
    return ioctl(m->c.vm.vcpu_fd, KVM_SET_GUEST_DEBUG, &d);
}

/* The task on the CPU: its tid and tgid. 0 or -1. */
static int on_cpu(rw_machine *m, uint32_t *tid, uint32_t *tgid)
{
    struct gos *g = &m->dbg->g;
    uint8_t b[8];
    uint64_t cur;
    if (gos_kread(g, g->sym.current_task, b, 8) < 0)
        return -1;
    memcpy(&cur, b, 8);
    if (gos_kread(g, cur + g->lay.pid, b, 8) < 0)
        return -1;
    memcpy(tid, b, 4);
    memcpy(tgid, b + 4, 4);
    return 0;
}

/* Where thread tid returns to user mode: its saved rip. 0 or -1. */
static int return_rip(rw_machine *m, uint32_t tid, uint64_t *rip, struct rw_error *err)
{
    const struct gos_task *t = debug_task(m, tid, err);
    struct gos_regs r;
    if (!t || gos_user_regs(&m->dbg->g, t, &r) < 0) {
        if (t) {
            err->code = RW_EUSAGE;
            snprintf(err->msg, sizeof(err->msg), "thread %u has no user registers", tid);
        }
        return -1;
    }
    *rip = r.rip;
    return 0;
}

/* Tests only (REWIND_TEST_HOLES=1 and REWIND_TEST_HOLE_DEBUG_TIME=1): each
 * debug exit moves the guest's clock, so a debugged machine no longer runs
 * as it would without the debugger (tests/system/t_gdb.sh sees it). */
static int hole_debug_time(void)
{
    const char *holes = getenv("REWIND_TEST_HOLES"), *h = getenv("REWIND_TEST_HOLE_DEBUG_TIME");
    return holes && h && !strcmp(holes, "1") && !strcmp(h, "1");
}

static int resume_machine(rw_machine *m, const struct rw_resume *r, struct rw_stop *s,
                          struct rw_error *err)
{
    struct platform *p = m->c.p;
    struct kvm_run *run = m->c.vm.run;
    /* Stepping: phase 1 waits for the thread to be back in user mode (a
     * breakpoint where it returns), phase 2 single-steps one instruction. */
    int phase = 0;
    uint64_t internal = 0, step_from = 0;
    if (r->step_tid) {
        struct kvm_sregs sr;
        uint32_t tid = 0, tgid = 0;
        if (ioctl(m->c.vm.vcpu_fd, KVM_GET_SREGS, &sr) < 0 || on_cpu(m, &tid, &tgid) < 0) {
            err->code = RW_EINTERNAL;
            snprintf(err->msg, sizeof(err->msg), "cannot read the vCPU's state");
            return -1;
        }
        if ((sr.cs.selector & 3) == 3 && tid == r->step_tid) {
            phase = 2;
        } else {
            if (return_rip(m, r->step_tid, &internal, err) < 0)
                return -1;
            phase = 1;
        }
        if (return_rip(m, r->step_tid, &step_from, err) < 0 && phase == 1)
            return -1;
        if (phase == 2) {
            struct kvm_regs k;
            if (ioctl(m->c.vm.vcpu_fd, KVM_GET_REGS, &k) == 0)
                step_from = k.rip;
        }
    }
    if (r->cpu_step)
        phase = 4; /* one instruction of whatever runs */
    struct kvm_regs k0;
    if (ioctl(m->c.vm.vcpu_fd, KVM_GET_REGS, &k0) < 0) {
        err->code = RW_EINTERNAL;
        snprintf(err->msg, sizeof(err->msg), "cannot read the vCPU's registers");
        return -1;
    }
    /* Never hit a breakpoint at the instruction the vCPU stands on: step
     * over it first (over), then arm them all. */
    int over = phase != 2 && phase != 4;
    if (set_debug_skip(m, r->w, r->nw, phase == 1, internal, phase == 2 || phase == 4 || over, 1,
                       k0.rip) < 0) {
        err->code = RW_EINTERNAL;
        snprintf(err->msg, sizeof(err->msg), "KVM_SET_GUEST_DEBUG: %s", strerror(errno));
        return -1;
    }
    uint64_t same_rip = 0, same_n = 0;
    int rc = 0;
    run_active_kvm_run = run;
    for (;;) {
        if (p->outcome != PLATFORM_RUNNING) {
            s->why = RW_STOP_ENDED;
            break;
        }
        if (r->abort && *r->abort) {
            s->why = RW_STOP_ABORTED;
            break;
        }
        if (r->until_step && p->step >= r->until_step) {
            s->why = RW_STOP_STEP;
            break;
        }
        int kr = ioctl(m->c.vm.vcpu_fd, KVM_RUN, 0);
        uint64_t step = p->step;
        if (kr < 0) {
            if (errno == EINTR || errno == EAGAIN) {
                run->immediate_exit = 0;
                platform_host_exit(p);
                RW_ASSERT(p->step == step); /* invariant 4 */
                continue;
            }
            err->code = RW_EINTERNAL;
            snprintf(err->msg, sizeof(err->msg), "KVM_RUN: %s", strerror(errno));
            rc = -1;
            break;
        }
        if (run->exit_reason != KVM_EXIT_DEBUG) {
            int stepped = vcpu_handle_exit(p);
            RW_ASSERT(p->step == step + (uint64_t)stepped);
            continue;
        }
        /* A debug exit: never a step (invariant 4). */
        s->debug_exits++;
        if (hole_debug_time())
            p->now_ns += 1000000; /* tests only: the negative twin of invariant 4 */
        uint64_t dr6 = run->debug.arch.dr6;
        struct kvm_sregs sr;
        struct kvm_regs k;
        uint32_t tid = 0, tgid = 0;
        if (ioctl(m->c.vm.vcpu_fd, KVM_GET_SREGS, &sr) < 0 ||
            ioctl(m->c.vm.vcpu_fd, KVM_GET_REGS, &k) < 0 || on_cpu(m, &tid, &tgid) < 0) {
            err->code = RW_EINTERNAL;
            snprintf(err->msg, sizeof(err->msg), "cannot read the vCPU at a debug exit");
            rc = -1;
            break;
        }
        RW_ASSERT(p->step == step);
        int user = (sr.cs.selector & 3) == 3;
        if (k.rip == same_rip) {
            if (++same_n > 100000) {
                err->code = RW_EINTERNAL;
                snprintf(err->msg, sizeof(err->msg),
                         "debug exits make no progress at 0x%llx (step %llu)",
                         (unsigned long long)k.rip, (unsigned long long)p->step);
                rc = -1;
                break;
            }
        } else {
            same_rip = k.rip;
            same_n = 0;
        }
        if (over) { /* the step over the first instruction is done: arm all */
            over = 0;
            set_debug(m, r->w, r->nw, phase == 1 || phase == 3, internal, 0);
            if ((dr6 & 0x4000) || !(dr6 & 0xf))
                continue;
        }
        if (phase == 4 && ((dr6 & 0x4000) || !(dr6 & 0xf))) {
            s->why = RW_STOP_STEPPED;
            s->tid = tid;
            s->pc = k.rip;
            break;
        }
        if (phase == 2 && ((dr6 & 0x4000) || !(dr6 & 0xf))) { /* a single step */
            if (user && tid == r->step_tid) {
                s->why = RW_STOP_STEPPED;
                s->tid = tid;
                s->pc = k.rip;
                break;
            }
            /* Into the kernel (a syscall, an interrupt): wait for its return. */
            if (return_rip(m, r->step_tid, &internal, err) < 0) {
                rc = -1;
                break;
            }
            phase = 3;
            set_debug(m, r->w, r->nw, 1, internal, 0);
            continue;
        }
        int slot = -1;
        for (int i = 3; i >= 0; i--) /* the lowest: the caller's before rewind's */
            if (dr6 & (1ull << i))
                slot = i;
        if (slot == INTERNAL_SLOT && phase && user && tid == r->step_tid) {
            if (phase == 1 || (phase == 3 && k.rip == step_from)) {
                phase = 2; /* now step the instruction itself */
                set_debug_skip(m, r->w, r->nw, 0, 0, 1, 1, k.rip);
                continue;
            }
            s->why = RW_STOP_STEPPED; /* back from the kernel after the instruction */
            s->tid = tid;
            s->pc = k.rip;
            break;
        }
        if (slot >= 0 && slot < r->nw && (r->pid == 0 || (user && tgid == r->pid))) {
            s->why = r->w[slot].kind == RW_BREAK ? RW_STOP_BREAK : RW_STOP_WATCH;
            s->slot = slot;
            s->tid = tid;
            s->pc = k.rip;
            break;
        }
        /* Someone else's context, or a spurious exit: go on, stepping over
         * an instruction breakpoint first. */
        if (slot >= 0 && (slot == INTERNAL_SLOT || r->w[slot].kind == RW_BREAK) && phase != 2 &&
            phase != 4) {
            over = 1;
            set_debug_skip(m, r->w, r->nw, phase == 1 || phase == 3, internal, 1, 1, k.rip);
        }
    }
    run_active_kvm_run = NULL;
    set_debug(m, NULL, 0, 0, 0, 0); /* invariant 6 */
    s->step = p->step;
    if (s->why == RW_STOP_ENDED && p->outcome == PLATFORM_RUNNING)
        s->why = RW_STOP_STEP;
    return rc;
}

/* ---- A process under the trap flag (invariants 7-9) ---- */

#define RFLAGS_TF 0x100ull

/* REWIND_GDB_LOG=2: what tf_arm did to each thread, on stderr (a
 * diagnostic for reverse execution's replays: docs/debugging.md). */
static int tf_log(void)
{
    static int on = -1;
    if (on < 0) {
        const char *e = getenv("REWIND_GDB_LOG");
        on = e && !strcmp(e, "2");
    }
    return on;
}

/* Set (on) or clear TF in the saved user registers of the threads of pid
 * (on), or of every user task (off: invariant 8), and in the vCPU when it
 * runs such a thread in user mode. 0 or -1 with err. */
static int tf_arm(rw_machine *m, uint32_t pid, int on, struct rw_error *err)
{
    const struct gos_task *t;
    size_t n;
    if (debug_tasks(m, &t, &n, err) < 0)
        return -1;
    struct kvm_regs k;
    int user = vcpu_user(m->c.vm.vcpu_fd, &k);
    if (user < 0)
        return fail(err, RW_EINTERNAL, "%s", "cannot read the vCPU's registers");
    uint32_t cur_tgid = 0;
    for (size_t i = 0; i < n; i++) {
        if (t[i].kernel_thread || (on && t[i].tgid != pid))
            continue;
        if (t[i].current) {
            cur_tgid = t[i].tgid;
            if (user)
                continue; /* its registers are the vCPU's */
        }
        struct gos_regs g;
        if (gos_user_regs(&m->dbg->g, &t[i], &g) < 0)
            continue; /* not yet in user mode */
        /* Invariant 12: a system call entered under TF saved it in r11 */
        int r11_tf = !on && g.orig_rax != ~0ull && (g.r11 & RFLAGS_TF) &&
                     (g.r11 | RFLAGS_TF) == (g.rflags | RFLAGS_TF);
        if (r11_tf)
            g.r11 &= ~RFLAGS_TF;
        uint64_t f = on ? g.rflags | RFLAGS_TF : g.rflags & ~RFLAGS_TF;
        if (f == g.rflags && !r11_tf)
            continue;
        if (tf_log())
            fprintf(stderr,
                    "rewind: debug step %llu: tf %s: thread %u (%s) rip 0x%llx flags 0x%llx\n",
                    (unsigned long long)m->c.p->step, on ? "on" : "off", t[i].pid, t[i].comm,
                    (unsigned long long)g.rip, (unsigned long long)g.rflags);
        g.rflags = f;
        if (gos_set_user_regs(&m->dbg->g, &t[i], &g) < 0)
            return fail(err, RW_EINTERNAL, "cannot write the registers thread %s saved", t[i].comm);
    }
    if (user && (!on || cur_tgid == pid)) {
        uint64_t f = on ? k.rflags | RFLAGS_TF : k.rflags & ~RFLAGS_TF;
        if (f != k.rflags) {
            k.rflags = f;
            if (ioctl(m->c.vm.vcpu_fd, KVM_SET_REGS, &k) < 0)
                return fail(err, RW_EINTERNAL, "%s", "cannot write the vCPU's registers");
        }
    }
    return 0;
}

/* Invariant 9: did a watched value change? Then s gets the slot and the
 * thread of P on the CPU (0 if none), and wval the new bytes. */
static int watch_changed(rw_machine *m, const struct rw_resume *r, uint64_t pgd, uint8_t wval[][8],
                         struct rw_stop *s)
{
    for (int i = 0; i < r->nw; i++) {
        if (r->w[i].kind == RW_BREAK)
            continue;
        uint8_t now[8] = {0};
        if (gos_vread(&m->dbg->g, pgd, r->w[i].addr, now, r->w[i].len) != r->w[i].len)
            memset(now, 0, sizeof(now));
        if (!memcmp(now, wval[i], r->w[i].len))
            continue;
        memcpy(wval[i], now, r->w[i].len);
        uint32_t tid = 0, tgid = 0;
        s->why = RW_STOP_WATCH;
        s->slot = i;
        s->tid = on_cpu(m, &tid, &tgid) == 0 && tgid == r->pid ? tid : 0;
        return 1;
    }
    return 0;
}

/* Invariant 10: at every step the threads of P get TF again where the
 * guest kernel took it away or never had it: an execve writes the new
 * program's flags, a signal's delivery clears it for the handler, and a
 * thread being created when the machine resumed copied its parent's
 * registers before TF was set in them. A step is always taken in kernel
 * mode, so the saved registers are those each thread returns to user mode
 * with. */
struct tf_hook {
    rw_machine *m;
    uint32_t pid;
    int failed;
};

static void tf_step(void *ctx, struct platform *p)
{
    (void)p;
    struct tf_hook *h = ctx;
    struct rw_error e;
    if (tf_arm(h->m, h->pid, 1, &e) < 0)
        h->failed = 1;
}

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The two bytes at rip (user mode, the vCPU's page table): the opcode of
 * the instruction there (0 if unreadable). */
static unsigned op_at(rw_machine *m, const struct kvm_sregs *sr, uint64_t rip)
{
    uint8_t b[2];
    uint64_t pgd = sr->cr3 & 0x000ffffffffff000ull;
    return gos_vread(&m->dbg->g, pgd, rip, b, 2) == 2 ? (unsigned)b[0] << 8 | b[1] : 0;
}

#define OP_CPUID 0x0fa2u
#define OP_SYSCALL 0x0f05u

/* Is the instruction at rip (user mode, the vCPU's page table) a CPUID?
 * KVM emulates CPUID, and an emulated instruction run with TF gets its
 * single-step trap from KVM itself: queued into the guest (a SIGTRAP for
 * the process) unless KVM_GUESTDBG_SINGLESTEP is on, when it is a debug
 * exit instead (invariant 11). */
static int cpuid_at(rw_machine *m, const struct kvm_sregs *sr, uint64_t rip)
{
    return op_at(m, sr, rip) == OP_CPUID;
}

/* Guest debugging for a process: #DB to the monitor, and KVM's own single
 * step while one CPUID runs. After KVM's single step is switched off, TF
 * is gone from the vCPU's flags (KVM hides and then drops it): set it
 * again. 0 or -1. */
static int process_debug(rw_machine *m, int kvm_step)
{
    struct kvm_guest_debug d;
    memset(&d, 0, sizeof(d));
    d.control = KVM_GUESTDBG_ENABLE | KVM_GUESTDBG_USE_HW_BP;
    if (kvm_step)
        d.control |= KVM_GUESTDBG_SINGLESTEP;
    if (ioctl(m->c.vm.vcpu_fd, KVM_SET_GUEST_DEBUG, &d) < 0)
        return -1;
    struct kvm_regs k;
    if (!kvm_step && ioctl(m->c.vm.vcpu_fd, KVM_GET_REGS, &k) == 0 && !(k.rflags & RFLAGS_TF)) {
        k.rflags |= RFLAGS_TF;
        if (ioctl(m->c.vm.vcpu_fd, KVM_SET_REGS, &k) < 0)
            return -1;
    }
    return 0;
}

/* REWIND_GDB_SYNC_REGS=0 (bench only): read the vCPU at a debug exit with
 * the two ioctls instead of from kvm_run (invariant 13). */
static int sync_regs_wanted(rw_machine *m)
{
    const char *e = getenv("REWIND_GDB_SYNC_REGS");
    if (e && !strcmp(e, "0"))
        return 0;
    int have = ioctl(m->c.vm.vm_fd, KVM_CHECK_EXTENSION, KVM_CAP_SYNC_REGS);
    const int want = KVM_SYNC_X86_REGS | KVM_SYNC_X86_SREGS;
    return have > 0 && (have & want) == want;
}

/* The vCPU's registers at an exit: from kvm_run when KVM wrote them there
 * (sync), else by ioctl. 0 or -1. */
static int exit_regs(rw_machine *m, int sync, struct kvm_sregs *sr, struct kvm_regs *k)
{
    if (sync) {
        RW_ASSERT(!m->c.vm.run->kvm_dirty_regs); /* invariant 13 */
        *sr = m->c.vm.run->s.regs.sregs;
        *k = m->c.vm.run->s.regs.regs;
        return 0;
    }
    if (ioctl(m->c.vm.vcpu_fd, KVM_GET_SREGS, sr) < 0 ||
        ioctl(m->c.vm.vcpu_fd, KVM_GET_REGS, k) < 0)
        return -1;
    return 0;
}

static int resume_process(rw_machine *m, const struct rw_resume *r, struct rw_stop *s,
                          struct rw_error *err)
{
    struct platform *p = m->c.p;
    struct kvm_run *run = m->c.vm.run;
    uint8_t wval[RW_DEBUG_POINTS][8];
    uint64_t wpgd = 0;
    int nwatch = 0;
    for (int i = 0; i < r->nw; i++)
        nwatch += r->w[i].kind != RW_BREAK;
    if (nwatch && debug_pgd(m, r->pid, &wpgd, err) < 0)
        return -1;
    for (int i = 0; i < r->nw; i++)
        if (r->w[i].kind != RW_BREAK &&
            gos_vread(&m->dbg->g, wpgd, r->w[i].addr, wval[i], r->w[i].len) != r->w[i].len)
            memset(wval[i], 0, sizeof(wval[i]));
    if (tf_arm(m, r->pid, 1, err) < 0) /* invariant 7 */
        return -1;
    struct kvm_guest_debug d;
    memset(&d, 0, sizeof(d));
    d.control = KVM_GUESTDBG_ENABLE | KVM_GUESTDBG_USE_HW_BP; /* #DB to the monitor */
    if (ioctl(m->c.vm.vcpu_fd, KVM_SET_GUEST_DEBUG, &d) < 0) {
        int e = errno;
        tf_arm(m, r->pid, 0, err);
        err->code = RW_EINTERNAL;
        snprintf(err->msg, sizeof(err->msg), "KVM_SET_GUEST_DEBUG: %s", strerror(e));
        return -1;
    }
    int rc = 0;
    /* KVM's single step is on for one CPUID of P (invariant 11). */
    int kvm_step = 0;
    /* Threads of P that trapped at a `syscall`: at their next trap, r11
     * holds the flags that instruction saved (invariant 12). */
    enum { SYS_PENDING = 64 };
    uint32_t sys_tid[SYS_PENDING];
    int nsys = 0;
    { /* the threads of P that will run a `syscall` first */
        const struct gos_task *t;
        size_t n;
        struct kvm_regs ku;
        int vu = vcpu_user(m->c.vm.vcpu_fd, &ku);
        struct rw_error e0;
        if (debug_tasks(m, &t, &n, &e0) < 0)
            n = 0;
        for (size_t i = 0; i < n && nsys < SYS_PENDING; i++) {
            struct gos_regs g;
            if (t[i].kernel_thread || t[i].tgid != r->pid)
                continue;
            uint64_t rip = 0;
            if (t[i].current && vu == 1)
                rip = ku.rip;
            else if (gos_user_regs(&m->dbg->g, &t[i], &g) == 0)
                rip = g.rip;
            uint8_t b[2];
            if (rip && gos_vread(&m->dbg->g, t[i].pgd, rip, b, 2) == 2 &&
                ((unsigned)b[0] << 8 | b[1]) == OP_SYSCALL)
                sys_tid[nsys++] = t[i].pid;
        }
    }
    {
        struct kvm_sregs sr0;
        struct kvm_regs k0;
        uint32_t tid0 = 0, tgid0 = 0;
        if (ioctl(m->c.vm.vcpu_fd, KVM_GET_SREGS, &sr0) == 0 && (sr0.cs.selector & 3) == 3 &&
            ioctl(m->c.vm.vcpu_fd, KVM_GET_REGS, &k0) == 0 && on_cpu(m, &tid0, &tgid0) == 0 &&
            tgid0 == r->pid && cpuid_at(m, &sr0, k0.rip)) {
            if (process_debug(m, 1) < 0) {
                tf_arm(m, r->pid, 0, err);
                return fail(err, RW_EINTERNAL, "KVM_SET_GUEST_DEBUG: %s", strerror(errno));
            }
            kvm_step = 1;
        }
    }
    /* After a #DB in the kernel (a system call's first instruction, with
     * the user's TF still in r11 and pt_regs not yet written), the machine
     * must not stop: TF could not be cleared there (invariant 8). */
    int in_entry = 0;
    struct tf_hook hook = {.m = m, .pid = r->pid};
    RW_ASSERT(!p->dbg_step); /* only watch.c's replays set it, never on a sought machine */
    p->dbg_step = tf_step;   /* invariant 10 */
    p->dbg_ctx = &hook;
    run_active_kvm_run = run;
    /* invariant 13: KVM writes the registers into kvm_run at each exit */
    const int sync = sync_regs_wanted(m);
    run->kvm_dirty_regs = 0;
    run->kvm_valid_regs = sync ? KVM_SYNC_X86_REGS | KVM_SYNC_X86_SREGS : 0;
    /* REWIND_GDB_LOG=2: where a debug exit's time goes (docs/debugging.md) */
    const int prof = tf_log();
    uint64_t t0 = 0, t1 = 0, ns_run = 0, ns_mon = 0;
    int prev_debug = 0;
    uint32_t last_user_tid = 0; /* invariant 15: P's thread of the last exit, if a user trap */
    for (;;) {
        if (prof && prev_debug)
            ns_mon += mono_ns() - t1;
        prev_debug = 0;
        if (p->outcome != PLATFORM_RUNNING) {
            s->why = RW_STOP_ENDED;
            break;
        }
        if (r->abort && *r->abort && !in_entry) {
            s->why = RW_STOP_ABORTED;
            break;
        }
        if (r->max_debug_exits && s->debug_exits >= r->max_debug_exits && !in_entry) {
            s->why = RW_STOP_BUDGET; /* invariant 14 */
            break;
        }
        if (r->until_step && p->step >= r->until_step) {
            s->why = RW_STOP_STEP;
            break;
        }
        if (prof)
            t0 = mono_ns();
        int kr = ioctl(m->c.vm.vcpu_fd, KVM_RUN, 0);
        if (prof)
            t1 = mono_ns();
        uint64_t step = p->step;
        if (kr < 0) {
            if (errno == EINTR || errno == EAGAIN) {
                run->immediate_exit = 0;
                platform_host_exit(p);
                RW_ASSERT(p->step == step); /* invariant 4 */
                continue;
            }
            err->code = RW_EINTERNAL;
            snprintf(err->msg, sizeof(err->msg), "KVM_RUN: %s", strerror(errno));
            rc = -1;
            break;
        }
        in_entry = 0;
        if (run->exit_reason != KVM_EXIT_DEBUG) {
            last_user_tid = 0; /* invariant 15 */
            int stepped = vcpu_handle_exit(p);
            RW_ASSERT(p->step == step + (uint64_t)stepped);
            if (stepped && nwatch && watch_changed(m, r, wpgd, wval, s))
                break; /* seen after the step (invariant 9) */
            continue;
        }
        /* A debug exit: never a step (invariant 4). */
        s->debug_exits++;
        prev_debug = 1;
        ns_run += t1 - t0;
        if (hole_debug_time())
            p->now_ns += 1000000; /* tests only: the negative twin of invariant 4 */
        int fresh = 0;            /* registers changed since KVM wrote kvm_run */
        if (kvm_step) {           /* the CPUID ran: KVM's single step off, TF back */
            kvm_step = 0;
            fresh = 1;
            if (process_debug(m, 0) < 0) {
                err->code = RW_EINTERNAL;
                snprintf(err->msg, sizeof(err->msg), "KVM_SET_GUEST_DEBUG: %s", strerror(errno));
                rc = -1;
                break;
            }
        }
        struct kvm_sregs sr;
        struct kvm_regs k;
        uint32_t tid = 0, tgid = 0;
        if (exit_regs(m, sync && !fresh, &sr, &k) < 0 || on_cpu(m, &tid, &tgid) < 0) {
            err->code = RW_EINTERNAL;
            snprintf(err->msg, sizeof(err->msg), "cannot read the vCPU at a debug exit");
            rc = -1;
            break;
        }
        RW_ASSERT(p->step == step);
        int user = (sr.cs.selector & 3) == 3;
        in_entry = !user;
        if (user && tgid == r->pid) { /* one instruction of thread tid ran */
            for (int i = 0; i < nsys; i++) {
                if (sys_tid[i] != tid)
                    continue;
                sys_tid[i] = sys_tid[--nsys];
                if (k.r11 & RFLAGS_TF) { /* invariant 12: the flags syscall saved */
                    k.r11 &= ~RFLAGS_TF;
                    if (ioctl(m->c.vm.vcpu_fd, KVM_SET_REGS, &k) < 0)
                        rc = -1;
                }
                break;
            }
            if (rc < 0) {
                err->code = RW_EINTERNAL;
                snprintf(err->msg, sizeof(err->msg), "cannot write the vCPU's registers");
                break;
            }
            if (r->step_tid && tid == r->step_tid && ++s->tid_steps > r->step_skip) {
                s->why = RW_STOP_STEPPED;
                s->tid = tid;
                s->pc = k.rip;
                break;
            }
            int hit = -1;
            for (int i = r->nw - 1; i >= 0; i--)
                if (r->w[i].kind == RW_BREAK && r->w[i].addr == k.rip)
                    hit = i;
            if (hit >= 0) {
                s->why = RW_STOP_BREAK;
                s->slot = hit;
                s->tid = tid;
                s->pc = k.rip;
                break;
            }
            if (nwatch && watch_changed(m, r, wpgd, wval, s)) {
                s->pc = k.rip;
                s->direct = last_user_tid == tid; /* invariant 15 */
                break;
            }
            last_user_tid = tid;
            unsigned op = op_at(m, &sr, k.rip); /* one read for both checks */
            if (op == OP_SYSCALL && nsys < SYS_PENDING)
                sys_tid[nsys++] = tid; /* its next trap: r11 (invariant 12) */
            if (op == OP_CPUID) {      /* invariant 11 */
                if (process_debug(m, 1) < 0) {
                    err->code = RW_EINTERNAL;
                    snprintf(err->msg, sizeof(err->msg), "KVM_SET_GUEST_DEBUG: %s",
                             strerror(errno));
                    rc = -1;
                    break;
                }
                kvm_step = 1;
            }
            continue;
        }
        last_user_tid = 0;                    /* invariant 15: the kernel, or another process */
        if (user && (k.rflags & RFLAGS_TF)) { /* a fork of P inherited TF: not ours */
            k.rflags &= ~RFLAGS_TF;
            if (ioctl(m->c.vm.vcpu_fd, KVM_SET_REGS, &k) < 0) {
                err->code = RW_EINTERNAL;
                snprintf(err->msg, sizeof(err->msg), "cannot write the vCPU's registers");
                rc = -1;
                break;
            }
        }
    }
    run_active_kvm_run = NULL;
    run->kvm_valid_regs = 0;
    if (prof && s->debug_exits)
        fprintf(stderr,
                "rewind: debug resume: %llu debug exits: %.1f us each in KVM_RUN, %.1f us in "
                "the monitor\n",
                (unsigned long long)s->debug_exits, ns_run / 1e3 / s->debug_exits,
                ns_mon / 1e3 / s->debug_exits);
    p->dbg_step = NULL;
    p->dbg_ctx = NULL;
    if (hook.failed && rc == 0) {
        err->code = RW_EINTERNAL;
        snprintf(err->msg, sizeof(err->msg),
                 "cannot set the trap flag in the threads of process %u at a step", r->pid);
        rc = -1;
    }
    struct rw_error e2;
    int ok = tf_arm(m, r->pid, 0, &e2); /* invariant 8 */
    memset(&d, 0, sizeof(d));
    ioctl(m->c.vm.vcpu_fd, KVM_SET_GUEST_DEBUG, &d); /* invariant 6 */
    if (ok < 0 && rc == 0) {
        *err = e2;
        rc = -1;
    }
    s->step = p->step;
    if (s->why == RW_STOP_ENDED && p->outcome == PLATFORM_RUNNING)
        s->why = RW_STOP_STEP;
    return rc;
}

int rw_machine_resume(rw_machine *m, const struct rw_resume *r, struct rw_stop *s,
                      struct rw_error *err)
{
    memset(s, 0, sizeof(*s));
    int max = r->pid ? RW_DEBUG_POINTS : RW_DEBUG_SLOTS;
    if (r->nw < 0 || r->nw > max) {
        err->code = RW_EUSAGE;
        snprintf(err->msg, sizeof(err->msg), "at most %d breakpoints and watchpoints at once", max);
        return -1;
    }
    for (int i = 0; i < r->nw; i++) { /* the public API's caller is not trusted */
        const struct rw_watch *w = &r->w[i];
        if (w->kind == RW_BREAK)
            continue;
        if ((w->kind != RW_WATCH_WRITE && w->kind != RW_WATCH_ACCESS) ||
            (w->len != 1 && w->len != 2 && w->len != 4 && w->len != 8) ||
            (w->addr & (w->len - 1))) {
            err->code = RW_EUSAGE;
            snprintf(err->msg, sizeof(err->msg),
                     "a watchpoint is 1, 2, 4 or 8 bytes at an address aligned to its length "
                     "(got %u bytes at 0x%llx)",
                     w->len, (unsigned long long)w->addr);
            return -1;
        }
    }
    if (!debug_gos(m, err))
        return -1;
    return r->pid ? resume_process(m, r, s, err) : resume_machine(m, r, s, err);
}

int rw_machine_finish(rw_machine *m, int run_to_end, struct rw_result *r, struct rw_error *err)
{
    if (!m->settled) {
        if (run_to_end && m->c.p->outcome == PLATFORM_RUNNING && run_loop(&m->c, 0) < 0) {
            *err = m->err;
            return -1;
        }
        if (run_settle(&m->c) < 0) {
            *err = m->err;
            return -1;
        }
        m->settled = 1;
    }
    *r = m->res;
    return 0;
}
