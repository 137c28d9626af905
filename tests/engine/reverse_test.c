/* reverse_test: gdb's reverse execution's windows (src/gdbstub/stub.c
 * invariants 3, 4 and 6) in-process: reverse_search over a fake counting
 * replay whose stops and debug-exit costs are a made-up run's. The windows
 * go back from the position without overlap, each ending where the one
 * before began; they double after a cheap window and keep their size after
 * a dear one; a window over its budget is given up for its later half (or
 * from its last stop, when later) and a one-step window always runs whole;
 * the answer is the last stop of the first window with one; no window goes
 * before the history's beginning; a replay that misses the position, or is
 * interrupted, ends the search. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gdbstub/packet.c"
#include "gdbstub/progmem.c"
#include "gdbstub/stub.c"
#include "unit.h"

#define POS 1000 /* the position: the start of this step, or in it */

/* A made-up run: one stop at each step of stops[] (and before_pos stops
 * in the position's own step before it), each step costing `cheap` debug
 * exits, or `dear` in [dear_from, dear_until). */
struct model {
    uint64_t stops[8];
    int nstops;
    uint64_t before_pos;
    uint64_t cheap, dear, dear_from, dear_until;
    int miss;         /* every replay misses the position */
    int interrupt_at; /* the n-th replay is interrupted (1-based; 0: none) */
    struct window {
        uint64_t from, to, budget;
        int over;
    } log[64];
    int nlog;
};

static struct model M;
static volatile sig_atomic_t abort_flag;

static int stop_at(uint64_t st)
{
    for (int i = 0; i < M.nstops; i++)
        if (M.stops[i] == st)
            return 1;
    return 0;
}

static int fake_count(struct gdbs_session *s, uint64_t from, const struct rw_resume *r,
                      const struct pos *target, uint64_t budget, uint64_t *count, int *found,
                      int *over, struct hit *last, struct rw_error *err)
{
    (void)r;
    (void)err;
    uint64_t to = target->step, exits = 0;
    *count = 0;
    *over = 0;
    for (uint64_t st = from; st < to && !*over; st++) {
        if (stop_at(st)) {
            ++*count;
            *last = (struct hit){st, 1, 7, 0x401000 + st};
        }
        exits += st >= M.dear_from && st < M.dear_until ? M.dear : M.cheap;
        *over = budget && exits >= budget;
    }
    if (!target->boundary && !*over && M.before_pos) { /* stops in the position's step */
        *count += M.before_pos;
        *last = (struct hit){to, M.before_pos, 7, 0x402000};
    }
    *found = !*over && !M.miss;
    s->res->debug_exits += exits;
    s->res->replays++;
    if (M.nlog < 64)
        M.log[M.nlog++] = (struct window){from, target->boundary ? to : to + 1, budget, *over};
    if ((M.interrupt_at && M.nlog == M.interrupt_at) || M.nlog >= 60)
        abort_flag = 1; /* asked for, or a search that does not end (a failure) */
    return 0;
}

/* A fresh model, every step costing `cheap` debug exits. */
static void model_reset(uint64_t cheap)
{
    memset(&M, 0, sizeof(M));
    M.cheap = cheap;
}

static struct gdbs_config cfg;
static struct gdbs_result res;

/* Search back from the position (a step's start, or in it) with history
 * beginning at `history`. */
static enum rev_end search(int boundary, uint64_t history, uint64_t *from, uint64_t *n,
                           struct hit *h)
{
    static struct gdbs_session *s;
    if (!s)
        s = calloc(1, sizeof(*s));
    memset(&res, 0, sizeof(res));
    abort_flag = 0;
    cfg = (struct gdbs_config){.pid = 1, .history = history, .abort = &abort_flag};
    s->cfg = &cfg;
    s->res = &res;
    s->nbps = 0;
    s->here = (struct pos){.step = POS, .boundary = boundary, .tid = 7, .r.rip = 0x402000};
    struct rw_resume r;
    struct rev_search rs;
    reverse_setup(s, 0, &r, &rs);
    const struct pos *tgt;
    struct rw_error err;
    M.nlog = 0;
    return reverse_search(s, fake_count, &r, &rs, from, n, &tgt, h, &err);
}

/* The windows logged are exactly want[0..nw) ({from, to} pairs), each
 * ending where the one before began. */
static int windows_are(const uint64_t (*want)[2], int nw)
{
    if (M.nlog != nw)
        return 0;
    for (int i = 0; i < nw; i++)
        if (M.log[i].from != want[i][0] || M.log[i].to != want[i][1])
            return 0;
    return 1;
}

static int windows_abut(void)
{
    for (int i = 1; i < M.nlog; i++)
        if (M.log[i].to != M.log[i - 1].from && M.log[i].to != M.log[i - 1].to)
            return 0; /* a given-up window's later half ends where it ended */
    return 1;
}

/* Cheap windows double: 1, 2, 4, ... back from the position; the answer
 * is the last stop of the first window that has one. */
static void test_doubling(void)
{
    model_reset(1);
    M.stops[M.nstops++] = 900;
    M.stops[M.nstops++] = 940;
    M.stops[M.nstops++] = 950;
    uint64_t from, n;
    struct hit h;
    enum rev_end e = search(1, 0, &from, &n, &h);
    static const uint64_t want[][2] = {{999, 1000}, {997, 999}, {993, 997},
                                       {985, 993},  {969, 985}, {937, 969}};
    CHECK(e == REV_LAND, "doubling: a stop is found");
    CHECK(windows_are(want, 6), "doubling: windows of 1, 2, 4, .. 32 steps, none overlapping");
    CHECK(from == 937 && n == 2 && h.step == 950, "doubling: the window's last stop, 950");
    CHECK(M.log[0].budget == 0 && M.log[1].budget == REVERSE_WINDOW_BUDGET,
          "doubling: a one-step window has no budget, a longer one has");
    CHECK(res.windows_given_up == 0 && res.replays == 6, "doubling: no window given up");
}

/* A dear one-step window runs whole, and the next keeps its size. */
static void test_dear(void)
{
    model_reset(REVERSE_EXITS_PER_SEEK + 10000);
    M.stops[M.nstops++] = 996;
    uint64_t from, n;
    struct hit h;
    enum rev_end e = search(1, 0, &from, &n, &h);
    static const uint64_t want[][2] = {{999, 1000}, {998, 999}, {997, 998}, {996, 997}};
    CHECK(e == REV_LAND && from == 996 && n == 1 && h.step == 996, "dear: the stop at 996");
    CHECK(windows_are(want, 4), "dear: every window one step (the size stays after a dear one)");
    CHECK(M.log[0].budget == 0 && M.log[3].budget == 0 && res.windows_given_up == 0,
          "dear: a one-step window always runs whole");
}

/* Over budget: the later half (or from the last stop counted, when later)
 * is tried instead, and the windows after still abut. */
static void test_budget(void)
{
    model_reset(1);
    M.dear = 1000;
    M.dear_from = 800;
    M.dear_until = 900;
    M.stops[M.nstops++] = 850;
    uint64_t from, n;
    struct hit h;
    enum rev_end e = search(1, 0, &from, &n, &h);
    static const uint64_t want1[][2] = {{999, 1000}, {997, 999}, {993, 997}, {985, 993},
                                        {969, 985},  {937, 969}, {873, 937}, {745, 873},
                                        {809, 873},  {850, 873}};
    CHECK(e == REV_LAND && from == 850 && n == 1 && h.step == 850,
          "budget: given up after its stop at 850, the window from there finds it");
    CHECK(windows_are(want1, 10) && M.log[7].over && M.log[8].over && res.windows_given_up == 2,
          "budget: [745, 873) given up for its later half, that from its last stop");
    M.stops[0] = 760;
    e = search(1, 0, &from, &n, &h);
    static const uint64_t want2[][2] = {{999, 1000}, {997, 999}, {993, 997}, {985, 993},
                                        {969, 985},  {937, 969}, {873, 937}, {745, 873},
                                        {809, 873},  {841, 873}, {777, 841}, {649, 777}};
    CHECK(e == REV_LAND && from == 649 && n == 1 && h.step == 760, "budget: the stop at 760");
    CHECK(windows_are(want2, 12) && res.windows_given_up == 2,
          "budget: later halves, then windows that abut again");
    CHECK(windows_abut(), "budget: no step skipped");
}

/* No stop: the windows stop at the history's beginning (invariant 4). */
static void test_history(void)
{
    model_reset(1);
    M.stops[M.nstops++] = 970; /* before the history: never reached */
    uint64_t from, n;
    struct hit h;
    enum rev_end e = search(1, 980, &from, &n, &h);
    static const uint64_t want[][2] = {{999, 1000}, {997, 999}, {993, 997}, {985, 993}, {980, 985}};
    CHECK(e == REV_HISTORY, "history: no stop since its beginning");
    CHECK(windows_are(want, 5), "history: the last window starts at its beginning");
}

/* Inside a step: the first window is the position's own step, up to it. */
static void test_in_step(void)
{
    model_reset(1);
    M.before_pos = 2;
    uint64_t from, n;
    struct hit h;
    enum rev_end e = search(0, 0, &from, &n, &h);
    CHECK(e == REV_LAND && from == POS && n == 2 && h.step == POS && h.ord == 2,
          "in step: the stop before the position in its own step");
    CHECK(M.nlog == 1 && M.log[0].budget == 0, "in step: one window, whole");
    M.before_pos = 0;
    M.stops[M.nstops++] = 990;
    e = search(0, 0, &from, &n, &h);
    static const uint64_t want[][2] = {
        {1000, 1001}, {999, 1000}, {997, 999}, {993, 997}, {985, 993}};
    CHECK(e == REV_LAND && h.step == 990, "in step: then the steps before");
    CHECK(windows_are(want, 5), "in step: 1 step after the position's own, then doubling");
}

/* A replay that does not pass the position, or is interrupted, ends it. */
static void test_miss_and_interrupt(void)
{
    model_reset(1);
    M.miss = 1;
    uint64_t from, n;
    struct hit h;
    CHECK(search(1, 0, &from, &n, &h) == REV_NOT_FOUND && M.nlog == 1,
          "miss: the position not reproduced is an error, not a guess");
    M.miss = 0;
    M.interrupt_at = 3;
    CHECK(search(1, 0, &from, &n, &h) == REV_INTERRUPTED && M.nlog == 3,
          "interrupt: the search stops at the replay interrupted");
}

int main(void)
{
    test_doubling();
    test_dear();
    test_budget();
    test_history();
    test_in_step();
    test_miss_and_interrupt();
    return unit_done();
}
