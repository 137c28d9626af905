/*
 * sched: see sched.h. The hash is splitmix64 folded over (seed, schedule,
 * horizon, step, salt): fast, well mixed, and the same on every machine.
 */
#include "input/sched.h"

#include <stdio.h>
#include <string.h>

#include "util/check.h"

uint64_t sched_mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

uint64_t sched_h5(uint64_t a, uint64_t b, uint64_t c, uint64_t d, uint64_t e)
{
    return sched_mix(sched_mix(sched_mix(sched_mix(sched_mix(a) ^ b) ^ c) ^ d) ^ e);
}

const char *sched_strategy(uint64_t s)
{
    return s == 0 ? "none" : (s & 1) ? "random" : "pct";
}

/* An access point's burst: 1 three times in four, else 2, 4, 8 or 16. */
static uint32_t burst_of(uint64_t r)
{
    return (r & 3) != 0 ? 1u : 2u << ((r >> 2) % 4);
}

static struct sched_decision random_at(uint64_t seed, const struct sched_segment *g, uint64_t step,
                                       int access)
{
    struct sched_decision d = {SCHED_NONE, 0, 0};
    if (access) {
        uint64_t a = sched_h5(seed, g->schedule, g->horizon, step, 3);
        unsigned level = (unsigned)((g->schedule >> 1) % 4); /* density 1/2 .. 1/16 */
        d.burst = burst_of(a >> 40);
        if ((a & ((2ull << level) - 1)) == 0)
            d.action = SCHED_YIELD; /* not a stall: the other thread would run alone */
        return d;
    }
    uint64_t r = sched_h5(seed, g->schedule, g->horizon, step, 1);
    if (r % 16 != 0)
        return d;
    uint64_t k = (r >> 8) % 8;
    if (k < 4) {
        d.action = SCHED_PREEMPT;
    } else if (k < 7) {
        d.action = SCHED_STALL;
        d.ns = 20000ull * (1 + ((r >> 16) % 50)); /* 20 us .. 1 ms */
    } else {
        d.action = SCHED_TIMER_SLACK;
        d.ns = 10000ull * (1 + ((r >> 16) % 100)); /* 10 us .. 1 ms */
    }
    return d;
}

static struct sched_decision pct_at(uint64_t seed, const struct sched_segment *g, uint64_t step,
                                    int access)
{
    struct sched_decision d = {SCHED_NONE, 0, 0};
    if (access)
        d.burst = burst_of(sched_h5(seed, g->schedule, g->horizon, step, 3) >> 40);
    uint64_t h = g->horizon ? g->horizon : 1;
    for (unsigned i = 0; i < SCHED_PCT_POINTS; i++) {
        uint64_t r = sched_h5(seed, g->schedule, g->horizon, i, 2);
        if (g->origin + r % h == step) {
            d.action = SCHED_STALL;
            d.ns = 2000000ull * (1 + (r >> 40) % 4); /* 2 .. 8 ms */
            return d;
        }
    }
    return d;
}

struct sched_decision sched_decide(const struct sched *s, uint64_t step, int access)
{
    struct sched_decision none = {SCHED_NONE, 0, 0};
    for (unsigned i = 0; i < s->n; i++) {
        const struct sched_segment *g = &s->seg[i];
        RW_ASSERT(g->span_from <= g->from && g->from <= g->until &&
                  g->until <= g->span_until); /* invariant 3 (an empty span is skipped) */
        if (step < g->span_from || step >= g->span_until || g->schedule == 0)
            continue;
        struct sched_decision d = (g->schedule & 1) ? random_at(s->seed, g, step, access)
                                                    : pct_at(s->seed, g, step, access);
        if (step < g->from || step >= g->until) { /* invariant 3: the burst alone */
            d.action = SCHED_NONE;
            d.ns = 0;
        }
        return d;
    }
    return none;
}

void sched_describe(const struct sched_decision *d, char *buf, unsigned len)
{
    switch (d->action) {
    case SCHED_PREEMPT:
        snprintf(buf, len, "asked the kernel to reschedule the running task");
        break;
    case SCHED_STALL:
        snprintf(buf, len, "stalled the running task for %.3f ms of virtual time",
                 (double)d->ns / 1e6);
        break;
    case SCHED_TIMER_SLACK:
        snprintf(buf, len, "delayed a timer armed there by %.3f ms", (double)d->ns / 1e6);
        break;
    case SCHED_YIELD:
        snprintf(buf, len, "made the running thread yield the CPU before its access");
        break;
    default:
        snprintf(buf, len, "nothing");
        break;
    }
}

int sched_segment_valid(const struct sched_segment *g)
{
    return g->span_from < g->span_until && g->span_from <= g->from && g->from <= g->until &&
           g->until <= g->span_until;
}

int sched_push_span(struct sched *s, uint64_t schedule, uint64_t span_from, uint64_t span_until,
                    uint64_t from, uint64_t until, uint64_t origin, uint64_t horizon)
{
    struct sched_segment g = {schedule, from, until, origin, horizon, span_from, span_until};
    if (s->n >= SCHED_MAX_SEGMENTS || !sched_segment_valid(&g))
        return -1;
    sched_end_at(s, span_from); /* invariant 2 */
    s->seg[s->n++] = g;
    return 0;
}

int sched_push(struct sched *s, uint64_t schedule, uint64_t from, uint64_t until, uint64_t origin,
               uint64_t horizon)
{
    if (from >= until)
        return -1;
    return sched_push_span(s, schedule, from, until, from, until, origin, horizon);
}

void sched_end_at(struct sched *s, uint64_t at)
{
    unsigned k = 0;
    for (unsigned i = 0; i < s->n; i++) {
        struct sched_segment g = s->seg[i];
        if (g.span_from >= at)
            continue; /* starts at or after the step: dropped */
        if (g.span_until > at)
            g.span_until = at;
        if (g.until > g.span_until)
            g.until = g.span_until;
        if (g.from > g.until)
            g.from = g.until;
        s->seg[k++] = g;
    }
    s->n = k;
    for (unsigned i = 0; i < s->n; i++) /* invariants 2 and 3 */
        RW_ASSERT(s->seg[i].span_until <= at && sched_segment_valid(&s->seg[i]));
}

_Static_assert(sizeof(struct rewind_record) + REWIND_SW_MAX * sizeof(struct rewind_switch) <=
                   REWIND_RECORD_MAX,
               "a full ring fits one record");

int sched_drain_switches(struct rewind_shared *sh, struct rewind_record *rec, char *why,
                         size_t why_len)
{
    uint32_t n = __atomic_load_n(&sh->sw_count, __ATOMIC_RELAXED); /* invariant 3: once */
    uint32_t lost = sh->sw_lost;
    sh->sw_count = 0; /* invariant 4 */
    sh->sw_lost = 0;
    if (n == 0 && lost == 0)
        return 0; /* invariant 5 */
    if (n > REWIND_SW_MAX) {
        snprintf(why, why_len, "context-switch ring holds %u entries (at most %u)", n,
                 (unsigned)REWIND_SW_MAX);
        return -1;
    }
    struct rewind_switch *out = (struct rewind_switch *)(rec + 1);
    for (uint32_t i = 0; i < n; i++) {
        struct rewind_switch e;
        memcpy(&e, &sh->sw[i], sizeof(e));
        if (e.prev > REWIND_TID_MAX || e.next > REWIND_TID_MAX) {
            snprintf(why, why_len, "context switch %u names thread %u (above %u)", i,
                     e.prev > REWIND_TID_MAX ? e.prev : e.next, (unsigned)REWIND_TID_MAX);
            return -1;
        }
        out[i] = e;
    }
    RW_ASSERT(sizeof(*rec) + n * sizeof(*out) <= REWIND_RECORD_MAX);
    rec->len = (uint32_t)(sizeof(*rec) + n * sizeof(*out));
    rec->kind = REWIND_REC_SCHED;
    rec->flags = 0;
    rec->pid = 0;
    rec->tid = 0;
    rec->aux = lost;
    return 1;
}
