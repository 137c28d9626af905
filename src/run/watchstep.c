/*
 * watchstep: the writer of a change `rewind watch` only saw (src/run/watch.c:
 * no hardware watchpoint fired, as on every KVM of this project's machines,
 * docs/test-host.md), found by running that step's stretch again under the
 * trap flag (rw_machine_resume with the watched range as watchpoints: the
 * bytes are compared after every user instruction of the process,
 * src/run/debug.c invariant 9). docs/tutorials/debugging.md.
 *
 * One machine is sought to the first seen change and carried forward: the
 * stretches between seen changes run with no debugger armed (no debug exit),
 * the stretch of each seen change under the trap flag, with a budget of
 * debug exits per change (a stretch where the process computes for long is
 * given up, and its row stays as seen).
 *
 * Invariants:
 *  1. A seen row is replaced only by what the stretch's replay shows: it
 *     starts from the row's old value and ends at its new one, or the row
 *     stays as it was (never a guess).
 *  2. A replacing row is exact only when the change was seen right after a
 *     user instruction of the process that directly followed the same
 *     thread's previous one (src/run/debug.c invariant 15: no system call,
 *     other exit or other thread between them, which could have made it);
 *     any other change (at a step boundary, or after a system call, made
 *     by the kernel) stays seen, with the thread as a guess.
 *  3. The machine only moves forward, and a debug exit is never a step
 *     (src/run/debug.c invariant 4): the machine is the stored run's at
 *     every step it passes.
 *  4. Rows stay in step order, and every row lies in the seen row's step.
 */
#include <stdlib.h>
#include <string.h>

#include "util/apierr.h"
#include "run/machine.h"
#include "run/watchstep.h"
#include "util/check.h"
#include "vmm/debugreg.h"

/* Append a row to *out (grown as needed). 0 or -1 (out of memory). */
static int push(struct rw_watch_hit **out, size_t *n, size_t *cap, const struct rw_watch_hit *h)
{
    if (*n == *cap) {
        size_t c = *cap ? 2 * *cap : 64;
        struct rw_watch_hit *nh = realloc(*out, c * sizeof(*nh));
        if (!nh)
            return -1;
        *out = nh;
        *cap = c;
    }
    (*out)[(*n)++] = *h;
    return 0;
}

/* The stretch after step s.step under the trap flag, from a machine at
 * step s.step: the rows it shows in rows[0..*k) (at most max), or *k 0 when
 * it does not reproduce s or passes the budget (invariant 1). 0 or -1. */
static int refine_one(rw_machine *m, const struct rw_resume *r0, const struct rw_watch_hit *s,
                      uint32_t pid, uint64_t addr, uint64_t len, struct rw_watch_hit *rows,
                      size_t max, size_t *k, uint64_t *exits, struct rw_error *err)
{
    *k = 0;
    uint8_t before[RW_WATCH_MAX_LEN];
    int ok = rw_machine_read(m, pid, addr, before, len) == len && s->old_known &&
             !memcmp(before, s->old_val, len);
    if (!ok) { /* it cannot be replaced (invariant 1): no single-stepping */
        struct rw_resume plain = {.until_step = s->step + 1, .abort = r0->abort};
        struct rw_stop st;
        return rw_machine_resume(m, &plain, &st, err);
    }
    const uint64_t budget = r0->max_debug_exits; /* 0: none */
    uint64_t used = 0;
    struct rw_resume r = *r0;
    r.until_step = s->step + 1;
    size_t got = 0;
    for (;;) {
        struct rw_stop st;
        r.max_debug_exits = budget ? budget - used : 0;
        if (rw_machine_resume(m, &r, &st, err) < 0)
            return -1;
        *exits += st.debug_exits;
        used += st.debug_exits;
        const int over = st.why == RW_STOP_BUDGET || (budget && used >= budget);
        if (st.why != RW_STOP_WATCH || over) {
            if (over || st.why == RW_STOP_ABORTED)
                ok = 0;
            if (over && rw_machine_step(m) < s->step + 1) {
                /* on to the stretch's end with no debugger (invariant 3) */
                struct rw_resume plain = {.until_step = s->step + 1, .abort = r0->abort};
                if (rw_machine_resume(m, &plain, &st, err) < 0)
                    return -1;
            }
            break;
        }
        uint8_t now[RW_WATCH_MAX_LEN];
        if (rw_machine_read(m, pid, addr, now, len) != len || got == max) {
            ok = 0; /* not replaceable (invariant 1): the rest runs plainly */
            struct rw_resume plain = {.until_step = s->step + 1, .abort = r0->abort};
            if (rw_machine_resume(m, &plain, &st, err) < 0)
                return -1;
            break;
        }
        struct rw_watch_hit h;
        memset(&h, 0, sizeof(h));
        h.step = s->step;
        h.old_known = 1;
        memcpy(h.old_val, before, len);
        memcpy(h.new_val, now, len);
        if (st.direct && st.pc && st.tid && st.step == s->step) { /* invariant 2 */
            h.exact = 1;
            h.by_step = 1;
            h.user = 1;
            h.tid = st.tid;
            h.rip = st.pc;
        } else {
            h.tid = s->tid;
        }
        rows[got++] = h;
        memcpy(before, now, len);
    }
    /* invariant 1: the stretch ends at the row's new value */
    if (ok && got > 0 && !memcmp(before, s->new_val, len))
        *k = got;
    return 0;
}

int watchstep_refine(rw_home *h, const char *name, const struct watchstep_config *c,
                     struct rw_watch_hit **hits, size_t *n, struct watchstep_stats *stats,
                     struct rw_error *err)
{
    memset(stats, 0, sizeof(*stats));
    size_t seen = 0;
    for (size_t i = 0; i < *n; i++)
        seen += !(*hits)[i].exact;
    if (!seen)
        return 0;
    struct rw_resume r;
    memset(&r, 0, sizeof(r));
    r.pid = c->pid;
    r.abort = c->abort;
    uint64_t at[DEBUGREG_MAX];
    unsigned size[DEBUGREG_MAX];
    unsigned np = debugreg_split(c->addr, c->len, at, size);
    RW_ASSERT(np > 0 && np <= DEBUGREG_MAX); /* checked by rw_watch */
    for (unsigned i = 0; i < np; i++)
        r.w[r.nw++] = (struct rw_watch){.addr = at[i], .kind = RW_WATCH_WRITE, .len = size[i]};
    struct rw_watch_hit *out = NULL, rows[16];
    size_t nout = 0, cap = 0;
    rw_machine *m = NULL;
    int rc = 0, oom = 0, dear = 0;
    for (size_t i = 0; i < *n && rc == 0; i++) {
        const struct rw_watch_hit *s = &(*hits)[i];
        size_t k = 0;
        if (!s->exact && (!c->abort || !*c->abort) && dear < WATCHSTEP_DEAR_MAX) {
            if (!m && rw_seek(h, name, s->step, &m, err) < 0) {
                rc = -1;
                break;
            }
            if (m->st.o.preempt_memory) { /* watch.c invariant 5 */
                err->code = RW_EUSAGE;
                snprintf(err->msg, sizeof(err->msg), "%s", RW_PREEMPT_NO_WATCHSTEP);
                rc = -1;
                break;
            }
            if (rw_machine_step(m) < s->step) { /* invariant 3: forward only */
                struct rw_resume plain = {.until_step = s->step, .abort = c->abort};
                struct rw_stop st;
                if (rw_machine_resume(m, &plain, &st, err) < 0) {
                    rc = -1;
                    break;
                }
            }
            if (rw_machine_step(m) == s->step) {
                const uint64_t e0 = stats->debug_exits;
                r.max_debug_exits = c->budget;
                if (refine_one(m, &r, s, c->pid, c->addr, c->len, rows, 16, &k, &stats->debug_exits,
                               err) < 0) {
                    rc = -1;
                    break;
                }
                dear += c->budget && stats->debug_exits - e0 >= c->budget;
            }
        }
        if (!s->exact) {
            stats->refined += k > 0;
            stats->left += k == 0;
        }
        if (!k) {
            if (push(&out, &nout, &cap, s) < 0)
                oom = rc = -1;
            continue;
        }
        for (size_t j = 0; j < k && rc == 0; j++) {
            RW_ASSERT(rows[j].step == s->step); /* invariant 4 */
            if (push(&out, &nout, &cap, &rows[j]) < 0)
                oom = rc = -1;
        }
    }
    if (m)
        rw_machine_close(m);
    if (rc < 0) {
        if (oom)
            apierr_set(err, RW_EINTERNAL, "out of memory listing the writes");
        free(out);
        return -1;
    }
    free(*hits);
    *hits = out;
    *n = nout;
    return 0;
}
