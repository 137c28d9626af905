/*
 * faults_test: faults as schedule decisions (src/input/faults.h): the kinds
 * list, the decisions' purity, windows and rate (invariants 1-3), the spec's
 * "faults" both ways and ids of runs without faults unchanged, and the
 * trace's words for a fault record (src/trace/describe.h).
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "input/faults.h"
#include "input/spec.h"
#include "trace/describe.h"
#include "trace/trace.h"
#include "unit.h"

/* CHECK with a formatted message. */
#define CHECKF(cond, ...)                                                                          \
    do {                                                                                           \
        char m_[256];                                                                              \
        snprintf(m_, sizeof(m_), __VA_ARGS__);                                                     \
        CHECK(cond, m_);                                                                           \
    } while (0)

static void test_parse(void)
{
    uint32_t k;
    char why[200], buf[64];
    CHECKF(faults_parse("kill", &k, why, sizeof(why)) == 0 && k == 1u << FAULT_KILL, "kill");
    CHECKF(faults_parse("pause,kill", &k, why, sizeof(why)) == 0 &&
               k == ((1u << FAULT_KILL) | (1u << FAULT_PAUSE)),
           "pause,kill");
    faults_format(k, buf, sizeof(buf));
    CHECKF(!strcmp(buf, "kill,pause"), "canonical order: %s", buf);
    CHECKF(faults_parse("partition,kill", &k, why, sizeof(why)) == 0 &&
               k == ((1u << FAULT_KILL) | (1u << FAULT_PARTITION)),
           "partition,kill");
    faults_format(FAULT_KINDS_ALL, buf, sizeof(buf));
    CHECKF(!strcmp(buf, "kill,pause,partition,clock"), "all: %s", buf);
    CHECKF(faults_parse("heal", &k, why, sizeof(why)) < 0, "heal is a record, not a fault");
    CHECKF(faults_parse("all", &k, why, sizeof(why)) == 0 && k == FAULT_KINDS_ALL, "all");
    CHECKF(faults_parse("kill,kill", &k, why, sizeof(why)) < 0 && strstr(why, "twice"), "twice");
    CHECKF(faults_parse("nuke", &k, why, sizeof(why)) < 0 && strstr(why, "'nuke'"), "%s", why);
    CHECKF(faults_parse("", &k, why, sizeof(why)) < 0, "empty list");
    CHECKF(faults_parse("kill,", &k, why, sizeof(why)) < 0, "trailing comma");
    CHECKF(faults_parse("continue", &k, why, sizeof(why)) < 0, "continue is a record, not a fault");
}

static struct sched with_faults(uint64_t schedule, uint64_t from, uint64_t until, uint32_t rate)
{
    struct sched s = {
        .seed = 7, .fault_kinds = FAULT_KINDS_ALL, .fault_rate = rate, .fault_nodes = 3};
    CHECKF(sched_push(&s, schedule, from, until, from, 10000) == 0, "push");
    return s;
}

static void test_decisions(void)
{
    struct sched s = with_faults(5, 100, 20100, 2);
    uint64_t n = 0, kills = 0, pauses = 0, cuts = 0, ahead = 0, behind = 0;
    uint32_t seen_nodes = 0;
    for (uint64_t st = 0; st < 30000; st++) {
        struct fault_decision d = faults_decide(&s, st);
        struct fault_decision again = faults_decide(&s, st);
        CHECKF(!memcmp(&d, &again, sizeof(d)), "pure at step %llu", (unsigned long long)st);
        if (d.kind == FAULT_NONE)
            continue;
        n++;
        CHECKF(st >= 100 && st < 20100, "fault outside its window at %llu", (unsigned long long)st);
        CHECKF(d.node >= 1 && d.node <= 3, "node %u", d.node);
        seen_nodes |= 1u << d.node;
        if (d.kind == FAULT_KILL) {
            kills++;
            CHECKF(d.ns == 0, "a kill has no length");
        } else if (d.kind == FAULT_CLOCK) {
            long long step = (long long)(int64_t)d.ns;
            CHECKF(llabs(step) >= (long long)FAULT_CLOCK_MIN_NS &&
                       llabs(step) <= (long long)FAULT_CLOCK_MAX_NS,
                   "clock step %lld ns", step);
        } else {
            pauses += d.kind == FAULT_PAUSE;
            cuts += d.kind == FAULT_PARTITION;
            CHECKF(d.ns >= FAULT_PAUSE_MIN_NS && d.ns <= FAULT_PAUSE_MAX_NS, "pause %llu ns",
                   (unsigned long long)d.ns);
        }
    }
    /* invariant 3: 2 per horizon of 10,000 steps, over 20,000 steps: ~4. */
    CHECKF(n >= 1 && n <= 12, "%llu faults in two horizons at rate 2", (unsigned long long)n);
    struct sched many = with_faults(5, 100, 20100, 1000);
    uint64_t m = 0;
    for (uint64_t st = 100; st < 20100; st++)
        m += faults_decide(&many, st).kind != FAULT_NONE;
    CHECKF(m > 1000 && m < 3000, "rate 1000: %llu faults in 20,000 steps (~2,000)",
           (unsigned long long)m);
    for (uint64_t st = 100; st < 20100; st++) {
        struct fault_decision d = faults_decide(&many, st);
        kills += d.kind == FAULT_KILL;
        pauses += d.kind == FAULT_PAUSE;
        cuts += d.kind == FAULT_PARTITION;
        ahead += d.kind == FAULT_CLOCK && (int64_t)d.ns > 0;
        behind += d.kind == FAULT_CLOCK && (int64_t)d.ns < 0;
        if (d.kind)
            seen_nodes |= 1u << d.node;
    }
    CHECKF(kills > 0 && pauses > 0 && cuts > 0, "every kind drawn (%llu, %llu, %llu)",
           (unsigned long long)kills, (unsigned long long)pauses, (unsigned long long)cuts);
    CHECKF(ahead > 0 && behind > 0, "clock steps both ways (%llu forward, %llu back)",
           (unsigned long long)ahead, (unsigned long long)behind);
    CHECKF(seen_nodes == 0xe, "every node drawn: %x", seen_nodes);
    /* Schedule 0, no kinds, no nodes: nothing (invariant 1). */
    struct sched zero = with_faults(0, 100, 20100, 1000);
    struct sched nokind = many, nonode = many;
    nokind.fault_kinds = 0;
    nonode.fault_nodes = 0;
    for (uint64_t st = 0; st < 20100; st++)
        CHECKF(faults_decide(&zero, st).kind == FAULT_NONE &&
                   faults_decide(&nokind, st).kind == FAULT_NONE &&
                   faults_decide(&nonode, st).kind == FAULT_NONE,
               "no fault at %llu", (unsigned long long)st);
    /* Only kill: every fault is a kill. */
    struct sched kill = many;
    kill.fault_kinds = 1u << FAULT_KILL;
    for (uint64_t st = 100; st < 20100; st++) {
        enum fault_kind k = faults_decide(&kill, st).kind;
        CHECKF(k == FAULT_NONE || k == FAULT_KILL, "only kills");
    }
    /* A narrowed window keeps exactly the faults inside it, unchanged. */
    struct sched part = {
        .seed = 7, .fault_kinds = FAULT_KINDS_ALL, .fault_rate = 1000, .fault_nodes = 3};
    CHECKF(sched_push_span(&part, 5, 100, UINT64_MAX, 5000, 6000, 100, 10000) == 0, "span");
    struct sched full = with_faults(5, 100, UINT64_MAX, 1000);
    for (uint64_t st = 100; st < 8000; st++) {
        struct fault_decision a = faults_decide(&part, st), b = faults_decide(&full, st);
        if (st >= 5000 && st < 6000)
            CHECKF(!memcmp(&a, &b, sizeof(a)), "same fault in the window at %llu",
                   (unsigned long long)st);
        else
            CHECKF(a.kind == FAULT_NONE, "no fault outside the window at %llu",
                   (unsigned long long)st);
    }
    /* Another seed or schedule draws other steps. */
    struct sched other = with_faults(7, 100, 20100, 2);
    int differ = 0;
    for (uint64_t st = 100; st < 20100; st++)
        differ |= faults_decide(&other, st).kind != faults_decide(&s, st).kind;
    CHECKF(differ, "schedule 7 and 5 put faults at other steps");
}

static void test_describe(void)
{
    char buf[200];
    struct fault_decision k = {FAULT_KILL, 2, 0}, p = {FAULT_PAUSE, 1, 40000000};
    faults_describe(&k, "n2", buf, sizeof(buf));
    CHECKF(!strcmp(buf, "killed node n2 (SIGKILL to each of its processes)"), "%s", buf);
    faults_describe(&p, NULL, buf, sizeof(buf));
    CHECKF(!strcmp(buf, "paused node 1 for 40.000 ms of virtual time"), "%s", buf);
    /* The trace's words for a fault record, and a malformed one. */
    uint8_t pay[12];
    uint64_t ns = 40000000;
    uint32_t procs = 3;
    memcpy(pay, &ns, 8);
    memcpy(pay + 8, &procs, 4);
    struct trace_entry e = {0};
    e.rec.kind = REWIND_REC_FAULT;
    e.rec.aux = REWIND_FAULT_PAUSE | 2u << 8;
    e.payload = pay;
    e.payload_len = sizeof(pay);
    describe_entry(&e, buf, sizeof(buf));
    CHECKF(!strcmp(buf, "fault pause node 2 for 40.000 ms: SIGSTOP to 3 processes"), "%s", buf);
    e.rec.aux = REWIND_FAULT_KILL | 1u << 8;
    describe_entry(&e, buf, sizeof(buf));
    CHECKF(!strcmp(buf, "fault kill node 1: SIGKILL to 3 processes"), "%s", buf);
    e.rec.aux = REWIND_FAULT_PARTITION | 3u << 8;
    describe_entry(&e, buf, sizeof(buf));
    CHECKF(!strcmp(buf, "fault partition node 3 for 40.000 ms: its link carries nothing"), "%s",
           buf);
    e.rec.aux = REWIND_FAULT_HEAL | 3u << 8;
    describe_entry(&e, buf, sizeof(buf));
    CHECKF(!strcmp(buf, "fault heal node 3: its link carries packets again"), "%s", buf);
    struct fault_decision c = {FAULT_PARTITION, 3, 20000000};
    faults_describe(&c, "n3", buf, sizeof(buf));
    CHECKF(!strcmp(buf, "cut node n3 off the network for 20.000 ms of virtual time"), "%s", buf);
    struct fault_decision back = {FAULT_CLOCK, 1, (uint64_t) - (int64_t)16000000000ll};
    faults_describe(&back, "n1", buf, sizeof(buf));
    CHECKF(!strcmp(buf, "stepped node n1's wall clock back by 16.000 s"), "%s", buf);
    int64_t step = -16000000000ll;
    memcpy(pay, &step, 8);
    e.rec.aux = REWIND_FAULT_CLOCK | 1u << 8;
    describe_entry(&e, buf, sizeof(buf));
    CHECKF(!strcmp(buf, "fault clock node 1: its wall clock back by 16.000 s"), "%s", buf);
    e.rec.aux = 99;
    describe_entry(&e, buf, sizeof(buf));
    CHECKF(strstr(buf, "malformed") != NULL, "%s", buf);
    e.rec.aux = REWIND_FAULT_KILL; /* node 0 */
    describe_entry(&e, buf, sizeof(buf));
    CHECKF(strstr(buf, "malformed") != NULL, "node 0: %s", buf);
    e.rec.aux = REWIND_FAULT_KILL | 17u << 8;
    describe_entry(&e, buf, sizeof(buf));
    CHECKF(strstr(buf, "malformed") != NULL, "node 17: %s", buf);
    e.rec.aux = REWIND_FAULT_KILL | 1u << 8 | 1ull << 40;
    describe_entry(&e, buf, sizeof(buf));
    CHECKF(strstr(buf, "malformed") != NULL, "stray bits: %s", buf);
    e.rec.aux = REWIND_FAULT_KILL | 1u << 8;
    e.payload_len = 4;
    describe_entry(&e, buf, sizeof(buf));
    CHECKF(strstr(buf, "malformed") != NULL, "short payload: %s", buf);
}

static void test_spec(void)
{
    char *argv[] = {"/bin/true", NULL}, *env[] = {NULL};
    struct sched none = {0}, f = {.fault_kinds = 1u << FAULT_KILL, .fault_rate = 3};
    struct run_spec sp = {
        .argv = argv, .env = env, .cwd = "/", .mem_mib = 256, .quantum_ns = 5000, .perturb = &none};
    char *plain = spec_to_json(&sp);
    CHECKF(plain && !strstr(plain, "faults"), "no faults key without faults");
    sp.perturb = &f;
    char *with = spec_to_json(&sp);
    CHECKF(with && strstr(with, "\"faults\":{\"kinds\":\"kill\",\"rate\":3}"), "%s", with);
    json_t *j = json_loads(with, 0, NULL);
    struct sched back = {0};
    CHECKF(j && spec_parse_perturb(j, &back) == 0 && back.fault_kinds == f.fault_kinds &&
               back.fault_rate == 3,
           "round trip");
    json_decref(j);
    const char *bad[] = {"{\"faults\":{\"kinds\":\"nuke\",\"rate\":2}}",
                         "{\"faults\":{\"kinds\":\"kill\",\"rate\":0}}",
                         "{\"faults\":{\"kinds\":\"kill\",\"rate\":1001}}",
                         "{\"faults\":{\"kinds\":\"kill\"}}",
                         "{\"faults\":{\"kinds\":\"kill\",\"rate\":2,\"x\":1}}",
                         "{\"faults\":\"kill\"}",
                         "{\"faults\":{\"kinds\":3,\"rate\":2}}",
                         "{\"faults\":{\"kinds\":\"pause,kill\",\"rate\":2}}",
                         "{\"faults\":{\"kinds\":\"all\",\"rate\":2}}"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        json_t *b = json_loads(bad[i], 0, NULL);
        CHECKF(b && spec_parse_perturb(b, &back) < 0, "refused: %s", bad[i]);
        json_decref(b);
    }
    free(plain);
    free(with);
}

int main(void)
{
    test_parse();
    test_decisions();
    test_describe();
    test_spec();
    return unit_done();
}
