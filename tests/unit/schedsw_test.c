/*
 * schedsw_test: the context-switch ring (guest/include/rewind_abi.h,
 * "Context switches") as the monitor drains it (sched_drain_switches in
 * src/input/sched.c) and as a trace reader takes the SCHED record back
 * (schedrec_parse in src/trace/schedrec.c), both fed untrusted input: an
 * overflowing count, tids above the kernel's limit, malformed records; and
 * rw_sched_switches / rw_sched_running over a trace written by hand.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "home/rundir.h"
#include "util/io.h"
#include "rewind.h"
#include "trace/describe.h"
#include "trace/schedrec.h"
#include "trace/trace.h"
#include "unit.h"
#include "input/sched.h"

static struct rewind_shared SH;
static _Alignas(8) uint8_t REC[REWIND_RECORD_MAX];

static void fill(uint32_t n, uint32_t lost)
{
    SH.sw_count = n;
    SH.sw_lost = lost;
    for (uint32_t i = 0; i < REWIND_SW_MAX; i++)
        SH.sw[i] = (struct rewind_switch){100 + i, 101 + i};
}

static int drain(char *why, size_t n)
{
    return sched_drain_switches(&SH, (struct rewind_record *)REC, why, n);
}

static void test_drain(void)
{
    struct rewind_record *r = (struct rewind_record *)REC;
    const struct rewind_switch *sw = (const struct rewind_switch *)(r + 1);
    char why[160] = "";

    fill(0, 0);
    CHECK(drain(why, sizeof(why)) == 0, "an empty ring makes no record");

    fill(3, 0);
    CHECK(drain(why, sizeof(why)) == 1, "three switches make a record");
    CHECK(r->kind == REWIND_REC_SCHED && r->pid == 0 && r->tid == 0 && r->flags == 0,
          "kind sched, from the monitor (pid 0, tid 0)");
    CHECK(r->len == sizeof(*r) + 3 * sizeof(*sw) && r->aux == 0, "three entries, none lost");
    CHECK(sw[0].prev == 100 && sw[0].next == 101 && sw[2].prev == 102 && sw[2].next == 103,
          "entries in order");
    CHECK(SH.sw_count == 0 && SH.sw_lost == 0, "the ring is emptied");
    CHECK(drain(why, sizeof(why)) == 0, "drained once: nothing at the next step");

    fill(REWIND_SW_MAX, 7);
    CHECK(drain(why, sizeof(why)) == 1, "a full ring");
    CHECK(r->len == sizeof(*r) + REWIND_SW_MAX * sizeof(*sw) && r->aux == 7,
          "all entries, and the lost ones counted in aux");

    fill(0, 2);
    CHECK(drain(why, sizeof(why)) == 1 && r->len == sizeof(*r) && r->aux == 2,
          "only lost switches still make a record: none lost silently");

    fill(REWIND_SW_MAX + 1, 0);
    CHECK(drain(why, sizeof(why)) == -1, "a count above the ring is refused");
    CHECK(strstr(why, "65 entries") != NULL, why);
    CHECK(SH.sw_count == 0 && SH.sw_lost == 0, "refused, and emptied all the same");

    fill(0xffffffffu, 0);
    CHECK(drain(why, sizeof(why)) == -1, "a huge count is refused, nothing read past the ring");

    fill(2, 0);
    SH.sw[1].next = REWIND_TID_MAX + 1;
    CHECK(drain(why, sizeof(why)) == -1, "a tid above the kernel's limit is refused");
    CHECK(strstr(why, "4194305") != NULL, why);

    fill(1, 0);
    SH.sw[0].prev = REWIND_TID_MAX;
    SH.sw[0].next = 0;
    CHECK(drain(why, sizeof(why)) == 1, "the largest tid and idle (0) are fine");
}

/* Parse a record with the header fields given and n entries of the ring. */
static int parse(uint32_t pid, uint16_t flags, uint64_t aux, size_t len, struct rewind_switch *out,
                 uint32_t *n, uint64_t *lost, char *why)
{
    struct rewind_record h = {.len = (uint32_t)(sizeof(h) + len),
                              .kind = REWIND_REC_SCHED,
                              .flags = flags,
                              .pid = pid,
                              .aux = aux};
    static uint8_t payload[REWIND_RECORD_MAX];
    memcpy(payload, SH.sw, sizeof(SH.sw));
    return schedrec_parse(&h, payload, len, out, n, lost, why, 160);
}

static void test_parse(void)
{
    struct rewind_switch out[REWIND_SW_MAX];
    uint32_t n = 0;
    uint64_t lost = 0;
    char why[160];
    fill(0, 0);
    CHECK(parse(0, 0, 0, 16, out, &n, &lost, why) == 0 && n == 2 && lost == 0, "two entries");
    CHECK(out[1].prev == 101 && out[1].next == 102, "second entry");
    CHECK(parse(0, 0, 5, 0, out, &n, &lost, why) == 0 && n == 0 && lost == 5, "only lost");
    CHECK(parse(0, 0, 0, 0, out, &n, &lost, why) == -1, "empty record refused");
    CHECK(parse(3, 0, 0, 8, out, &n, &lost, why) == -1, "a pid: not the monitor's record");
    CHECK(parse(0, 1, 0, 8, out, &n, &lost, why) == -1, "flags set: refused");
    CHECK(parse(0, 0, 0, 12, out, &n, &lost, why) == -1, "a torn entry refused");
    CHECK(parse(0, 0, 0, (REWIND_SW_MAX + 1) * 8, out, &n, &lost, why) == -1,
          "more entries than the ring holds refused");
    SH.sw[3].prev = 0xffffffffu;
    CHECK(parse(0, 0, 0, 32, out, &n, &lost, why) == -1 && strstr(why, "4294967295"),
          "a tid above the limit refused");

    struct rewind_record wrong = {.len = sizeof(wrong) + 8, .kind = REWIND_REC_MARK};
    CHECK(schedrec_parse(&wrong, (const uint8_t *)SH.sw, 8, out, &n, &lost, why, sizeof(why)) == -1,
          "another kind refused");
}

static void test_describe(void)
{
    fill(2, 3);
    char why[160];
    CHECK(drain(why, sizeof(why)) == 1, "drained");
    const struct rewind_record *r = (const struct rewind_record *)REC;
    struct trace_entry e = {
        .step = 9, .rec = *r, .payload = REC + sizeof(*r), .payload_len = r->len - sizeof(*r)};
    char out[200];
    describe_entry(&e, out, sizeof(out));
    CHECK(!strcmp(out, "sched 100->101 101->102 (lost 3)"), out);
    e.rec.pid = 4;
    describe_entry(&e, out, sizeof(out));
    CHECK(strstr(out, "malformed") != NULL, out);
}

static void rec(struct trace_writer *w, uint64_t step, unsigned kind, uint32_t pid, uint32_t tid,
                uint64_t aux, unsigned flags, const void *payload, size_t n)
{
    static _Alignas(8) uint8_t buf[REWIND_RECORD_MAX];
    struct rewind_record *r = (struct rewind_record *)buf;
    *r = (struct rewind_record){
        (uint32_t)(sizeof(*r) + n), (uint16_t)kind, (uint16_t)flags, pid, tid, aux};
    memcpy(buf + sizeof(*r), payload, n);
    trace_append(w, step, r);
}

struct seen {
    uint64_t steps[8], lost;
    struct rw_sched_switch sw[8];
    int n, nsw;
};

static int on_step(void *ctx, const struct rw_sched_step *st)
{
    struct seen *s = ctx;
    if (s->n < 8)
        s->steps[s->n] = st->step;
    s->n++;
    s->lost += st->lost;
    for (size_t i = 0; i < st->n && s->nsw < 8; i++)
        s->sw[s->nsw++] = st->sw[i];
    return 0;
}

static void test_api(void)
{
    char home[64], dir[128], path[160];
    snprintf(home, sizeof(home), "/tmp/schedsw_test.%d", (int)getpid());
    rundir_remove_tree(home);
    const char *good = "aaaa000000000001", *bad = "bbbb000000000002";
    struct trace_writer w;
    const struct rewind_switch s5[] = {{0, 21}, {21, 22}}, s7[] = {{22, 21}};
    for (int k = 0; k < 2; k++) {
        snprintf(dir, sizeof(dir), "%s/runs/%s", home, k ? bad : good);
        CHECK(io_mkdir_p(dir) == 0, "run directory");
        snprintf(path, sizeof(path), "%s/trace", dir);
        CHECK(trace_open_write(&w, path) == 0, "trace");
        rec(&w, 2, REWIND_REC_FORK, 1, 1, 21, 0, "", 0);
        rec(&w, 3, REWIND_REC_EXEC, 21, 21, 0, 0, "/usr/bin/pingpong\0pingpong", 26);
        rec(&w, 4, REWIND_REC_FORK, 21, 21, 22, 1, "", 0);
        rec(&w, 5, REWIND_REC_SCHED, 0, 0, 0, 0, s5, sizeof(s5));
        rec(&w, 7, REWIND_REC_SCHED, k ? 9 : 0, 0, 1, 0, s7, sizeof(s7)); /* bad: a pid */
        CHECK(trace_close(&w) == 0, "trace written");
    }
    rw_home *h = NULL;
    struct rw_error err;
    CHECK(rw_home_open(home, &h, &err) == 0 && h, "home");
    if (!h)
        return;
    struct seen s = {0};
    struct rw_sched_stats st;
    CHECK(rw_sched_switches(h, good, 0, UINT64_MAX, on_step, &s, &st, NULL, &err) == 0, err.msg);
    CHECK(s.n == 2 && s.steps[0] == 5 && s.steps[1] == 7, "two steps with switches");
    CHECK(st.records == 2 && st.switches == 3 && st.lost == 1 && s.lost == 1, "stats");
    CHECK(s.nsw == 3 && s.sw[0].prev.tid == 0 && !strcmp(s.sw[0].prev.name, "idle"), "idle");
    CHECK(s.sw[1].next.tid == 22 && s.sw[1].next.pid == 21 &&
              !strcmp(s.sw[1].next.name, "pingpong"),
          "a thread is named after its process's program");
    memset(&s, 0, sizeof(s));
    CHECK(rw_sched_switches(h, good, 6, 7, on_step, &s, NULL, NULL, &err) == 0 && s.n == 1 &&
              s.steps[0] == 7,
          "--from/--to bound the steps");
    struct rw_sched_thread t;
    CHECK(rw_sched_running(h, good, 4, &t, NULL, &err) == 0, "no switch by step 4");
    CHECK(rw_sched_running(h, good, 5, &t, NULL, &err) == 1 && t.tid == 22, "22 made step 5");
    CHECK(rw_sched_running(h, good, 6, &t, NULL, &err) == 1 && t.tid == 22, "and step 6");
    CHECK(rw_sched_running(h, good, 9, &t, NULL, &err) == 1 && t.tid == 21 && t.pid == 21,
          "21 from step 7 on");
    CHECK(rw_sched_switches(h, bad, 0, UINT64_MAX, on_step, &s, NULL, NULL, &err) == -1 &&
              strstr(err.msg, "bad trace record at step 7") && err.code == RW_EINTERNAL,
          err.msg);
    CHECK(rw_sched_running(h, bad, 6, &t, NULL, &err) == 1, "before the bad record: read");
    CHECK(rw_sched_running(h, "cccc000000000003", 6, &t, NULL, &err) == -1, "no such run");
    rw_home_close(h);
    rundir_remove_tree(home);
}

int main(void)
{
    test_drain();
    test_parse();
    test_describe();
    test_api();
    return unit_done();
}
