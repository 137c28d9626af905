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
#include "vmm/debugreg.h"
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

int rw_machine_user_regs(rw_machine *m, uint32_t tid, struct rw_uregs *r, struct rw_error *err)
{
    const struct gos_task *t = debug_task(m, tid, err);
    if (!t)
        return -1;
    memset(r, 0, sizeof(*r));
    struct kvm_regs k;
    int user = t->current ? guestview_vcpu_user(m->c.vm.vcpu_fd, &k) : 0;
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
 *     and it is never called for KVM_EXIT_DEBUG (vcpu_run asserts it around
 *     the debug hook and vcpu_handle_exit: src/vmm/vcpu.c invariant 4).
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
 * 16. rw_machine_resume runs no loop of its own: it drives the engine's
 *     one loop (vcpu_run through run_loop_hooked, src/vmm/vcpu.c invariant
 *     4) with hooks, machine_* for the whole machine and process_* for a
 *     process. The loop checks the run's own ends before the enter hook,
 *     so the halt watchdog and the spin watch (r->spin_limit_s) end a
 *     resumed run as they end any run (RW_STOP_ENDED). A resume stops only
 *     where a hook said STOP (and set s->why), at the run's end or at
 *     until_step (asserted in drive); the abort and budget checks above
 *     (invariant 14) are the enter hook's, before each KVM_RUN as before.
 *     The machine's run ends as spin even inside a system call's entry
 *     (invariant 14 holds for stops, and an ended run is never resumed).
 * 17. A run made with --preempt memory (docs/determinism.md, "The debugger
 *     on such runs", D1-D3): the guest kernel's own single-step bursts use
 *     the same TF. A #DB exit taken while the current task's burst has
 *     instructions left is the guest's too, and is given back exactly as
 *     `watch` gives it (debugreg_give_back: injected, so delivered at the
 *     next entry, after the stub's own checks and after a stop);
 *     with none left it is the stub's alone. TF is never taken away (8, 12,
 *     a fork's) from a thread whose burst has instructions left. At a
 *     burst's end the guest clears TF and, with the notice word on while P
 *     resumes (kvm_notice), writes REWIND_PORT_NOTICE: TF is set again in
 *     that thread's saved registers, so no instruction of P runs unseen
 *     until its next step (a burst ended by a signal's delivery sends no
 *     notice: the handler runs unseen to its first step, as before).
 *     The replay under the debugger is the stored run (gdb --verify).
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

/* The instructions left in the single-step burst of the task at tsk
 * (task_struct.rewind_burst, right after mm and active_mm in our patch's
 * layout; its low 16 bits: docs/determinism.md), 0 if unreadable or no
 * run with memory-access points (invariant 17). */
static unsigned burst_left_of(rw_machine *m, uint64_t tsk)
{
    struct gos *g = &m->dbg->g;
    uint8_t b[4];
    if (!m->st.o.preempt_memory || gos_kread(g, tsk + g->lay.mm + 16, b, 4) < 0)
        return 0;
    uint32_t v;
    memcpy(&v, b, 4);
    return v & 0xffffu;
}

/* The current task's burst (invariant 17). */
static unsigned burst_left(rw_machine *m)
{
    struct gos *g = &m->dbg->g;
    uint8_t b[8];
    uint64_t cur;
    if (!m->st.o.preempt_memory || gos_kread(g, g->sym.current_task, b, 8) < 0)
        return 0;
    memcpy(&cur, b, 8);
    return burst_left_of(m, cur);
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

/* ---- The loop's hooks (vcpu.h) for a debugger: the state of one call of
 * rw_machine_resume. The hooks set s->why and `stopped` when they stop,
 * err and `failed` when they fail (invariant 16). */
struct resume_run {
    rw_machine *m;
    const struct rw_resume *r;
    struct rw_stop *s;
    struct rw_error *err;
    int stopped, failed;
};

/* Stop with why (BREAK, WATCH, STEPPED) in thread tid at pc. */
static enum vcpu_verdict stop_at(struct resume_run *x, enum rw_stop_why why, uint32_t tid,
                                 uint64_t pc)
{
    x->s->why = why;
    x->s->tid = tid;
    x->s->pc = pc;
    x->stopped = 1;
    return VCPU_STOP;
}

/* Stop with why and nothing more (ABORTED, BUDGET, a watchpoint seen after a step). */
static enum vcpu_verdict stop_why(struct resume_run *x, enum rw_stop_why why)
{
    x->s->why = why;
    x->stopped = 1;
    return VCPU_STOP;
}

static enum vcpu_verdict failed(struct resume_run *x, const char *msg)
{
    x->err->code = RW_EINTERNAL;
    snprintf(x->err->msg, sizeof(x->err->msg), "%s", msg);
    x->failed = 1;
    return VCPU_FAIL;
}

/* Run the one loop with hooks h over x's machine until a stop, the run's
 * end or until_step; s->why says which. 0, or -1 with x->err. */
static int drive(struct resume_run *x, const struct vcpu_hooks *h)
{
    rw_machine *m = x->m;
    int vr = run_loop_hooked(&m->c, x->r->until_step, h, x->r->spin_limit_s);
    RW_ASSERT(vr < 0 || x->stopped || m->c.p->outcome != PLATFORM_RUNNING ||
              (x->r->until_step && m->c.p->step >= x->r->until_step)); /* invariant 16 */
    if (x->failed)
        return -1;
    if (vr < 0) {
        x->err->code = RW_EINTERNAL;
        snprintf(x->err->msg, sizeof(x->err->msg), "%s", m->err.msg);
        return -1;
    }
    if (!x->stopped)
        x->s->why = m->c.p->outcome != PLATFORM_RUNNING ? RW_STOP_ENDED : RW_STOP_STEP;
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

/* Tests only (REWIND_TEST_HOLES=1 and REWIND_TEST_HOLE_GDB_BURST=keep or
 * =notice), invariant 17's negative twins (tests/system/t_races.sh): keep,
 * the guest's own single-step traps are kept from it under the debugger,
 * so the run debugged is no longer the stored run; notice, TF is not set
 * again at a burst's end, so P runs unseen from there to its next step. */
static int hole_gdb_burst(const char *which)
{
    const char *holes = getenv("REWIND_TEST_HOLES"), *h = getenv("REWIND_TEST_HOLE_GDB_BURST");
    return holes && h && !strcmp(holes, "1") && !strcmp(h, which);
}

/* A debug exit: counted, never a step (invariant 4; asserted by vcpu_run). */
static void debug_exit_seen(struct resume_run *x)
{
    x->s->debug_exits++;
    if (hole_debug_time())
        x->m->c.p->now_ns += 1000000; /* tests only: the negative twin of invariant 4 */
}

/* ---- The whole machine under the debug registers ----
 *
 * Stepping: phase 1 waits for the thread to be back in user mode (a
 * breakpoint where it returns), phase 2 single-steps one instruction,
 * phase 3 waits for its return from the kernel it entered; phase 4 is one
 * instruction of whatever runs (cpu_step). */
struct machine_run {
    struct resume_run x;
    int phase, over;
    uint64_t internal, step_from, same_rip, same_n;
};

static enum vcpu_verdict machine_enter(void *ctx, struct platform *p)
{
    (void)p;
    struct machine_run *mr = ctx;
    if (mr->x.r->abort && *mr->x.r->abort)
        return stop_why(&mr->x, RW_STOP_ABORTED);
    return VCPU_GO;
}

/* The phase and the registers to start from. 0 or -1 with err. */
static int machine_start(struct machine_run *mr)
{
    rw_machine *m = mr->x.m;
    const struct rw_resume *r = mr->x.r;
    struct rw_error *err = mr->x.err;
    if (r->step_tid) {
        struct kvm_sregs sr;
        uint32_t tid = 0, tgid = 0;
        if (ioctl(m->c.vm.vcpu_fd, KVM_GET_SREGS, &sr) < 0 || on_cpu(m, &tid, &tgid) < 0)
            return fail(err, RW_EINTERNAL, "%s", "cannot read the vCPU's state");
        if ((sr.cs.selector & 3) == 3 && tid == r->step_tid) {
            mr->phase = 2;
        } else {
            if (return_rip(m, r->step_tid, &mr->internal, err) < 0)
                return -1;
            mr->phase = 1;
        }
        if (return_rip(m, r->step_tid, &mr->step_from, err) < 0 && mr->phase == 1)
            return -1;
        if (mr->phase == 2) {
            struct kvm_regs k;
            if (ioctl(m->c.vm.vcpu_fd, KVM_GET_REGS, &k) == 0)
                mr->step_from = k.rip;
        }
    }
    if (r->cpu_step)
        mr->phase = 4; /* one instruction of whatever runs */
    struct kvm_regs k0;
    if (ioctl(m->c.vm.vcpu_fd, KVM_GET_REGS, &k0) < 0)
        return fail(err, RW_EINTERNAL, "%s", "cannot read the vCPU's registers");
    /* Never hit a breakpoint at the instruction the vCPU stands on: step
     * over it first (over), then arm them all. */
    int ph = mr->phase;
    mr->over = ph != 2 && ph != 4;
    if (set_debug_skip(m, r->w, r->nw, ph == 1, mr->internal, ph == 2 || ph == 4 || mr->over, 1,
                       k0.rip) < 0)
        return fail(err, RW_EINTERNAL, "KVM_SET_GUEST_DEBUG: %s", strerror(errno));
    return 0;
}

/* A debug exit whose dr6 says single step (or no slot) while stepping
 * (phases 2 and 4), with the vCPU at k in thread tid. */
static enum vcpu_verdict machine_single(struct machine_run *mr, int user, uint32_t tid,
                                        const struct kvm_regs *k)
{
    const struct rw_resume *r = mr->x.r;
    if (mr->phase == 4 || (user && tid == r->step_tid))
        return stop_at(&mr->x, RW_STOP_STEPPED, tid, k->rip);
    /* Into the kernel (a syscall, an interrupt): wait for its return. */
    if (return_rip(mr->x.m, r->step_tid, &mr->internal, mr->x.err) < 0) {
        mr->x.failed = 1;
        return VCPU_FAIL;
    }
    mr->phase = 3;
    set_debug(mr->x.m, r->w, r->nw, 1, mr->internal, 0);
    return VCPU_GO;
}

static enum vcpu_verdict machine_debug(void *ctx, struct platform *p)
{
    struct machine_run *mr = ctx;
    rw_machine *m = mr->x.m;
    const struct rw_resume *r = mr->x.r;
    debug_exit_seen(&mr->x);
    uint64_t dr6 = m->c.vm.run->debug.arch.dr6;
    struct kvm_sregs sr;
    struct kvm_regs k;
    uint32_t tid = 0, tgid = 0;
    if (ioctl(m->c.vm.vcpu_fd, KVM_GET_SREGS, &sr) < 0 ||
        ioctl(m->c.vm.vcpu_fd, KVM_GET_REGS, &k) < 0 || on_cpu(m, &tid, &tgid) < 0)
        return failed(&mr->x, "cannot read the vCPU at a debug exit");
    int user = (sr.cs.selector & 3) == 3;
    if (k.rip == mr->same_rip) {
        if (++mr->same_n > 100000) {
            char msg[160];
            snprintf(msg, sizeof(msg), "debug exits make no progress at 0x%llx (step %llu)",
                     (unsigned long long)k.rip, (unsigned long long)p->step);
            return failed(&mr->x, msg);
        }
    } else {
        mr->same_rip = k.rip;
        mr->same_n = 0;
    }
    int single = (dr6 & 0x4000) || !(dr6 & 0xf);
    if (mr->over) { /* the step over the first instruction is done: arm all */
        mr->over = 0;
        set_debug(m, r->w, r->nw, mr->phase == 1 || mr->phase == 3, mr->internal, 0);
        if (single)
            return VCPU_GO;
    }
    if ((mr->phase == 4 || mr->phase == 2) && single)
        return machine_single(mr, user, tid, &k);
    int slot = -1;
    for (int i = 3; i >= 0; i--) /* the lowest: the caller's before rewind's */
        if (dr6 & (1ull << i))
            slot = i;
    if (slot == INTERNAL_SLOT && mr->phase && user && tid == r->step_tid) {
        if (mr->phase == 1 || (mr->phase == 3 && k.rip == mr->step_from)) {
            mr->phase = 2; /* now step the instruction itself */
            set_debug_skip(m, r->w, r->nw, 0, 0, 1, 1, k.rip);
            return VCPU_GO;
        }
        /* back from the kernel after the instruction */
        return stop_at(&mr->x, RW_STOP_STEPPED, tid, k.rip);
    }
    if (slot >= 0 && slot < r->nw && (r->pid == 0 || (user && tgid == r->pid))) {
        mr->x.s->slot = slot;
        return stop_at(&mr->x, r->w[slot].kind == RW_BREAK ? RW_STOP_BREAK : RW_STOP_WATCH, tid,
                       k.rip);
    }
    /* Someone else's context, or a spurious exit: go on, stepping over
     * an instruction breakpoint first. */
    if (slot >= 0 && (slot == INTERNAL_SLOT || r->w[slot].kind == RW_BREAK) && mr->phase != 2 &&
        mr->phase != 4) {
        mr->over = 1;
        set_debug_skip(m, r->w, r->nw, mr->phase == 1 || mr->phase == 3, mr->internal, 1, 1, k.rip);
    }
    return VCPU_GO;
}

static int resume_machine(rw_machine *m, const struct rw_resume *r, struct rw_stop *s,
                          struct rw_error *err)
{
    struct machine_run mr = {.x = {.m = m, .r = r, .s = s, .err = err}};
    if (machine_start(&mr) < 0)
        return -1;
    const struct vcpu_hooks h = {.ctx = &mr, .enter = machine_enter, .debug = machine_debug};
    int rc = drive(&mr.x, &h);
    set_debug(m, NULL, 0, 0, 0, 0); /* invariant 6 */
    s->step = m->c.p->step;
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
    int user = guestview_vcpu_user(m->c.vm.vcpu_fd, &k);
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
        if (!on && burst_left_of(m, t[i].addr))
            continue; /* invariant 17: its TF is the guest's own */
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
    if (user && (!on || cur_tgid == pid) && (on || !burst_left(m))) { /* invariant 17 */
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

/* ---- A process under the trap flag: the loop's hooks (invariants 7-15) ---- */

enum { SYS_PENDING = 64 };

struct process_run {
    struct resume_run x;
    uint8_t wval[RW_DEBUG_POINTS][8]; /* the watched values as last seen (invariant 9) */
    uint64_t wpgd;
    int nwatch;
    int kvm_step; /* KVM's single step is on for one CPUID of P (invariant 11) */
    /* Threads of P that trapped at a `syscall`: at their next trap, r11
     * holds the flags that instruction saved (invariant 12). */
    uint32_t sys_tid[SYS_PENDING];
    int nsys;
    /* After a #DB in the kernel (a system call's first instruction, with
     * the user's TF still in r11 and pt_regs not yet written), the machine
     * must not stop: TF could not be cleared there (invariants 8, 14). */
    int in_entry;
    int sync;               /* registers from kvm_run (invariant 13) */
    int tf_failed;          /* tf_arm failed at a step (invariant 10) */
    uint32_t last_user_tid; /* invariant 15: P's thread of the last exit, if a user trap */
    int prof, prev_debug;   /* REWIND_GDB_LOG=2: where a debug exit's time goes */
    uint64_t t0, t1, ns_run, ns_mon;
};

static enum vcpu_verdict process_enter(void *ctx, struct platform *p)
{
    (void)p;
    struct process_run *pr = ctx;
    const struct rw_resume *r = pr->x.r;
    if (pr->prof && pr->prev_debug)
        pr->ns_mon += mono_ns() - pr->t1;
    pr->prev_debug = 0;
    if (r->abort && *r->abort && !pr->in_entry)
        return stop_why(&pr->x, RW_STOP_ABORTED);
    if (r->max_debug_exits && pr->x.s->debug_exits >= r->max_debug_exits && !pr->in_entry)
        return stop_why(&pr->x, RW_STOP_BUDGET); /* invariant 14 */
    if (pr->prof)
        pr->t0 = mono_ns();
    return VCPU_GO;
}

/* An exit the platform answered: no user instruction of P (invariant 15);
 * at a step, TF again in P's threads and the watched values compared
 * (invariant 9).
 *
 * Invariant 10: at every step the threads of P get TF again where the
 * guest kernel took it away or never had it: an execve writes the new
 * program's flags, a signal's delivery clears it for the handler, and a
 * thread being created when the machine resumed copied its parent's
 * registers before TF was set in them. A step is always taken in kernel
 * mode, so the saved registers are those each thread returns to user mode
 * with. */
static enum vcpu_verdict process_exited(void *ctx, struct platform *p, int stepped)
{
    struct process_run *pr = ctx;
    pr->in_entry = 0;
    pr->last_user_tid = 0;
    struct rw_error e;
    if (p->notice && !hole_gdb_burst("notice")) { /* a burst ended: TF again (invariant 17) */
        p->notice = 0;
        uint32_t tid = 0, tgid = 0;
        if (on_cpu(pr->x.m, &tid, &tgid) == 0 && tgid == pr->x.r->pid &&
            tf_arm(pr->x.m, pr->x.r->pid, 1, &e) < 0)
            pr->tf_failed = 1;
    }
    if (!stepped)
        return VCPU_GO;
    if (tf_arm(pr->x.m, pr->x.r->pid, 1, &e) < 0)
        pr->tf_failed = 1;
    if (pr->nwatch && watch_changed(pr->x.m, pr->x.r, pr->wpgd, pr->wval, pr->x.s)) {
        pr->x.stopped = 1;
        return VCPU_STOP; /* seen after the step (invariant 9) */
    }
    return VCPU_GO;
}

/* One user instruction of thread tid of P ran; the vCPU is at sr, k; left:
 * its burst's instructions left before this trap (invariant 17). */
static enum vcpu_verdict process_user(struct process_run *pr, uint32_t tid,
                                      const struct kvm_sregs *sr, struct kvm_regs *k, unsigned left)
{
    rw_machine *m = pr->x.m;
    const struct rw_resume *r = pr->x.r;
    struct rw_stop *s = pr->x.s;
    for (int i = 0; i < pr->nsys; i++) {
        if (pr->sys_tid[i] != tid)
            continue;
        pr->sys_tid[i] = pr->sys_tid[--pr->nsys];
        if (k->r11 & RFLAGS_TF) { /* invariant 12: the flags syscall saved */
            k->r11 &= ~RFLAGS_TF;
            if (ioctl(m->c.vm.vcpu_fd, KVM_SET_REGS, k) < 0)
                return failed(&pr->x, "cannot write the vCPU's registers");
        }
        break;
    }
    if (r->step_tid && tid == r->step_tid && ++s->tid_steps > r->step_skip)
        return stop_at(&pr->x, RW_STOP_STEPPED, tid, k->rip);
    int hit = -1;
    for (int i = r->nw - 1; i >= 0; i--)
        if (r->w[i].kind == RW_BREAK && r->w[i].addr == k->rip)
            hit = i;
    if (hit >= 0) {
        s->slot = hit;
        return stop_at(&pr->x, RW_STOP_BREAK, tid, k->rip);
    }
    if (pr->nwatch && watch_changed(m, r, pr->wpgd, pr->wval, s)) {
        s->pc = k->rip;
        s->direct = pr->last_user_tid == tid; /* invariant 15 */
        RW_ASSERT(!s->direct || s->tid == tid);
        pr->x.stopped = 1;
        return VCPU_STOP;
    }
    pr->last_user_tid = tid;
    unsigned op = op_at(m, sr, k->rip); /* one read for both checks */
    /* its next trap: r11 (invariant 12), unless the `syscall` runs inside
     * the guest's burst, whose TF r11 keeps (this trap spends one of left) */
    if (op == OP_SYSCALL && pr->nsys < SYS_PENDING && left <= 1)
        pr->sys_tid[pr->nsys++] = tid;
    if (op == OP_CPUID) { /* invariant 11 */
        if (process_debug(m, 1) < 0) {
            char msg[160];
            snprintf(msg, sizeof(msg), "KVM_SET_GUEST_DEBUG: %s", strerror(errno));
            return failed(&pr->x, msg);
        }
        pr->kvm_step = 1;
    }
    return VCPU_GO;
}

static enum vcpu_verdict process_debug_exit(void *ctx, struct platform *p)
{
    (void)p;
    struct process_run *pr = ctx;
    rw_machine *m = pr->x.m;
    const struct rw_resume *r = pr->x.r;
    /* invariant 14: past the budget only by the exit after a system call's entry */
    RW_ASSERT(!r->max_debug_exits || pr->x.s->debug_exits < r->max_debug_exits || pr->in_entry);
    pr->in_entry = 0;
    debug_exit_seen(&pr->x);
    if (pr->prof) {
        pr->t1 = mono_ns();
        pr->prev_debug = 1;
        pr->ns_run += pr->t1 - pr->t0;
    }
    int fresh = 0;      /* registers changed since KVM wrote kvm_run */
    if (pr->kvm_step) { /* the CPUID ran: KVM's single step off, TF back */
        pr->kvm_step = 0;
        fresh = 1;
        if (process_debug(m, 0) < 0) {
            char msg[160];
            snprintf(msg, sizeof(msg), "KVM_SET_GUEST_DEBUG: %s", strerror(errno));
            return failed(&pr->x, msg);
        }
    }
    struct kvm_sregs sr;
    struct kvm_regs k;
    uint32_t tid = 0, tgid = 0;
    if (exit_regs(m, pr->sync && !fresh, &sr, &k) < 0 || on_cpu(m, &tid, &tgid) < 0)
        return failed(&pr->x, "cannot read the vCPU at a debug exit");
    int user = (sr.cs.selector & 3) == 3;
    pr->in_entry = !user;
    /* invariant 17: the guest's burst took this trap too: it gets it back
     * (at the next entry: after a stop, at the next resume) */
    unsigned left = burst_left(m);
    if (left && !hole_gdb_burst("keep") && debugreg_give_back(&m->c.vm) < 0)
        return failed(&pr->x, "cannot give a single-step trap back to the guest");
    if (user && tgid == r->pid)
        return process_user(pr, tid, &sr, &k, left);
    pr->last_user_tid = 0; /* invariant 15: the kernel, or another process */
    if (user && (k.rflags & RFLAGS_TF) && !left) { /* a fork of P inherited TF: not ours */
        k.rflags &= ~RFLAGS_TF;
        if (ioctl(m->c.vm.vcpu_fd, KVM_SET_REGS, &k) < 0)
            return failed(&pr->x, "cannot write the vCPU's registers");
    }
    return VCPU_GO;
}

/* The threads of P that will run a `syscall` first (invariant 12). */
static void process_sys_pending(struct process_run *pr)
{
    rw_machine *m = pr->x.m;
    const struct gos_task *t;
    size_t n;
    struct kvm_regs ku;
    int vu = guestview_vcpu_user(m->c.vm.vcpu_fd, &ku);
    struct rw_error e0;
    if (debug_tasks(m, &t, &n, &e0) < 0)
        n = 0;
    /* invariant 17: a `syscall` run inside the guest's burst keeps TF in
     * r11. The current thread's burst loses one instruction first when a
     * #DB given back to the guest is pending (a stop at such a trap). */
    struct kvm_vcpu_events ev;
    memset(&ev, 0, sizeof(ev));
    int db_pending = ioctl(m->c.vm.vcpu_fd, KVM_GET_VCPU_EVENTS, &ev) == 0 &&
                     ev.exception.injected && ev.exception.nr == 1;
    for (size_t i = 0; i < n && pr->nsys < SYS_PENDING; i++) {
        struct gos_regs g;
        if (t[i].kernel_thread || t[i].tgid != pr->x.r->pid)
            continue;
        if (burst_left_of(m, t[i].addr) > (unsigned)(t[i].current && db_pending))
            continue;
        uint64_t rip = 0;
        if (t[i].current && vu == 1)
            rip = ku.rip;
        else if (gos_user_regs(&m->dbg->g, &t[i], &g) == 0)
            rip = g.rip;
        uint8_t b[2];
        if (rip && gos_vread(&m->dbg->g, t[i].pgd, rip, b, 2) == 2 &&
            ((unsigned)b[0] << 8 | b[1]) == OP_SYSCALL)
            pr->sys_tid[pr->nsys++] = t[i].pid;
    }
}

/* Is the vCPU in user mode in P, at a CPUID? */
static int process_at_cpuid(rw_machine *m, uint32_t pid)
{
    struct kvm_sregs sr0;
    struct kvm_regs k0;
    uint32_t tid0 = 0, tgid0 = 0;
    return ioctl(m->c.vm.vcpu_fd, KVM_GET_SREGS, &sr0) == 0 && (sr0.cs.selector & 3) == 3 &&
           ioctl(m->c.vm.vcpu_fd, KVM_GET_REGS, &k0) == 0 && on_cpu(m, &tid0, &tgid0) == 0 &&
           tgid0 == pid && cpuid_at(m, &sr0, k0.rip);
}

/* Arm P: the watched values, TF in its threads (invariant 7), #DB to the
 * monitor, KVM's single step if P stands at a CPUID (invariant 11). 0, or
 * -1 with err (and 1 when guest debugging and TF must be undone). */
static int process_start(struct process_run *pr)
{
    rw_machine *m = pr->x.m;
    const struct rw_resume *r = pr->x.r;
    struct rw_error *err = pr->x.err;
    for (int i = 0; i < r->nw; i++)
        pr->nwatch += r->w[i].kind != RW_BREAK;
    if (pr->nwatch && debug_pgd(m, r->pid, &pr->wpgd, err) < 0)
        return -1;
    for (int i = 0; i < r->nw; i++)
        if (r->w[i].kind != RW_BREAK &&
            gos_vread(&m->dbg->g, pr->wpgd, r->w[i].addr, pr->wval[i], r->w[i].len) != r->w[i].len)
            memset(pr->wval[i], 0, sizeof(pr->wval[i]));
    if (tf_arm(m, r->pid, 1, err) < 0) /* invariant 7 */
        return -1;
    struct kvm_guest_debug d;
    memset(&d, 0, sizeof(d));
    d.control = KVM_GUESTDBG_ENABLE | KVM_GUESTDBG_USE_HW_BP; /* #DB to the monitor */
    if (ioctl(m->c.vm.vcpu_fd, KVM_SET_GUEST_DEBUG, &d) < 0) {
        fail(err, RW_EINTERNAL, "KVM_SET_GUEST_DEBUG: %s", strerror(errno));
        return 1;
    }
    process_sys_pending(pr);
    if (process_at_cpuid(m, r->pid)) {
        if (process_debug(m, 1) < 0) {
            fail(err, RW_EINTERNAL, "KVM_SET_GUEST_DEBUG: %s", strerror(errno));
            return 1;
        }
        pr->kvm_step = 1;
    }
    return 0;
}

/* Undo process_start (invariants 6, 8, 13); rc is the resume's so far. */
static int process_end(struct process_run *pr, int rc)
{
    rw_machine *m = pr->x.m;
    struct rw_stop *s = pr->x.s;
    m->c.vm.run->kvm_valid_regs = 0; /* invariant 13 */
    if (pr->prof && s->debug_exits)
        fprintf(stderr,
                "rewind: debug resume: %llu debug exits: %.1f us each in KVM_RUN, %.1f us in "
                "the monitor\n",
                (unsigned long long)s->debug_exits, pr->ns_run / 1e3 / s->debug_exits,
                pr->ns_mon / 1e3 / s->debug_exits);
    if (pr->tf_failed && rc == 0) {
        pr->x.err->code = RW_EINTERNAL;
        snprintf(pr->x.err->msg, sizeof(pr->x.err->msg),
                 "cannot set the trap flag in the threads of process %u at a step", pr->x.r->pid);
        rc = -1;
    }
    struct rw_error e2;
    int ok = tf_arm(m, pr->x.r->pid, 0, &e2); /* invariant 8 */
    struct kvm_guest_debug d;
    memset(&d, 0, sizeof(d));
    ioctl(m->c.vm.vcpu_fd, KVM_SET_GUEST_DEBUG, &d); /* invariant 6 */
    if (ok < 0 && rc == 0) {
        *pr->x.err = e2;
        rc = -1;
    }
    s->step = m->c.p->step;
    return rc;
}

static int resume_process(rw_machine *m, const struct rw_resume *r, struct rw_stop *s,
                          struct rw_error *err)
{
    struct process_run run = {.x = {.m = m, .r = r, .s = s, .err = err}}, *pr = &run;
    int rc = process_start(pr);
    if (rc != 0) {
        if (rc > 0) { /* TF and guest debugging are on: undo them, keep the first error */
            struct rw_error e;
            tf_arm(m, r->pid, 0, &e);
            struct kvm_guest_debug d;
            memset(&d, 0, sizeof(d));
            ioctl(m->c.vm.vcpu_fd, KVM_SET_GUEST_DEBUG, &d); /* invariant 6 */
        }
        return -1;
    }
    struct platform *p = m->c.p;
    RW_ASSERT(!p->dbg_step); /* only watch.c's replays set it, never on a sought machine */
    /* invariant 13: KVM writes the registers into kvm_run at each exit */
    pr->sync = sync_regs_wanted(m);
    m->c.vm.run->kvm_dirty_regs = 0;
    m->c.vm.run->kvm_valid_regs = pr->sync ? KVM_SYNC_X86_REGS | KVM_SYNC_X86_SREGS : 0;
    pr->prof = tf_log();
    const struct vcpu_hooks h = {
        .ctx = pr, .enter = process_enter, .debug = process_debug_exit, .exited = process_exited};
    p->notice = 0;
    kvm_notice(&m->c.vm, m->st.o.preempt_memory); /* invariant 17 */
    rc = drive(&pr->x, &h);
    kvm_notice(&m->c.vm, 0);
    p->notice = 0;
    return process_end(pr, rc);
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
    if (m->st.o.preempt_memory && !r->pid) { /* the debug registers: no burst notice there */
        err->code = RW_EUSAGE;
        snprintf(err->msg, sizeof(err->msg), "%s", RW_PREEMPT_NO_DEBUGGER);
        return -1;
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
