/* sdk_test: the SDK line protocol (docs/sdk.md) on the host side: well
 * formed lines parse into typed lines, every malformed one is refused (it
 * stays a plain mark), events show SDK lines as kind assert, and
 * rw_sdk_assertions merges a run's catalog with its evaluations. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "home/rundir.h"
#include "util/io.h"
#include "rewind.h"
#include "trace/sdk.h"
#include "trace/trace.h"
#include "unit.h"

#define RUN "5d5d000000000001"

static int parse(const char *s, struct sdk_line *l)
{
    return sdk_parse((const uint8_t *)s, strlen(s), l);
}

static void test_parse(void)
{
    struct sdk_line l;
    CHECK(parse("rw1 hit always 1 tests/guest/sdk_c.c 42 counter%20stays%20small\n", &l) == 0 &&
              l.verb == SDK_HIT && l.kind == RW_SDK_ALWAYS && l.result == 1 && l.line == 42 &&
              !strcmp(l.file, "tests/guest/sdk_c.c") && !strcmp(l.msg, "counter stays small"),
          "a hit line parses");
    CHECK(parse("rw1 cat sometimes a.py 7 50%25%0Adone", &l) == 0 && l.verb == SDK_CATALOG &&
              l.kind == RW_SDK_SOMETIMES && !strcmp(l.msg, "50%\ndone"),
          "a catalog line without newline, escapes decoded");
    CHECK(parse("rw1 hit always_or_unreachable 0 f 0 \n", &l) == 0 && l.result == 0 &&
              l.kind == RW_SDK_ALWAYS_OR_UNREACHABLE && l.msg[0] == 0,
          "an empty message");
    CHECK(parse("rw1 point main.go 12\n", &l) == 0 && l.verb == SDK_POINT && l.line == 12 &&
              !strcmp(l.file, "main.go"),
          "a point line");
    CHECK(parse("rw1 hit unreachable 0 f 4294967295 x", &l) == 0 && l.line == 4294967295u,
          "the largest line number");

    static const char *const bad[] = {
        "hello world",
        "rw1 ",
        "rw2 hit always 1 f 1 m",
        "rw1 hit always 1 f 1",
        "rw1 hit always 1 f 1 m extra",
        "rw1 hit always 2 f 1 m",
        "rw1 hit never 1 f 1 m",
        "rw1 hit always 1 f 4294967296 m",
        "rw1 hit always 1 f 01 m",
        "rw1 hit always 1 f -1 m",
        "rw1 hit always 1 f  1 m",
        "rw1 hit always 1 f 1 m%",
        "rw1 hit always 1 f 1 m%4",
        "rw1 hit always 1 f 1 m%zz",
        "rw1 hit always 1 f 1 m%00",
        "rw1 hit always 1 f 1 tab\there",
        "rw1 hit always 1 f 1 two\nlines\n",
        "rw1 jump always 1 f 1 m",
        "rw1 point f",
        "rw1 point f 1 2",
        "RW1 point f 1",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        int r = parse(bad[i], &l);
        CHECK(r == -1, bad[i]);
    }
    /* Limits: the decoded message at most SDK_MSG_MAX bytes, the line at
     * most SDK_LINE_MAX. */
    char big[SDK_LINE_MAX + 64];
    int o = snprintf(big, sizeof(big), "rw1 hit always 1 f 1 ");
    memset(big + o, 'm', SDK_MSG_MAX);
    big[o + SDK_MSG_MAX] = 0;
    CHECK(parse(big, &l) == 0 && strlen(l.msg) == SDK_MSG_MAX, "a message of the maximum size");
    big[o + SDK_MSG_MAX] = 'm';
    big[o + SDK_MSG_MAX + 1] = 0;
    CHECK(parse(big, &l) == -1, "a message one byte too long");
    o = snprintf(big, sizeof(big), "rw1 hit always 1 ");
    memset(big + o, 'f', SDK_FILE_MAX + 1);
    strcpy(big + o + SDK_FILE_MAX + 1, " 1 m");
    CHECK(parse(big, &l) == -1, "a file name one byte too long");
    memset(big, ' ', sizeof(big));
    memcpy(big, "rw1 point f 1", 13);
    CHECK(sdk_parse((const uint8_t *)big, SDK_LINE_MAX + 1, &l) == -1, "a line over the limit");
    /* Every prefix of a valid line either parses or is refused, never
     * reads past its length (ASan watches the heap copy). */
    const char *good = "rw1 hit sometimes 1 dir/a%20b.c 99 it%20happened\n";
    for (size_t n = 0; n <= strlen(good); n++) {
        uint8_t *p = malloc(n ? n : 1);
        memcpy(p, good, n);
        (void)sdk_parse(p, n, &l);
        free(p);
    }
    CHECK(1, "prefixes parsed without a fault");

    char words[512];
    parse("rw1 hit always 0 a.c 3 x%22y", &l);
    sdk_describe(&l, 5, 6, words, sizeof(words));
    CHECK(!strcmp(words, "assert pid 5/6: always \"x\\\"y\" FAILED at a.c:3"), words);
    CHECK(!strcmp(rw_sdk_kind_name(RW_SDK_ALWAYS_OR_UNREACHABLE), "always_or_unreachable") &&
              !strcmp(rw_sdk_kind_name((enum rw_sdk_kind)99), "?"),
          "kind names");
}

static char home[64];

static void rec(struct trace_writer *w, uint64_t step, unsigned kind, uint32_t pid,
                const char *payload)
{
    uint8_t buf[REWIND_RECORD_MAX];
    struct rewind_record *r = (struct rewind_record *)buf;
    size_t n = strlen(payload);
    memset(buf, 0, sizeof(*r));
    r->len = (uint32_t)(sizeof(*r) + n);
    r->kind = (uint16_t)kind;
    r->pid = pid;
    r->tid = pid;
    memcpy(buf + sizeof(*r), payload, n);
    trace_append(w, step, r);
}

struct got {
    int n;
    struct rw_sdk_assertion a[8];
    char msg[8][64], file[8][64];
};

static int collect(void *ctx, const struct rw_sdk_assertion *a)
{
    struct got *g = ctx;
    if (g->n < 8) {
        g->a[g->n] = *a;
        snprintf(g->msg[g->n], 64, "%s", a->msg);
        snprintf(g->file[g->n], 64, "%s", a->file);
    }
    g->n++;
    return 0;
}

static int count_kind(void *ctx, const struct rw_event *ev)
{
    int *n = ctx;
    n[0]++;
    if (ev->kind == REWIND_REC_ASSERT && !strcmp(ev->kind_name, "assert"))
        n[1]++;
    return 0;
}

static void test_report(void)
{
    snprintf(home, sizeof(home), "/tmp/sdk_test.%d", (int)getpid());
    rundir_remove_tree(home);
    char p[4300];
    snprintf(p, sizeof(p), "%s/runs/%s", home, RUN);
    CHECK(io_mkdir_p(p) == 0, "run directory");
    snprintf(p, sizeof(p), "%s/runs/%s/trace", home, RUN);
    struct trace_writer w;
    CHECK(trace_open_write(&w, p) == 0, "trace");
    rec(&w, 10, REWIND_REC_MARK, 5, "rw1 cat always b.c 20 never%20negative\n");
    rec(&w, 11, REWIND_REC_MARK, 5, "rw1 cat sometimes b.c 30 saw%20three\n");
    rec(&w, 12, REWIND_REC_MARK, 5, "rw1 cat unreachable b.c 40 bad%20state\n");
    rec(&w, 13, REWIND_REC_MARK, 5, "rw1 cat reachable a.c 9 started\n");
    rec(&w, 14, REWIND_REC_MARK, 5, "plain mark\n");
    rec(&w, 15, REWIND_REC_MARK, 5, "rw1 hit always 1 b.c 20 never%20negative\n");
    rec(&w, 16, REWIND_REC_MARK, 5, "rw1 point b.c 25\n");
    rec(&w, 17, REWIND_REC_MARK, 6, "rw1 hit always 0 b.c 20 never%20negative\n");
    rec(&w, 18, REWIND_REC_MARK, 6, "rw1 hit always 0 b.c 20 never%20negative\n");
    rec(&w, 19, REWIND_REC_MARK, 6, "rw1 hit sometimes 0 b.c 30 saw%20three\n");
    rec(&w, 20, REWIND_REC_MARK, 6, "rw1 hit always 1 b.c 99 not%20catalogued\n");
    rec(&w, 21, REWIND_REC_MARK, 6, "rw1 hit always 1 b.c 20 never negative\n"); /* malformed */
    rec(&w, 22, REWIND_REC_OUTPUT, 6, "rw1 hit always 0 b.c 20 never%20negative\n");
    CHECK(trace_close(&w) == 0, "trace written");

    rw_home *h = NULL;
    struct rw_error err;
    CHECK(rw_home_open(home, &h, &err) == 0 && h, "open the home");
    if (!h)
        return;
    struct got g = {0};
    int n = rw_sdk_assertions(h, RUN, collect, &g, &err);
    CHECK(n == 5 && g.n == 5, "five assertions: four catalogued, one only evaluated");
    /* Sorted by file, line, kind, message: a.c:9, b.c:20, b.c:30, b.c:40, b.c:99. */
    CHECK(!strcmp(g.msg[0], "started") && g.a[0].kind == RW_SDK_REACHABLE && g.a[0].hits == 0 &&
              g.a[0].catalogued && !g.a[0].failed && g.a[0].first_fail_step == UINT64_MAX,
          "a reachable never reached: catalogued, no hits, not failed per run");
    CHECK(!strcmp(g.msg[1], "never negative") && g.a[1].hits == 3 && g.a[1].passes == 1 &&
              g.a[1].fails == 2 && g.a[1].first_fail_step == 17 && g.a[1].failed &&
              !strcmp(g.file[1], "b.c") && g.a[1].line == 20,
          "an always with two false evaluations from another thread fails at step 17");
    CHECK(!strcmp(g.msg[2], "saw three") && g.a[2].hits == 1 && g.a[2].fails == 1 && !g.a[2].failed,
          "a sometimes never true is not a per-run failure");
    CHECK(!strcmp(g.msg[3], "bad state") && g.a[3].hits == 0 && !g.a[3].failed,
          "an unreachable never hit");
    CHECK(!strcmp(g.msg[4], "not catalogued") && !g.a[4].catalogued && g.a[4].passes == 1,
          "an evaluation without catalog entry");

    int cnt[2] = {0, 0};
    struct rw_event_query q = RW_EVENTS_ALL;
    CHECK(rw_events(h, RUN, &q, count_kind, cnt, NULL, &err) == 0 && cnt[0] == 13 && cnt[1] == 10,
          "events: ten SDK lines are kind assert, the malformed one stays a mark");
    q.kind = REWIND_REC_ASSERT;
    cnt[0] = cnt[1] = 0;
    CHECK(rw_events(h, RUN, &q, count_kind, cnt, NULL, &err) == 0 && cnt[0] == 10 && cnt[1] == 10,
          "the kind filter selects SDK lines");
    q.kind = REWIND_REC_MARK;
    cnt[0] = cnt[1] = 0;
    CHECK(rw_events(h, RUN, &q, count_kind, cnt, NULL, &err) == 0 && cnt[0] == 2 && cnt[1] == 0,
          "the mark filter keeps plain and malformed marks");
    CHECK(rw_sdk_assertions(h, "ffff000000000009", collect, &g, &err) == -1 && err.msg[0],
          "a missing run is an error");
    rw_home_close(h);
    rundir_remove_tree(home);
}

int main(void)
{
    test_parse();
    test_report();
    return unit_done();
}
