/*
 * faults_test: faults as schedule decisions (src/input/faults.h): the kinds
 * list, the decisions' purity, windows and rate (invariants 1-3), net and
 * disk faults and restart delays in their ranges (invariant 2), the
 * decisions of settings without them pinned to the code before them
 * (invariant 4), the disk glob (invariant 5), the spec's "faults" both ways
 * and ids of runs without faults unchanged, and the trace's words for a
 * fault record (src/trace/describe.h).
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "input/faults.h"
#include "input/spec.h"
#include "rewind.h"
#include "trace/describe.h"
#include "trace/trace.h"
#include "unit.h"

/* Two decisions field by field (the struct has padding memcmp would read). */
static int same(const struct fault_decision *a, const struct fault_decision *b)
{
    return a->kind == b->kind && a->node == b->node && a->ns == b->ns && a->arg == b->arg;
}

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
    CHECKF(!strcmp(buf, "kill,pause,partition,clock,net,disk"), "all: %s", buf);
    CHECKF(faults_parse("net,kill", &k, why, sizeof(why)) == 0 &&
               k == ((1u << FAULT_KILL) | (1u << FAULT_NET)),
           "net,kill");
    faults_format(k, buf, sizeof(buf));
    CHECKF(!strcmp(buf, "kill,net"), "net last: %s", buf);
    CHECKF(faults_parse("disk,kill", &k, why, sizeof(why)) == 0 &&
               k == ((1u << FAULT_KILL) | (1u << FAULT_DISK)),
           "disk,kill");
    faults_format(k, buf, sizeof(buf));
    CHECKF(!strcmp(buf, "kill,disk"), "disk last: %s", buf);
    CHECKF(faults_parse("disk,net", &k, why, sizeof(why)) == 0 &&
               k == ((1u << FAULT_NET) | (1u << FAULT_DISK)),
           "disk,net");
    faults_format(k, buf, sizeof(buf));
    CHECKF(!strcmp(buf, "net,disk"), "disk after net: %s", buf);
    CHECKF(faults_parse("disk", &k, why, sizeof(why)) == 0 && k == 1u << FAULT_DISK, "disk");
    CHECKF(faults_parse("clock,net,partition,pause,kill", &k, why, sizeof(why)) == 0 &&
               k == (FAULT_KINDS_ALL & ~(1u << FAULT_DISK)),
           "every kind but disk");
    CHECKF(faults_parse("clock,disk,net,partition,pause,kill", &k, why, sizeof(why)) == 0 &&
               k == FAULT_KINDS_ALL,
           "every kind is all");
    CHECKF(faults_parse("mend", &k, why, sizeof(why)) < 0, "mend is a record, not a fault");
    CHECKF(faults_parse("disk,disk", &k, why, sizeof(why)) < 0 && strstr(why, "twice"),
           "disk twice");
    CHECKF(faults_parse("clear", &k, why, sizeof(why)) < 0, "clear is a record, not a fault");
    CHECKF(faults_parse("restart", &k, why, sizeof(why)) < 0, "restart is a record, not a fault");
    CHECKF(faults_parse("heal", &k, why, sizeof(why)) < 0, "heal is a record, not a fault");
    CHECKF(faults_parse("all", &k, why, sizeof(why)) == 0 && k == FAULT_KINDS_ALL, "all");
    CHECKF(faults_parse("kill,kill", &k, why, sizeof(why)) < 0 && strstr(why, "twice"), "twice");
    CHECKF(faults_parse("nuke", &k, why, sizeof(why)) < 0 && strstr(why, "'nuke'") &&
               strstr(why, "clock, net, disk (or all)"),
           "%s", why);
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
        CHECKF(same(&d, &again), "pure at step %llu", (unsigned long long)st);
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
            CHECKF(same(&a, &b), "same fault in the window at %llu", (unsigned long long)st);
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

/* Invariant 4: settings without net and without restarts decide as the code
 * before them did. These were recorded with that code (faults.c at 44e992c,
 * before issue 28's net faults and restarts): the first 200 faults of
 * seed 7, schedule 5 from step 100 (horizon 10,000), rate 1000, 3 nodes,
 * kinds kill,pause,partition,clock, as {step, kind, node, ns}; then digests
 * (FNV-1a-64 over step, kind, node and ns of every fault in steps 0..99,999)
 * of 60 more settings, made by the loops of test_old_decisions. */
struct old_decision {
    uint64_t step;
    uint32_t kind, node;
    uint64_t ns;
};
static const struct old_decision old_decisions[200] = {
    {105, 2, 1, 0x9896800ull},
    {107, 4, 2, 0x2625a00ull},
    {132, 6, 2, 0x773594000ull},
    {177, 6, 1, 0xfffffffc46536000ull},
    {178, 1, 3, 0x0ull},
    {186, 1, 3, 0x0ull},
    {201, 6, 1, 0xffffffff1194d800ull},
    {210, 2, 2, 0x989680ull},
    {211, 1, 2, 0x0ull},
    {215, 1, 2, 0x0ull},
    {217, 6, 1, 0x3b9aca000ull},
    {241, 6, 2, 0xffffffe2329b0000ull},
    {245, 4, 2, 0x9896800ull},
    {246, 6, 1, 0x3b9aca000ull},
    {259, 2, 1, 0x1312d000ull},
    {278, 4, 3, 0x1312d00ull},
    {299, 2, 3, 0x2625a000ull},
    {310, 6, 2, 0x77359400ull},
    {315, 2, 2, 0x989680ull},
    {335, 1, 1, 0x0ull},
    {357, 1, 1, 0x0ull},
    {397, 1, 2, 0x0ull},
    {400, 6, 1, 0xffffffff1194d800ull},
    {412, 6, 1, 0xee6b2800ull},
    {425, 1, 2, 0x0ull},
    {455, 4, 2, 0x2625a000ull},
    {467, 6, 2, 0xee6b2800ull},
    {471, 1, 1, 0x0ull},
    {491, 4, 1, 0x4c4b400ull},
    {506, 6, 2, 0xffffffff1194d800ull},
    {516, 1, 1, 0x0ull},
    {527, 1, 2, 0x0ull},
    {541, 1, 2, 0x0ull},
    {554, 1, 1, 0x0ull},
    {558, 2, 3, 0x2625a00ull},
    {562, 4, 3, 0x4c4b400ull},
    {565, 6, 3, 0x77359400ull},
    {570, 6, 1, 0x1dcd65000ull},
    {597, 4, 3, 0x4c4b4000ull},
    {618, 1, 1, 0x0ull},
    {620, 2, 2, 0x9896800ull},
    {621, 4, 1, 0x4c4b4000ull},
    {622, 4, 3, 0x2625a00ull},
    {625, 2, 2, 0x4c4b4000ull},
    {633, 4, 1, 0x989680ull},
    {634, 2, 3, 0x2625a000ull},
    {635, 1, 1, 0x0ull},
    {675, 2, 1, 0x4c4b400ull},
    {679, 2, 2, 0x1312d000ull},
    {724, 1, 3, 0x0ull},
    {739, 4, 1, 0x2625a000ull},
    {750, 4, 2, 0x2625a000ull},
    {772, 4, 2, 0x989680ull},
    {794, 4, 3, 0x989680ull},
    {796, 6, 1, 0x773594000ull},
    {818, 4, 2, 0x2625a000ull},
    {819, 2, 2, 0x1312d00ull},
    {831, 4, 2, 0x1312d000ull},
    {833, 6, 2, 0xfffffffc46536000ull},
    {861, 1, 3, 0x0ull},
    {876, 6, 1, 0x773594000ull},
    {883, 2, 1, 0x989680ull},
    {896, 1, 3, 0x0ull},
    {898, 4, 2, 0x1312d000ull},
    {902, 4, 1, 0x4c4b4000ull},
    {910, 2, 2, 0x989680ull},
    {911, 1, 1, 0x0ull},
    {923, 4, 1, 0x1312d00ull},
    {938, 4, 3, 0x2625a000ull},
    {951, 6, 3, 0xfffffff88ca6c000ull},
    {958, 2, 3, 0x9896800ull},
    {968, 4, 2, 0x2625a000ull},
    {971, 4, 2, 0x4c4b400ull},
    {976, 4, 1, 0x4c4b400ull},
    {992, 4, 2, 0x2625a00ull},
    {994, 6, 1, 0x773594000ull},
    {1015, 1, 3, 0x0ull},
    {1043, 1, 3, 0x0ull},
    {1048, 2, 2, 0x9896800ull},
    {1054, 6, 1, 0xffffffffc4653600ull},
    {1073, 6, 3, 0x77359400ull},
    {1115, 1, 3, 0x0ull},
    {1126, 6, 1, 0xee6b2800ull},
    {1136, 4, 2, 0x1312d000ull},
    {1146, 1, 3, 0x0ull},
    {1162, 1, 1, 0x0ull},
    {1179, 6, 3, 0xee6b28000ull},
    {1190, 2, 1, 0x1312d00ull},
    {1208, 2, 1, 0x4c4b4000ull},
    {1209, 1, 1, 0x0ull},
    {1225, 2, 1, 0x4c4b4000ull},
    {1229, 1, 2, 0x0ull},
    {1242, 2, 1, 0x1312d00ull},
    {1271, 4, 1, 0x989680ull},
    {1274, 4, 3, 0x2625a000ull},
    {1278, 2, 3, 0x4c4b400ull},
    {1283, 6, 2, 0x773594000ull},
    {1303, 6, 1, 0x3b9aca000ull},
    {1307, 1, 1, 0x0ull},
    {1327, 2, 2, 0x1312d00ull},
    {1328, 1, 1, 0x0ull},
    {1350, 1, 2, 0x0ull},
    {1388, 4, 1, 0x2625a00ull},
    {1389, 4, 2, 0x2625a00ull},
    {1391, 4, 1, 0x9896800ull},
    {1392, 2, 1, 0x1312d00ull},
    {1400, 6, 1, 0xffffffff88ca6c00ull},
    {1421, 4, 2, 0x4c4b4000ull},
    {1446, 6, 1, 0xfffffff1194d8000ull},
    {1461, 6, 2, 0xfffffff1194d8000ull},
    {1463, 6, 2, 0xfffffffc46536000ull},
    {1467, 6, 1, 0xee6b2800ull},
    {1475, 1, 2, 0x0ull},
    {1491, 4, 1, 0x4c4b400ull},
    {1494, 6, 1, 0x3b9aca000ull},
    {1501, 6, 2, 0x1dcd65000ull},
    {1511, 1, 1, 0x0ull},
    {1526, 2, 2, 0x4c4b4000ull},
    {1527, 6, 2, 0x3b9aca00ull},
    {1533, 6, 1, 0xfffffffc46536000ull},
    {1538, 6, 2, 0xffffffff1194d800ull},
    {1540, 1, 3, 0x0ull},
    {1598, 6, 3, 0xee6b28000ull},
    {1605, 1, 2, 0x0ull},
    {1613, 4, 1, 0x4c4b4000ull},
    {1615, 2, 2, 0x989680ull},
    {1627, 2, 2, 0x4c4b400ull},
    {1643, 4, 2, 0x2625a00ull},
    {1652, 1, 1, 0x0ull},
    {1659, 1, 2, 0x0ull},
    {1668, 2, 2, 0x1312d000ull},
    {1670, 6, 2, 0x1dcd65000ull},
    {1676, 4, 3, 0x2625a000ull},
    {1689, 4, 3, 0x9896800ull},
    {1691, 1, 1, 0x0ull},
    {1711, 6, 2, 0xffffffff88ca6c00ull},
    {1719, 2, 3, 0x4c4b400ull},
    {1730, 2, 2, 0x2625a00ull},
    {1737, 4, 3, 0x9896800ull},
    {1755, 1, 3, 0x0ull},
    {1757, 1, 2, 0x0ull},
    {1761, 4, 1, 0x2625a000ull},
    {1766, 2, 3, 0x9896800ull},
    {1818, 2, 2, 0x4c4b400ull},
    {1824, 1, 1, 0x0ull},
    {1827, 2, 1, 0x4c4b400ull},
    {1867, 6, 2, 0x3b9aca000ull},
    {1879, 2, 3, 0x1312d00ull},
    {1880, 4, 2, 0x9896800ull},
    {1887, 4, 2, 0x1312d00ull},
    {1891, 4, 1, 0x1312d00ull},
    {1903, 1, 3, 0x0ull},
    {1946, 1, 3, 0x0ull},
    {1956, 4, 2, 0x1312d00ull},
    {1959, 2, 1, 0x989680ull},
    {1960, 6, 1, 0x3b9aca000ull},
    {1970, 4, 2, 0x2625a00ull},
    {1975, 2, 1, 0x9896800ull},
    {2041, 1, 2, 0x0ull},
    {2061, 1, 1, 0x0ull},
    {2071, 4, 1, 0x4c4b400ull},
    {2084, 4, 3, 0x9896800ull},
    {2119, 4, 1, 0x4c4b400ull},
    {2134, 6, 1, 0x3b9aca000ull},
    {2135, 1, 2, 0x0ull},
    {2148, 6, 2, 0xfffffff1194d8000ull},
    {2163, 6, 2, 0x3b9aca000ull},
    {2164, 6, 2, 0xee6b28000ull},
    {2175, 1, 2, 0x0ull},
    {2192, 2, 3, 0x9896800ull},
    {2193, 4, 3, 0x4c4b400ull},
    {2213, 6, 1, 0xffffffff1194d800ull},
    {2221, 6, 1, 0x1dcd650000ull},
    {2222, 4, 2, 0x4c4b4000ull},
    {2234, 2, 1, 0x4c4b400ull},
    {2235, 4, 1, 0x989680ull},
    {2239, 1, 3, 0x0ull},
    {2252, 6, 1, 0xfffffff88ca6c000ull},
    {2261, 2, 1, 0x2625a00ull},
    {2281, 6, 2, 0x3b9aca000ull},
    {2298, 6, 3, 0xfffffff1194d8000ull},
    {2318, 4, 1, 0x1312d00ull},
    {2333, 6, 2, 0x77359400ull},
    {2354, 1, 2, 0x0ull},
    {2366, 2, 2, 0x989680ull},
    {2375, 4, 2, 0x1312d00ull},
    {2382, 1, 1, 0x0ull},
    {2385, 6, 2, 0x1dcd65000ull},
    {2388, 4, 2, 0x9896800ull},
    {2418, 1, 1, 0x0ull},
    {2425, 2, 3, 0x1312d000ull},
    {2431, 2, 3, 0x1312d000ull},
    {2439, 6, 1, 0xee6b28000ull},
    {2453, 2, 2, 0x9896800ull},
    {2454, 2, 2, 0x4c4b400ull},
    {2456, 2, 1, 0x2625a000ull},
    {2459, 1, 3, 0x0ull},
    {2476, 2, 1, 0x1312d000ull},
    {2484, 1, 1, 0x0ull},
    {2493, 2, 3, 0x1312d00ull},
};
static const uint64_t old_digests[60] = {
    0x8d29e8fd405ff6d0ull, 0x49800e9ea62cb662ull, 0xa2488520c7ed71faull, 0x496c126e5de57005ull,
    0x0f57469ec9464752ull, 0xc59710c6bc7aecb9ull, 0x49b168be16fb0203ull, 0x0c35d8c0603f45beull,
    0x6de4dc8fc50e7fbeull, 0xb565117f883cc9e4ull, 0x2fd81785e9633a61ull, 0x2458a5ece3d15bb4ull,
    0x415537591d36ef2aull, 0x368ed62eb7460cdaull, 0x47535944b2b6e1daull, 0x057e0083d4045d5dull,
    0x8fbd04492426893eull, 0x022bda8edf20f5ffull, 0x561d3d29d57b18dbull, 0x2482d940646f215eull,
    0xfd4b123ee627509eull, 0x8ed060b80bbc223dull, 0x4d6f903ec69ceb36ull, 0xbe944ce64b1680a3ull,
    0x4690b1f3eff73e60ull, 0x83920a5578dab1dcull, 0x27893cfffab1b8beull, 0xd9b72556fb814a04ull,
    0x9efe098ffe659989ull, 0x527eb77120e6e75dull, 0x8457f53c7addadb7ull, 0xec6bdd0c3e8258bfull,
    0xfa59f51f18ea8cd7ull, 0xd8649c3820c72292ull, 0xa03d888a975a6fdaull, 0x7ea7a16d92d1d14full,
    0xd83d4d52a9400810ull, 0xb0a83d3cddad2a06ull, 0x67652078d5f949dcull, 0x9ca60a311468f2d8ull,
    0xddd9dabbee26c334ull, 0xcdc05ffbcf4aaceeull, 0x7d41c84a2f1811d3ull, 0x712013151f812103ull,
    0xbba7a71d0d46de92ull, 0xf20beeb03ceb3b15ull, 0xa0ddf554db2221f5ull, 0x296a0301b5e79ff5ull,
    0xe17ead2ebddad333ull, 0x1c8085f86866e2caull, 0xf8dfebd3a0e542a6ull, 0xcffd233318cc921cull,
    0x85c30bd72753950dull, 0x19fb6e607339c4aeull, 0x0f1ed0f016f772d0ull, 0xf6258f3645c7b5e2ull,
    0x79ed148af2dfcaf2ull, 0xffd1d56548e8ee38ull, 0xb79b3433f669798aull, 0x608db3c69c632e95ull,
};

#define OLD_KINDS                                                                                  \
    ((1u << FAULT_KILL) | (1u << FAULT_PAUSE) | (1u << FAULT_PARTITION) | (1u << FAULT_CLOCK))

static uint64_t fnv(uint64_t h, uint64_t v)
{
    for (int i = 0; i < 8; i++) {
        h ^= (v >> (8 * i)) & 0xff;
        h *= 0x100000001b3ull;
    }
    return h;
}

static void test_old_decisions(void)
{
    struct sched s = {.seed = 7, .fault_kinds = OLD_KINDS, .fault_rate = 1000, .fault_nodes = 3};
    CHECKF(sched_push(&s, 5, 100, UINT64_MAX, 100, 10000) == 0, "push");
    size_t n = 0, bad = 0;
    for (uint64_t st = 0; n < 200; st++) {
        struct fault_decision d = faults_decide(&s, st);
        if (d.kind == FAULT_NONE)
            continue;
        const struct old_decision *o = &old_decisions[n++];
        bad += o->step != st || o->kind != (uint32_t)d.kind || o->node != d.node || o->ns != d.ns ||
               d.arg != 0;
    }
    CHECKF(bad == 0, "%zu of 200 decisions differ from the code before net and restarts", bad);
    const uint32_t kinds[] = {OLD_KINDS, 1u << FAULT_KILL, (1u << FAULT_KILL) | (1u << FAULT_PAUSE),
                              (1u << FAULT_PARTITION) | (1u << FAULT_CLOCK), 1u << FAULT_CLOCK};
    size_t i = 0;
    for (unsigned k = 0; k < 5; k++)
        for (uint64_t seed = 1; seed < 4; seed++)
            for (uint64_t sc = 1; sc < 5; sc++, i++) {
                struct sched t = {.seed = seed,
                                  .fault_kinds = kinds[k],
                                  .fault_rate = 50,
                                  .fault_nodes = (uint32_t)(1 + sc + seed) % 16 + 1};
                CHECKF(sched_push(&t, sc, 0, UINT64_MAX, 0, 5000) == 0, "push");
                uint64_t h = 0xcbf29ce484222325ull;
                for (uint64_t st = 0; st < 100000; st++) {
                    struct fault_decision d = faults_decide(&t, st);
                    if (d.kind == FAULT_NONE)
                        continue;
                    h = fnv(fnv(fnv(fnv(h, st), d.kind), d.node), d.ns);
                }
                CHECKF(h == old_digests[i], "settings %zu (kinds %x, seed %llu, schedule %llu)", i,
                       kinds[k], (unsigned long long)seed, (unsigned long long)sc);
            }
}

/* Invariant 4 for disk: settings without disk decide as the code before it
 * did. These were recorded with that code (faults.c at df46fad, before
 * issue 28's disk faults): the first 200 faults of seed 7, schedule 5 from
 * step 100 (horizon 10,000), rate 1000, 3 nodes, node 2 with a restart,
 * kinds kill,pause,partition,clock,net (what "all" was), as {step, kind,
 * node, ns, arg}; then digests (FNV-1a-64 over step, kind, node, ns and arg
 * of every fault in steps 0..99,999) of 60 more settings with net, some
 * nodes with restarts, made by the loops of test_net_decisions. */
struct net_decision {
    uint64_t step;
    uint32_t kind, node;
    uint64_t ns;
    uint32_t arg;
};
static const struct net_decision net_decisions[200] = {
    {105, 6, 1, 0xfffffffc46536000ull, 0x0u},
    {107, 7, 2, 0x2625a00ull, 0x1403u},
    {132, 6, 2, 0x773594000ull, 0x0u},
    {177, 6, 1, 0xfffffffc46536000ull, 0x0u},
    {178, 6, 3, 0x3b9aca000ull, 0x0u},
    {186, 7, 3, 0x4c4b4000ull, 0x80001u},
    {201, 2, 1, 0x2625a00ull, 0x0u},
    {210, 7, 2, 0x989680ull, 0x4602u},
    {211, 4, 2, 0x1312d00ull, 0x0u},
    {215, 7, 2, 0x2625a000ull, 0x100001u},
    {217, 7, 1, 0x9896800ull, 0xa1404u},
    {241, 2, 2, 0x4c4b4000ull, 0x0u},
    {245, 1, 2, 0x9896800ull, 0x0u},
    {246, 6, 1, 0x3b9aca000ull, 0x0u},
    {259, 2, 1, 0x1312d000ull, 0x0u},
    {278, 1, 3, 0x0ull, 0x0u},
    {299, 4, 3, 0x2625a000ull, 0x0u},
    {310, 7, 2, 0x1312d00ull, 0x5003u},
    {315, 7, 2, 0x989680ull, 0x3c03u},
    {335, 6, 1, 0xfffffff1194d8000ull, 0x0u},
    {357, 4, 1, 0x1312d00ull, 0x0u},
    {397, 4, 2, 0x9896800ull, 0x0u},
    {400, 6, 1, 0xffffffff1194d800ull, 0x0u},
    {412, 4, 1, 0x2625a00ull, 0x0u},
    {425, 2, 2, 0x1312d00ull, 0x0u},
    {455, 4, 2, 0x2625a000ull, 0x0u},
    {467, 7, 2, 0x2625a00ull, 0xa02u},
    {471, 6, 1, 0xffffffff1194d800ull, 0x0u},
    {491, 1, 1, 0x0ull, 0x0u},
    {506, 2, 2, 0x2625a00ull, 0x0u},
    {516, 6, 1, 0xffffffff1194d800ull, 0x0u},
    {527, 4, 2, 0x1312d000ull, 0x0u},
    {541, 7, 2, 0x2625a000ull, 0xa03u},
    {554, 6, 1, 0xee6b2800ull, 0x0u},
    {558, 1, 3, 0x0ull, 0x0u},
    {562, 7, 3, 0x4c4b400ull, 0x20001u},
    {565, 2, 3, 0x1312d00ull, 0x0u},
    {570, 1, 1, 0x0ull, 0x0u},
    {597, 2, 3, 0x4c4b4000ull, 0x0u},
    {618, 6, 1, 0xffffffe2329b0000ull, 0x0u},
    {620, 7, 2, 0x9896800ull, 0x1e03u},
    {621, 4, 1, 0x4c4b4000ull, 0x0u},
    {622, 2, 3, 0x2625a00ull, 0x0u},
    {625, 4, 2, 0x4c4b4000ull, 0x0u},
    {633, 7, 1, 0x989680ull, 0xa4604u},
    {634, 1, 3, 0x0ull, 0x0u},
    {635, 6, 1, 0xffffffe2329b0000ull, 0x0u},
    {675, 6, 1, 0x1dcd65000ull, 0x0u},
    {679, 4, 2, 0x1312d000ull, 0x0u},
    {724, 1, 3, 0x0ull, 0x0u},
    {739, 6, 1, 0xfffffff1194d8000ull, 0x0u},
    {750, 6, 2, 0xfffffff1194d8000ull, 0x0u},
    {772, 2, 2, 0x989680ull, 0x0u},
    {794, 7, 3, 0x989680ull, 0xa4604u},
    {796, 6, 1, 0x773594000ull, 0x0u},
    {818, 1, 2, 0x2625a000ull, 0x0u},
    {819, 4, 2, 0x1312d00ull, 0x0u},
    {831, 1, 2, 0x1312d000ull, 0x0u},
    {833, 4, 2, 0x9896800ull, 0x0u},
    {861, 7, 3, 0x4c4b400ull, 0x1e03u},
    {876, 1, 1, 0x0ull, 0x0u},
    {883, 6, 1, 0x3b9aca00ull, 0x0u},
    {896, 6, 3, 0x1dcd65000ull, 0x0u},
    {898, 4, 2, 0x1312d000ull, 0x0u},
    {902, 1, 1, 0x0ull, 0x0u},
    {910, 1, 2, 0x989680ull, 0x0u},
    {911, 7, 1, 0x9896800ull, 0x1402u},
    {923, 7, 1, 0x1312d00ull, 0x1402u},
    {938, 7, 3, 0x2625a000ull, 0xa1404u},
    {951, 7, 3, 0x1312d000ull, 0xa3c04u},
    {958, 6, 3, 0xfffffffc46536000ull, 0x0u},
    {968, 7, 2, 0x2625a000ull, 0x4603u},
    {971, 6, 2, 0xfffffffe2329b000ull, 0x0u},
    {976, 6, 1, 0xfffffffe2329b000ull, 0x0u},
    {992, 2, 2, 0x2625a00ull, 0x0u},
    {994, 2, 1, 0x1312d000ull, 0x0u},
    {1015, 6, 3, 0x3b9aca000ull, 0x0u},
    {1043, 7, 3, 0x4c4b4000ull, 0x5003u},
    {1048, 2, 2, 0x9896800ull, 0x0u},
    {1054, 6, 1, 0xffffffffc4653600ull, 0x0u},
    {1073, 4, 3, 0x1312d00ull, 0x0u},
    {1115, 7, 3, 0x1312d000ull, 0x80001u},
    {1126, 4, 1, 0x2625a00ull, 0x0u},
    {1136, 6, 2, 0x773594000ull, 0x0u},
    {1146, 2, 3, 0x9896800ull, 0x0u},
    {1162, 1, 1, 0x0ull, 0x0u},
    {1179, 2, 3, 0x2625a000ull, 0x0u},
    {1190, 7, 1, 0x1312d00ull, 0x2803u},
    {1208, 1, 1, 0x0ull, 0x0u},
    {1209, 4, 1, 0x4c4b400ull, 0x0u},
    {1225, 6, 1, 0xffffffe2329b0000ull, 0x0u},
    {1229, 6, 2, 0x3b9aca00ull, 0x0u},
    {1242, 1, 1, 0x0ull, 0x0u},
    {1271, 7, 1, 0x989680ull, 0x4602u},
    {1274, 7, 3, 0x2625a000ull, 0x200001u},
    {1278, 7, 3, 0x4c4b400ull, 0x400001u},
    {1283, 7, 2, 0x1312d000ull, 0x100001u},
    {1303, 6, 1, 0x3b9aca000ull, 0x0u},
    {1307, 1, 1, 0x0ull, 0x0u},
    {1327, 7, 2, 0x1312d00ull, 0x20001u},
    {1328, 1, 1, 0x0ull, 0x0u},
    {1350, 1, 2, 0x2625a000ull, 0x0u},
    {1388, 7, 1, 0x2625a00ull, 0xa3c04u},
    {1389, 2, 2, 0x2625a00ull, 0x0u},
    {1391, 2, 1, 0x9896800ull, 0x0u},
    {1392, 2, 1, 0x1312d00ull, 0x0u},
    {1400, 7, 1, 0x1312d00ull, 0xa3c04u},
    {1421, 2, 2, 0x4c4b4000ull, 0x0u},
    {1446, 2, 1, 0x2625a000ull, 0x0u},
    {1461, 1, 2, 0x2625a000ull, 0x0u},
    {1463, 4, 2, 0x9896800ull, 0x0u},
    {1467, 7, 1, 0x2625a00ull, 0x100001u},
    {1475, 2, 2, 0x989680ull, 0x0u},
    {1491, 6, 1, 0xfffffffe2329b000ull, 0x0u},
    {1494, 4, 1, 0x9896800ull, 0x0u},
    {1501, 1, 2, 0x4c4b400ull, 0x0u},
    {1511, 7, 1, 0x1312d000ull, 0x20001u},
    {1526, 1, 2, 0x4c4b4000ull, 0x0u},
    {1527, 7, 2, 0x989680ull, 0xa4604u},
    {1533, 6, 1, 0xfffffffc46536000ull, 0x0u},
    {1538, 4, 2, 0x2625a00ull, 0x0u},
    {1540, 7, 3, 0x9896800ull, 0x20001u},
    {1598, 4, 3, 0x2625a000ull, 0x0u},
    {1605, 7, 2, 0x1312d00ull, 0xa3c04u},
    {1613, 7, 1, 0x4c4b4000ull, 0x80001u},
    {1615, 2, 2, 0x989680ull, 0x0u},
    {1627, 2, 2, 0x4c4b400ull, 0x0u},
    {1643, 7, 2, 0x2625a00ull, 0x3202u},
    {1652, 6, 1, 0xffffffffc4653600ull, 0x0u},
    {1659, 1, 2, 0x4c4b400ull, 0x0u},
    {1668, 4, 2, 0x1312d000ull, 0x0u},
    {1670, 7, 2, 0x4c4b400ull, 0x40001u},
    {1676, 4, 3, 0x2625a000ull, 0x0u},
    {1689, 6, 3, 0x3b9aca000ull, 0x0u},
    {1691, 7, 1, 0x9896800ull, 0xa3204u},
    {1711, 6, 2, 0xffffffff88ca6c00ull, 0x0u},
    {1719, 4, 3, 0x4c4b400ull, 0x0u},
    {1730, 6, 2, 0xee6b2800ull, 0x0u},
    {1737, 7, 3, 0x9896800ull, 0x1403u},
    {1755, 6, 3, 0xfffffffc46536000ull, 0x0u},
    {1757, 6, 2, 0x1dcd65000ull, 0x0u},
    {1761, 6, 1, 0xee6b28000ull, 0x0u},
    {1766, 6, 3, 0xfffffffc46536000ull, 0x0u},
    {1818, 1, 2, 0x4c4b400ull, 0x0u},
    {1824, 4, 1, 0x989680ull, 0x0u},
    {1827, 4, 1, 0x4c4b400ull, 0x0u},
    {1867, 4, 2, 0x9896800ull, 0x0u},
    {1879, 2, 3, 0x1312d00ull, 0x0u},
    {1880, 6, 2, 0xfffffffc46536000ull, 0x0u},
    {1887, 2, 2, 0x1312d00ull, 0x0u},
    {1891, 2, 1, 0x1312d00ull, 0x0u},
    {1903, 1, 3, 0x0ull, 0x0u},
    {1946, 1, 3, 0x0ull, 0x0u},
    {1956, 4, 2, 0x1312d00ull, 0x0u},
    {1959, 1, 1, 0x0ull, 0x0u},
    {1960, 7, 1, 0x9896800ull, 0x40001u},
    {1970, 6, 2, 0xffffffff1194d800ull, 0x0u},
    {1975, 7, 1, 0x9896800ull, 0xa02u},
    {2041, 1, 2, 0x989680ull, 0x0u},
    {2061, 2, 1, 0x2625a000ull, 0x0u},
    {2071, 2, 1, 0x4c4b400ull, 0x0u},
    {2084, 1, 3, 0x0ull, 0x0u},
    {2119, 6, 1, 0xfffffffe2329b000ull, 0x0u},
    {2134, 1, 1, 0x0ull, 0x0u},
    {2135, 7, 2, 0x1312d000ull, 0x2802u},
    {2148, 4, 2, 0x2625a000ull, 0x0u},
    {2163, 4, 2, 0x9896800ull, 0x0u},
    {2164, 6, 2, 0xee6b28000ull, 0x0u},
    {2175, 7, 2, 0x9896800ull, 0x2802u},
    {2192, 4, 3, 0x9896800ull, 0x0u},
    {2193, 4, 3, 0x4c4b400ull, 0x0u},
    {2213, 4, 1, 0x2625a00ull, 0x0u},
    {2221, 7, 1, 0x4c4b4000ull, 0x3202u},
    {2222, 6, 2, 0x1dcd650000ull, 0x0u},
    {2234, 2, 1, 0x4c4b400ull, 0x0u},
    {2235, 6, 1, 0xffffffffc4653600ull, 0x0u},
    {2239, 1, 3, 0x0ull, 0x0u},
    {2252, 2, 1, 0x1312d000ull, 0x0u},
    {2261, 2, 1, 0x2625a00ull, 0x0u},
    {2281, 4, 2, 0x9896800ull, 0x0u},
    {2298, 7, 3, 0x2625a000ull, 0x5003u},
    {2318, 2, 1, 0x1312d00ull, 0x0u},
    {2333, 7, 2, 0x1312d00ull, 0x3c02u},
    {2354, 7, 2, 0x1312d000ull, 0x4603u},
    {2366, 6, 2, 0x3b9aca00ull, 0x0u},
    {2375, 1, 2, 0x1312d00ull, 0x0u},
    {2382, 6, 1, 0xfffffff1194d8000ull, 0x0u},
    {2385, 1, 2, 0x4c4b400ull, 0x0u},
    {2388, 2, 2, 0x9896800ull, 0x0u},
    {2418, 4, 1, 0x1312d00ull, 0x0u},
    {2425, 1, 3, 0x0ull, 0x0u},
    {2431, 7, 3, 0x1312d000ull, 0x3c03u},
    {2439, 1, 1, 0x0ull, 0x0u},
    {2453, 7, 2, 0x9896800ull, 0x2802u},
    {2454, 7, 2, 0x4c4b400ull, 0xa3204u},
    {2456, 4, 1, 0x2625a000ull, 0x0u},
    {2459, 1, 3, 0x0ull, 0x0u},
    {2476, 7, 1, 0x1312d000ull, 0x3c03u},
    {2484, 2, 1, 0x1312d000ull, 0x0u},
    {2493, 7, 3, 0x1312d00ull, 0x5002u},
};
static const uint64_t net_digests[60] = {
    0x6c7537462b3e652dull, 0x5d6b14e434f175baull, 0x5eaf7a7ef05b316dull, 0x1404837721c641aaull,
    0x39f4a6e5cdd2811eull, 0xac075a14cbec9b2bull, 0x7294066a80155adaull, 0xd412f24ce67b2253ull,
    0x7bdfffee55726740ull, 0x8ebf82102a479b0full, 0xde633aa2195ef1cdull, 0x0308485d8e4ab11full,
    0xfbc1c49763d5a48eull, 0xcc544b10afce4046ull, 0x3f64f561dfb3c99cull, 0x8bd96f19dabf8914ull,
    0xf8ff2494dcced081ull, 0x53c6e6daeca1bc6aull, 0x59636d0f27920372ull, 0xfca9edb35082df5bull,
    0x7827789f1019c13aull, 0x79508da6153377aaull, 0xf8627da3f698ad6dull, 0x4950d7a42f6fb885ull,
    0x2b5bbf189aebb9a2ull, 0x9f0c112c8d8b3b60ull, 0xe8dc614e614b7383ull, 0x22213277319db656ull,
    0xe42fbd67f6a2a829ull, 0x933e2ea235497f24ull, 0x01d0d41bfb93c926ull, 0xab6481f6e13bd4dfull,
    0x06138ea83f829594ull, 0x758f1b6e4275aa05ull, 0x84341cdb463871faull, 0x54964d65ac1be12full,
    0x7446aa70e5bde491ull, 0x77875fd146e0dd49ull, 0xfbe0887a5cce95deull, 0x4065f066b2adf531ull,
    0x4150bbd52f365a8dull, 0x637f28f7c37a5b62ull, 0x003f12d80ec58347ull, 0x64ef04c1b94e2da6ull,
    0xf8b70d1b35532c40ull, 0x718175aaae812b5dull, 0xcd8eba7b729c54e7ull, 0x8778731787b2c40cull,
    0x673190a32382c191ull, 0x10fab4f63606e4eaull, 0x31079e78c84697d4ull, 0x287754935a614359ull,
    0x1e55c1b61a129e6eull, 0x7374b75a40eade4bull, 0xfe9d791ee7f0bbdfull, 0xdb640dde3d71552aull,
    0xf64096be2747dfc9ull, 0xa0575bde81ec0b78ull, 0xe5d1c9d746bb5028ull, 0xc8558de5bf32ec2dull,
};

#define NET_KINDS (OLD_KINDS | (1u << FAULT_NET))

static void test_net_decisions(void)
{
    struct sched s = {.seed = 7,
                      .fault_kinds = NET_KINDS,
                      .fault_rate = 1000,
                      .fault_nodes = 3,
                      .fault_restart = 0x2};
    CHECKF(sched_push(&s, 5, 100, UINT64_MAX, 100, 10000) == 0, "push");
    size_t n = 0, bad = 0;
    for (uint64_t st = 0; n < 200; st++) {
        struct fault_decision d = faults_decide(&s, st);
        if (d.kind == FAULT_NONE)
            continue;
        const struct net_decision *o = &net_decisions[n++];
        bad += o->step != st || o->kind != (uint32_t)d.kind || o->node != d.node || o->ns != d.ns ||
               o->arg != d.arg;
    }
    CHECKF(bad == 0, "%zu of 200 decisions differ from the code before disk", bad);
    const uint32_t kinds[] = {NET_KINDS, 1u << FAULT_NET, (1u << FAULT_KILL) | (1u << FAULT_NET),
                              (1u << FAULT_PAUSE) | (1u << FAULT_CLOCK) | (1u << FAULT_NET),
                              (1u << FAULT_PARTITION) | (1u << FAULT_NET)};
    size_t i = 0;
    for (unsigned k = 0; k < 5; k++)
        for (uint64_t seed = 1; seed < 4; seed++)
            for (uint64_t sc = 1; sc < 5; sc++, i++) {
                uint32_t nodes = (uint32_t)(1 + sc + seed) % 16 + 1;
                struct sched t = {.seed = seed,
                                  .fault_kinds = kinds[k],
                                  .fault_rate = 50,
                                  .fault_nodes = nodes,
                                  .fault_restart = (0x5555u >> (sc - 1)) & ((1u << nodes) - 1)};
                CHECKF(sched_push(&t, sc, 0, UINT64_MAX, 0, 5000) == 0, "push");
                uint64_t h = 0xcbf29ce484222325ull;
                for (uint64_t st = 0; st < 100000; st++) {
                    struct fault_decision d = faults_decide(&t, st);
                    if (d.kind == FAULT_NONE)
                        continue;
                    h = fnv(fnv(fnv(fnv(fnv(h, st), d.kind), d.node), d.ns), d.arg);
                }
                CHECKF(h == net_digests[i], "settings %zu (kinds %x, seed %llu, schedule %llu)", i,
                       kinds[k], (unsigned long long)seed, (unsigned long long)sc);
            }
}

/* Net faults (invariant 2): each mode, its length, percent and delay in
 * their ranges, pure, and at the steps and nodes the same settings with
 * another single kind put theirs (the kind draws nothing else). */
static void test_net(void)
{
    struct sched s = {
        .seed = 3, .fault_kinds = 1u << FAULT_NET, .fault_rate = 1000, .fault_nodes = 4};
    CHECKF(sched_push(&s, 9, 0, UINT64_MAX, 0, 10000) == 0, "push");
    struct sched kill = s;
    kill.fault_kinds = 1u << FAULT_KILL;
    unsigned n = 0, modes = 0, delays = 0, percents = 0, lengths = 0;
    for (uint64_t st = 0; st < 40000; st++) {
        struct fault_decision d = faults_decide(&s, st), again = faults_decide(&s, st);
        struct fault_decision k = faults_decide(&kill, st);
        CHECKF(same(&d, &again), "pure at step %llu", (unsigned long long)st);
        CHECKF(d.kind == (k.kind == FAULT_NONE ? FAULT_NONE : FAULT_NET) && d.node == k.node,
               "net where a kill would be, at %llu", (unsigned long long)st);
        if (d.kind == FAULT_NONE)
            continue;
        n++;
        uint32_t mode = REWIND_NET_MODE(d.arg), pc = REWIND_NET_PERCENT(d.arg),
                 ms = REWIND_NET_DELAY_MS(d.arg);
        CHECKF(d.ns >= FAULT_PAUSE_MIN_NS && d.ns <= FAULT_PAUSE_MAX_NS &&
                   d.ns % FAULT_PAUSE_MIN_NS == 0,
               "net length %llu ns", (unsigned long long)d.ns);
        lengths |= 1u << __builtin_ctzll(d.ns / FAULT_PAUSE_MIN_NS);
        modes |= 1u << mode;
        int pc_ok = pc >= 10 && pc <= 80 && pc % 10 == 0;
        if (mode == REWIND_NET_DELAY) {
            CHECKF(pc == 0 && ms >= 1 && ms <= 128 && !(ms & (ms - 1)), "delay %u ms, %u%%", ms,
                   pc);
            delays |= ms;
        } else if (mode == REWIND_NET_LOSS || mode == REWIND_NET_DUPLICATE) {
            CHECKF(pc_ok && ms == 0, "mode %u: %u%%, %u ms", mode, pc, ms);
            percents |= 1u << (pc / 10);
        } else {
            CHECKF(mode == REWIND_NET_REORDER && pc_ok && ms == 10, "mode %u: %u%%, %u ms", mode,
                   pc, ms);
            percents |= 1u << (pc / 10);
        }
    }
    CHECKF(n > 2000 && n < 6000, "%u net faults at rate 1000 over 40,000 steps (~4,000)", n);
    CHECKF(modes == 0x1e, "every mode drawn: %x", modes);
    CHECKF(delays == 0xff, "every delay, 1 to 128 ms, drawn: %x", delays);
    CHECKF(percents == 0x1fe, "every share, 10 to 80%%, drawn: %x", percents);
    CHECKF(lengths == 0xff, "every length, 10 ms to 1.28 s, drawn: %x", lengths);
    /* Among every kind: net is drawn, and no kind but net and disk has an arg. */
    struct sched all = s;
    all.fault_kinds = FAULT_KINDS_ALL;
    unsigned nets = 0, others = 0;
    for (uint64_t st = 0; st < 40000; st++) {
        struct fault_decision d = faults_decide(&all, st);
        nets += d.kind == FAULT_NET;
        others += d.kind != FAULT_NET && d.kind != FAULT_NONE;
        CHECKF(d.kind == FAULT_NET || d.kind == FAULT_DISK || d.arg == 0, "arg %x of kind %d",
               d.arg, (int)d.kind);
    }
    CHECKF(nets > 400 && others > 4 * nets - 1000, "%u net faults among %u others", nets, others);
}

/* Disk faults (invariant 2): a length of 10 ms..1.28 s in octaves and a mode
 * of enum rewind_disk_mode, each drawn; pure; at the steps and nodes the
 * same settings with another single kind put theirs. */
static void test_disk(void)
{
    struct sched s = {
        .seed = 5, .fault_kinds = 1u << FAULT_DISK, .fault_rate = 1000, .fault_nodes = 5};
    CHECKF(sched_push(&s, 3, 0, UINT64_MAX, 0, 10000) == 0, "push");
    struct sched kill = s, net = s;
    kill.fault_kinds = 1u << FAULT_KILL;
    net.fault_kinds = 1u << FAULT_NET;
    unsigned n = 0, modes = 0, lengths = 0, counts[4] = {0};
    for (uint64_t st = 0; st < 40000; st++) {
        struct fault_decision d = faults_decide(&s, st), again = faults_decide(&s, st);
        struct fault_decision k = faults_decide(&kill, st), nt = faults_decide(&net, st);
        CHECKF(same(&d, &again), "pure at step %llu", (unsigned long long)st);
        CHECKF(d.kind == (k.kind == FAULT_NONE ? FAULT_NONE : FAULT_DISK) && d.node == k.node,
               "disk where a kill would be, at %llu", (unsigned long long)st);
        if (d.kind == FAULT_NONE)
            continue;
        n++;
        CHECKF(d.ns == nt.ns, "the length a net fault would have, at %llu", (unsigned long long)st);
        CHECKF(d.ns >= FAULT_PAUSE_MIN_NS && d.ns <= FAULT_PAUSE_MAX_NS &&
                   d.ns % FAULT_PAUSE_MIN_NS == 0 &&
                   !((d.ns / FAULT_PAUSE_MIN_NS) & (d.ns / FAULT_PAUSE_MIN_NS - 1)),
               "disk length %llu ns", (unsigned long long)d.ns);
        lengths |= 1u << __builtin_ctzll(d.ns / FAULT_PAUSE_MIN_NS);
        CHECKF(d.arg >= REWIND_DISK_EIO && d.arg <= REWIND_DISK_SYNC, "disk mode %u", d.arg);
        modes |= 1u << d.arg;
        counts[d.arg & 3]++;
    }
    CHECKF(n > 2000 && n < 6000, "%u disk faults at rate 1000 over 40,000 steps (~4,000)", n);
    CHECKF(modes == 0xe, "every mode drawn: %x", modes);
    CHECKF(counts[1] > n / 5 && counts[2] > n / 5 && counts[3] > n / 5,
           "modes about even: %u eio, %u enospc, %u sync", counts[1], counts[2], counts[3]);
    CHECKF(lengths == 0xff, "every length, 10 ms to 1.28 s, drawn: %x", lengths);
    /* Among every kind: disk is drawn, with a mode; a restart changes none. */
    struct sched all = s;
    all.fault_kinds = FAULT_KINDS_ALL;
    struct sched allr = all;
    allr.fault_restart = 0x1f;
    unsigned disks = 0;
    for (uint64_t st = 0; st < 40000; st++) {
        struct fault_decision d = faults_decide(&all, st), r = faults_decide(&allr, st);
        disks += d.kind == FAULT_DISK;
        CHECKF(d.kind != FAULT_DISK || (d.arg >= REWIND_DISK_EIO && d.arg <= REWIND_DISK_SYNC),
               "a disk fault's mode among all kinds at %llu", (unsigned long long)st);
        if (d.kind != FAULT_KILL)
            CHECKF(same(&d, &r), "restarts change only kills, at %llu", (unsigned long long)st);
    }
    CHECKF(disks > 400 && disks < 1100, "%u disk faults among every kind (~667)", disks);
    /* The glob is no input of a decision (invariant 5). */
    struct sched g = all;
    snprintf(g.fault_disk_glob, sizeof(g.fault_disk_glob), "/data/*");
    for (uint64_t st = 0; st < 5000; st++) {
        struct fault_decision a = faults_decide(&all, st), b = faults_decide(&g, st);
        CHECKF(same(&a, &b), "the glob draws nothing, at %llu", (unsigned long long)st);
    }
}

/* Invariant 5: a glob the kernel's command line carries as one word. */
static void test_disk_glob(void)
{
    char big[SCHED_DISK_GLOB_MAX + 2];
    memset(big, 'a', sizeof(big));
    big[SCHED_DISK_GLOB_MAX] = 0;
    CHECKF(faults_disk_glob_valid("*") && faults_disk_glob_valid("/data/*.log") &&
               faults_disk_glob_valid("/var/lib/etcd/member/?al/*") && faults_disk_glob_valid(big),
           "globs of 1..%d printable bytes", SCHED_DISK_GLOB_MAX);
    big[SCHED_DISK_GLOB_MAX] = 'a';
    big[SCHED_DISK_GLOB_MAX + 1] = 0;
    const char *bad[] = {"",      "/a b",   "/a\tb",     "/a\"b",       "/a'b",
                         "/a\nb", "/a\x7f", "/\xc3\xa9", "rewind.x=1 *"};
    CHECKF(!faults_disk_glob_valid(big), "%d bytes", SCHED_DISK_GLOB_MAX + 1);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        CHECKF(!faults_disk_glob_valid(bad[i]), "refused: '%s'", bad[i]);
}

/* Restart delays (invariants 2 and 4): a kill of a node with a restart gets
 * a delay of 10 ms..1.28 s; every other decision is the one without
 * restarts. */
static void test_restart(void)
{
    struct sched s = {
        .seed = 11, .fault_kinds = FAULT_KINDS_ALL, .fault_rate = 1000, .fault_nodes = 3};
    CHECKF(sched_push(&s, 5, 0, UINT64_MAX, 0, 10000) == 0, "push");
    struct sched r = s;
    r.fault_restart = 1u << 1; /* node 2 has a restart command */
    unsigned delayed = 0, plain = 0, lengths = 0;
    for (uint64_t st = 0; st < 40000; st++) {
        struct fault_decision a = faults_decide(&s, st), b = faults_decide(&r, st);
        if (a.kind == FAULT_KILL && a.node == 2) {
            CHECKF(a.ns == 0 && b.kind == FAULT_KILL && b.node == 2 && b.arg == 0 &&
                       b.ns >= FAULT_PAUSE_MIN_NS && b.ns <= FAULT_PAUSE_MAX_NS &&
                       b.ns % FAULT_PAUSE_MIN_NS == 0,
                   "a kill of node 2 at %llu: restart in %llu ns", (unsigned long long)st,
                   (unsigned long long)b.ns);
            lengths |= 1u << __builtin_ctzll(b.ns / FAULT_PAUSE_MIN_NS);
            delayed++;
            continue;
        }
        CHECKF(same(&a, &b), "a restart changes nothing but its node's kills, at %llu",
               (unsigned long long)st);
        if (b.kind == FAULT_KILL) {
            CHECKF(b.ns == 0, "a kill of a node without a restart: ns %llu",
                   (unsigned long long)b.ns);
            plain++;
        }
    }
    CHECKF(delayed > 50 && plain > 100, "%u kills with a restart, %u without", delayed, plain);
    CHECKF(lengths == 0xff, "every delay, 10 ms to 1.28 s, drawn: %x", lengths);
    struct sched every = s;
    every.fault_restart = 0x7;
    unsigned kills = 0;
    for (uint64_t st = 0; st < 40000; st++) {
        struct fault_decision d = faults_decide(&every, st), o = faults_decide(&s, st);
        if (d.kind == FAULT_KILL)
            kills += d.ns >= FAULT_PAUSE_MIN_NS && d.node == o.node;
        else
            CHECKF(same(&d, &o), "other kinds unchanged at %llu", (unsigned long long)st);
    }
    CHECKF(kills == delayed + plain, "every node restarts: %u kills, all with a delay", kills);
}

static void test_describe(void)
{
    char buf[200];
    struct fault_decision k = {FAULT_KILL, 2, 0, 0}, p = {FAULT_PAUSE, 1, 40000000, 0};
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
    memset(pay, 0, 8); /* a kill's ns: its restart's delay, 0 without one */
    describe_entry(&e, buf, sizeof(buf));
    CHECKF(!strcmp(buf, "fault kill node 1: SIGKILL to 3 processes"), "%s", buf);
    memcpy(pay, &ns, 8);
    e.rec.aux = REWIND_FAULT_PARTITION | 3u << 8;
    describe_entry(&e, buf, sizeof(buf));
    CHECKF(!strcmp(buf, "fault partition node 3 for 40.000 ms: its link carries nothing"), "%s",
           buf);
    e.rec.aux = REWIND_FAULT_HEAL | 3u << 8;
    describe_entry(&e, buf, sizeof(buf));
    CHECKF(!strcmp(buf, "fault heal node 3: its link carries packets again"), "%s", buf);
    struct fault_decision c = {FAULT_PARTITION, 3, 20000000, 0};
    faults_describe(&c, "n3", buf, sizeof(buf));
    CHECKF(!strcmp(buf, "cut node n3 off the network for 20.000 ms of virtual time"), "%s", buf);
    struct fault_decision back = {FAULT_CLOCK, 1, (uint64_t) - (int64_t)16000000000ll, 0};
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

/* A fault record of kind | node << 8 with payload ns, procs and, when
 * extra_len is 4, one u32 more; the payload in a buffer of exactly its
 * length (ASan sees a read past it). Its words into buf; the record's parts,
 * through the public API, into f (rw_event_fault's return). */
static int fault_words(uint32_t kind, unsigned node, uint64_t ns, uint32_t procs, uint32_t extra,
                       size_t len, char *buf, size_t n, struct rw_fault_event *f)
{
    uint8_t full[16];
    memcpy(full, &ns, 8);
    memcpy(full + 8, &procs, 4);
    memcpy(full + 12, &extra, 4);
    uint8_t *pay = malloc(len ? len : 1);
    memcpy(pay, full, len);
    struct trace_entry e = {0};
    e.rec.kind = REWIND_REC_FAULT;
    e.rec.aux = kind | (uint64_t)node << 8;
    e.payload = pay;
    e.payload_len = (uint32_t)len;
    describe_entry(&e, buf, n);
    struct rw_event ev = {
        .kind = REWIND_REC_FAULT, .aux = e.rec.aux, .payload = pay, .payload_len = len};
    int rc = rw_event_fault(&ev, f);
    free(pay);
    return rc;
}

/* Net faults, restarts and clears in words: the decision's (faults_describe)
 * and the trace's (describe_entry), malformed records, and the public parts. */
static void test_describe_new(void)
{
    char buf[200];
    struct fault_decision k = {FAULT_KILL, 1, 40000000, 0};
    faults_describe(&k, "n1", buf, sizeof(buf));
    CHECKF(!strcmp(buf, "killed node n1 (SIGKILL to each of its processes); its restart command "
                        "runs 40.000 ms later"),
           "%s", buf);
    static const struct {
        uint32_t arg;
        const char *words;
    } net[] = {
        {REWIND_NET_ARG(REWIND_NET_LOSS, 40, 0), "40% of its packets lost"},
        {REWIND_NET_ARG(REWIND_NET_DELAY, 0, 8), "every packet 8 ms late"},
        {REWIND_NET_ARG(REWIND_NET_DUPLICATE, 20, 0), "20% of its packets sent twice"},
        {REWIND_NET_ARG(REWIND_NET_REORDER, 30, 10),
         "30% of its packets sent at once, the rest 10 ms late"},
    };
    struct rw_fault_event f;
    for (size_t i = 0; i < sizeof(net) / sizeof(net[0]); i++) {
        char want[200];
        struct fault_decision d = {FAULT_NET, 2, 160000000, net[i].arg};
        faults_describe(&d, "n2", buf, sizeof(buf));
        snprintf(want, sizeof(want), "degraded node n2's link for 160.000 ms: %s", net[i].words);
        CHECKF(!strcmp(buf, want), "%s", buf);
        CHECKF(fault_words(REWIND_FAULT_NET, 2, 160000000, 1, net[i].arg, 16, buf, sizeof(buf),
                           &f) == 0,
               "a net record's parts");
        snprintf(want, sizeof(want), "fault net node 2 for 160.000 ms: %s", net[i].words);
        CHECKF(!strcmp(buf, want), "%s", buf);
        CHECKF(f.net_mode && !strcmp(f.kind, "net") && f.node == 2 && f.ns == 160000000 &&
                   f.procs == 1 && f.net_percent == REWIND_NET_PERCENT(net[i].arg) &&
                   f.net_delay_ms == REWIND_NET_DELAY_MS(net[i].arg) && f.leader_pid == 0,
               "net parts");
    }
    fault_words(REWIND_FAULT_NET, 2, 1, 1, net[0].arg, 16, buf, sizeof(buf), &f);
    CHECKF(!strcmp(f.net_mode, "loss"), "%s", f.net_mode);
    fault_words(REWIND_FAULT_NET, 2, 1, 1, net[1].arg, 16, buf, sizeof(buf), &f);
    CHECKF(!strcmp(f.net_mode, "delay"), "%s", f.net_mode);
    fault_words(REWIND_FAULT_NET, 2, 1, 1, net[2].arg, 16, buf, sizeof(buf), &f);
    CHECKF(!strcmp(f.net_mode, "duplicate"), "%s", f.net_mode);
    fault_words(REWIND_FAULT_NET, 2, 1, 1, net[3].arg, 16, buf, sizeof(buf), &f);
    CHECKF(!strcmp(f.net_mode, "reorder"), "%s", f.net_mode);

    CHECKF(fault_words(REWIND_FAULT_KILL, 1, 40000000, 2, 0, 12, buf, sizeof(buf), &f) == 0 &&
               !strcmp(buf, "fault kill node 1: SIGKILL to 2 processes; restart in 40.000 ms") &&
               !strcmp(f.kind, "kill") && f.ns == 40000000 && !f.net_mode,
           "%s", buf);
    CHECKF(fault_words(REWIND_FAULT_KILL, 1, 0, 1, 0, 12, buf, sizeof(buf), &f) == 0 &&
               !strcmp(buf, "fault kill node 1: SIGKILL to 1 process"),
           "%s", buf);
    CHECKF(fault_words(REWIND_FAULT_CLEAR, 2, 0, 1, 0, 12, buf, sizeof(buf), &f) == 0 &&
               !strcmp(buf, "fault clear node 2: its link is clean again") &&
               !strcmp(f.kind, "clear"),
           "%s", buf);
    CHECKF(fault_words(REWIND_FAULT_RESTART, 1, 0, 1, 345, 16, buf, sizeof(buf), &f) == 0 &&
               !strcmp(buf, "fault restart node 1: its restart command runs as pid 345") &&
               !strcmp(f.kind, "restart") && f.leader_pid == 345 && !f.net_mode,
           "%s", buf);
    /* Malformed: too short for the kind, a net arg the ABI does not allow. */
    static const struct {
        uint32_t kind, arg;
        size_t len;
        const char *what;
    } bad[] = {
        {REWIND_FAULT_NET, REWIND_NET_ARG(REWIND_NET_LOSS, 40, 0), 12, "a net record of 12 bytes"},
        {REWIND_FAULT_NET, REWIND_NET_ARG(REWIND_NET_LOSS, 40, 0), 15, "a net record of 15 bytes"},
        {REWIND_FAULT_RESTART, 345, 12, "a restart record of 12 bytes"},
        {REWIND_FAULT_RESTART, 345, 15, "a restart record of 15 bytes"},
        {REWIND_FAULT_CLEAR, 0, 11, "a clear record of 11 bytes"},
        {REWIND_FAULT_KILL, 0, 0, "a kill record without payload"},
        {REWIND_FAULT_NET, REWIND_NET_ARG(0, 40, 0), 16, "net mode 0"},
        {REWIND_FAULT_NET, REWIND_NET_ARG(5, 40, 0), 16, "net mode 5"},
        {REWIND_FAULT_NET, REWIND_NET_ARG(REWIND_NET_LOSS, 101, 0), 16, "101%"},
        {REWIND_FAULT_NET, REWIND_NET_ARG(REWIND_NET_DELAY, 0, 1001), 16, "a delay of 1001 ms"},
        {REWIND_FAULT_MEND + 1, 0, 16, "kind 12"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        int rc = fault_words(bad[i].kind, 1, 0, 1, bad[i].arg, bad[i].len, buf, sizeof(buf), &f);
        CHECKF(rc < 0 && strstr(buf, "malformed") && !f.kind, "%s: %s", bad[i].what, buf);
    }
    /* A longer payload than the kind needs is read as far as the kind goes. */
    CHECKF(fault_words(REWIND_FAULT_CLEAR, 2, 0, 1, 77, 16, buf, sizeof(buf), &f) == 0 &&
               !strcmp(buf, "fault clear node 2: its link is clean again"),
           "%s", buf);
    struct rw_event out = {.kind = REWIND_REC_OUTPUT};
    CHECKF(rw_event_fault(&out, &f) < 0 && !f.kind, "an output event is no fault");
    CHECKF(!strcmp(faults_kind_name(REWIND_FAULT_NET), "net") &&
               !strcmp(faults_kind_name(REWIND_FAULT_CLEAR), "clear") &&
               !strcmp(faults_kind_name(REWIND_FAULT_RESTART), "restart") &&
               !strcmp(faults_kind_name(REWIND_FAULT_DISK), "disk") &&
               !strcmp(faults_kind_name(REWIND_FAULT_MEND), "mend") &&
               !faults_kind_name(REWIND_FAULT_MEND + 1) && !faults_kind_name(0),
           "kind names");
    CHECKF(faults_net_words(REWIND_NET_ARG(REWIND_NET_REORDER, 100, 1000), buf, sizeof(buf)) == 0,
           "the ABI's largest percent and delay");
}

/* Disk faults and mends in words: the decision's (faults_describe) and the
 * trace's (describe_entry) say the same per mode; malformed records (short
 * payloads in buffers of exactly their length, modes the ABI lacks); the
 * public parts. */
static void test_describe_disk(void)
{
    static const struct {
        uint32_t mode;
        const char *name, *words;
    } modes[] = {
        {REWIND_DISK_EIO, "eio", "its writes and syncs get EIO"},
        {REWIND_DISK_ENOSPC, "enospc", "its writes get ENOSPC (no space)"},
        {REWIND_DISK_SYNC, "sync", "its syncs get EIO"},
    };
    char buf[200], want[200];
    struct rw_fault_event f;
    for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
        struct fault_decision d = {FAULT_DISK, 1, 160000000, modes[i].mode};
        faults_describe(&d, "n1", buf, sizeof(buf));
        snprintf(want, sizeof(want), "made node n1's disk fail for 160.000 ms: %s", modes[i].words);
        CHECKF(!strcmp(buf, want), "%s", buf);
        faults_describe(&d, NULL, buf, sizeof(buf));
        snprintf(want, sizeof(want), "made node 1's disk fail for 160.000 ms: %s", modes[i].words);
        CHECKF(!strcmp(buf, want), "%s", buf);
        CHECKF(faults_disk_words(modes[i].mode, buf, sizeof(buf)) == 0 &&
                   !strcmp(buf, modes[i].words) &&
                   !strcmp(faults_disk_mode_name(modes[i].mode), modes[i].name),
               "%s", modes[i].name);
        CHECKF(fault_words(REWIND_FAULT_DISK, 1, 160000000, 2, modes[i].mode, 16, buf, sizeof(buf),
                           &f) == 0,
               "a disk record's parts");
        snprintf(want, sizeof(want), "fault disk node 1 for 160.000 ms: %s", modes[i].words);
        CHECKF(!strcmp(buf, want), "%s", buf);
        CHECKF(f.kind && !strcmp(f.kind, "disk") && f.node == 1 && f.ns == 160000000 &&
                   f.procs == 2 && f.disk_mode && !strcmp(f.disk_mode, modes[i].name) &&
                   !f.net_mode && !f.leader_pid && !f.net_percent && !f.net_delay_ms,
               "disk parts");
    }
    CHECKF(fault_words(REWIND_FAULT_MEND, 3, 0, 1, 0, 12, buf, sizeof(buf), &f) == 0 &&
               !strcmp(buf, "fault mend node 3: its disk works again") && !strcmp(f.kind, "mend") &&
               f.node == 3 && !f.disk_mode && !f.net_mode,
           "%s", buf);
    CHECKF(fault_words(REWIND_FAULT_MEND, 3, 0, 1, 9, 16, buf, sizeof(buf), &f) == 0 &&
               !strcmp(buf, "fault mend node 3: its disk works again") && !f.disk_mode,
           "a mend's longer payload: %s", buf);
    /* A decision with a mode the ABI lacks still says something. */
    struct fault_decision odd = {FAULT_DISK, 2, 10000000, 7};
    faults_describe(&odd, "n2", buf, sizeof(buf));
    CHECKF(!strcmp(buf, "made node n2's disk fail for 10.000 ms: mode 7"), "%s", buf);
    CHECKF(faults_disk_words(0, buf, sizeof(buf)) < 0 && !buf[0] &&
               faults_disk_words(4, buf, sizeof(buf)) < 0 && !buf[0] &&
               faults_disk_words(0xffffffffu, buf, sizeof(buf)) < 0 && !buf[0] &&
               !faults_disk_mode_name(0) && !faults_disk_mode_name(4) &&
               !faults_disk_mode_name(0xffffffffu),
           "modes the ABI lacks");
    static const struct {
        uint32_t kind, arg;
        size_t len;
        const char *what;
    } bad[] = {
        {REWIND_FAULT_DISK, REWIND_DISK_EIO, 0, "a disk record without payload"},
        {REWIND_FAULT_DISK, REWIND_DISK_EIO, 8, "a disk record of 8 bytes"},
        {REWIND_FAULT_DISK, REWIND_DISK_EIO, 12, "a disk record of 12 bytes"},
        {REWIND_FAULT_DISK, REWIND_DISK_SYNC, 15, "a disk record of 15 bytes"},
        {REWIND_FAULT_DISK, 0, 16, "disk mode 0"},
        {REWIND_FAULT_DISK, REWIND_DISK_SYNC + 1, 16, "disk mode 4"},
        {REWIND_FAULT_DISK, 0x100 | REWIND_DISK_EIO, 16, "disk mode 0x101"},
        {REWIND_FAULT_DISK, 0xffffffffu, 16, "disk mode 0xffffffff"},
        {REWIND_FAULT_MEND, 0, 11, "a mend record of 11 bytes"},
        {REWIND_FAULT_MEND, 0, 0, "a mend record without payload"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        int rc =
            fault_words(bad[i].kind, 1, 40000000, 1, bad[i].arg, bad[i].len, buf, sizeof(buf), &f);
        CHECKF(rc < 0 && strstr(buf, "malformed") && !f.kind && !f.disk_mode, "%s: %s", bad[i].what,
               buf);
    }
    /* Node out of range and stray aux bits, for disk too. */
    CHECKF(fault_words(REWIND_FAULT_DISK, 0, 1, 1, REWIND_DISK_EIO, 16, buf, sizeof(buf), &f) < 0 &&
               fault_words(REWIND_FAULT_DISK, 17, 1, 1, REWIND_DISK_EIO, 16, buf, sizeof(buf), &f) <
                   0,
           "disk at node 0 or 17");
}

static void test_spec(void)
{
    char *argv[] = {"/bin/true", NULL}, *env[] = {NULL};
    struct sched none = {0}, f = {.fault_kinds = 1u << FAULT_KILL, .fault_rate = 3};
    struct run_spec sp = {
        .argv = argv, .env = env, .cwd = "/", .mem_mib = 256, .quantum_ns = 5000, .perturb = &none};
    char *plain = spec_to_json(&sp);
    CHECKF(plain && !strstr(plain, "faults"), "no faults key without faults");
    struct sched nk = {.fault_kinds = (1u << FAULT_KILL) | (1u << FAULT_NET), .fault_rate = 2};
    sp.perturb = &nk;
    char *net = spec_to_json(&sp);
    CHECKF(net && strstr(net, "\"faults\":{\"kinds\":\"kill,net\",\"rate\":2}"), "%s", net);
    json_t *nj = json_loads(net, 0, NULL);
    struct sched nback = {0};
    CHECKF(nj && spec_parse_perturb(nj, &nback) == 0 && nback.fault_kinds == nk.fault_kinds,
           "net round trip");
    json_decref(nj);
    CHECKF(!strstr(net, "disk_glob"), "no disk_glob without disk: %s", net);
    free(net);
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
                         "{\"faults\":{\"kinds\":\"all\",\"rate\":2}}",
                         "{\"faults\":{\"kinds\":\"net,kill\",\"rate\":2}}",
                         "{\"faults\":{\"kinds\":\"restart\",\"rate\":2}}"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        json_t *b = json_loads(bad[i], 0, NULL);
        CHECKF(b && spec_parse_perturb(b, &back) < 0 && !back.fault_kinds, "refused: %s", bad[i]);
        json_decref(b);
    }
    free(plain);
    free(with);
}

/* The spec's "disk_glob" (invariant 5): in the faults object exactly when
 * the kinds have disk, read back, and refused when malformed. */
static void test_spec_disk(void)
{
    char *argv[] = {"/bin/true", NULL}, *env[] = {NULL};
    struct run_spec sp = {.argv = argv, .env = env, .cwd = "/", .mem_mib = 256, .quantum_ns = 5000};
    struct sched dk = {.fault_kinds = (1u << FAULT_KILL) | (1u << FAULT_DISK), .fault_rate = 4};
    snprintf(dk.fault_disk_glob, sizeof(dk.fault_disk_glob), "/data/*.wal");
    sp.perturb = &dk;
    char *disk = spec_to_json(&sp);
    CHECKF(disk && strstr(disk, "\"faults\":{\"disk_glob\":\"/data/*.wal\",\"kinds\":\"kill,disk\","
                                "\"rate\":4}"),
           "%s", disk);
    json_t *dj = json_loads(disk, 0, NULL);
    struct sched dback = {0};
    snprintf(dback.fault_disk_glob, sizeof(dback.fault_disk_glob), "stale");
    CHECKF(dj && spec_parse_perturb(dj, &dback) == 0 && dback.fault_kinds == dk.fault_kinds &&
               dback.fault_rate == 4 && !strcmp(dback.fault_disk_glob, "/data/*.wal"),
           "disk round trip");
    json_decref(dj);
    free(disk);
    struct sched star = dk;
    snprintf(star.fault_disk_glob, sizeof(star.fault_disk_glob), "*");
    sp.perturb = &star;
    char *sj = spec_to_json(&sp);
    json_t *sjj = sj ? json_loads(sj, 0, NULL) : NULL;
    CHECKF(sj && strstr(sj, "\"disk_glob\":\"*\"") && sjj && spec_parse_perturb(sjj, &dback) == 0 &&
               !strcmp(dback.fault_disk_glob, "*"),
           "the default glob is written: %s", sj ? sj : "(null)");
    json_decref(sjj);
    free(sj);
    /* A spec without disk leaves no glob behind from an earlier parse. */
    json_t *nd = json_loads("{\"faults\":{\"kinds\":\"kill\",\"rate\":2}}", 0, NULL);
    CHECKF(nd && spec_parse_perturb(nd, &dback) == 0 && !dback.fault_disk_glob[0] &&
               dback.fault_kinds == 1u << FAULT_KILL,
           "no glob without disk");
    json_decref(nd);
    struct sched back = {0};
    const char *bad[] = {"{\"faults\":{\"kinds\":\"kill,disk\",\"rate\":2}}",
                         "{\"faults\":{\"disk_glob\":\"*\",\"kinds\":\"kill\",\"rate\":2}}",
                         "{\"faults\":{\"disk_glob\":\"\",\"kinds\":\"disk\",\"rate\":2}}",
                         "{\"faults\":{\"disk_glob\":\"/a b\",\"kinds\":\"disk\",\"rate\":2}}",
                         "{\"faults\":{\"disk_glob\":\"/a'b\",\"kinds\":\"disk\",\"rate\":2}}",
                         "{\"faults\":{\"disk_glob\":\"/a\\\"b\",\"kinds\":\"disk\",\"rate\":2}}",
                         "{\"faults\":{\"disk_glob\":\"/a\\nb\",\"kinds\":\"disk\",\"rate\":2}}",
                         "{\"faults\":{\"disk_glob\":\"/\\u00e9\",\"kinds\":\"disk\",\"rate\":2}}",
                         "{\"faults\":{\"disk_glob\":7,\"kinds\":\"disk\",\"rate\":2}}",
                         "{\"faults\":{\"disk_glob\":null,\"kinds\":\"disk\",\"rate\":2}}",
                         "{\"faults\":{\"disk_glob\":\"*\",\"kinds\":\"disk,kill\",\"rate\":2}}",
                         "{\"faults\":{\"disk_glob\":\"*\",\"kinds\":\"disk\",\"rate\":2,\"x\":1}}",
                         "{\"faults\":{\"disk_glob\":\"*\",\"kinds\":\"all\",\"rate\":2}}"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        json_t *b = json_loads(bad[i], 0, NULL);
        CHECKF(b && spec_parse_perturb(b, &back) < 0 && !back.fault_kinds, "refused: %s", bad[i]);
        json_decref(b);
    }
    /* A glob of 200 bytes is read, one of 201 refused. */
    char long_spec[400], g[SCHED_DISK_GLOB_MAX + 2];
    memset(g, 'a', sizeof(g));
    g[SCHED_DISK_GLOB_MAX] = 0;
    snprintf(long_spec, sizeof(long_spec),
             "{\"faults\":{\"disk_glob\":\"%s\",\"kinds\":\"disk\",\"rate\":2}}", g);
    json_t *lj = json_loads(long_spec, 0, NULL);
    CHECKF(lj && spec_parse_perturb(lj, &back) == 0 && strlen(back.fault_disk_glob) == 200,
           "a glob of 200 bytes");
    json_decref(lj);
    g[SCHED_DISK_GLOB_MAX] = 'a';
    g[SCHED_DISK_GLOB_MAX + 1] = 0;
    snprintf(long_spec, sizeof(long_spec),
             "{\"faults\":{\"disk_glob\":\"%s\",\"kinds\":\"disk\",\"rate\":2}}", g);
    lj = json_loads(long_spec, 0, NULL);
    CHECKF(lj && spec_parse_perturb(lj, &back) < 0, "a glob of 201 bytes");
    json_decref(lj);
}

int main(void)
{
    test_parse();
    test_decisions();
    test_old_decisions();
    test_net_decisions();
    test_net();
    test_disk();
    test_disk_glob();
    test_restart();
    test_describe();
    test_describe_new();
    test_describe_disk();
    test_spec();
    test_spec_disk();
    return unit_done();
}
