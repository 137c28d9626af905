/*
 * where: rw_where, the stack of every thread of a process at a step of a
 * stored run (docs/debugging.md). Three parts:
 *
 *   1. the trace names the process (the job's pid, or the one asked for,
 *      alive at the step) and the program it last exec'd;
 *   2. rw_cat copies that program out of the guest's filesystem at the
 *      step (root image + overlay, through the process's root and cwd) to
 *      a private temporary file;
 *   3. rw_seek pauses a throwaway machine at the step; src/guestos lists
 *      the process's threads and their saved registers, and libdwfl
 *      unwinds each over the process's memory, the program and the vDSO
 *      (found by the process's AT_SYSINFO_EHDR) its modules; --kernel adds each thread's
 *      kernel stack, scanned for return addresses into the kernel's text.
 *
 * Invariants:
 *  1. Nothing stored changes: both machines are throwaways.
 *  2. Every thread reported belongs to the process asked for (its tgid),
 *     and each has at most RW_FRAMES_MAX frames of each kind.
 *  3. The temporary copy of the program is removed before rw_where returns.
 *  4. The vDSO's image is read through the process's page table only, from
 *     the address its auxiliary vector gives, and is at most 64 KiB (an
 *     image that does not fit or does not parse is left out, never cut).
 */
#include <elf.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "guestos/unwind.h"
#include "run/debug.h"
#include "run/machine.h"
#include "util/check.h"
#include "guestos/elfsym.h"

struct exec_find {
    uint32_t pid;   /* 0: find the job's */
    int started;    /* the job has started */
    char path[256]; /* the program pid exec'd last */
    int found, exited;
    /* the step of that exec */
    uint64_t exec_step;
};

static int on_event(void *ctx, const struct rw_event *ev)
{
    struct exec_find *f = ctx;
    if (ev->kind == REWIND_REC_INIT && ev->aux == REWIND_INIT_JOB_START)
        f->started = 1;
    if (ev->kind == REWIND_REC_EXEC) {
        if (!f->pid && f->started && !f->found)
            f->pid = ev->pid;
        if (f->pid && ev->pid == f->pid) {
            size_t n = strnlen((const char *)ev->payload, ev->payload_len);
            if (n >= sizeof(f->path))
                n = sizeof(f->path) - 1;
            memcpy(f->path, ev->payload, n);
            f->path[n] = 0;
            f->exec_step = ev->step;
            f->found = 1;
            f->exited = 0;
        }
    }
    if (ev->kind == REWIND_REC_EXIT && f->found && ev->pid == f->pid && ev->tid == f->pid)
        f->exited = 1;
    return 0;
}

struct sink {
    int fd, failed;
};

static void to_file(void *ctx, enum rw_stream s, const void *buf, size_t n)
{
    struct sink *k = ctx;
    if (s != RW_STDOUT)
        return;
    const char *p = buf;
    while (n > 0 && !k->failed) {
        ssize_t w = write(k->fd, p, n);
        if (w <= 0) {
            k->failed = 1;
            return;
        }
        p += w;
        n -= (size_t)w;
    }
}

/* Copy the program path of process pid at step out of the guest into a
 * temporary file (tmp). 0 or -1 with err. */
static int copy_program(rw_home *h, const char *ref, uint64_t step, uint32_t pid, const char *path,
                        const struct rw_options *op, char tmp[64], struct rw_error *err)
{
    snprintf(tmp, 64, "/tmp/rewind-where-XXXXXX");
    struct sink k = {.fd = mkstemp(tmp)};
    if (k.fd < 0) {
        tmp[0] = 0;
        err->code = RW_EINTERNAL;
        snprintf(err->msg, sizeof(err->msg), "cannot create a temporary file");
        return -1;
    }
    struct rw_options o = *op;
    o.observer = (struct rw_observer){.output = to_file, .ctx = &k};
    o.pid = pid;
    struct rw_result r;
    int rc = rw_cat(h, ref, step, path, &o, &r, err);
    if (rc == 0 && r.inspect_status != 0 && !k.failed && lseek(k.fd, 0, SEEK_END) == 0) {
        /* A process that is exiting (at its fatal signal) has no root or
         * cwd left to read through: read the path through the job's root
         * (rewind-init's inspect with pid 0), where it was exec'd from. */
        o.pid = 0;
        rc = rw_cat(h, ref, step, path, &o, &r, err);
    }
    close(k.fd);
    if (rc == 0 && (r.inspect_status != 0 || k.failed)) {
        err->code = RW_EINTERNAL;
        snprintf(err->msg, sizeof(err->msg), "cannot read %s at step %llu (process %u)", path,
                 (unsigned long long)step, pid);
        rc = -1;
    }
    return rc;
}

struct mread {
    rw_machine *m;
    uint32_t pid;
};

static size_t read_proc(void *ctx, uint64_t addr, void *buf, size_t n)
{
    struct mread *r = ctx;
    return rw_machine_read(r->m, r->pid, addr, buf, n);
}

/* The process's vDSO address (AT_SYSINFO_EHDR), or 0 if its auxiliary
 * vector cannot be found: the unwind goes on without the vDSO. */
static uint64_t vdso_base(rw_machine *m, uint32_t pid)
{
    enum { AT_SYSINFO_EHDR_TYPE = 33 };
    uint64_t av[64];
    struct rw_error e;
    long nb = rw_machine_auxv(m, pid, av, sizeof(av), &e);
    for (long i = 0; i + 1 < nb / 8; i += 2)
        if (av[i] == AT_SYSINFO_EHDR_TYPE)
            return av[i + 1];
    return 0;
}

/* The kernel stack of t scanned from sp for return addresses into the
 * kernel's text, named from the kernel's symbols. */
static void kernel_frames(rw_machine *m, const struct gos_task *t, uint64_t rip, uint64_t sp,
                          struct rw_stack *s)
{
    struct rw_error e;
    struct gos *g = debug_gos(m, &e);
    if (!g)
        return;
    uint64_t stext = 0, etext = 0;
    if (elfsym_address(m->st.o.kernel, "_stext", &stext) != 1 ||
        elfsym_address(m->st.o.kernel, "_etext", &etext) != 1)
        return;
    int fd = open(m->st.o.kernel, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    uint64_t top = t->stack + g->lay.thread_size;
    if (sp < t->stack || sp >= top)
        sp = t->stack;
    uint64_t words[2048];
    size_t nw = (size_t)(top - sp) / 8;
    if (nw > 2048)
        nw = 2048;
    if (gos_kread(g, sp, words, nw * 8) < 0)
        nw = 0;
    for (size_t i = 0; i <= nw && s->nkframes < RW_FRAMES_MAX; i++) {
        uint64_t pc = i == 0 ? rip : words[i - 1];
        if (pc < stext || pc >= etext)
            continue;
        struct rw_frame *f = &s->kframes[s->nkframes++];
        memset(f, 0, sizeof(*f));
        f->pc = pc;
        f->kernel = 1;
        f->guess = i > 0; /* found on the stack, not unwound */
        int pie;
        if (elfsym_function(fd, pc, f->func, sizeof(f->func), &f->func_off, &pie) != 1)
            f->func[0] = 0;
    }
    close(fd);
}

/* Fill w's threads from the paused machine. 0 or -1 with err. */
static int stacks(rw_machine *m, const char *exe, int kernel, struct rw_where *w,
                  struct rw_error *err)
{
    const struct gos_task *all;
    size_t n;
    if (debug_tasks(m, &all, &n, err) < 0)
        return -1;
    size_t mine = 0;
    for (size_t i = 0; i < n; i++)
        mine += all[i].tgid == w->pid && !all[i].kernel_thread;
    if (!mine) {
        err->code = RW_EUSAGE;
        snprintf(err->msg, sizeof(err->msg), "no process %u at step %llu", w->pid,
                 (unsigned long long)w->step);
        return -1;
    }
    /* Copy the tasks: unwinding reads the task list again. */
    struct gos_task *t = calloc(mine, sizeof(*t));
    w->threads = calloc(mine, sizeof(*w->threads));
    if (!t || !w->threads) {
        free(t);
        err->code = RW_EINTERNAL;
        snprintf(err->msg, sizeof(err->msg), "out of memory");
        return -1;
    }
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (all[i].tgid == w->pid && !all[i].kernel_thread)
            t[k++] = all[i];
    struct kvm_regs vr;
    int have_vr = ioctl(m->c.vm.vcpu_fd, KVM_GET_REGS, &vr) == 0;
    uint64_t vdso = vdso_base(m, w->pid);
    for (size_t i = 0; i < mine; i++) {
        struct rw_stack *s = &w->threads[i];
        RW_ASSERT(t[i].tgid == w->pid); /* invariant 2 */
        s->t = (struct rw_thread){
            .tid = t[i].pid, .pid = t[i].tgid, .state = t[i].state, .current = t[i].current};
        memcpy(s->t.comm, t[i].comm, sizeof(s->t.comm));
        struct rw_uregs ur;
        struct rw_error e2;
        if (rw_machine_user_regs(m, t[i].pid, &ur, &e2) < 0) {
            snprintf(s->why, sizeof(s->why), "%.299s", e2.msg);
        } else {
            struct gos_regs g = {.rax = ur.r.rax,
                                 .rbx = ur.r.rbx,
                                 .rcx = ur.r.rcx,
                                 .rdx = ur.r.rdx,
                                 .rsi = ur.r.rsi,
                                 .rdi = ur.r.rdi,
                                 .rsp = ur.r.rsp,
                                 .rbp = ur.r.rbp,
                                 .r8 = ur.r.r8,
                                 .r9 = ur.r.r9,
                                 .r10 = ur.r.r10,
                                 .r11 = ur.r.r11,
                                 .r12 = ur.r.r12,
                                 .r13 = ur.r.r13,
                                 .r14 = ur.r.r14,
                                 .r15 = ur.r.r15,
                                 .rip = ur.r.rip,
                                 .rflags = ur.r.rflags};
            struct gos_frame fr[RW_FRAMES_MAX];
            size_t nf = 0;
            struct mread mr = {m, w->pid};
            char why[300];
            if (gos_unwind(exe, 0, vdso, read_proc, &mr, &g, fr, RW_FRAMES_MAX, &nf, why,
                           sizeof(why)) < 0)
                snprintf(s->why, sizeof(s->why), "%.299s", why);
            for (size_t j = 0; j < nf; j++) {
                struct rw_frame *f = &s->frames[j];
                memset(f, 0, sizeof(*f));
                f->pc = fr[j].pc;
                memcpy(f->func, fr[j].func, sizeof(f->func));
                f->func_off = fr[j].func_off;
                memcpy(f->file, fr[j].file, sizeof(f->file));
                f->line = fr[j].line;
            }
            s->nframes = (int)nf;
        }
        if (kernel) {
            uint64_t rip = 0, sp = t[i].kernel_sp;
            if (t[i].current && have_vr) {
                rip = vr.rip;
                sp = vr.rsp;
            }
            kernel_frames(m, &t[i], rip, sp, s);
        }
    }
    w->nthreads = mine;
    free(t);
    return 0;
}

int rw_process_program(rw_home *h, const char *ref, uint64_t step, uint32_t *pid, char *path,
                       size_t n, struct rw_error *err)
{
    char id[RW_ID_MAX];
    if (rw_resolve(h, ref, id, err) < 0)
        return -1;
    struct exec_find f = {.pid = *pid};
    struct rw_event_query q = RW_EVENTS_ALL;
    q.to = step;
    if (rw_events(h, id, &q, on_event, &f, NULL, err) < 0)
        return -1;
    err->code = RW_EUSAGE;
    if (!f.found) {
        if (*pid)
            snprintf(err->msg, sizeof(err->msg),
                     "process %u never exec'd a program by step %llu (see rewind ps)", *pid,
                     (unsigned long long)step);
        else
            snprintf(err->msg, sizeof(err->msg), "the job has not started by step %llu",
                     (unsigned long long)step);
        return -1;
    }
    if (f.exited) {
        snprintf(err->msg, sizeof(err->msg), "process %u has exited by step %llu", f.pid,
                 (unsigned long long)step);
        return -1;
    }
    *pid = f.pid;
    snprintf(path, n, "%s", f.path);
    return 0;
}

int rw_program_copy(rw_home *h, const char *ref, uint64_t step, uint32_t pid, const char *path,
                    const struct rw_options *op, char tmp[64], struct rw_error *err)
{
    return copy_program(h, ref, step, pid, path, op, tmp, err);
}

/* The step of the exec that made process pid run its program, by step
 * (0 if none). */
static uint64_t exec_step_of(rw_home *h, const char *ref, uint64_t step, uint32_t pid)
{
    char id[RW_ID_MAX];
    struct rw_error e;
    struct exec_find f = {.pid = pid};
    struct rw_event_query q = RW_EVENTS_ALL;
    q.to = step;
    if (rw_resolve(h, ref, id, &e) < 0 || rw_events(h, id, &q, on_event, &f, NULL, &e) < 0 ||
        !f.found)
        return 0;
    return f.exec_step;
}

int rw_where(rw_home *h, const char *ref, uint64_t step, const struct rw_options *op, int kernel,
             struct rw_where *w, struct rw_error *err)
{
    memset(w, 0, sizeof(*w));
    w->step = step;
    uint32_t pid = (uint32_t)op->pid;
    if (rw_process_program(h, ref, step, &pid, w->exe, sizeof(w->exe), err) < 0)
        return -1;
    w->pid = pid;

    char tmp[64];
    int copied = copy_program(h, ref, step, pid, w->exe, op, tmp, err);
    if (copied < 0) {
        /* At the step of a fatal signal the process dies in the fork that
         * reads its program (its /proc/PID/root goes): read the program at
         * the step of its exec instead, where the process is alive and the
         * file is the one the exec mapped. */
        uint64_t xs = exec_step_of(h, ref, step, pid);
        if (tmp[0])
            unlink(tmp); /* invariant 3 */
        tmp[0] = 0;
        if (xs && xs < step)
            copied = copy_program(h, ref, xs, pid, w->exe, op, tmp, err);
    }
    if (copied < 0) {
        if (tmp[0])
            unlink(tmp); /* invariant 3 */
        return -1;
    }
    rw_machine *m;
    int rc = rw_seek(h, ref, step, &m, err); /* invariant 1: a throwaway */
    if (rc == 0) {
        rc = stacks(m, tmp, kernel, w, err);
        rw_machine_close(m);
    }
    unlink(tmp); /* invariant 3 */
    if (rc < 0)
        rw_where_free(w);
    return rc;
}

void rw_where_free(struct rw_where *w)
{
    free(w->threads);
    w->threads = NULL;
    w->nthreads = 0;
}
