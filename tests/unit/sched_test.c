/* sched_test: perturbation decisions are a pure function of (seed,
 * schedule, step), confined to their window, unchanged when a window is
 * narrowed, and segments truncate as forks need; keyframes files round-trip
 * and stop before a torn record. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "trace/keyframe.h"
#include "input/sched.h"
#include "unit.h"

static int same(struct sched_decision a, struct sched_decision b)
{
    return a.action == b.action && a.ns == b.ns && a.burst == b.burst;
}

/* Memory-access points (sched.h): under random, a density of their own by
 * schedule and always a short stall; under both strategies a burst from
 * {1, 2, 4, 8, 16}, 1 three times in four; nothing outside a window. */
static void test_access_points(void)
{
    for (uint64_t sch = 1; sch <= 8; sch++) {
        struct sched a = {.seed = 11}, n = {.seed = 11};
        sched_push(&a, sch, 100, UINT64_MAX, 100, 4000);
        sched_push(&n, sch, 1000, 2000, 100, 4000);
        int ones = 0, stalls = 0, total = 0, other = 0;
        for (uint64_t s = 0; s < 4100; s++) {
            struct sched_decision d = sched_decide(&a, s, 1);
            if (s < 100) {
                CHECK(d.action == SCHED_NONE && d.burst == 0, "no burst outside the window");
                continue;
            }
            total++;
            CHECK(d.burst == 1 || d.burst == 2 || d.burst == 4 || d.burst == 8 || d.burst == 16,
                  "burst is 1, 2, 4, 8 or 16");
            ones += d.burst == 1;
            if ((sch & 1) && d.action != SCHED_NONE) {
                CHECK(d.action == SCHED_YIELD, "random: a yield at an access point");
                stalls++;
            }
            other += sched_decide(&a, s, 0).burst != 0;
            CHECK(same(sched_decide(&a, s, 1), d), "pure function");
            struct sched_decision m = sched_decide(&n, s, 1);
            if (s >= 1000 && s < 2000)
                CHECK(same(m, d), "narrowed: the same access decisions inside");
            else
                CHECK(m.action == SCHED_NONE && m.burst == 0, "narrowed: none outside");
        }
        CHECK(ones > total * 65 / 100 && ones < total * 85 / 100, "burst 1 three times in four");
        CHECK(other == 0, "no burst at a step that is no access point");
        if (sch & 1) {
            unsigned level = (unsigned)((sch >> 1) % 4);
            int want = total / (2 << level);
            CHECK(stalls > want * 7 / 10 && stalls < want * 13 / 10,
                  "random: access points perturbed at 1/2, 1/4, 1/8 or 1/16 by schedule");
        }
    }
}

/* A narrowing probe (sched.h invariant 3): the schedule's actions in its
 * window alone, its bursts over the whole span, so the probe of every
 * perturbed step is the schedule's own run. */
static void test_probe_span(void)
{
    int actions = 0; /* inside the probes' windows, over the schedules */
    for (uint64_t sch = 1; sch <= 8; sch++) {
        struct sched a = {.seed = 5}, w = {.seed = 5}, e = {.seed = 5};
        sched_push(&a, sch, 100, UINT64_MAX, 100, 4000);
        CHECK(sched_push_span(&w, sch, 100, UINT64_MAX, 1000, 2000, 100, 4000) == 0, "probe");
        CHECK(sched_push_span(&e, sch, 100, UINT64_MAX, 1500, 1500, 100, 4000) == 0,
              "an empty window of actions");
        int bursts = 0;
        for (uint64_t s = 0; s < 4100; s++) {
            actions += sched_decide(&w, s, 1).action != SCHED_NONE ||
                       sched_decide(&w, s, 0).action != SCHED_NONE;
            for (int acc = 0; acc < 2; acc++) {
                struct sched_decision d = sched_decide(&a, s, acc), m = sched_decide(&w, s, acc),
                                      z = sched_decide(&e, s, acc);
                CHECK(m.burst == d.burst && z.burst == d.burst, "the span keeps every burst");
                if (s >= 1000 && s < 2000)
                    CHECK(same(m, d), "inside the window: the schedule's decision");
                else
                    CHECK(m.action == SCHED_NONE && m.ns == 0, "outside: no action");
                CHECK(z.action == SCHED_NONE, "empty window: no action");
                bursts += acc && s >= 100 && (s < 1000 || s >= 2000) && d.burst != 1;
            }
        }
        CHECK(bursts > 0, "bursts other than 1 outside the window, kept");
    }
    CHECK(actions > 100, "the windows held actions to compare");
    struct sched b = {.seed = 5};
    CHECK(sched_push_span(&b, 3, 100, 200, 50, 150, 100, 10) < 0, "actions before the span");
    CHECK(sched_push_span(&b, 3, 100, 200, 150, 250, 100, 10) < 0, "actions after the span");
    CHECK(sched_push_span(&b, 3, 100, 200, 150, 140, 100, 10) < 0, "a reversed window");
    CHECK(sched_push_span(&b, 3, 100, 100, 100, 100, 100, 10) < 0, "an empty span");
    /* a fork inside a probe's span ends the span and the actions there */
    CHECK(sched_push_span(&b, 3, 100, UINT64_MAX, 500, 900, 100, 10) == 0, "probe");
    struct sched c = b;
    sched_end_at(&c, 300);
    CHECK(c.n == 1 && c.seg[0].span_until == 300 && c.seg[0].from == 300 && c.seg[0].until == 300,
          "schedule 0 from 300: the span ends there, the actions (all later) are gone");
    sched_end_at(&c, 100);
    CHECK(c.n == 0, "a fork at the span's start drops the segment");
}

static void test_sched(void)
{
    struct sched a = {.seed = 7}, b = {.seed = 7}, none = {.seed = 7};
    CHECK(sched_push(&a, 3, 100, UINT64_MAX, 100, 1000) == 0, "push");
    CHECK(sched_push(&b, 3, 100, UINT64_MAX, 100, 1000) == 0, "push");
    int perturbed = 0, differ = 0;
    for (uint64_t s = 0; s < 5000; s++) {
        struct sched_decision x = sched_decide(&a, s, 0), y = sched_decide(&b, s, 0);
        CHECK(same(x, y), "same inputs, same decision");
        if (s < 100)
            CHECK(x.action == SCHED_NONE, "nothing before the window");
        perturbed += x.action != SCHED_NONE;
        CHECK(sched_decide(&none, s, 0).action == SCHED_NONE, "no segments: never perturbed");
    }
    CHECK(perturbed > 200 && perturbed < 450, "random strategy: about 1 step in 16");
    struct sched c = {.seed = 8};
    sched_push(&c, 3, 100, UINT64_MAX, 100, 1000);
    for (uint64_t s = 100; s < 5000; s++)
        differ += !same(sched_decide(&a, s, 0), sched_decide(&c, s, 0));
    CHECK(differ > 100, "another seed, other decisions");
    /* narrowing keeps every decision inside the new window */
    struct sched n = {.seed = 7};
    sched_push(&n, 3, 300, 400, 100, 1000);
    for (uint64_t s = 0; s < 1000; s++) {
        struct sched_decision x = sched_decide(&n, s, 0);
        if (s >= 300 && s < 400)
            CHECK(same(x, sched_decide(&a, s, 0)), "inside: as in the wide window");
        else
            CHECK(x.action == SCHED_NONE, "outside: none");
    }
    /* pct: exactly SCHED_PCT_POINTS stalls over the horizon, fixed by origin */
    struct sched p = {.seed = 1}, q = {.seed = 1};
    sched_push(&p, 2, 50, UINT64_MAX, 50, 500);
    int pts = 0;
    uint64_t first = 0;
    for (uint64_t s = 0; s < 2000; s++)
        if (sched_decide(&p, s, 0).action == SCHED_STALL) {
            if (!pts)
                first = s;
            pts++;
        }
    CHECK(pts >= 1 && pts <= SCHED_PCT_POINTS, "pct: at most 3 change points");
    CHECK(first >= 50 && first < 550, "pct points within [origin, origin+horizon)");
    sched_push(&q, 2, first, first + 1, 50, 500);
    CHECK(sched_decide(&q, first, 0).action == SCHED_STALL, "pct point kept in a narrowed window");
    /* fork: truncate the parent's segment at the fork step */
    struct sched f = a;
    CHECK(sched_push(&f, 5, 700, UINT64_MAX, 700, 100) == 0, "fork push");
    CHECK(f.n == 2 && f.seg[0].until == 700, "parent segment truncated at the fork step");
    for (uint64_t s = 0; s < 700; s++)
        CHECK(same(sched_decide(&f, s, 0), sched_decide(&a, s, 0)),
              "fork: parent's decisions before");
    CHECK(sched_push(&f, 5, 10, 10, 10, 1) < 0, "empty window refused");
    CHECK(strcmp(sched_strategy(0), "none") == 0 && strcmp(sched_strategy(3), "random") == 0 &&
              strcmp(sched_strategy(4), "pct") == 0,
          "strategy names");
}

static void test_keyframes_file(void)
{
    char dir[] = "/tmp/kftest.XXXXXX";
    CHECK(mkdtemp(dir) != NULL, "tmpdir");
    char path[256];
    snprintf(path, sizeof(path), "%s/keyframes", dir);
    struct kf_writer w;
    CHECK(kf_create(&w, path, "parentrun", 42) == 0, "create");
    uint8_t state[100];
    memset(state, 0xab, sizeof(state));
    struct kf_page pg[3];
    memset(pg, 0, sizeof(pg));
    for (int i = 0; i < 3; i++) {
        pg[i].pfn = (uint64_t)i * 10;
        pg[i].hash.b[0] = (uint8_t)(i + 1);
    }
    CHECK(kf_append(&w, 5, state, sizeof(state), pg, 3) == 0, "append 1");
    CHECK(kf_append(&w, 9, state, 7, pg, 1) == 0, "append 2");
    CHECK(kf_close(&w) == 0, "close");
    struct kf_file k;
    CHECK(kf_open(path, &k) == 0, "open");
    CHECK(k.n == 2 && !k.torn, "two records");
    CHECK(!strcmp(k.parent, "parentrun") && k.parent_upto == 42, "parent");
    struct kf_page *got;
    CHECK(kf_read_pages(&k, 0, &got) == 0 && got[2].pfn == 20 && got[2].hash.b[0] == 3, "pages");
    free(got);
    void *st;
    uint32_t len;
    CHECK(kf_read_state(&k, 1, &st, &len) == 0 && len == 7 && !memcmp(st, state, 7), "state");
    free(st);
    kf_close_read(&k);
    /* a torn last record: the reader keeps the whole ones */
    FILE *f = fopen(path, "ab");
    fwrite("KFRM-half", 1, 9, f);
    fclose(f);
    CHECK(kf_open(path, &k) == 0 && k.n == 2 && k.torn, "torn tail: two records, torn flag");
    kf_close_read(&k);
    /* a flipped byte in the second record: only the first stays */
    f = fopen(path, "r+b");
    fseek(f, -30, SEEK_END);
    fputc('X', f);
    fclose(f);
    CHECK(kf_open(path, &k) == 0 && k.n == 1 && k.torn, "corrupt record dropped");
    kf_close_read(&k);
    unlink(path);
    rmdir(dir);
}

int main(void)
{
    test_sched();
    test_access_points();
    test_probe_span();
    test_keyframes_file();
    return unit_done();
}
