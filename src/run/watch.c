/*
 * watch: every write to a range of one process's memory over a stored run
 * (rw_watch, `rewind watch`; docs/tutorials/debugging.md). The run is
 * replayed from its keyframe at or before --from with hardware watchpoints
 * on the range (src/vmm/debugreg.c); each KVM_EXIT_DEBUG is looked at and the
 * guest resumed, so the replay is the stored run again and its trace hash,
 * RAM hash and step count are checked against it at the end (as replay
 * does). Around the watchpoints, the value is read again after every step
 * through the process's own page tables, so a write no watchpoint reported
 * (a host whose KVM does not deliver them, a write through another mapping)
 * is still listed, at its step, as seen rather than caught.
 *
 * The process's address space: a hit or a step counts for pid only when the
 * guest kernel's current task belongs to its thread group (read from
 * current_task, src/vmm/spin.c); its CR3 is learnt there and used to read
 * the range at every later step and learnt again each time pid runs (after
 * an exec, pid's first step under its new CR3 may list the new image's value
 * as a change: not yet told apart).
 *
 * Invariants:
 *  1. A debug exit is never a step: the hooks only read guest state, and
 *     the platform's step counter is the same before and after each one.
 *  2. A hit or a change is listed only for pid's address space: the current
 *     task's thread group is pid at a hit, and reads go through the CR3
 *     learnt while pid was current.
 *  3. Every listed write lies in [from, to]; old is the value last read in
 *     pid's address space (old_known 0 when there was none).
 *  4. The watched range is at most RW_WATCH_MAX_LEN bytes and split into at
 *     most four aligned pieces (debugreg.h invariant 1).
 *  5. A run made with --preempt memory: every single-step trap of the
 *     guest's own bursts is given back to the guest (debugreg.h invariant 4),
 *     so the replay is still the stored run; a change of the range seen at
 *     such a trap in pid's address space is the write of the instruction
 *     that trapped, listed as exact. Writes outside bursts are seen after
 *     their step; stepping them (watchstep.c) is refused for such runs.
 */
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "util/apierr.h"
#include "run/machine.h"
#include "run/modes.h"
#include "run/watchstep.h"
#include "util/bytes.h"
#include "util/check.h"
#include "vmm/debugreg.h"
#include "guestos/elfsym.h"
#include "vmm/spin.h"

/* Debug exits a seen change's stretch may take to find its writer by
 * single-stepping (watchstep.c), unless --exact: about 40 s in the test
 * host (~400 us each, docs/debugging.md), well under a second on hardware. */
#define WATCH_STEP_BUDGET 100000

struct watch {
    struct kvm_vm *vm;
    struct spin_layout lay;
    int have_lay;
    const char *kernel; /* the guest kernel's ELF, for its layout */
    uint32_t pid;
    uint64_t addr, len, from, to;
    uint8_t last[RW_WATCH_MAX_LEN];
    int have_last;
    uint64_t cr3; /* pid's, learnt while it ran (invariant 2) */
    int have_cr3;
    uint32_t stretch_tid; /* pid's thread running when the last step ended (0: none) */
    struct rw_watch_hit *hits;
    size_t n, cap;
    uint64_t dbg_exits;
    int oom;
    int give_back_failed; /* errno of the first refused debugreg_give_back, or 0 */
};

/* The current task's pid and tgid; 0 or -1. */
static int current_ids(struct watch *w, uint64_t cr3, uint32_t *tid, uint32_t *tgid)
{
    uint8_t b[8];
    char why[256];
    if (!w->have_lay) /* found once the guest kernel has its page tables */
        w->have_lay = spin_layout_find(w->vm, w->kernel, &w->lay, why, sizeof(why)) == 0;
    if (!w->have_lay || debugreg_read(w->vm, cr3, w->lay.current_task, b, 8) < 0)
        return -1;
    uint64_t task = bytes_get_u64(b);
    if (!task || debugreg_read(w->vm, cr3, task + w->lay.pid_off, b, 8) < 0)
        return -1;
    *tid = bytes_get_u32(b);
    *tgid = bytes_get_u32(b + 4);
    return 0;
}

static struct rw_watch_hit *add_hit(struct watch *w, uint64_t step)
{
    if (step < w->from || step > w->to) /* invariant 3 */
        return NULL;
    if (w->n == w->cap) {
        size_t cap = w->cap ? 2 * w->cap : 64;
        struct rw_watch_hit *nh = realloc(w->hits, cap * sizeof(*nh));
        if (!nh) {
            w->oom = 1;
            return NULL;
        }
        w->hits = nh;
        w->cap = cap;
    }
    struct rw_watch_hit *h = &w->hits[w->n++];
    memset(h, 0, sizeof(*h));
    h->step = step;
    h->old_known = w->have_last;
    if (w->have_last)
        memcpy(h->old_val, w->last, w->len);
    return h;
}

/* Is the current task one of pid's threads? Learns pid's CR3 if so. */
static int pid_current(struct watch *w, uint64_t cr3, uint32_t *tid)
{
    uint32_t tgid;
    *tid = 0;
    if (current_ids(w, cr3, tid, &tgid) < 0 || tgid != w->pid)
        return 0;
    w->cr3 = cr3;
    w->have_cr3 = 1;
    return 1;
}

static void on_debug(void *ctx, struct platform *p)
{
    struct watch *w = ctx;
    uint64_t step = p->step;
    /* A single step of the guest's own (a memory-access burst of a run made
     * with --preempt memory) goes back to it, also when a watchpoint fired
     * on the same instruction (debugreg.h invariant 4). */
    int gave = debugreg_give_back(p->vm);
    if (gave < 0 && !w->give_back_failed)
        w->give_back_failed = errno ? errno : EIO;
    unsigned fired = debugreg_fired(p->vm->run);
    if (!fired && gave <= 0)
        return;
    w->dbg_exits += fired != 0;
    struct kvm_sregs sr;
    if (ioctl(p->vm->vcpu_fd, KVM_GET_SREGS, &sr) < 0)
        return;
    uint32_t tid;
    if (!pid_current(w, sr.cr3, &tid)) /* invariant 2 */
        return;
    uint8_t now[RW_WATCH_MAX_LEN];
    if (debugreg_read(p->vm, w->cr3, w->addr, now, w->len) < 0)
        return;
    /* A burst's trap comes after each single instruction of the thread
     * (no step, so no other thread, in between): a change it sees is that
     * instruction's write, exact as a watchpoint's hit (invariant 5; the
     * test host's emulated CPU reports BS alone when both fire). */
    if (!fired && (!w->have_last || !memcmp(now, w->last, w->len))) {
        memcpy(w->last, now, w->len);
        w->have_last = 1;
        return;
    }
    struct rw_watch_hit *h = add_hit(w, step);
    if (h) {
        memcpy(h->new_val, now, w->len);
        h->exact = 1;
        h->tid = tid;
        h->user = (sr.cs.selector & 3) == 3;
        h->rip = p->vm->run->debug.arch.pc;
    }
    memcpy(w->last, now, w->len);
    w->have_last = 1;
    RW_ASSERT(p->step == step); /* invariant 1 */
}

static void on_step(void *ctx, struct platform *p)
{
    struct watch *w = ctx;
    struct kvm_sregs sr;
    if (ioctl(p->vm->vcpu_fd, KVM_GET_SREGS, &sr) < 0)
        return;
    uint32_t tid;
    int mine = pid_current(w, sr.cr3, &tid);
    uint8_t now[RW_WATCH_MAX_LEN];
    if (w->have_cr3 && debugreg_read(p->vm, w->cr3, w->addr, now, w->len) == 0) {
        if (w->have_last && memcmp(now, w->last, w->len)) {
            /* Written in the stretch after step p->step - 1, and no hit said so. */
            struct rw_watch_hit *h = add_hit(w, p->step - 1);
            if (h) {
                memcpy(h->new_val, now, w->len);
                /* a guess: the thread that made this step, else the one that ran first */
                h->tid = mine ? tid : w->stretch_tid;
            }
        }
        memcpy(w->last, now, w->len);
        w->have_last = 1;
    }
    w->stretch_tid = mine ? tid : 0;
}

/* ---- before the replay: the process, its executable, the address ---- */

struct proc_find {
    uint32_t pid;
    uint64_t upto;
    int seen;
    uint64_t exec_step;
    char exe[256];
};

static int find_proc(void *ctx, const struct rw_event *e)
{
    struct proc_find *f = ctx;
    if (e->kind == REWIND_REC_FORK && e->aux == f->pid)
        f->seen = 1;
    if (e->pid != f->pid)
        return 0;
    f->seen = 1;
    /* pid's executable: its last exec up to upto, else its first one. */
    if (e->kind == REWIND_REC_EXEC && (!f->exe[0] || e->step <= f->upto)) {
        size_t n = strnlen((const char *)e->payload, e->payload_len);
        if (n >= sizeof(f->exe))
            n = sizeof(f->exe) - 1;
        memcpy(f->exe, e->payload, n);
        f->exe[n] = 0;
        f->exec_step = e->step;
    }
    return 0;
}

struct file_sink {
    int fd, failed;
};

static void sink_output(void *ctx, enum rw_stream s, const void *buf, size_t n)
{
    struct file_sink *f = ctx;
    if (s == RW_STDOUT && !f->failed && write(f->fd, buf, n) != (ssize_t)n)
        f->failed = 1;
}

/* The executable as the guest's filesystem had it at step, into a
 * temporary file (rw_cat: a throwaway); its path in out. 0 or -1. */
static int fetch_exe(rw_home *h, const char *ref, uint64_t step, const char *exe,
                     const struct rw_options *base, char *out, size_t n)
{
    snprintf(out, n, "%s/rewind-watch-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    struct file_sink fs = {.fd = mkstemp(out)};
    if (fs.fd < 0)
        return -1;
    struct rw_options o = *base;
    memset(&o.observer, 0, sizeof(o.observer));
    o.observer.ctx = &fs;
    o.observer.output = sink_output;
    struct rw_result r;
    struct rw_error e;
    int rc = rw_cat(h, ref, step, exe, &o, &r, &e);
    close(fs.fd);
    if (rc < 0 || r.inspect_status != 0 || fs.failed) {
        unlink(out);
        return -1;
    }
    return 0;
}

static int parse_addr(const char *s, uint64_t *v)
{
    char *end;
    errno = 0;
    unsigned long long x = strtoull(s, &end, 0);
    if (errno || end == s || *end || s[0] == '-')
        return -1;
    *v = x;
    return 0;
}

/* ---- after the replay: names for the writers ---- */

static void name_user(struct rw_watch_hit *h, const char *exe_file)
{
    if (!exe_file)
        return;
    int fd = open(exe_file, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    int pie;
    uint64_t at = h->rip - 1; /* inside the writing instruction */
    elfsym_function(fd, at, h->func, sizeof(h->func), &h->func_off, &pie);
    Dwarf *dw = pie ? NULL : dwarf_begin(fd, DWARF_C_READ);
    Dwarf_Die cu;
    if (dw && dwarf_addrdie(dw, at, &cu)) {
        Dwarf_Line *l = dwarf_getsrc_die(&cu, at);
        int line;
        const char *src = l ? dwarf_linesrc(l, NULL, NULL) : NULL;
        if (src && dwarf_lineno(l, &line) == 0) {
            const char *base = strrchr(src, '/');
            snprintf(h->file, sizeof(h->file), "%s", base ? base + 1 : src);
            h->line = line;
        }
    }
    if (dw)
        dwarf_end(dw);
    close(fd);
}

static void name_kernel(struct rw_watch_hit *h, const char *kernel)
{
    int fd = open(kernel, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    int pie;
    elfsym_function(fd, h->rip - 1, h->func, sizeof(h->func), &h->func_off, &pie);
    close(fd);
}

/* ---- the replay ---- */

static int watch_replay(rw_home *h, const char *ref, struct watch *w, const struct rw_options *op,
                        struct rw_watch_result *r, struct rw_error *err, char *kernel, size_t kn)
{
    struct run_stored st;
    if (run_stored_at(h, ref, w->from, 0, op, &st, err) < 0)
        return -1;
    snprintf(kernel, kn, "%s", st.o.kernel);
    st.o.no_keyframes = 1;
    st.o.quiet = 1;
    st.o.obs = &op->observer;
    st.o.abort = op->abort;
    struct rw_result res;
    struct run_ctx c;
    int rc = run_prepare(&c, &st.o, NULL, RUN_KEEP_IF_DIFFERENT, w->from > 0, &res, err);
    if (rc == 0)
        rc = w->from > 0 ? run_restore(&c, st.name, w->from, 0) : run_boot(&c);
    if (rc == 0) {
        w->vm = &c.vm;
        w->kernel = st.o.kernel;
        uint64_t at[DEBUGREG_MAX];
        unsigned size[DEBUGREG_MAX];
        unsigned np = debugreg_split(w->addr, w->len, at, size);
        RW_ASSERT(np > 0 && np <= DEBUGREG_MAX); /* invariant 4: checked by the caller */
        if (debugreg_arm(&c.vm, at, size, np) < 0)
            rc = apierr_set(err, RW_EINTERNAL, "KVM_SET_GUEST_DEBUG: %s", strerror(errno));
    }
    if (rc == 0) {
        struct platform *p = c.p;
        p->dbg_exit = on_debug;
        p->dbg_step = on_step;
        p->dbg_ctx = w;
        if (w->to != UINT64_MAX && w->to + 1 < st.steps) {
            /* Stop after step `to`: nothing to compare, the context is a throwaway. */
            rc = run_loop(&c, w->to + 1);
            r->steps = p->step;
            c.keep = RUN_KEEP_NOTHING;
            struct rw_error scratch;
            c.err = &scratch;
            run_close(&c, rc < 0 ? -1 : -1);
            c.err = err;
            if (rc < 0)
                rc = apierr_set(err, RW_EINTERNAL, "the replay failed: %s", scratch.msg);
        } else {
            rc = run_through(&c, 0);
            r->steps = res.steps;
            if (rc == 0) {
                snprintf(r->trace_hash, sizeof(r->trace_hash), "%s", res.trace_hash);
                r->trace_verified = res.had_stored && !res.diverged;
                if (res.diverged)
                    rc = apierr_set(err, RW_EINTERNAL,
                                    "the replay under watchpoints differs from the stored run: %s",
                                    res.divergence);
            }
        }
    } else {
        run_close(&c, rc);
    }
    if (rc == 0 && w->give_back_failed)
        rc = apierr_set(err, RW_EINTERNAL,
                        "KVM refused to give the guest its own single-step trap back: %s",
                        strerror(w->give_back_failed));
    run_stored_free(&st);
    return rc;
}

/* The run (resolved into name, its steps into *steps), the range and the
 * process asked for (found into pf). 0, or -1 with err. */
static int watch_args(rw_home *h, const char *ref, const struct rw_watch_config *cfg,
                      char name[RW_ID_MAX], uint64_t *steps, struct proc_find *pf,
                      struct rw_error *err)
{
    if (rw_resolve(h, ref, name, err) < 0)
        return -1;
    struct rw_run_info info;
    if (rw_run_info(h, name, &info, err) < 0)
        return -1;
    *steps = info.steps;
    rw_run_info_free(&info);
    if (cfg->from >= *steps)
        return apierr_set(err, RW_EUSAGE, "run %s ends at step %llu; --from %llu is past its end",
                          ref, (unsigned long long)*steps, (unsigned long long)cfg->from);
    if (cfg->to != UINT64_MAX && cfg->to >= *steps)
        return apierr_set(err, RW_EUSAGE, "run %s ends at step %llu; --to %llu is past its end",
                          ref, (unsigned long long)*steps, (unsigned long long)cfg->to);
    if (cfg->to < cfg->from)
        return apierr_set(err, RW_EUSAGE, "--to %llu is before --from %llu",
                          (unsigned long long)cfg->to, (unsigned long long)cfg->from);
    if (cfg->len > RW_WATCH_MAX_LEN)
        return apierr_set(err, RW_EUSAGE, "--len %llu: at most %d bytes can be watched",
                          (unsigned long long)cfg->len, RW_WATCH_MAX_LEN);
    if (!cfg->pid || cfg->pid > UINT32_MAX)
        return apierr_set(err, RW_EUSAGE, "watch needs --pid P, the process whose memory");
    *pf = (struct proc_find){.pid = (uint32_t)cfg->pid, .upto = cfg->from};
    struct rw_event_query q = RW_EVENTS_ALL;
    struct rw_trace_status ts;
    if (rw_events(h, name, &q, find_proc, pf, &ts, err) < 0)
        return -1;
    if (!pf->seen)
        return apierr_set(err, RW_EUSAGE, "run %s has no process %llu (see rewind ps)", ref,
                          (unsigned long long)cfg->pid);
    return 0;
}

/* What is watched: an address, or a symbol of the process's executable
 * (a copy of it in exe, kept for the writers' names: the caller unlinks
 * it when *have_exe). */
struct watch_target {
    uint64_t addr, len;
    char exe[4200];
    int have_exe;
};

/* cfg->what as a symbol of pf's executable. 0, or -1 with err. */
static int watch_symbol(rw_home *h, const char *name, const struct rw_watch_config *cfg,
                        const struct proc_find *pf, struct watch_target *t, struct rw_error *err)
{
    uint64_t size = 0;
    int pie = 0, found = t->have_exe ? elfsym_object(t->exe, cfg->what, &t->addr, &size, &pie) : -1;
    if (t->have_exe)
        unlink(t->exe);
    t->have_exe = 0;
    if (found < 0)
        return apierr_set(
            err, RW_EUSAGE, "no symbol %s: the executable of process %llu (%s) cannot be read",
            cfg->what, (unsigned long long)cfg->pid, pf->exe[0] ? pf->exe : "none exec'd");
    if (found == 0)
        return apierr_set(err, RW_EUSAGE, "no symbol %s in %s, the executable of process %llu",
                          cfg->what, pf->exe, (unsigned long long)cfg->pid);
    if (pie)
        return apierr_set(err, RW_EUSAGE,
                          "%s is position-independent: give %s's address in process %llu "
                          "instead of its name",
                          pf->exe, cfg->what, (unsigned long long)cfg->pid);
    if (!t->len)
        t->len = size ? size : 8;
    if (t->len > RW_WATCH_MAX_LEN)
        t->len = RW_WATCH_MAX_LEN;
    /* the executable again for the names below */
    t->have_exe =
        fetch_exe(h, name, pf->exec_step + 1, pf->exe, &cfg->opts, t->exe, sizeof(t->exe)) == 0;
    return 0;
}

/* The executable (for a symbol and for the writers' names), the address
 * and the length, split over the debug registers (invariant 4). 0, or -1
 * with err. */
static int watch_target(rw_home *h, const char *name, const struct rw_watch_config *cfg,
                        uint64_t steps, const struct proc_find *pf, struct watch_target *t,
                        struct rw_error *err)
{
    t->len = cfg->len;
    if (pf->exe[0]) {
        uint64_t at = pf->exec_step + 1 < steps ? pf->exec_step + 1 : pf->exec_step;
        uint64_t job = run_job_step(rw_home_path(h), name, 1);
        if (at < job)
            at = job;
        t->have_exe =
            at < steps && fetch_exe(h, name, at, pf->exe, &cfg->opts, t->exe, sizeof(t->exe)) == 0;
    }
    if (parse_addr(cfg->what, &t->addr) < 0 && watch_symbol(h, name, cfg, pf, t, err) < 0)
        return -1;
    if (!t->len)
        t->len = 8;
    uint64_t at[DEBUGREG_MAX];
    unsigned size[DEBUGREG_MAX];
    if (debugreg_split(t->addr, t->len, at, size) == 0) /* invariant 4 */
        return apierr_set(err, RW_EUSAGE,
                          "%llu bytes at 0x%llx need more than %d hardware watchpoints",
                          (unsigned long long)t->len, (unsigned long long)t->addr, DEBUGREG_MAX);
    return 0;
}

/* The writers of the changes no watchpoint reported, found by stepping
 * (watchstep.c) within the budget. */
static void watch_refine(rw_home *h, const char *name, const struct rw_watch_config *cfg,
                         struct watch *w, struct rw_watch_result *r)
{
    struct watchstep_config sc = {.pid = w->pid,
                                  .addr = w->addr,
                                  .len = w->len,
                                  .budget = cfg->exact ? 0 : WATCH_STEP_BUDGET,
                                  .abort = cfg->opts.abort};
    struct watchstep_stats ss;
    struct rw_error serr;
    if (watchstep_refine(h, name, &sc, &w->hits, &w->n, &ss, &serr) < 0) {
        /* the replay's rows stand, as seen: say why none was stepped */
        snprintf(r->step_error, sizeof(r->step_error), "%s", serr.msg);
        memset(&ss, 0, sizeof(ss));
        for (size_t i = 0; i < w->n; i++)
            ss.left += !w->hits[i].exact;
    }
    r->stepped = ss.refined;
    r->left = ss.left;
    r->step_exits = ss.debug_exits;
}

/* The replay with the watchpoints, then the rows refined and named into
 * r. 0, or -1 with err. */
static int watch_run(rw_home *h, const char *name, const struct rw_watch_config *cfg,
                     const struct watch_target *t, struct watch *w, struct rw_watch_result *r,
                     struct rw_error *err)
{
    char kernel[4200] = "";
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int rc = watch_replay(h, name, w, &cfg->opts, r, err, kernel, sizeof(kernel));
    clock_gettime(CLOCK_MONOTONIC, &t1);
    r->wall_s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    if (rc == 0 && w->oom)
        rc = apierr_set(err, RW_EINTERNAL, "out of memory listing the writes");
    if (rc == 0 && !w->have_lay)
        rc = apierr_set(err, RW_EINTERNAL,
                        "the guest kernel's current task was never found (%s names no "
                        "current_task/init_task, or they cannot be read)",
                        kernel);
    if (rc < 0)
        return rc;
    if (w->n)
        watch_refine(h, name, cfg, w, r);
    for (size_t i = 0; i < w->n; i++) {
        struct rw_watch_hit *hh = &w->hits[i];
        if (!hh->exact)
            continue;
        if (hh->user)
            name_user(hh, t->have_exe ? t->exe : NULL);
        else
            name_kernel(hh, kernel);
    }
    r->hits = w->hits;
    r->n = w->n;
    r->watchpoint_hits = w->dbg_exits;
    return 0;
}

int rw_watch(rw_home *h, const char *ref, const struct rw_watch_config *cfg,
             struct rw_watch_result *r, struct rw_error *err)
{
    memset(r, 0, sizeof(*r));
    char name[RW_ID_MAX];
    uint64_t steps;
    struct proc_find pf;
    if (watch_args(h, ref, cfg, name, &steps, &pf, err) < 0)
        return -1;
    snprintf(r->exe, sizeof(r->exe), "%s", pf.exe);
    struct watch_target *t = calloc(1, sizeof(*t));
    struct watch *w = calloc(1, sizeof(*w));
    int rc = -1;
    if (!t || !w) {
        rc = apierr_set(err, RW_EINTERNAL, "out of memory");
        goto out;
    }
    if (watch_target(h, name, cfg, steps, &pf, t, err) < 0)
        goto out;
    r->addr = t->addr;
    r->len = t->len;
    w->pid = (uint32_t)cfg->pid;
    w->addr = t->addr;
    w->len = t->len;
    w->from = cfg->from;
    w->to = cfg->to;
    rc = watch_run(h, name, cfg, t, w, r, err);
    if (rc < 0)
        free(w->hits);
out:
    if (t && t->have_exe)
        unlink(t->exe);
    free(t);
    free(w);
    return rc;
}

void rw_watch_free(struct rw_watch_result *r)
{
    free(r->hits);
    r->hits = NULL;
    r->n = 0;
}
