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

#include "guestos/gos.h"
#include "run/debug.h"
#include "run/machine.h"
#include "util/check.h"

struct rw_machine_debug {
    struct gos g;
    int open;
    struct gos_task *tasks;
    size_t ntasks;
};

static int mem_read(void *ctx, uint64_t gpa, void *buf, size_t n)
{
    const struct kvm_vm *vm = ctx;
    const void *p = kvm_gpa(vm, gpa, n); /* invariant 2 */
    if (!p)
        return -1;
    memcpy(buf, p, n);
    return 0;
}

static int mem_write(void *ctx, uint64_t gpa, const void *buf, size_t n)
{
    struct kvm_vm *vm = ctx;
    void *p = kvm_gpa_w(vm, gpa, n); /* invariant 2 */
    if (!p)
        return -1;
    memcpy(p, buf, n);
    return 0;
}

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
        m->dbg->tasks = calloc(GOS_TASKS_MAX, sizeof(struct gos_task));
        if (!m->dbg || !m->dbg->tasks) {
            debug_free(m);
            fail(err, RW_EINTERNAL, "%s", "out of memory");
            return NULL;
        }
    }
    if (!m->dbg->open) { /* invariant 1 */
        char why[300];
        struct gos_syms s;
        struct gos_mem mem = {.ctx = &m->c.vm, .read = mem_read, .write = mem_write};
        if (gos_syms_load(m->st.o.kernel, &s, why, sizeof(why)) < 0 ||
            gos_open(&m->dbg->g, &mem, &s, why, sizeof(why)) < 0) {
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
static int vcpu_user(rw_machine *m, struct kvm_regs *k)
{
    struct kvm_sregs s;
    if (ioctl(m->c.vm.vcpu_fd, KVM_GET_SREGS, &s) < 0 ||
        ioctl(m->c.vm.vcpu_fd, KVM_GET_REGS, k) < 0)
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
    int user = t->current ? vcpu_user(m, &k) : 0;
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

size_t rw_machine_read(rw_machine *m, uint32_t pid, uint64_t addr, void *buf, size_t n)
{
    struct rw_error err;
    uint64_t pgd;
    if (debug_pgd(m, pid, &pgd, &err) < 0)
        return 0;
    return gos_vread(&m->dbg->g, pgd, addr, buf, n);
}

size_t rw_machine_write(rw_machine *m, uint32_t pid, uint64_t addr, const void *buf, size_t n)
{
    struct rw_error err;
    uint64_t pgd;
    if (debug_pgd(m, pid, &pgd, &err) < 0)
        return 0;
    return gos_vwrite(&m->dbg->g, pgd, addr, buf, n);
}
