/*
 * stub: see stub.h. The packets served (docs/debugging.md has the list):
 * qSupported, ?, qfThreadInfo/qsThreadInfo, qC, H, T, g, G, p, P, m, M, Z0/Z1/Z2/
 * Z3/Z4 and z (hardware debug registers), c, s, vCont, bc, bs, D, k.
 *
 * A position is a step plus what happened since it: the thread that
 * stopped and its registers (or "at the step's start" for a boundary).
 * Reverse execution replays from a step before the current position on a
 * fresh machine (rw_seek), counts the stops that come before the position,
 * and replays again to the last of them.
 *
 * Invariants:
 *  1. Only threads of cfg->pid are shown, and the machine stops only in
 *     them (rw_machine_resume's pid).
 *  2. The session's machine is a throwaway (rw_seek): nothing stored
 *     changes, whatever gdb writes.
 *  3. A replay for reverse execution reproduces the current position or
 *     the command fails with an error: it never lands on a guess.
 *  4. Reverse execution never goes before cfg->history (gdb is told the
 *     history begins there).
 *  5. Writes (M, G, P) are served on the throwaway machine and mark the
 *     session modified: from then on its run is not the stored run, so
 *     reverse execution (which replays the stored run) is refused, and
 *     --verify says so.
 *  6. Reverse execution's counting replays cover windows that do not
 *     overlap: the first is the current step up to the position, each next
 *     one ends where the one before began, down to cfg->history. The first
 *     whole-step window is 1 step long; a window that took fewer debug exits than a seek
 *     costs (REVERSE_EXITS_PER_SEEK) is followed by one twice as long, a
 *     dearer one by one as long. Each seeks to its start (no debug exits on
 *     the way) and traps only inside the window, so the cost is about the
 *     trapped stretch from the stop found to the position, plus one window.
 *     A window of more than one step gives up after REVERSE_WINDOW_BUDGET
 *     debug exits (src/run/debug.c invariant 14) and its later half is
 *     tried instead (or from the step of the last stop it counted, when
 *     later): windows still end where the one before began, so none is
 *     skipped, and a one-step window always runs whole.
 *     The first window with a stop holds the answer: its last stop.
 *  7. Landing on that stop seeks to the start of the stop's own step and
 *     counts the stops of that step only (the counting replay recorded the
 *     stop's step and its ordinal there); with a watchpoint it replays the
 *     window instead (a change the kernel made is seen at the next step's
 *     start, which a seek to that step already holds). The stop landed on
 *     has the thread, pc and step the counting replay saw, or the command
 *     fails (invariant 3), and a failed landing leaves the session's
 *     position and its last stop as they were. reverse-stepi counts the
 *     thread's instructions without stopping at them (rw_resume.step_skip:
 *     rw_machine_resume counts them) and lands by running, from the
 *     window's start, to the n-th one in one call; that landing checks the
 *     thread and that it stopped after a single step, not the pc (the
 *     counting records none for it).
 *  8. A read (m) of a page not in the process's page table is served from
 *     the program's file only for its read-only segments (progmem.c);
 *     memory is always read from the machine first.
 *  9. With --keep (cfg->keep), every write that reached the machine is
 *     appended to cfg->keep as it was applied (a memory write: the bytes
 *     written, even a partial one; a register write: the registers passed
 *     to rw_machine_set_user_regs), and a write is served only while the
 *     machine stands where rw_seek put it (the session's start, before any
 *     continue, step or replay): there a replay of the kept run applies
 *     the same writes to the same state (src/input/patch.h). A write
 *     elsewhere, or one that would not fit, is refused before it reaches
 *     the machine, so the session never holds a write it cannot keep.
 */
#include "stub.h"

#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "packet.h"
#include "progmem.h"
#include "rewind_check.h"

#define MAX_THREADS 1024
#define GDBS_AUXV_BYTES 512 /* more than the kernel's AT_VECTOR_SIZE words */

struct pos {
    uint64_t step;
    int boundary; /* at the start of the step (no thread stopped) */
    uint32_t tid;
    struct rw_regs r;
};

/* A file gdb opened with vFile:open: a host copy of the guest's file. */
#define GDBS_FILES 16
struct gfile {
    int fd;       /* -1: free */
    char tmp[64]; /* the copy to remove at the end ("" if not ours) */
};

struct bp {
    int type; /* Z type 0..4 */
    uint64_t addr;
    unsigned len;
};

struct gdbs_session {
    const struct gdbs_config *cfg;
    struct gdbs_conn conn;
    rw_machine *m;
    uint32_t gtid; /* Hg: registers and memory */
    uint32_t ctid; /* Hc: stepping */
    struct bp bps[RW_DEBUG_POINTS];
    int nbps;
    struct pos here;
    struct rw_stop last;
    int have_last;
    int ended, exit_status_known;
    uint64_t job_status;
    struct gdbs_result *res;
    struct rw_thread th[MAX_THREADS];
    size_t nth;
    struct gfile files[GDBS_FILES];
    struct gdbs_progmem pm; /* the program's read-only segments (invariant 8) */
    char out[GDBS_PACKET_MAX];
    char miss[160]; /* how the last replay missed the position (reverse) */
    int moved;      /* the machine ran or was replaced since rw_seek (invariant 9) */
};

static void note(const struct gdbs_session *s, const char *fmt, const char *a)
{
    if (s->cfg->notes) {
        fprintf(s->cfg->notes, "rewind: ");
        fprintf(s->cfg->notes, fmt, a);
        fputc('\n', s->cfg->notes);
        fflush(s->cfg->notes);
    }
}

/* The threads of the process now (invariant 1). */
static int threads(struct gdbs_session *s)
{
    static struct rw_thread all[MAX_THREADS];
    size_t n;
    struct rw_error err;
    s->nth = 0;
    if (s->cfg->kernel) { /* the whole machine: one thread, the vCPU */
        s->th[0] = (struct rw_thread){.tid = 1, .current = 1};
        snprintf(s->th[0].comm, sizeof(s->th[0].comm), "vcpu");
        s->nth = 1;
        return 0;
    }
    if (rw_machine_threads(s->m, all, MAX_THREADS, &n, &err) < 0)
        return -1;
    for (size_t i = 0; i < n && i < MAX_THREADS; i++)
        if (all[i].pid == s->cfg->pid && !all[i].kernel)
            s->th[s->nth++] = all[i];
    return 0;
}

static int has_thread(struct gdbs_session *s, uint32_t tid)
{
    threads(s);
    for (size_t i = 0; i < s->nth; i++)
        if (s->th[i].tid == tid)
            return 1;
    return 0;
}

static uint32_t default_thread(struct gdbs_session *s)
{
    threads(s);
    for (size_t i = 0; i < s->nth; i++)
        if (s->th[i].current)
            return s->th[i].tid;
    for (size_t i = 0; i < s->nth; i++)
        if (s->th[i].tid == s->cfg->pid)
            return s->th[i].tid;
    return s->nth ? s->th[0].tid : 0;
}

static int kernel_mode;

/* A thread's registers (the vCPU's for the whole machine). */
static int uregs(rw_machine *m, uint32_t tid, struct rw_uregs *u, struct rw_error *err)
{
    if (!kernel_mode)
        return rw_machine_user_regs(m, tid, u, err);
    memset(u, 0, sizeof(*u));
    u->cs = 0x10;
    u->ss = 0x18;
    return rw_machine_regs(m, &u->r, err);
}

static int regs_of(rw_machine *m, uint32_t tid, struct rw_regs *r)
{
    struct rw_uregs u;
    struct rw_error err;
    if (uregs(m, tid, &u, &err) < 0)
        return -1;
    *r = u.r;
    r->rflags &= ~(uint64_t)0x10100; /* RF and TF are the debugger's */
    return 0;
}

/* The current position after a stop (or at a step's start). */
static void set_here(struct gdbs_session *s, uint32_t tid, int boundary)
{
    memset(&s->here, 0, sizeof(s->here));
    s->here.step = rw_machine_step(s->m);
    s->here.boundary = boundary;
    s->here.tid = tid;
    if (!boundary)
        regs_of(s->m, tid, &s->here.r);
}

/* REWIND_GDB_LOG=1: every packet both ways on stderr (truncated). */
static int log_on = -1;
static void log_packet(const char *dir, const char *p)
{
    if (log_on < 0) {
        const char *e = getenv("REWIND_GDB_LOG");
        log_on = e && (!strcmp(e, "1") || !strcmp(e, "2"));
    }
    if (log_on)
        fprintf(stderr, "rewind: gdb %s %.120s\n", dir, p);
}

static int send(struct gdbs_session *s, const char *p)
{
    log_packet("<-", p);
    return gdbs_sends(&s->conn, p);
}

static void put_le(char **o, uint64_t v, int bytes)
{
    unsigned char b[8];
    for (int i = 0; i < bytes; i++)
        b[i] = (unsigned char)(v >> (8 * i));
    gdbs_tohex(b, (size_t)bytes, *o);
    *o += 2 * bytes;
}

/* g: rax rbx rcx rdx rsi rdi rbp rsp r8..r15 rip (8 bytes each), eflags cs
 * ss ds es fs gs (4 each); the rest is left unavailable. */
static int reply_regs(struct gdbs_session *s)
{
    struct rw_uregs u;
    struct rw_error err;
    if (uregs(s->m, s->gtid, &u, &err) < 0)
        return send(s, "E01");
    const struct rw_regs *r = &u.r;
    uint64_t g[17] = {r->rax, r->rbx, r->rcx, r->rdx, r->rsi, r->rdi, r->rbp, r->rsp, r->r8,
                      r->r9,  r->r10, r->r11, r->r12, r->r13, r->r14, r->r15, r->rip};
    char *o = s->out;
    for (int i = 0; i < 17; i++)
        put_le(&o, g[i], 8);
    put_le(&o, r->rflags & ~(uint64_t)0x10100, 4);
    put_le(&o, u.cs ? u.cs : 0x33, 4);
    put_le(&o, u.ss ? u.ss : 0x2b, 4);
    for (int i = 0; i < 4; i++)
        put_le(&o, 0, 4);
    *o = 0;
    return send(s, s->out);
}

/* The process's AT_ENTRY and AT_PHDR (0 when its vector is not found). */
static void entry_phdr(struct gdbs_session *s, uint64_t *entry, uint64_t *phdr)
{
    uint64_t v[GDBS_AUXV_BYTES / 8];
    struct rw_error err;
    long n = rw_machine_auxv(s->m, s->cfg->pid, v, sizeof(v), &err);
    *entry = *phdr = 0;
    for (long i = 0; i + 1 < n / 8 && v[i] != 0; i += 2) { /* to AT_NULL */
        if (v[i] == 9)                                     /* AT_ENTRY */
            *entry = v[i + 1];
        if (v[i] == 3) /* AT_PHDR */
            *phdr = v[i + 1];
    }
}

/* Up to n bytes at addr: from the machine, and a page it does not map
 * from the program's read-only segments (invariant 8). */
static size_t read_mem(struct gdbs_session *s, uint64_t addr, unsigned char *buf, size_t n)
{
    size_t got = 0;
    uint64_t entry = 0, phdr = 0;
    int aux = 0;
    while (got < n) {
        got += rw_machine_read(s->m, s->cfg->pid, addr + got, buf + got, n - got);
        if (got == n || s->pm.fd < 0)
            break;
        uint64_t a = addr + got;
        size_t k = 4096 - (size_t)(a & 4095); /* the rest of the page missing */
        if (k > n - got)
            k = n - got;
        if (!aux++)
            entry_phdr(s, &entry, &phdr);
        size_t f = gdbs_progmem_read(&s->pm, entry, phdr, a, buf + got, k);
        got += f;
        if (f < k)
            break;
    }
    return got;
}

static int reply_mem(struct gdbs_session *s, const char *args)
{
    char *end;
    uint64_t addr = strtoull(args, &end, 16);
    if (*end != ',')
        return send(s, "E01");
    uint64_t len = strtoull(end + 1, NULL, 16);
    if (len > (GDBS_PACKET_MAX - 8) / 2)
        len = (GDBS_PACKET_MAX - 8) / 2;
    unsigned char buf[GDBS_PACKET_MAX / 2];
    size_t got = read_mem(s, addr, buf, (size_t)len);
    if (!got && len)
        return send(s, "E14");
    gdbs_tohex(buf, got, s->out);
    return send(s, s->out);
}

/* Invariant 9: may a write of n bytes (0: registers) be kept? 1, or 0
 * after a note (the caller answers E01). */
static int keepable(struct gdbs_session *s, size_t n)
{
    if (!s->cfg->keep)
        return 1;
    char why[300];
    if (s->moved)
        snprintf(why, sizeof(why),
                 "--keep: gdb writes only at the session's start (step %llu, before any "
                 "continue, step or reverse command): a write inside a step cannot be replayed; "
                 "start a session with --keep at the step to write at",
                 (unsigned long long)s->cfg->step);
    else if (!rw_patch_fits(s->cfg->keep, n))
        snprintf(why, sizeof(why),
                 "--keep: a session keeps at most %d writes and %d bytes of memory writes",
                 RW_PATCH_OPS_MAX, RW_PATCH_BYTES_MAX);
    else
        return 1;
    note(s, "%s", why);
    return 0;
}

static int write_mem(struct gdbs_session *s, const char *args)
{
    char *end;
    uint64_t addr = strtoull(args, &end, 16);
    if (*end != ',')
        return send(s, "E01");
    uint64_t len = strtoull(end + 1, &end, 16);
    if (*end != ':')
        return send(s, "E01");
    unsigned char buf[GDBS_PACKET_MAX / 2];
    long n = gdbs_fromhex(end + 1, strlen(end + 1), buf, sizeof(buf));
    if (n < 0 || (uint64_t)n != len || !keepable(s, (size_t)n))
        return send(s, "E01");
    s->res->modified = 1; /* invariant 5 (even a partial write) */
    size_t got = rw_machine_write(s->m, s->cfg->pid, addr, buf, (size_t)n);
    if (s->cfg->keep && got) { /* invariant 9: what reached the machine */
        int kept = rw_patch_mem(s->cfg->keep, s->cfg->pid, addr, buf, got) == 0;
        RW_ASSERT(kept); /* keepable() made room */
    }
    if (got != (size_t)n)
        return send(s, "E14");
    return send(s, "OK");
}

/* gdb's register numbers for x86-64 (the order of g): 0..16 the 8-byte
 * rax rbx rcx rdx rsi rdi rbp rsp r8..r15 rip, 17 eflags (4 bytes); the
 * rest (segments, x87, SSE, ...) are not served. */
#define GDBS_NREGS 18
static uint64_t *reg_slot(struct rw_regs *r, int n)
{
    uint64_t *order[GDBS_NREGS] = {&r->rax, &r->rbx, &r->rcx, &r->rdx, &r->rsi, &r->rdi,
                                   &r->rbp, &r->rsp, &r->r8,  &r->r9,  &r->r10, &r->r11,
                                   &r->r12, &r->r13, &r->r14, &r->r15, &r->rip, &r->rflags};
    return n >= 0 && n < GDBS_NREGS ? order[n] : NULL;
}

static uint64_t get_le(const unsigned char *b, int bytes)
{
    uint64_t v = 0;
    for (int i = bytes - 1; i >= 0; i--)
        v = v << 8 | b[i];
    return v;
}

/* p N: one register (as in g); segments as g shows them. */
static int read_reg(struct gdbs_session *s, const char *args)
{
    struct rw_uregs u;
    struct rw_error err;
    char *end;
    long n = strtol(args, &end, 16);
    if (*end || n < 0)
        return send(s, "E01");
    if (uregs(s->m, s->gtid, &u, &err) < 0)
        return send(s, "E01");
    u.r.rflags &= ~(uint64_t)0x10100;
    char *o = s->out;
    uint64_t *slot = reg_slot(&u.r, (int)n);
    if (slot)
        put_le(&o, *slot, n == 17 ? 4 : 8);
    else if (n == 18 || n == 19)
        put_le(&o, n == 18 ? (u.cs ? u.cs : 0x33) : (u.ss ? u.ss : 0x2b), 4);
    else if (n <= 23)
        put_le(&o, 0, 4);
    else
        return send(s, "E01"); /* not served */
    *o = 0;
    return send(s, s->out);
}

/* Write the registers of thread gtid (invariant 5). */
static int store_regs(struct gdbs_session *s, const struct rw_regs *r)
{
    struct rw_error err;
    if (s->cfg->kernel) {
        note(s, "%s", "register writes of the whole machine (--kernel) are not supported");
        return send(s, "E01");
    }
    if (!keepable(s, 0))
        return send(s, "E01");
    s->res->modified = 1;
    if (rw_machine_set_user_regs(s->m, s->gtid, r, &err) < 0) {
        note(s, "%s", err.msg);
        return send(s, "E01");
    }
    if (s->cfg->keep) { /* invariant 9 */
        int kept = rw_patch_regs(s->cfg->keep, s->gtid, r) == 0;
        RW_ASSERT(kept); /* keepable() made room */
    }
    return send(s, "OK");
}

/* G: rax..rip, eflags (what g sends; the segments that follow must be what
 * g said, the rest is ignored). */
static int write_regs(struct gdbs_session *s, const char *hex)
{
    unsigned char b[GDBS_PACKET_MAX / 2];
    long n = gdbs_fromhex(hex, strlen(hex), b, sizeof(b));
    if (n < 17 * 8 + 4)
        return send(s, "E01");
    struct rw_uregs u;
    struct rw_error err;
    if (uregs(s->m, s->gtid, &u, &err) < 0)
        return send(s, "E01");
    for (int i = 0; i < 17; i++)
        *reg_slot(&u.r, i) = get_le(b + 8 * i, 8);
    u.r.rflags = (u.r.rflags & ~(uint64_t)0xffffffff) | get_le(b + 17 * 8, 4);
    if (n >= 17 * 8 + 12) {
        uint64_t cs = get_le(b + 17 * 8 + 4, 4), ss = get_le(b + 17 * 8 + 8, 4);
        if (cs != (u.cs ? u.cs : 0x33) || ss != (u.ss ? u.ss : 0x2b)) {
            note(s, "%s", "segment registers cannot be written");
            return send(s, "E01");
        }
    }
    return store_regs(s, &u.r);
}

/* P N=VALUE: one register of rax..rip, eflags. */
static int write_reg(struct gdbs_session *s, const char *args)
{
    char *end;
    long n = strtol(args, &end, 16);
    if (*end != '=' || n < 0)
        return send(s, "E01");
    unsigned char b[16];
    long len = gdbs_fromhex(end + 1, strlen(end + 1), b, sizeof(b));
    struct rw_uregs u;
    struct rw_error err;
    if (uregs(s->m, s->gtid, &u, &err) < 0)
        return send(s, "E01");
    uint64_t *slot = reg_slot(&u.r, (int)n);
    if (!slot) {
        note(s, "%s", "only rax..r15, rip and eflags can be written");
        return send(s, "E01");
    }
    int bytes = n == 17 ? 4 : 8;
    if (len != bytes)
        return send(s, "E01");
    uint64_t v = get_le(b, bytes);
    *slot = n == 17 ? (*slot & ~(uint64_t)0xffffffff) | v : v;
    return store_regs(s, &u.r);
}

static void resume_of(struct gdbs_session *s, struct rw_resume *r)
{
    memset(r, 0, sizeof(*r));
    r->pid = s->cfg->pid;
    r->abort = s->cfg->abort;
    for (int i = 0; i < s->nbps; i++) {
        r->w[i].addr = s->bps[i].addr;
        r->w[i].kind = s->bps[i].type <= 1   ? RW_BREAK
                       : s->bps[i].type == 2 ? RW_WATCH_WRITE
                                             : RW_WATCH_ACCESS;
        r->w[i].len = s->bps[i].len;
    }
    r->nw = s->nbps;
}

static int set_bp(struct gdbs_session *s, const char *args, int insert)
{
    int type = args[0] - '0';
    char *end;
    if (type < 0 || type > 4 || args[1] != ',')
        return send(s, "E01");
    uint64_t addr = strtoull(args + 2, &end, 16);
    unsigned len = *end == ',' ? (unsigned)strtoul(end + 1, NULL, 16) : 1;
    if (type >= 2 && len != 1 && len != 2 && len != 4 && len != 8)
        return send(s, "E01");
    if (type >= 2 && addr % len)
        return send(s, "E01");
    for (int i = 0; i < s->nbps; i++)
        if (s->bps[i].type == type && s->bps[i].addr == addr) {
            if (!insert) {
                s->bps[i] = s->bps[--s->nbps];
            }
            return send(s, "OK");
        }
    if (!insert)
        return send(s, "OK");
    if (s->nbps == (s->cfg->kernel ? RW_DEBUG_SLOTS : RW_DEBUG_POINTS))
        return send(s, "E0E"); /* gdb: cannot insert (too many) */
    s->bps[s->nbps++] = (struct bp){type, addr, type >= 2 ? len : 1};
    return send(s, "OK");
}

/* The job's wait status when the run has ended. */
static void end_status(struct gdbs_session *s)
{
    struct rw_result r;
    struct rw_error err;
    if (!s->exit_status_known && rw_machine_finish(s->m, 0, &r, &err) == 0) {
        s->job_status = r.job_status;
        s->exit_status_known = 1;
        snprintf(s->res->trace_hash, sizeof(s->res->trace_hash), "%s", r.trace_hash);
        if (r.outcome != RW_EXITED) { /* a spin, a halt, a panic: say so (no wait status) */
            char why[sizeof(r.message) + 80];
            snprintf(why, sizeof(why), "the run ended as %s at step %llu: %s",
                     rw_outcome_word(r.outcome), (unsigned long long)r.steps, r.message);
            note(s, "%s", why);
        }
    }
}

static int reply_stop(struct gdbs_session *s)
{
    if (s->ended) {
        end_status(s);
        unsigned st = (unsigned)s->job_status;
        if ((st & 0x7f) == 0)
            snprintf(s->out, sizeof(s->out), "W%02x", (st >> 8) & 0xff);
        else
            snprintf(s->out, sizeof(s->out), "X%02x", st & 0x7f);
        return send(s, s->out);
    }
    const struct rw_stop *l = &s->last;
    uint32_t tid = s->here.boundary ? s->gtid : s->here.tid;
    if (s->have_last && l->why == RW_STOP_WATCH)
        snprintf(s->out, sizeof(s->out), "T05watch:%" PRIx64 ";thread:%x;", s->bps[l->slot].addr,
                 tid);
    else if (s->have_last && l->why == RW_STOP_BREAK)
        snprintf(s->out, sizeof(s->out), "T05hwbreak:;thread:%x;", tid);
    else if (s->have_last && l->why == RW_STOP_STEP && l->slot == -2)
        snprintf(s->out, sizeof(s->out), "T05replaylog:begin;thread:%x;", tid);
    else
        snprintf(s->out, sizeof(s->out), "T05thread:%x;", tid);
    return send(s, s->out);
}

/* After a stop that Ctrl-C caused: the next command runs again (the
 * abort flag is cleared) unless the session is ending (config). */
static void interrupt_done(struct gdbs_session *s)
{
    const struct gdbs_config *c = s->cfg;
    if (!c->interrupt || !*c->interrupt)
        return;
    *c->interrupt = 0;
    if (!c->stopping || !*c->stopping)
        *c->abort = 0;
    if (c->stopping && *c->stopping) /* a SIGTERM that came meanwhile */
        *c->abort = 1;
}

/* Run forward: step thread tid (0: continue). */
static int forward(struct gdbs_session *s, uint32_t tid)
{
    struct rw_resume r;
    resume_of(s, &r);
    if (s->cfg->kernel)
        r.cpu_step = tid != 0;
    else
        r.step_tid = tid;
    struct rw_stop st;
    struct rw_error err;
    r.spin_limit_s = s->cfg->spin_limit_s; /* the replays of reverse execution have none */
    s->moved = 1;                          /* invariant 9 */
    if (rw_machine_resume(s->m, &r, &st, &err) < 0) {
        note(s, "%s", err.msg);
        return send(s, "E01");
    }
    s->res->debug_exits += st.debug_exits;
    s->last = st;
    s->have_last = 1;
    if (st.why == RW_STOP_ENDED) {
        s->ended = 1;
        s->res->ended = 1;
        return reply_stop(s);
    }
    if (st.why == RW_STOP_ABORTED) {
        note(s, "%s", "interrupted");
        set_here(s, s->gtid, 1);
        interrupt_done(s);
        return reply_stop(s);
    }
    if (s->cfg->kernel && st.why != RW_STOP_STEP)
        st.tid = 1;
    s->gtid = s->ctid = st.tid ? st.tid : s->gtid;
    set_here(s, s->gtid, st.tid == 0);
    return reply_stop(s);
}

/* ---- Reverse execution (invariants 3 and 4) ---- */

/* Is the replay's stop st the position p? When not, and the stop is in
 * p's step, s->miss says how it differs (for the error, invariant 3). */
static int same_pos(struct gdbs_session *s, rw_machine *m, const struct rw_stop *st,
                    const struct pos *p)
{
    if (p->boundary || st->step != p->step)
        return 0;
    if (st->tid != p->tid) {
        snprintf(s->miss, sizeof(s->miss), "a stop of thread %u at 0x%" PRIx64, st->tid, st->pc);
        return 0;
    }
    struct rw_regs r, want = p->r;
    if (regs_of(m, st->tid, &r) < 0)
        return 0;
    /* r11 holds the user flags a system call saved, with the trap flag
     * when it ran under rw_machine_resume (src/run/debug.c invariant 7):
     * that bit is the debugger's, not the position's. */
    r.r11 &= ~(uint64_t)0x100;
    want.r11 &= ~(uint64_t)0x100;
    if (!memcmp(&r, &want, sizeof(r)))
        return 1;
    static const char *names[GDBS_NREGS] = {"rax", "rbx", "rcx", "rdx", "rsi", "rdi",
                                            "rbp", "rsp", "r8",  "r9",  "r10", "r11",
                                            "r12", "r13", "r14", "r15", "rip", "eflags"};
    for (int i = 0; i < GDBS_NREGS; i++)
        if (*reg_slot(&r, i) != *reg_slot(&want, i)) {
            snprintf(s->miss, sizeof(s->miss),
                     "a stop of thread %u at 0x%" PRIx64 " with %s 0x%" PRIx64 ", not 0x%" PRIx64,
                     st->tid, r.rip, names[i], *reg_slot(&r, i), *reg_slot(&want, i));
            break;
        }
    return 0;
}

/* The last stop a counting replay saw: its step, its ordinal among the
 * counted stops of that step, its thread and pc (invariant 7). */
struct hit {
    uint64_t step, ord;
    uint32_t tid;
    uint64_t pc;
};

/* Replay from step `from` with r, counting the stops strictly before
 * target (with step_tid: the thread's instructions, counted by
 * rw_machine_resume without stopping, r->step_skip UINT64_MAX). *found:
 * target was reached. With stop_at > 0 (not with step_tid), stop at the
 * stop_at-th stop instead and leave the machine there in *out. last (if
 * not NULL) gets the last stop counted. With budget > 0 the replay gives
 * up after that many debug exits: *found 0 and *over 1 (invariant 6).
 * 0 or -1 with err. */
static int replay(struct gdbs_session *s, uint64_t from, const struct rw_resume *r0,
                  const struct pos *target, uint64_t stop_at, uint64_t budget, uint64_t *count,
                  int *found, int *over, rw_machine **out, struct hit *last, struct rw_error *err)
{
    rw_machine *m;
    if (out)
        *out = NULL; /* set only at the stop_at-th stop */
    if (rw_seek(s->cfg->h, s->cfg->ref, from, &m, err) < 0)
        return -1;
    s->res->replays++;
    struct rw_resume r = *r0;
    r.until_step = target->boundary ? target->step : target->step + 1;
    *count = 0;
    *found = 0;
    *over = 0;
    uint64_t exits = 0;
    for (;;) {
        struct rw_stop st;
        if (budget && exits >= budget) { /* spent at a stop: 0 below would be no limit */
            *over = 1;
            break;
        }
        r.max_debug_exits = budget ? budget - exits : 0; /* 0: no limit */
        if (rw_machine_resume(m, &r, &st, err) < 0) {
            rw_machine_close(m);
            return -1;
        }
        s->res->debug_exits += st.debug_exits;
        exits += st.debug_exits;
        /* src/run/debug.c invariant 14: one past it after a system call's entry */
        RW_ASSERT(!budget || exits <= budget + 1);
        if (r.step_tid) /* the target's own instruction is not before it */
            *count += st.tid_steps - (st.why == RW_STOP_BREAK && st.tid == r.step_tid &&
                                      same_pos(s, m, &st, target));
        if (log_on > 0)
            fprintf(stderr,
                    "rewind: gdb -- replay from %" PRIu64 " to %" PRIu64 "%s: stop %" PRIu64
                    ": why %d step %" PRIu64 " thread %u pc 0x%" PRIx64 " slot %d, %" PRIu64
                    " debug exits\n",
                    from, target->step, target->boundary ? "" : "+", *count + 1, (int)st.why,
                    st.step, st.tid, st.pc, st.slot, st.debug_exits);
        if (st.why == RW_STOP_BUDGET) {
            *over = 1; /* the window was dearer than its budget (invariant 6) */
            break;
        }
        if (st.why == RW_STOP_ABORTED || st.why == RW_STOP_ENDED || st.why == RW_STOP_STEP) {
            *found = st.why == RW_STOP_STEP && target->boundary;
            break;
        }
        if (same_pos(s, m, &st, target)) {
            *found = 1;
            break;
        }
        if (st.why == RW_STOP_BREAK && (r.step_tid || st.slot >= s->nbps))
            continue; /* the extra breakpoint at the target's pc, elsewhere */
        ++*count;
        if (last) {
            last->ord = *count > 1 && last->step == st.step ? last->ord + 1 : 1;
            *last = (struct hit){st.step, last->ord, st.tid, st.pc};
        }
        if (stop_at && *count == stop_at) {
            s->last = st;
            *out = m;
            return 0;
        }
    }
    rw_machine_close(m);
    return 0;
}

/* reverse-stepi's landing: seek to `from` and run thread tid's n-th
 * instruction since then, counted by rw_machine_resume (step_skip), in one
 * call. *out: the machine there. 0 or -1 with err. */
static int land_step(struct gdbs_session *s, const struct rw_resume *r0, const struct pos *target,
                     uint64_t from, uint64_t n, rw_machine **out, struct rw_error *err)
{
    *out = NULL;
    rw_machine *m;
    if (rw_seek(s->cfg->h, s->cfg->ref, from, &m, err) < 0)
        return -1;
    s->res->replays++;
    struct rw_resume r = *r0;
    r.nw = 0;
    r.step_skip = n - 1;
    r.until_step = target->boundary ? target->step : target->step + 1;
    struct rw_stop st;
    if (rw_machine_resume(m, &r, &st, err) < 0) {
        rw_machine_close(m);
        return -1;
    }
    s->res->debug_exits += st.debug_exits;
    if (st.why != RW_STOP_STEPPED || st.tid != r.step_tid) {
        rw_machine_close(m);
        snprintf(err->msg, sizeof(err->msg), "%s",
                 r.abort && *r.abort ? "interrupted"
                                     : "reverse execution: the second replay did not "
                                       "reach the stop the first one found");
        return -1;
    }
    s->last = st;
    *out = m;
    return 0;
}

/* A window of reverse execution's counting replays that took fewer debug
 * exits than this is followed by one twice as long; after a dearer one the
 * size stays (invariant 6). About one seek's cost in debug exits: 50,000
 * exits at ~130 us each in the test host (docs/debugging.md) is ~6.5 s, the
 * time of a seek there (bench/RESULTS.md, "Watch and gdb"). */
#define REVERSE_EXITS_PER_SEEK 50000

/* A window of more than one step gives up after this many debug exits and
 * its later half is tried instead (invariant 6): about one seek's cost, so
 * a window given up costs at most two seeks' worth. */
#define REVERSE_WINDOW_BUDGET REVERSE_EXITS_PER_SEEK

/* REWIND_GDB_REVERSE=overlap: the strategy before 2026-12-01 (every
 * replay runs to the position, windows of 1 then 4096 steps doubling,
 * landing from the window's start), kept for bench/gdb.sh's side by side. */
static int reverse_overlap(void)
{
    const char *e = getenv("REWIND_GDB_REVERSE");
    return e && !strcmp(e, "overlap");
}

/* REWIND_GDB_REVERSE=nobudget: the windows without their budget (before
 * 2026-12-01 evening), for bench/gdb.sh's side by side. */
static uint64_t reverse_budget(void)
{
    const char *e = getenv("REWIND_GDB_REVERSE");
    return e && !strcmp(e, "nobudget") ? 0 : REVERSE_WINDOW_BUDGET;
}

/* Land on the stop h that a counting replay found: seek (no debug exits)
 * to the start of its step and count its stops there (invariant 7), or,
 * with watchpoints, replay the whole window from `from` to its n-th stop:
 * a watched value the kernel changed is seen at the step after the
 * change, which a seek to that step already holds. The stop reached must
 * be h (invariant 3). *out: the machine there, or NULL with a note. */
static int land(struct gdbs_session *s, const struct rw_resume *r, const struct pos *target,
                uint64_t from, uint64_t n, const struct hit *h, int per_step, rw_machine **out,
                struct rw_error *err)
{
    if (r->step_tid)
        return land_step(s, r, target, from, n, out, err);
    uint64_t n2;
    int found, over;
    struct pos end = {.step = h->step + 1, .boundary = 1};
    if (per_step) {
        from = h->step;
        n = h->ord;
        target = &end;
    }
    struct rw_stop before = s->last; /* the position's stop, kept on failure */
    if (replay(s, from, r, target, n, 0, &n2, &found, &over, out, NULL, err) < 0)
        return -1;
    if (!*out) { /* the replay ended before the stop it found before */
        snprintf(err->msg, sizeof(err->msg), "%s",
                 r->abort && *r->abort ? "interrupted"
                                       : "reverse execution: the second replay did not "
                                         "reach the stop the first one found");
        return -1;
    }
    if (s->last.tid != h->tid || s->last.pc != h->pc || s->last.step != h->step) {
        snprintf(err->msg, sizeof(err->msg),
                 "reverse execution: the second replay reached a stop of thread %u at 0x%" PRIx64
                 " (step %" PRIu64 "), not the first one's of thread %u at 0x%" PRIx64
                 " (step %" PRIu64 ")",
                 s->last.tid, s->last.pc, s->last.step, h->tid, h->pc, h->step);
        s->last = before; /* the session stays where it was */
        rw_machine_close(*out);
        *out = NULL;
        return -1;
    }
    return 0;
}

/* Reverse execution (invariants 3, 4, 6, 7). */
/* One reverse search: its target and its windows (invariant 6: window
 * k is [from, to): to is the position for the first, the current step,
 * and the previous window's start after). */
struct rev_search {
    struct pos target; /* where the search starts: the current position */
    struct pos end;    /* the start of step to, a window's end after the first */
    uint64_t lo;       /* the beginning of the history */
    uint64_t to, size;
    int first, overlap, have_bp, have_watch;
};

/* The debug points of the replays: gdb's (none for reverse-stepi), and a
 * breakpoint at the target itself if none is there. */
static void reverse_setup(struct gdbs_session *s, uint32_t step_tid, struct rw_resume *r,
                          struct rev_search *rs)
{
    resume_of(s, r);
    r->abort = s->cfg->abort;
    r->step_tid = step_tid;
    if (step_tid) {
        r->nw = 0; /* reverse-stepi counts the thread's instructions only */
        r->step_skip = UINT64_MAX;
    }
    memset(rs, 0, sizeof(*rs));
    rs->target = s->here;
    for (int i = 0; i < r->nw; i++) {
        rs->have_bp |= r->w[i].kind == RW_BREAK && r->w[i].addr == rs->target.r.rip;
        rs->have_watch |= r->w[i].kind != RW_BREAK;
    }
    if (!rs->target.boundary && !rs->have_bp && r->nw < RW_DEBUG_POINTS) {
        /* stop at the target itself even if no breakpoint is there */
        r->w[r->nw].addr = rs->target.r.rip;
        r->w[r->nw].kind = RW_BREAK;
        r->nw++;
    }
    rs->overlap = reverse_overlap();
    rs->lo = s->cfg->history > 1 ? s->cfg->history : 1;
    rs->to = rs->target.step;
    rs->size = 1;
    rs->first = !rs->target.boundary;
}

/* The next window: its start into *from, its end into *tgt. 0, or 1 when
 * the history begins before it. */
static int reverse_window(struct rev_search *rs, uint64_t *from, const struct pos **tgt)
{
    rs->end = (struct pos){.step = rs->to, .boundary = 1};
    *tgt = &rs->target;
    if (rs->first) {
        *from = rs->target.step;
    } else if (rs->overlap) {
        *from = rs->target.step > rs->lo + rs->size ? rs->target.step - rs->size : rs->lo;
    } else {
        if (rs->to <= rs->lo)
            return 1;
        *from = rs->to > rs->lo + rs->size ? rs->to - rs->size : rs->lo;
        *tgt = &rs->end;
    }
    RW_ASSERT(rs->overlap || rs->first || (*from < rs->to && *from >= rs->lo)); /* invariant 6 */
    return 0;
}

/* Invariant 6: a window over its budget is given up for its later half,
 * or from the step of the last stop it counted, if later: the answer is
 * at or after that stop. */
static void reverse_give_up(struct gdbs_session *s, struct rev_search *rs, uint64_t from,
                            uint64_t n, const struct rw_resume *r, const struct hit *h)
{
    RW_ASSERT(rs->to - from > 1); /* a one-step window runs whole */
    uint64_t nf = from + (rs->to - from) / 2;
    if (n > 0 && !r->step_tid && h->step > nf)
        nf = h->step;
    RW_ASSERT(nf > from && nf < rs->to);
    s->res->windows_given_up++;
    rs->size = rs->to - nf;
}

/* A window with no stop: the next one, earlier (or longer with overlap). */
static void reverse_widen(struct gdbs_session *s, struct rev_search *rs, uint64_t from,
                          uint64_t exits0)
{
    if (rs->overlap) {
        rs->size = rs->size < 2 ? 4096 : rs->size * 2;
    } else {
        rs->to = from;
        /* invariant 6: twice as long after a cheap window */
        if (!rs->first && s->res->debug_exits - exits0 < REVERSE_EXITS_PER_SEEK)
            rs->size *= 2;
    }
    rs->first = 0;
}

/* Invariant 3: the replay did not pass the current position again. */
static int reverse_not_found(struct gdbs_session *s, const struct rev_search *rs, uint64_t from,
                             const struct pos *tgt)
{
    char msg[400];
    snprintf(msg, sizeof(msg),
             "reverse execution could not reproduce the current position (step %" PRIu64
             ", thread %u at 0x%" PRIx64 ") replaying from step %" PRIu64 " to %s%" PRIu64 "%s%s",
             rs->target.step, rs->target.tid, rs->target.r.rip, from,
             tgt == &rs->end ? "the start of step " : "step ", tgt->step,
             s->miss[0] ? ": saw " : "", s->miss);
    note(s, "%s", msg);
    return send(s, "E01");
}

/* The window's last stop (the n-th) becomes the session's machine. */
static int reverse_land(struct gdbs_session *s, struct rw_resume *r, const struct rev_search *rs,
                        const struct pos *tgt, uint64_t from, uint64_t n, struct hit *h)
{
    rw_machine *m;
    struct rw_error err;
    if (land(s, r, tgt, from, n, h, !rs->overlap && !rs->have_watch, &m, &err) < 0) {
        note(s, "%s", err.msg);
        interrupt_done(s);
        return send(s, "E01");
    }
    rw_machine_close(s->m);
    s->m = m;
    s->moved = 1;
    s->have_last = 1;
    if (s->last.why == RW_STOP_BREAK && s->last.slot >= s->nbps)
        s->last.why = RW_STOP_STEPPED;
    s->gtid = s->ctid = s->last.tid;
    set_here(s, s->last.tid, 0);
    return reply_stop(s);
}

/* Invariant 4: no stop back to the beginning of the history: the machine
 * is put there. */
static int reverse_history_begins(struct gdbs_session *s)
{
    rw_machine *m;
    struct rw_error err;
    if (rw_seek(s->cfg->h, s->cfg->ref, s->cfg->history, &m, &err) < 0) {
        note(s, "%s", err.msg);
        return send(s, "E01");
    }
    s->res->replays++;
    rw_machine_close(s->m);
    s->m = m;
    s->moved = 1;
    memset(&s->last, 0, sizeof(s->last));
    s->last.why = RW_STOP_STEP;
    s->last.slot = -2;
    s->have_last = 1;
    if (!has_thread(s, s->gtid))
        s->gtid = s->ctid = default_thread(s);
    set_here(s, s->gtid, 1);
    return reply_stop(s);
}

/* A counting replay of one window (replay's arguments but stop_at and
 * out): the machine's side of a reverse search. replay_counting below;
 * tests/engine/reverse_test.c gives a fake, so the windows are tested
 * without a machine. */
typedef int (*rev_count_fn)(struct gdbs_session *s, uint64_t from, const struct rw_resume *r,
                            const struct pos *target, uint64_t budget, uint64_t *count, int *found,
                            int *over, struct hit *last, struct rw_error *err);

static int replay_counting(struct gdbs_session *s, uint64_t from, const struct rw_resume *r,
                           const struct pos *target, uint64_t budget, uint64_t *count, int *found,
                           int *over, struct hit *last, struct rw_error *err)
{
    return replay(s, from, r, target, 0, budget, count, found, over, NULL, last, err);
}

/* How a reverse search ended. */
enum rev_end {
    REV_LAND,        /* window [*from, *tgt) has stops: land on the *n-th, *h */
    REV_NOT_FOUND,   /* a replay did not pass the position (invariant 3) */
    REV_HISTORY,     /* no stop back to the beginning of the history (invariant 4) */
    REV_FAILED,      /* a replay failed: err */
    REV_INTERRUPTED, /* Ctrl-C or --timeout during a replay */
};

/* The windows of invariant 6, counted by count from the position back
 * until one has a stop. */
static enum rev_end reverse_search(struct gdbs_session *s, rev_count_fn count,
                                   const struct rw_resume *r, struct rev_search *rs, uint64_t *from,
                                   uint64_t *n, const struct pos **tgt, struct hit *h,
                                   struct rw_error *err)
{
    for (;;) {
        if (reverse_window(rs, from, tgt))
            return REV_HISTORY;
        int found, over;
        *h = (struct hit){0};
        s->miss[0] = 0;
        const uint64_t exits0 = s->res->debug_exits;
        /* invariant 6: a window of more than one step has a budget */
        const uint64_t budget =
            !rs->first && !rs->overlap && rs->to - *from > 1 ? reverse_budget() : 0;
        if (count(s, *from, r, *tgt, budget, n, &found, &over, h, err) < 0)
            return REV_FAILED;
        if (r->abort && *r->abort)
            return REV_INTERRUPTED;
        if (over) {
            RW_ASSERT(budget);
            reverse_give_up(s, rs, *from, *n, r, h);
            continue;
        }
        if (!found) /* invariant 3 */
            return REV_NOT_FOUND;
        if (*n > 0)
            return REV_LAND;
        if (*from <= rs->lo)
            return REV_HISTORY;
        reverse_widen(s, rs, *from, exits0);
    }
}

static int reverse(struct gdbs_session *s, uint32_t step_tid)
{
    if (s->cfg->kernel) {
        note(s, "%s", "reverse execution of the whole machine (--kernel) is not supported");
        return send(s, "E01");
    }
    if (s->res->modified) { /* invariant 5 */
        note(s, "%s",
             "reverse execution after a write to registers or memory is not possible: "
             "the stored run has no such write to replay");
        return send(s, "E01");
    }
    struct rw_resume r;
    struct rev_search rs;
    reverse_setup(s, step_tid, &r, &rs);
    uint64_t from, n;
    const struct pos *tgt;
    struct hit h;
    struct rw_error err;
    switch (reverse_search(s, replay_counting, &r, &rs, &from, &n, &tgt, &h, &err)) {
    case REV_LAND:
        return reverse_land(s, &r, &rs, tgt, from, n, &h);
    case REV_NOT_FOUND:
        return reverse_not_found(s, &rs, from, tgt);
    case REV_HISTORY:
        return reverse_history_begins(s);
    case REV_FAILED:
        note(s, "%s", err.msg);
        return send(s, "E01");
    case REV_INTERRUPTED:
        note(s, "%s", "interrupted");
        interrupt_done(s);
        return send(s, "E01");
    }
    return send(s, "E01");
}

/* ---- Packets ---- */

static int threads_reply(struct gdbs_session *s)
{
    threads(s);
    char *o = s->out;
    *o++ = 'm';
    for (size_t i = 0; i < s->nth && o + 16 < s->out + sizeof(s->out); i++)
        o += sprintf(o, "%s%x", i ? "," : "", s->th[i].tid);
    *o = 0;
    return send(s, s->nth ? s->out : "l");
}

/* vCont;ACTION[:TID];...: the first action that names a thread or none. */
static int vcont(struct gdbs_session *s, const char *a)
{
    uint32_t step_tid = 0;
    int any_step = 0;
    while (*a == ';') {
        a++;
        char act = *a++;
        if (act == 'C' || act == 'S')
            while (*a && *a != ':' && *a != ';')
                a++; /* a signal: not delivered */
        uint32_t tid = 0;
        if (*a == ':') {
            char *end;
            long t = strtol(a + 1, &end, 16);
            tid = t > 0 ? (uint32_t)t : 0;
            a = end;
        }
        if ((act == 's' || act == 'S') && !any_step) {
            any_step = 1;
            step_tid = tid ? tid : s->ctid;
        }
        while (*a && *a != ';')
            a++;
    }
    return forward(s, any_step ? step_tid : 0);
}

/* ---- Files: the program, served from the guest's filesystem ---- */

/* qXfer:exec-file:read:ANNEX:OFFSET,LENGTH: the program's guest path. */
static int xfer_exec(struct gdbs_session *s, const char *a)
{
    const char *c = strchr(a, ':');
    if (!c)
        return send(s, "E01");
    uint64_t off = strtoull(c + 1, NULL, 16);
    size_t n = strlen(s->cfg->exe);
    if (off >= n)
        return send(s, "l");
    snprintf(s->out, sizeof(s->out), "l%s", s->cfg->exe + off);
    return send(s, s->out);
}

/* qXfer:auxv:read::OFFSET,LENGTH: the process's auxiliary vector (gdb
 * places a position-independent program by its AT_ENTRY). */
static int xfer_auxv(struct gdbs_session *s, const char *a)
{
    const char *c = strchr(a, ':');
    if (!c || s->cfg->kernel)
        return send(s, "E01");
    char *end;
    uint64_t off = strtoull(c + 1, &end, 16);
    uint64_t len = *end == ',' ? strtoull(end + 1, NULL, 16) : 0;
    unsigned char v[GDBS_AUXV_BYTES];
    struct rw_error err;
    long n = rw_machine_auxv(s->m, s->cfg->pid, v, sizeof(v), &err);
    if (n < 0) {
        note(s, "%s", err.msg);
        return send(s, "E01");
    }
    if (off >= (uint64_t)n)
        return send(s, "l");
    uint64_t k = (uint64_t)n - off;
    if (len && k > len)
        k = len;
    s->out[0] = off + k < (uint64_t)n ? 'm' : 'l';
    memcpy(s->out + 1, v + off, (size_t)k);
    return gdbs_send(&s->conn, s->out, (size_t)k + 1);
}

/* vFile:open:HEXPATH,FLAGS,MODE / pread:FD,COUNT,OFFSET / close:FD /
 * setfs:PID. Files are read only; a file other than the program is copied
 * out of the guest at the session's step first (a throwaway rw_cat). */
static int vfile(struct gdbs_session *s, const char *a)
{
    if (!strncmp(a, "setfs:", 6))
        return send(s, "F0");
    if (!strncmp(a, "open:", 5)) {
        const char *comma = strchr(a + 5, ',');
        char path[1024];
        unsigned char raw[1024];
        long n = comma ? gdbs_fromhex(a + 5, (size_t)(comma - (a + 5)), raw, sizeof(raw) - 1) : -1;
        if (n <= 0)
            return send(s, "F-1,16"); /* EINVAL */
        memcpy(path, raw, (size_t)n);
        path[n] = 0;
        if (strtoul(comma + 1, NULL, 16) & 3)
            return send(s, "F-1,d"); /* EACCES: read only */
        int slot = -1;
        for (int i = 0; i < GDBS_FILES; i++)
            if (s->files[i].fd < 0) {
                slot = i;
                break;
            }
        if (slot < 0)
            return send(s, "F-1,18"); /* EMFILE */
        struct gfile *f = &s->files[slot];
        f->tmp[0] = 0;
        const char *host = NULL;
        if (s->cfg->exe_local && !strcmp(path, s->cfg->exe)) {
            host = s->cfg->exe_local;
        } else {
            struct rw_options o;
            struct rw_error err;
            rw_options_init(&o);
            o.abort = s->cfg->abort;
            if (rw_program_copy(s->cfg->h, s->cfg->ref, s->cfg->step, s->cfg->pid, path, &o, f->tmp,
                                &err) < 0) {
                if (f->tmp[0])
                    unlink(f->tmp);
                f->tmp[0] = 0;
                return send(s, "F-1,2"); /* ENOENT */
            }
            host = f->tmp;
        }
        f->fd = open(host, O_RDONLY | O_CLOEXEC);
        if (f->fd < 0)
            return send(s, "F-1,2");
        snprintf(s->out, sizeof(s->out), "F%x", slot);
        return send(s, s->out);
    }
    if (!strncmp(a, "pread:", 6)) {
        char *end;
        unsigned long slot = strtoul(a + 6, &end, 16);
        if (slot >= GDBS_FILES || s->files[slot].fd < 0 || *end != ',')
            return send(s, "F-1,9"); /* EBADF */
        unsigned long count = strtoul(end + 1, &end, 16);
        unsigned long long off = *end == ',' ? strtoull(end + 1, NULL, 16) : 0;
        if (count > GDBS_PACKET_MAX / 2 - 32)
            count = GDBS_PACKET_MAX / 2 - 32;
        char buf[GDBS_PACKET_MAX / 2];
        ssize_t got = pread(s->files[slot].fd, buf, count, (off_t)off);
        if (got < 0)
            return send(s, "F-1,5"); /* EIO */
        int h = snprintf(s->out, sizeof(s->out), "F%zx;", (size_t)got);
        memcpy(s->out + h, buf, (size_t)got);
        return gdbs_send(&s->conn, s->out, (size_t)h + (size_t)got);
    }
    if (!strncmp(a, "close:", 6)) {
        unsigned long slot = strtoul(a + 6, NULL, 16);
        if (slot >= GDBS_FILES || s->files[slot].fd < 0)
            return send(s, "F-1,9");
        close(s->files[slot].fd);
        s->files[slot].fd = -1;
        if (s->files[slot].tmp[0])
            unlink(s->files[slot].tmp);
        s->files[slot].tmp[0] = 0;
        return send(s, "F0");
    }
    return send(s, "");
}

static int handle(struct gdbs_session *s, const char *p, int *done)
{
    if (p[0] == 0x03)
        return 0; /* an interrupt while stopped: nothing to do */
    if (s->ended && p[0] != 'D' && p[0] != 'k' && strncmp(p, "vKill", 5) && strncmp(p, "q", 1) &&
        p[0] != '?')
        return send(s, "E01");
    switch (p[0]) {
    case '?':
        return reply_stop(s);
    case 'g':
        return reply_regs(s);
    case 'G':
        return write_regs(s, p + 1);
    case 'P':
        return write_reg(s, p + 1);
    case 'p':
        return read_reg(s, p + 1);
    case 'X':
        return send(s, "");
    case 'm':
        return reply_mem(s, p + 1);
    case 'M':
        return write_mem(s, p + 1);
    case 'Z':
        return set_bp(s, p + 1, 1);
    case 'z':
        return set_bp(s, p + 1, 0);
    case 'c':
        return forward(s, 0);
    case 's':
        return forward(s, s->ctid);
    case 'H': {
        long t = strtol(p + 2, NULL, 16);
        if (t > 0 && !has_thread(s, (uint32_t)t))
            return send(s, "E01");
        if (t > 0) {
            if (p[1] == 'g')
                s->gtid = (uint32_t)t;
            else
                s->ctid = (uint32_t)t;
        }
        return send(s, "OK");
    }
    case 'T': {
        long t = strtol(p + 1, NULL, 16);
        return send(s, t > 0 && has_thread(s, (uint32_t)t) ? "OK" : "E01");
    }
    case 'D':
        *done = 1;
        return send(s, "OK");
    case 'k':
        *done = 1;
        return 0;
    case 'b':
        if (p[1] == 'c')
            return reverse(s, 0);
        if (p[1] == 's')
            return reverse(s, s->ctid);
        return send(s, "");
    default:
        break;
    }
    if (!strncmp(p, "qSupported", 10))
        return send(s, "PacketSize=3fff;QStartNoAckMode+;hwbreak+;ReverseContinue+;"
                       "ReverseStep+;vContSupported+;qXfer:exec-file:read+;qXfer:auxv:read+");
    if (!strcmp(p, "QStartNoAckMode")) {
        int rc = send(s, "OK");
        s->conn.no_ack = 1;
        return rc;
    }
    if (!strcmp(p, "qfThreadInfo"))
        return threads_reply(s);
    if (!strcmp(p, "qsThreadInfo"))
        return send(s, "l");
    if (!strcmp(p, "qC")) {
        snprintf(s->out, sizeof(s->out), "QC%x", s->gtid);
        return send(s, s->out);
    }
    if (!strcmp(p, "qAttached"))
        return send(s, "1");
    if (!strcmp(p, "qSymbol::"))
        return send(s, "OK");
    if (!strncmp(p, "qThreadExtraInfo,", 17)) {
        long t = strtol(p + 17, NULL, 16);
        threads(s);
        for (size_t i = 0; i < s->nth; i++)
            if (s->th[i].tid == (uint32_t)t) {
                char txt[64];
                snprintf(txt, sizeof(txt), "%s%s", s->th[i].comm,
                         s->th[i].current ? " (on the CPU)" : "");
                gdbs_tohex((const unsigned char *)txt, strlen(txt), s->out);
                return send(s, s->out);
            }
        return send(s, "E01");
    }
    if (!strcmp(p, "vCont?"))
        return send(s, "vCont;c;C;s;S");
    if (!strncmp(p, "vCont;", 6))
        return vcont(s, p + 5);
    if (!strncmp(p, "vKill", 5)) {
        *done = 1;
        return send(s, "OK");
    }
    if (!strncmp(p, "qXfer:exec-file:read:", 21))
        return xfer_exec(s, p + 21);
    if (!strncmp(p, "qXfer:auxv:read:", 16))
        return xfer_auxv(s, p + 16);
    if (!strncmp(p, "vFile:", 6))
        return vfile(s, p + 6);
    return send(s, ""); /* not supported */
}

int gdbs_start(const struct gdbs_config *cfg, struct gdbs_result *res, struct gdbs_session **out,
               struct rw_error *err)
{
    memset(res, 0, sizeof(*res));
    *out = NULL;
    struct gdbs_session *s = calloc(1, sizeof(*s));
    if (!s) {
        err->code = RW_EINTERNAL;
        snprintf(err->msg, sizeof(err->msg), "out of memory");
        return -1;
    }
    s->cfg = cfg;
    s->res = res;
    kernel_mode = cfg->kernel;
    for (int i = 0; i < GDBS_FILES; i++)
        s->files[i].fd = -1;
    s->pm.fd = -1;
    if (!cfg->kernel && cfg->exe_local)
        gdbs_progmem_open(&s->pm, cfg->exe_local); /* none if it is not an ELF program */
    if (rw_seek(cfg->h, cfg->ref, cfg->step, &s->m, err) < 0) { /* invariant 2 */
        gdbs_progmem_close(&s->pm);
        free(s);
        return -1;
    }
    if (threads(s) < 0 || s->nth == 0) {
        err->code = RW_EUSAGE;
        snprintf(err->msg, sizeof(err->msg), "no process %u at step %" PRIu64, cfg->pid, cfg->step);
        rw_machine_close(s->m);
        gdbs_progmem_close(&s->pm);
        free(s);
        return -1;
    }
    s->gtid = s->ctid = default_thread(s);
    set_here(s, s->gtid, 1);
    *out = s;
    return 0;
}

void gdbs_serve(struct gdbs_session *s, int rfd, int wfd)
{
    s->conn.fd = rfd;
    s->conn.wfd = wfd;
    s->conn.no_ack = 0;
    s->conn.bpos = s->conn.bend = 0;
    int done = 0;
    while (!done) {
        int r = gdbs_recv(&s->conn);
        if (r <= 0)
            break;
        log_packet("->", s->conn.in);
        if (handle(s, s->conn.in, &done) < 0)
            break;
    }
}

int gdbs_end(struct gdbs_session *s, int finish, struct rw_error *err)
{
    int rc = 0;
    s->res->steps = rw_machine_step(s->m);
    if (finish) {
        struct rw_result rr;
        if (rw_machine_finish(s->m, 1, &rr, err) < 0) {
            rc = -1;
        } else {
            snprintf(s->res->trace_hash, sizeof(s->res->trace_hash), "%s", rr.trace_hash);
            s->res->steps = rr.steps;
        }
    }
    for (int i = 0; i < GDBS_FILES; i++) {
        if (s->files[i].fd >= 0)
            close(s->files[i].fd);
        if (s->files[i].tmp[0])
            unlink(s->files[i].tmp);
    }
    gdbs_progmem_close(&s->pm);
    rw_machine_close(s->m);
    free(s);
    return rc;
}
