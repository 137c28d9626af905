/*
 * faults_test: faults as schedule decisions (src/input/faults.h): the kinds
 * list, the decisions' purity, windows and rate (invariants 1-3), net, disk
 * and split faults, power cuts and restart delays in their ranges
 * (invariant 2), the decisions of settings without them pinned to the code
 * before them and of lists with power pinned (invariant 4), the disk glob
 * (invariant 5), the spec's "faults" both ways and ids of runs without
 * faults unchanged, and the trace's words for a fault record
 * (src/trace/describe.h).
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
    CHECKF(!strcmp(buf, "kill,pause,partition,clock,net,disk,split,power"), "all: %s", buf);
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
               k == (FAULT_KINDS_ALL & ~(1u << FAULT_DISK) & ~(1u << FAULT_SPLIT) &
                     ~(1u << FAULT_POWER)),
           "every kind but disk, split and power");
    CHECKF(faults_parse("clock,disk,net,partition,pause,kill", &k, why, sizeof(why)) == 0 &&
               k == (FAULT_KINDS_ALL & ~(1u << FAULT_SPLIT) & ~(1u << FAULT_POWER)),
           "every kind but split and power");
    faults_format(k, buf, sizeof(buf));
    CHECKF(!strcmp(buf, "kill,pause,partition,clock,net,disk"), "all before split: %s", buf);
    CHECKF(faults_parse("split,clock,disk,net,partition,pause,kill", &k, why, sizeof(why)) == 0 &&
               k == (FAULT_KINDS_ALL & ~(1u << FAULT_POWER)),
           "every kind but power");
    faults_format(k, buf, sizeof(buf));
    CHECKF(!strcmp(buf, "kill,pause,partition,clock,net,disk,split"), "all before power: %s", buf);
    CHECKF(faults_parse("power,split,clock,disk,net,partition,pause,kill", &k, why, sizeof(why)) ==
                   0 &&
               k == FAULT_KINDS_ALL,
           "every kind is all");
    CHECKF(faults_parse("power", &k, why, sizeof(why)) == 0 && k == 1u << FAULT_POWER, "power");
    CHECKF(faults_parse("power,kill", &k, why, sizeof(why)) == 0 &&
               k == ((1u << FAULT_KILL) | (1u << FAULT_POWER)),
           "power,kill");
    faults_format(k, buf, sizeof(buf));
    CHECKF(!strcmp(buf, "kill,power"), "power after kill: %s", buf);
    CHECKF(faults_parse("power,split,disk", &k, why, sizeof(why)) == 0 &&
               k == ((1u << FAULT_DISK) | (1u << FAULT_SPLIT) | (1u << FAULT_POWER)),
           "power,split,disk");
    faults_format(k, buf, sizeof(buf));
    CHECKF(!strcmp(buf, "disk,split,power"), "power last: %s", buf);
    CHECKF(faults_parse("power,power", &k, why, sizeof(why)) < 0 && strstr(why, "twice"),
           "power twice");
    CHECKF(faults_parse("lost", &k, why, sizeof(why)) < 0, "lost is a record, not a fault");
    CHECKF(faults_parse("powers", &k, why, sizeof(why)) < 0 &&
               faults_parse("powe", &k, why, sizeof(why)) < 0 &&
               faults_parse("kill,Power", &k, why, sizeof(why)) < 0,
           "only power's own name");
    CHECKF(faults_parse("split", &k, why, sizeof(why)) == 0 && k == 1u << FAULT_SPLIT, "split");
    CHECKF(faults_parse("split,disk,kill", &k, why, sizeof(why)) == 0 &&
               k == ((1u << FAULT_KILL) | (1u << FAULT_DISK) | (1u << FAULT_SPLIT)),
           "split,disk,kill");
    faults_format(k, buf, sizeof(buf));
    CHECKF(!strcmp(buf, "kill,disk,split"), "split last: %s", buf);
    CHECKF(faults_parse("split,split", &k, why, sizeof(why)) < 0 && strstr(why, "twice"),
           "split twice");
    CHECKF(faults_parse("join", &k, why, sizeof(why)) < 0, "join is a record, not a fault");
    CHECKF(faults_parse("splits", &k, why, sizeof(why)) < 0 &&
               faults_parse("spli", &k, why, sizeof(why)) < 0,
           "only split's own name");
    CHECKF(faults_parse("mend", &k, why, sizeof(why)) < 0, "mend is a record, not a fault");
    CHECKF(faults_parse("disk,disk", &k, why, sizeof(why)) < 0 && strstr(why, "twice"),
           "disk twice");
    CHECKF(faults_parse("clear", &k, why, sizeof(why)) < 0, "clear is a record, not a fault");
    CHECKF(faults_parse("restart", &k, why, sizeof(why)) < 0, "restart is a record, not a fault");
    CHECKF(faults_parse("heal", &k, why, sizeof(why)) < 0, "heal is a record, not a fault");
    CHECKF(faults_parse("all", &k, why, sizeof(why)) == 0 && k == FAULT_KINDS_ALL, "all");
    CHECKF(faults_parse("kill,kill", &k, why, sizeof(why)) < 0 && strstr(why, "twice"), "twice");
    CHECKF(faults_parse("nuke", &k, why, sizeof(why)) < 0 && strstr(why, "'nuke'") &&
               strstr(why, "clock, net, disk, split, power (or all)"),
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

/* The loops of the pins from split on (test_disk_decisions' for disk):
 * the first 200 faults of seed 7, schedule 5 from step 100 (horizon
 * 10,000), rate 1000, 3 nodes, node 2 with a restart, kinds `kinds`,
 * against first; then digests (FNV-1a-64 over step, kind, node, ns and arg
 * of every fault in steps 0..99,999) of 60 settings: `kinds`; `added`
 * alone; kill and `added`; pause, clock, net, disk and `added`; partition
 * and `added`; each with seeds 1..3 and schedules 1..4, some nodes with
 * restarts. what: the code the pins come from. */
static void check_pins(uint32_t kinds0, uint32_t added, uint32_t mixed,
                       const struct net_decision *first, const uint64_t *digests, const char *what)
{
    struct sched s = {.seed = 7,
                      .fault_kinds = kinds0,
                      .fault_rate = 1000,
                      .fault_nodes = 3,
                      .fault_restart = 0x2};
    CHECKF(sched_push(&s, 5, 100, UINT64_MAX, 100, 10000) == 0, "push");
    size_t n = 0, bad = 0;
    for (uint64_t st = 0; n < 200; st++) {
        struct fault_decision d = faults_decide(&s, st);
        if (d.kind == FAULT_NONE)
            continue;
        const struct net_decision *o = &first[n++];
        bad += o->step != st || o->kind != (uint32_t)d.kind || o->node != d.node || o->ns != d.ns ||
               o->arg != d.arg;
    }
    CHECKF(bad == 0, "%zu of 200 decisions differ from %s", bad, what);
    const uint32_t kinds[] = {kinds0, added, (1u << FAULT_KILL) | added, mixed,
                              (1u << FAULT_PARTITION) | added};
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
                CHECKF(h == digests[i], "%s: settings %zu (kinds %x, seed %llu, schedule %llu)",
                       what, i, kinds[k], (unsigned long long)seed, (unsigned long long)sc);
            }
}

static void test_net_decisions(void)
{
    check_pins(NET_KINDS, 1u << FAULT_NET,
               (1u << FAULT_PAUSE) | (1u << FAULT_CLOCK) | (1u << FAULT_NET), net_decisions,
               net_digests, "the code before disk");
}

/* Invariant 4 for split: settings without split decide as the code before
 * it did. These were recorded with that code (faults.c at 46eef8d, before
 * issue 28's split faults): the first 200 faults of seed 7, schedule 5 from
 * step 100 (horizon 10,000), rate 1000, 3 nodes, node 2 with a restart,
 * kinds kill,pause,partition,clock,net,disk (what "all" was), as {step,
 * kind, node, ns, arg}; then digests (FNV-1a-64 over step, kind, node, ns
 * and arg of every fault in steps 0..99,999) of 60 more settings with disk,
 * some nodes with restarts, made by the loops of test_disk_decisions. */
static const struct net_decision disk_decisions[200] = {
    {105, 2, 1, 0x9896800ull, 0x0u},
    {107, 1, 2, 0x2625a00ull, 0x0u},
    {132, 10, 2, 0x1312d000ull, 0x3u},
    {177, 2, 1, 0x9896800ull, 0x0u},
    {178, 4, 3, 0x9896800ull, 0x0u},
    {186, 1, 3, 0x0ull, 0x0u},
    {201, 2, 1, 0x2625a00ull, 0x0u},
    {210, 6, 2, 0x3b9aca00ull, 0x0u},
    {211, 7, 2, 0x1312d00ull, 0xa3204u},
    {215, 1, 2, 0x2625a000ull, 0x0u},
    {217, 6, 1, 0x3b9aca000ull, 0x0u},
    {241, 10, 2, 0x4c4b4000ull, 0x1u},
    {245, 1, 2, 0x9896800ull, 0x0u},
    {246, 2, 1, 0x9896800ull, 0x0u},
    {259, 2, 1, 0x1312d000ull, 0x0u},
    {278, 7, 3, 0x1312d00ull, 0xa0a04u},
    {299, 10, 3, 0x2625a000ull, 0x3u},
    {310, 10, 2, 0x1312d00ull, 0x3u},
    {315, 2, 2, 0x989680ull, 0x0u},
    {335, 1, 1, 0x0ull, 0x0u},
    {357, 1, 1, 0x0ull, 0x0u},
    {397, 1, 2, 0x9896800ull, 0x0u},
    {400, 6, 1, 0xffffffff1194d800ull, 0x0u},
    {412, 6, 1, 0xee6b2800ull, 0x0u},
    {425, 7, 2, 0x1312d00ull, 0x1402u},
    {455, 7, 2, 0x2625a000ull, 0xa5004u},
    {467, 6, 2, 0xee6b2800ull, 0x0u},
    {471, 7, 1, 0x2625a00ull, 0x1e03u},
    {491, 7, 1, 0x4c4b400ull, 0xa3204u},
    {506, 2, 2, 0x2625a00ull, 0x0u},
    {516, 1, 1, 0x0ull, 0x0u},
    {527, 4, 2, 0x1312d000ull, 0x0u},
    {541, 4, 2, 0x2625a000ull, 0x0u},
    {554, 7, 1, 0x2625a00ull, 0xa3204u},
    {558, 6, 3, 0xffffffff1194d800ull, 0x0u},
    {562, 4, 3, 0x4c4b400ull, 0x0u},
    {565, 6, 3, 0x77359400ull, 0x0u},
    {570, 6, 1, 0x1dcd65000ull, 0x0u},
    {597, 7, 3, 0x4c4b4000ull, 0x5003u},
    {618, 7, 1, 0x4c4b4000ull, 0x2803u},
    {620, 2, 2, 0x9896800ull, 0x0u},
    {621, 1, 1, 0x0ull, 0x0u},
    {622, 7, 3, 0x2625a00ull, 0x2802u},
    {625, 2, 2, 0x4c4b4000ull, 0x0u},
    {633, 4, 1, 0x989680ull, 0x0u},
    {634, 2, 3, 0x2625a000ull, 0x0u},
    {635, 7, 1, 0x4c4b4000ull, 0x800001u},
    {675, 2, 1, 0x4c4b400ull, 0x0u},
    {679, 6, 2, 0xfffffff88ca6c000ull, 0x0u},
    {724, 1, 3, 0x0ull, 0x0u},
    {739, 4, 1, 0x2625a000ull, 0x0u},
    {750, 4, 2, 0x2625a000ull, 0x0u},
    {772, 7, 2, 0x989680ull, 0xa02u},
    {794, 7, 3, 0x989680ull, 0xa4604u},
    {796, 10, 1, 0x1312d000ull, 0x3u},
    {818, 4, 2, 0x2625a000ull, 0x0u},
    {819, 10, 2, 0x1312d00ull, 0x1u},
    {831, 1, 2, 0x1312d000ull, 0x0u},
    {833, 2, 2, 0x9896800ull, 0x0u},
    {861, 7, 3, 0x4c4b400ull, 0x1e03u},
    {876, 6, 1, 0x773594000ull, 0x0u},
    {883, 2, 1, 0x989680ull, 0x0u},
    {896, 4, 3, 0x4c4b400ull, 0x0u},
    {898, 4, 2, 0x1312d000ull, 0x0u},
    {902, 7, 1, 0x4c4b4000ull, 0xa02u},
    {910, 2, 2, 0x989680ull, 0x0u},
    {911, 4, 1, 0x9896800ull, 0x0u},
    {923, 7, 1, 0x1312d00ull, 0x1402u},
    {938, 7, 3, 0x2625a000ull, 0xa1404u},
    {951, 6, 3, 0xfffffff88ca6c000ull, 0x0u},
    {958, 6, 3, 0xfffffffc46536000ull, 0x0u},
    {968, 1, 2, 0x2625a000ull, 0x0u},
    {971, 1, 2, 0x4c4b400ull, 0x0u},
    {976, 4, 1, 0x4c4b400ull, 0x0u},
    {992, 4, 2, 0x2625a00ull, 0x0u},
    {994, 10, 1, 0x1312d000ull, 0x3u},
    {1015, 4, 3, 0x9896800ull, 0x0u},
    {1043, 1, 3, 0x0ull, 0x0u},
    {1048, 6, 2, 0xfffffffc46536000ull, 0x0u},
    {1054, 2, 1, 0x989680ull, 0x0u},
    {1073, 10, 3, 0x1312d00ull, 0x3u},
    {1115, 1, 3, 0x0ull, 0x0u},
    {1126, 2, 1, 0x2625a00ull, 0x0u},
    {1136, 7, 2, 0x1312d000ull, 0x2802u},
    {1146, 4, 3, 0x9896800ull, 0x0u},
    {1162, 1, 1, 0x0ull, 0x0u},
    {1179, 2, 3, 0x2625a000ull, 0x0u},
    {1190, 6, 1, 0xffffffff88ca6c00ull, 0x0u},
    {1208, 2, 1, 0x4c4b4000ull, 0x0u},
    {1209, 7, 1, 0x4c4b400ull, 0x2802u},
    {1225, 6, 1, 0xffffffe2329b0000ull, 0x0u},
    {1229, 4, 2, 0x989680ull, 0x0u},
    {1242, 2, 1, 0x1312d00ull, 0x0u},
    {1271, 7, 1, 0x989680ull, 0x4602u},
    {1274, 1, 3, 0x0ull, 0x0u},
    {1278, 6, 3, 0x1dcd65000ull, 0x0u},
    {1283, 10, 2, 0x1312d000ull, 0x2u},
    {1303, 6, 1, 0x3b9aca000ull, 0x0u},
    {1307, 7, 1, 0x1312d000ull, 0x20001u},
    {1327, 6, 2, 0xffffffff88ca6c00ull, 0x0u},
    {1328, 7, 1, 0x4c4b4000ull, 0xa02u},
    {1350, 4, 2, 0x2625a000ull, 0x0u},
    {1388, 7, 1, 0x2625a00ull, 0xa3c04u},
    {1389, 1, 2, 0x2625a00ull, 0x0u},
    {1391, 7, 1, 0x9896800ull, 0x80001u},
    {1392, 6, 1, 0xffffffff88ca6c00ull, 0x0u},
    {1400, 10, 1, 0x1312d00ull, 0x1u},
    {1421, 7, 2, 0x4c4b4000ull, 0x1e02u},
    {1446, 2, 1, 0x2625a000ull, 0x0u},
    {1461, 2, 2, 0x2625a000ull, 0x0u},
    {1463, 2, 2, 0x9896800ull, 0x0u},
    {1467, 10, 1, 0x2625a00ull, 0x1u},
    {1475, 4, 2, 0x989680ull, 0x0u},
    {1491, 7, 1, 0x4c4b400ull, 0x1403u},
    {1494, 2, 1, 0x9896800ull, 0x0u},
    {1501, 6, 2, 0x1dcd65000ull, 0x0u},
    {1511, 1, 1, 0x0ull, 0x0u},
    {1526, 10, 2, 0x4c4b4000ull, 0x2u},
    {1527, 10, 2, 0x989680ull, 0x1u},
    {1533, 6, 1, 0xfffffffc46536000ull, 0x0u},
    {1538, 2, 2, 0x2625a00ull, 0x0u},
    {1540, 7, 3, 0x9896800ull, 0x20001u},
    {1598, 6, 3, 0xee6b28000ull, 0x0u},
    {1605, 4, 2, 0x1312d00ull, 0x0u},
    {1613, 7, 1, 0x4c4b4000ull, 0x80001u},
    {1615, 6, 2, 0x3b9aca00ull, 0x0u},
    {1627, 6, 2, 0x1dcd65000ull, 0x0u},
    {1643, 1, 2, 0x2625a00ull, 0x0u},
    {1652, 1, 1, 0x0ull, 0x0u},
    {1659, 4, 2, 0x4c4b400ull, 0x0u},
    {1668, 10, 2, 0x1312d000ull, 0x3u},
    {1670, 2, 2, 0x4c4b400ull, 0x0u},
    {1676, 4, 3, 0x2625a000ull, 0x0u},
    {1689, 7, 3, 0x9896800ull, 0x10001u},
    {1691, 1, 1, 0x0ull, 0x0u},
    {1711, 2, 2, 0x1312d00ull, 0x0u},
    {1719, 10, 3, 0x4c4b400ull, 0x1u},
    {1730, 6, 2, 0xee6b2800ull, 0x0u},
    {1737, 1, 3, 0x0ull, 0x0u},
    {1755, 1, 3, 0x0ull, 0x0u},
    {1757, 1, 2, 0x4c4b400ull, 0x0u},
    {1761, 7, 1, 0x2625a000ull, 0xa3c04u},
    {1766, 6, 3, 0xfffffffc46536000ull, 0x0u},
    {1818, 10, 2, 0x4c4b400ull, 0x3u},
    {1824, 4, 1, 0x989680ull, 0x0u},
    {1827, 2, 1, 0x4c4b400ull, 0x0u},
    {1867, 10, 2, 0x9896800ull, 0x3u},
    {1879, 6, 3, 0xffffffff88ca6c00ull, 0x0u},
    {1880, 7, 2, 0x9896800ull, 0x3c03u},
    {1887, 1, 2, 0x1312d00ull, 0x0u},
    {1891, 7, 1, 0x1312d00ull, 0x800001u},
    {1903, 7, 3, 0x1312d00ull, 0x10001u},
    {1946, 7, 3, 0x9896800ull, 0xa02u},
    {1956, 1, 2, 0x1312d00ull, 0x0u},
    {1959, 2, 1, 0x989680ull, 0x0u},
    {1960, 6, 1, 0x3b9aca000ull, 0x0u},
    {1970, 7, 2, 0x2625a00ull, 0x1e03u},
    {1975, 6, 1, 0x3b9aca000ull, 0x0u},
    {2041, 1, 2, 0x989680ull, 0x0u},
    {2061, 4, 1, 0x2625a000ull, 0x0u},
    {2071, 7, 1, 0x4c4b400ull, 0xa1404u},
    {2084, 7, 3, 0x9896800ull, 0x4602u},
    {2119, 7, 1, 0x4c4b400ull, 0xa0a04u},
    {2134, 10, 1, 0x9896800ull, 0x1u},
    {2135, 1, 2, 0x1312d000ull, 0x0u},
    {2148, 10, 2, 0x2625a000ull, 0x3u},
    {2163, 10, 2, 0x9896800ull, 0x1u},
    {2164, 6, 2, 0xee6b28000ull, 0x0u},
    {2175, 7, 2, 0x9896800ull, 0x2802u},
    {2192, 2, 3, 0x9896800ull, 0x0u},
    {2193, 7, 3, 0x4c4b400ull, 0x1e02u},
    {2213, 10, 1, 0x2625a00ull, 0x1u},
    {2221, 6, 1, 0x1dcd650000ull, 0x0u},
    {2222, 1, 2, 0x4c4b4000ull, 0x0u},
    {2234, 10, 1, 0x4c4b400ull, 0x2u},
    {2235, 7, 1, 0x989680ull, 0x5002u},
    {2239, 1, 3, 0x0ull, 0x0u},
    {2252, 2, 1, 0x1312d000ull, 0x0u},
    {2261, 2, 1, 0x2625a00ull, 0x0u},
    {2281, 6, 2, 0x3b9aca000ull, 0x0u},
    {2298, 2, 3, 0x2625a000ull, 0x0u},
    {2318, 4, 1, 0x1312d00ull, 0x0u},
    {2333, 10, 2, 0x1312d00ull, 0x2u},
    {2354, 7, 2, 0x1312d000ull, 0x4603u},
    {2366, 10, 2, 0x989680ull, 0x2u},
    {2375, 4, 2, 0x1312d00ull, 0x0u},
    {2382, 7, 1, 0x2625a000ull, 0x20001u},
    {2385, 2, 2, 0x4c4b400ull, 0x0u},
    {2388, 7, 2, 0x9896800ull, 0xa2804u},
    {2418, 1, 1, 0x0ull, 0x0u},
    {2425, 6, 3, 0xfffffff88ca6c000ull, 0x0u},
    {2431, 6, 3, 0x773594000ull, 0x0u},
    {2439, 2, 1, 0x2625a000ull, 0x0u},
    {2453, 6, 2, 0xfffffffc46536000ull, 0x0u},
    {2454, 2, 2, 0x4c4b400ull, 0x0u},
    {2456, 2, 1, 0x2625a000ull, 0x0u},
    {2459, 7, 3, 0x1312d000ull, 0x20001u},
    {2476, 10, 1, 0x1312d000ull, 0x2u},
    {2484, 7, 1, 0x1312d000ull, 0x1402u},
    {2493, 2, 3, 0x1312d00ull, 0x0u},
};
static const uint64_t disk_digests[60] = {
    0x7e91c68f01a2b58aull, 0xa7a7757484bfdcf1ull, 0x645c7ddb35348c4aull, 0xa973d77d8ad995cfull,
    0x48ff1543f13e8dd7ull, 0x937e8ca9ae4f6200ull, 0x7dc4cf0ab4dc6179ull, 0xef35f4721651255eull,
    0xeb20f9654d749fbbull, 0xa990465fa82b13a9ull, 0x1530e014654d0ec3ull, 0x5d0d2e59ca807db8ull,
    0xc8c939cbda13468eull, 0x75bf24214501e512ull, 0xf247eccd26a07114ull, 0x4fcd58dbcfcadd71ull,
    0xfc079e4dde37f8e5ull, 0x82d622a24da403f4ull, 0xe737ad99bef3760aull, 0xac9fcb56596f6ce5ull,
    0x87423faa4008f0b7ull, 0xa9b7b2a921351a3eull, 0x71c7fb4dd756729dull, 0x4753a2aab94f7efaull,
    0x99340e8e39949837ull, 0xc7d5f460a77b0fe0ull, 0x670f6a2f19eaf077ull, 0xad0ad4bb7e8cf8e9ull,
    0xc6dbc8ea447729d9ull, 0x3985ffaf0ac65b7full, 0x3e7a28b451e6803dull, 0x2982e33bb4fd67afull,
    0x7ad04014ab375be0ull, 0x057ee5c492838b94ull, 0x390bcd2d9b0064a0ull, 0x9f36a82c399e78e0ull,
    0xab8d38c4755ef85dull, 0xb7133029897cbf59ull, 0xd0a0d7473325ec39ull, 0xa270ff76c4d9ede3ull,
    0x88a558f4c4ccb7faull, 0x53923070f3b3862dull, 0xad99e5d14b1eb1c0ull, 0xbfddd6c85a030d3eull,
    0xdfd48f667f06c2cbull, 0x5634dbb867ba9504ull, 0x9758addf4b588f6aull, 0x13d3c1f792d65bafull,
    0xe6a568be4afe2604ull, 0xa5cdae0c2f79d2aeull, 0x2876e0a106636130ull, 0x241a26f4e5427cbaull,
    0x11f5f04eff0c6b6aull, 0x448b74155ae3c844ull, 0xa37f34b5d7bbee54ull, 0xce5fb89921abc5aaull,
    0x69cc677ad43158c1ull, 0xb6417252a90f43f9ull, 0xfde18072015f74deull, 0x957bd7f5f02bc8baull,
};

#define DISK_KINDS (NET_KINDS | (1u << FAULT_DISK))

static void test_disk_decisions(void)
{
    check_pins(DISK_KINDS, 1u << FAULT_DISK,
               (1u << FAULT_PAUSE) | (1u << FAULT_CLOCK) | (1u << FAULT_NET) | (1u << FAULT_DISK),
               disk_decisions, disk_digests, "the code before split");
}

/* Invariant 4 for power: settings without power decide as the code before
 * it did. These were recorded with that code (faults.c with split, before
 * power cuts): check_pins' loops with the kinds
 * kill,pause,partition,clock,net,disk,split (what "all" was) and split
 * added. */
static const struct net_decision split_decisions[200] = {
    {105, 1, 1, 0x0ull, 0x0u},
    {107, 1, 2, 0x2625a00ull, 0x0u},
    {132, 4, 2, 0x1312d000ull, 0x0u},
    {177, 6, 1, 0xfffffffc46536000ull, 0x0u},
    {178, 6, 3, 0x3b9aca000ull, 0x0u},
    {186, 7, 3, 0x4c4b4000ull, 0x80001u},
    {201, 4, 1, 0x2625a00ull, 0x0u},
    {210, 1, 2, 0x989680ull, 0x0u},
    {211, 2, 2, 0x1312d00ull, 0x0u},
    {215, 10, 2, 0x2625a000ull, 0x3u},
    {217, 2, 1, 0x9896800ull, 0x0u},
    {241, 7, 2, 0x4c4b4000ull, 0xa3204u},
    {245, 6, 2, 0x3b9aca000ull, 0x0u},
    {246, 7, 1, 0x9896800ull, 0x3203u},
    {259, 10, 1, 0x1312d000ull, 0x1u},
    {278, 7, 3, 0x1312d00ull, 0xa0a04u},
    {299, 1, 3, 0x0ull, 0x0u},
    {310, 7, 2, 0x1312d00ull, 0x5003u},
    {315, 12, 1, 0x989680ull, 0x3u},
    {335, 6, 1, 0xfffffff1194d8000ull, 0x0u},
    {357, 1, 1, 0x0ull, 0x0u},
    {397, 7, 2, 0x9896800ull, 0xa3204u},
    {400, 12, 1, 0x2625a00ull, 0x3u},
    {412, 2, 1, 0x2625a00ull, 0x0u},
    {425, 6, 2, 0x77359400ull, 0x0u},
    {455, 6, 2, 0xfffffff1194d8000ull, 0x0u},
    {467, 7, 2, 0x2625a00ull, 0xa02u},
    {471, 10, 1, 0x2625a00ull, 0x1u},
    {491, 1, 1, 0x0ull, 0x0u},
    {506, 10, 2, 0x2625a00ull, 0x3u},
    {516, 12, 1, 0x2625a00ull, 0x5u},
    {527, 7, 2, 0x1312d000ull, 0xa3204u},
    {541, 10, 2, 0x2625a000ull, 0x2u},
    {554, 7, 1, 0x2625a00ull, 0xa3204u},
    {558, 7, 3, 0x2625a00ull, 0x3c02u},
    {562, 7, 3, 0x4c4b400ull, 0x20001u},
    {565, 4, 3, 0x1312d00ull, 0x0u},
    {570, 10, 1, 0x4c4b400ull, 0x1u},
    {597, 2, 3, 0x4c4b4000ull, 0x0u},
    {618, 10, 1, 0x4c4b4000ull, 0x2u},
    {620, 2, 2, 0x9896800ull, 0x0u},
    {621, 6, 1, 0x1dcd650000ull, 0x0u},
    {622, 7, 3, 0x2625a00ull, 0x2802u},
    {625, 1, 2, 0x4c4b4000ull, 0x0u},
    {633, 1, 1, 0x0ull, 0x0u},
    {634, 2, 3, 0x2625a000ull, 0x0u},
    {635, 2, 1, 0x4c4b4000ull, 0x0u},
    {675, 1, 1, 0x0ull, 0x0u},
    {679, 10, 2, 0x1312d000ull, 0x1u},
    {724, 12, 2, 0x2625a00ull, 0x2u},
    {739, 12, 2, 0x2625a000ull, 0x6u},
    {750, 2, 2, 0x2625a000ull, 0x0u},
    {772, 7, 2, 0x989680ull, 0xa02u},
    {794, 12, 2, 0x989680ull, 0x6u},
    {796, 2, 1, 0x1312d000ull, 0x0u},
    {818, 6, 2, 0xee6b28000ull, 0x0u},
    {819, 10, 2, 0x1312d00ull, 0x1u},
    {831, 6, 2, 0x773594000ull, 0x0u},
    {833, 2, 2, 0x9896800ull, 0x0u},
    {861, 6, 3, 0x1dcd65000ull, 0x0u},
    {876, 6, 1, 0x773594000ull, 0x0u},
    {883, 6, 1, 0x3b9aca00ull, 0x0u},
    {896, 1, 3, 0x0ull, 0x0u},
    {898, 10, 2, 0x1312d000ull, 0x1u},
    {902, 1, 1, 0x0ull, 0x0u},
    {910, 1, 2, 0x989680ull, 0x0u},
    {911, 7, 1, 0x9896800ull, 0x1402u},
    {923, 1, 1, 0x0ull, 0x0u},
    {938, 2, 3, 0x2625a000ull, 0x0u},
    {951, 7, 3, 0x1312d000ull, 0xa3c04u},
    {958, 6, 3, 0xfffffffc46536000ull, 0x0u},
    {968, 7, 2, 0x2625a000ull, 0x4603u},
    {971, 12, 2, 0x4c4b400ull, 0x6u},
    {976, 7, 1, 0x4c4b400ull, 0xa1404u},
    {992, 2, 2, 0x2625a00ull, 0x0u},
    {994, 6, 1, 0x773594000ull, 0x0u},
    {1015, 12, 1, 0x9896800ull, 0x5u},
    {1043, 7, 3, 0x4c4b4000ull, 0x5003u},
    {1048, 6, 2, 0xfffffffc46536000ull, 0x0u},
    {1054, 6, 1, 0xffffffffc4653600ull, 0x0u},
    {1073, 6, 3, 0x77359400ull, 0x0u},
    {1115, 4, 3, 0x1312d000ull, 0x0u},
    {1126, 4, 1, 0x2625a00ull, 0x0u},
    {1136, 6, 2, 0x773594000ull, 0x0u},
    {1146, 12, 3, 0x9896800ull, 0x4u},
    {1162, 12, 2, 0x2625a000ull, 0x6u},
    {1179, 2, 3, 0x2625a000ull, 0x0u},
    {1190, 12, 1, 0x1312d00ull, 0x3u},
    {1208, 1, 1, 0x0ull, 0x0u},
    {1209, 1, 1, 0x0ull, 0x0u},
    {1225, 12, 1, 0x4c4b4000ull, 0x3u},
    {1229, 7, 2, 0x989680ull, 0xa1e04u},
    {1242, 6, 1, 0xffffffff88ca6c00ull, 0x0u},
    {1271, 4, 1, 0x989680ull, 0x0u},
    {1274, 4, 3, 0x2625a000ull, 0x0u},
    {1278, 6, 3, 0x1dcd65000ull, 0x0u},
    {1283, 1, 2, 0x1312d000ull, 0x0u},
    {1303, 4, 1, 0x9896800ull, 0x0u},
    {1307, 4, 1, 0x1312d000ull, 0x0u},
    {1327, 1, 2, 0x1312d00ull, 0x0u},
    {1328, 2, 1, 0x4c4b4000ull, 0x0u},
    {1350, 4, 2, 0x2625a000ull, 0x0u},
    {1388, 6, 1, 0xee6b2800ull, 0x0u},
    {1389, 1, 2, 0x2625a00ull, 0x0u},
    {1391, 7, 1, 0x9896800ull, 0x80001u},
    {1392, 10, 1, 0x1312d00ull, 0x2u},
    {1400, 4, 1, 0x1312d00ull, 0x0u},
    {1421, 7, 2, 0x4c4b4000ull, 0x1e02u},
    {1446, 10, 1, 0x2625a000ull, 0x3u},
    {1461, 6, 2, 0xfffffff1194d8000ull, 0x0u},
    {1463, 10, 2, 0x9896800ull, 0x3u},
    {1467, 6, 1, 0xee6b2800ull, 0x0u},
    {1475, 12, 2, 0x989680ull, 0x2u},
    {1491, 12, 1, 0x4c4b400ull, 0x1u},
    {1494, 1, 1, 0x0ull, 0x0u},
    {1501, 7, 2, 0x4c4b400ull, 0xa1404u},
    {1511, 7, 1, 0x1312d000ull, 0x20001u},
    {1526, 7, 2, 0x4c4b4000ull, 0xa0a04u},
    {1527, 2, 2, 0x989680ull, 0x0u},
    {1533, 4, 1, 0x9896800ull, 0x0u},
    {1538, 10, 2, 0x2625a00ull, 0x1u},
    {1540, 7, 3, 0x9896800ull, 0x20001u},
    {1598, 10, 3, 0x2625a000ull, 0x3u},
    {1605, 7, 2, 0x1312d00ull, 0xa3c04u},
    {1613, 2, 1, 0x4c4b4000ull, 0x0u},
    {1615, 12, 2, 0x989680ull, 0x6u},
    {1627, 6, 2, 0x1dcd65000ull, 0x0u},
    {1643, 4, 2, 0x2625a00ull, 0x0u},
    {1652, 6, 1, 0xffffffffc4653600ull, 0x0u},
    {1659, 2, 2, 0x4c4b400ull, 0x0u},
    {1668, 2, 2, 0x1312d000ull, 0x0u},
    {1670, 4, 2, 0x4c4b400ull, 0x0u},
    {1676, 12, 2, 0x2625a000ull, 0x2u},
    {1689, 4, 3, 0x9896800ull, 0x0u},
    {1691, 7, 1, 0x9896800ull, 0xa3204u},
    {1711, 6, 2, 0xffffffff88ca6c00ull, 0x0u},
    {1719, 12, 1, 0x4c4b400ull, 0x1u},
    {1730, 12, 3, 0x2625a00ull, 0x4u},
    {1737, 10, 3, 0x9896800ull, 0x2u},
    {1755, 4, 3, 0x9896800ull, 0x0u},
    {1757, 7, 2, 0x4c4b400ull, 0x4603u},
    {1761, 2, 1, 0x2625a000ull, 0x0u},
    {1766, 7, 3, 0x9896800ull, 0x20001u},
    {1818, 6, 2, 0x1dcd65000ull, 0x0u},
    {1824, 10, 1, 0x989680ull, 0x1u},
    {1827, 10, 1, 0x4c4b400ull, 0x2u},
    {1867, 12, 2, 0x9896800ull, 0x6u},
    {1879, 12, 2, 0x1312d00ull, 0x2u},
    {1880, 6, 2, 0xfffffffc46536000ull, 0x0u},
    {1887, 1, 2, 0x1312d00ull, 0x0u},
    {1891, 7, 1, 0x1312d00ull, 0x800001u},
    {1903, 6, 3, 0x77359400ull, 0x0u},
    {1946, 10, 3, 0x9896800ull, 0x1u},
    {1956, 4, 2, 0x1312d00ull, 0x0u},
    {1959, 2, 1, 0x989680ull, 0x0u},
    {1960, 2, 1, 0x9896800ull, 0x0u},
    {1970, 2, 2, 0x2625a00ull, 0x0u},
    {1975, 12, 2, 0x9896800ull, 0x2u},
    {2041, 10, 2, 0x989680ull, 0x3u},
    {2061, 12, 2, 0x2625a000ull, 0x6u},
    {2071, 6, 1, 0xfffffffe2329b000ull, 0x0u},
    {2084, 12, 2, 0x9896800ull, 0x6u},
    {2119, 12, 2, 0x4c4b400ull, 0x2u},
    {2134, 4, 1, 0x9896800ull, 0x0u},
    {2135, 4, 2, 0x1312d000ull, 0x0u},
    {2148, 2, 2, 0x2625a000ull, 0x0u},
    {2163, 1, 2, 0x9896800ull, 0x0u},
    {2164, 6, 2, 0xee6b28000ull, 0x0u},
    {2175, 10, 2, 0x9896800ull, 0x1u},
    {2192, 10, 3, 0x9896800ull, 0x1u},
    {2193, 7, 3, 0x4c4b400ull, 0x1e02u},
    {2213, 1, 1, 0x0ull, 0x0u},
    {2221, 7, 1, 0x4c4b4000ull, 0x3202u},
    {2222, 4, 2, 0x4c4b4000ull, 0x0u},
    {2234, 1, 1, 0x0ull, 0x0u},
    {2235, 1, 1, 0x0ull, 0x0u},
    {2239, 7, 3, 0x4c4b400ull, 0x400001u},
    {2252, 2, 1, 0x1312d000ull, 0x0u},
    {2261, 12, 3, 0x2625a00ull, 0x4u},
    {2281, 6, 2, 0x3b9aca000ull, 0x0u},
    {2298, 10, 3, 0x2625a000ull, 0x2u},
    {2318, 7, 1, 0x1312d00ull, 0x1e03u},
    {2333, 1, 2, 0x1312d00ull, 0x0u},
    {2354, 10, 2, 0x1312d000ull, 0x3u},
    {2366, 12, 2, 0x989680ull, 0x2u},
    {2375, 6, 2, 0x77359400ull, 0x0u},
    {2382, 6, 1, 0xfffffff1194d8000ull, 0x0u},
    {2385, 10, 2, 0x4c4b400ull, 0x3u},
    {2388, 4, 2, 0x9896800ull, 0x0u},
    {2418, 6, 1, 0x77359400ull, 0x0u},
    {2425, 6, 3, 0xfffffff88ca6c000ull, 0x0u},
    {2431, 4, 3, 0x1312d000ull, 0x0u},
    {2439, 2, 1, 0x2625a000ull, 0x0u},
    {2453, 12, 3, 0x9896800ull, 0x4u},
    {2454, 7, 2, 0x4c4b400ull, 0xa3204u},
    {2456, 10, 1, 0x2625a000ull, 0x3u},
    {2459, 7, 3, 0x1312d000ull, 0x20001u},
    {2476, 12, 1, 0x1312d000ull, 0x5u},
    {2484, 10, 1, 0x1312d000ull, 0x3u},
    {2493, 12, 3, 0x1312d00ull, 0x4u},
};
static const uint64_t split_digests[60] = {
    0xcdf97fb8ec4f651full, 0x56f260af825a0a32ull, 0x1e3c164d3d314354ull, 0x0d42d57615e30964ull,
    0x2a217af5a3b8881dull, 0x9eb5f24b88bec893ull, 0x1206d4247d51c09bull, 0x1e8dfe5eb7bde2a0ull,
    0x21d745f8c5367265ull, 0x98a8180cd9810c5cull, 0xd915b38a0ee6ba3eull, 0x1f3781eb984fb36cull,
    0x56285743296a25faull, 0x91a20ccc05e654b8ull, 0x899ac9418f624181ull, 0x72fc14f0ef04bfc9ull,
    0xc0d976a67493fc98ull, 0x57338a25246065d9ull, 0x4f0d8ef834ab5cafull, 0xa5c3f29d37818a96ull,
    0xe06608cac5fd2113ull, 0x0b5ffdece01b1650ull, 0xd6ee5790e67fc32cull, 0x60e5e107f3e08302ull,
    0x02101c13816ef20dull, 0x58a2fcc4f1c8eed1ull, 0xfd1c1355b94b6ddbull, 0x814acfc37609f7c9ull,
    0x9da2a1d49d886b82ull, 0x795fb405709886a4ull, 0x1693d4c135bfa05full, 0x691dd60b37eab8feull,
    0xe32ea72570d4067full, 0x6c871c25f6b0b80full, 0xd5086c25ec977deaull, 0x00e43d789a123ebeull,
    0xb1f11c8f1aba9501ull, 0x1559b7f3a26eab63ull, 0x4d2fab5a4b1e2186ull, 0xcfe33d155f581f25ull,
    0x443748e53e0c23e7ull, 0xfbd6088383c433d4ull, 0xc9846be15cc89b31ull, 0x2e9a7d7a4e3ebc06ull,
    0xa1c0134bfe13641dull, 0x6037f2f08abadbbbull, 0x8c29c1de0e3dcf52ull, 0x6acfb67e7cbb4fdeull,
    0x3f90427a409f314eull, 0x955323cfeb66aa43ull, 0x8e54841095bb9418ull, 0xceae9a38387b5c8eull,
    0x5fd110219c94a0c5ull, 0x5bf3f219f48ce357ull, 0x22e124e8f7e92f3aull, 0x29fab1ea1a7485dbull,
    0x0bfc011d2c2e2026ull, 0x548ae80ee1f441a6ull, 0x1df6f796a1ffc1c4ull, 0x4f55aca59d2e5b18ull,
};

#define SPLIT_KINDS (DISK_KINDS | (1u << FAULT_SPLIT))

static void test_split_decisions(void)
{
    check_pins(SPLIT_KINDS, 1u << FAULT_SPLIT,
               (1u << FAULT_PAUSE) | (1u << FAULT_CLOCK) | (1u << FAULT_NET) | (1u << FAULT_DISK) |
                   (1u << FAULT_SPLIT),
               split_decisions, split_digests, "the code before power");
}

/* Lists with power, pinned: check_pins' loops with the kinds
 * kill,pause,partition,clock,net,disk,split,power and power added,
 * recorded with the code that added power cuts. A power cut is drawn as a
 * kill is (test_power), so these pin the kind's place in the list: a
 * change here changes every schedule of a spec with power. */
static const struct net_decision power_decisions[200] = {
    {105, 2, 1, 0x9896800ull, 0x0u},
    {107, 4, 2, 0x2625a00ull, 0x0u},
    {132, 14, 2, 0x1312d000ull, 0x0u},
    {177, 14, 1, 0x0ull, 0x0u},
    {178, 1, 3, 0x0ull, 0x0u},
    {186, 7, 3, 0x4c4b4000ull, 0x80001u},
    {201, 14, 1, 0x0ull, 0x0u},
    {210, 10, 2, 0x989680ull, 0x2u},
    {211, 1, 2, 0x1312d00ull, 0x0u},
    {215, 7, 2, 0x2625a000ull, 0x100001u},
    {217, 6, 1, 0x3b9aca000ull, 0x0u},
    {241, 6, 2, 0xffffffe2329b0000ull, 0x0u},
    {245, 12, 3, 0x9896800ull, 0x4u},
    {246, 14, 1, 0x0ull, 0x0u},
    {259, 2, 1, 0x1312d000ull, 0x0u},
    {278, 4, 3, 0x1312d00ull, 0x0u},
    {299, 2, 3, 0x2625a000ull, 0x0u},
    {310, 6, 2, 0x77359400ull, 0x0u},
    {315, 10, 2, 0x989680ull, 0x3u},
    {335, 1, 1, 0x0ull, 0x0u},
    {357, 1, 1, 0x0ull, 0x0u},
    {397, 1, 2, 0x9896800ull, 0x0u},
    {400, 14, 1, 0x0ull, 0x0u},
    {412, 6, 1, 0xee6b2800ull, 0x0u},
    {425, 1, 2, 0x1312d00ull, 0x0u},
    {455, 12, 2, 0x2625a000ull, 0x2u},
    {467, 14, 2, 0x2625a00ull, 0x0u},
    {471, 1, 1, 0x0ull, 0x0u},
    {491, 12, 2, 0x4c4b400ull, 0x6u},
    {506, 14, 2, 0x2625a00ull, 0x0u},
    {516, 1, 1, 0x0ull, 0x0u},
    {527, 7, 2, 0x1312d000ull, 0xa3204u},
    {541, 1, 2, 0x2625a000ull, 0x0u},
    {554, 7, 1, 0x2625a00ull, 0xa3204u},
    {558, 10, 3, 0x2625a00ull, 0x2u},
    {562, 4, 3, 0x4c4b400ull, 0x0u},
    {565, 6, 3, 0x77359400ull, 0x0u},
    {570, 14, 1, 0x0ull, 0x0u},
    {597, 12, 1, 0x4c4b4000ull, 0x5u},
    {618, 1, 1, 0x0ull, 0x0u},
    {620, 10, 2, 0x9896800ull, 0x3u},
    {621, 12, 3, 0x4c4b4000ull, 0x4u},
    {622, 4, 3, 0x2625a00ull, 0x0u},
    {625, 10, 2, 0x4c4b4000ull, 0x2u},
    {633, 4, 1, 0x989680ull, 0x0u},
    {634, 10, 3, 0x2625a000ull, 0x2u},
    {635, 1, 1, 0x0ull, 0x0u},
    {675, 10, 1, 0x4c4b400ull, 0x1u},
    {679, 2, 2, 0x1312d000ull, 0x0u},
    {724, 1, 3, 0x0ull, 0x0u},
    {739, 12, 2, 0x2625a000ull, 0x6u},
    {750, 12, 2, 0x2625a000ull, 0x2u},
    {772, 12, 2, 0x989680ull, 0x2u},
    {794, 12, 2, 0x989680ull, 0x6u},
    {796, 14, 1, 0x0ull, 0x0u},
    {818, 12, 1, 0x2625a000ull, 0x3u},
    {819, 2, 2, 0x1312d00ull, 0x0u},
    {831, 4, 2, 0x1312d000ull, 0x0u},
    {833, 6, 2, 0xfffffffc46536000ull, 0x0u},
    {861, 7, 3, 0x4c4b400ull, 0x1e03u},
    {876, 6, 1, 0x773594000ull, 0x0u},
    {883, 10, 1, 0x989680ull, 0x3u},
    {896, 7, 3, 0x4c4b400ull, 0xa5004u},
    {898, 12, 1, 0x1312d000ull, 0x1u},
    {902, 4, 1, 0x4c4b4000ull, 0x0u},
    {910, 10, 2, 0x989680ull, 0x3u},
    {911, 7, 1, 0x9896800ull, 0x1402u},
    {923, 4, 1, 0x1312d00ull, 0x0u},
    {938, 12, 3, 0x2625a000ull, 0x4u},
    {951, 14, 3, 0x0ull, 0x0u},
    {958, 10, 3, 0x9896800ull, 0x2u},
    {968, 4, 2, 0x2625a000ull, 0x0u},
    {971, 12, 2, 0x4c4b400ull, 0x6u},
    {976, 4, 1, 0x4c4b400ull, 0x0u},
    {992, 12, 3, 0x2625a00ull, 0x4u},
    {994, 14, 1, 0x0ull, 0x0u},
    {1015, 7, 3, 0x9896800ull, 0x10001u},
    {1043, 1, 3, 0x0ull, 0x0u},
    {1048, 2, 2, 0x9896800ull, 0x0u},
    {1054, 6, 1, 0xffffffffc4653600ull, 0x0u},
    {1073, 14, 3, 0x0ull, 0x0u},
    {1115, 7, 3, 0x1312d000ull, 0x80001u},
    {1126, 6, 1, 0xee6b2800ull, 0x0u},
    {1136, 12, 2, 0x1312d000ull, 0x2u},
    {1146, 1, 3, 0x0ull, 0x0u},
    {1162, 7, 1, 0x2625a000ull, 0x2802u},
    {1179, 6, 3, 0xee6b28000ull, 0x0u},
    {1190, 2, 1, 0x1312d00ull, 0x0u},
    {1208, 2, 1, 0x4c4b4000ull, 0x0u},
    {1209, 7, 1, 0x4c4b400ull, 0x2802u},
    {1225, 2, 1, 0x4c4b4000ull, 0x0u},
    {1229, 1, 2, 0x989680ull, 0x0u},
    {1242, 10, 1, 0x1312d00ull, 0x2u},
    {1271, 4, 1, 0x989680ull, 0x0u},
    {1274, 4, 3, 0x2625a000ull, 0x0u},
    {1278, 10, 3, 0x4c4b400ull, 0x3u},
    {1283, 14, 2, 0x1312d000ull, 0x0u},
    {1303, 6, 1, 0x3b9aca000ull, 0x0u},
    {1307, 1, 1, 0x0ull, 0x0u},
    {1327, 2, 2, 0x1312d00ull, 0x0u},
    {1328, 7, 1, 0x4c4b4000ull, 0xa02u},
    {1350, 1, 2, 0x2625a000ull, 0x0u},
    {1388, 12, 3, 0x2625a00ull, 0x4u},
    {1389, 4, 2, 0x2625a00ull, 0x0u},
    {1391, 12, 1, 0x9896800ull, 0x1u},
    {1392, 10, 1, 0x1312d00ull, 0x2u},
    {1400, 6, 1, 0xffffffff88ca6c00ull, 0x0u},
    {1421, 4, 2, 0x4c4b4000ull, 0x0u},
    {1446, 14, 1, 0x0ull, 0x0u},
    {1461, 14, 2, 0x2625a000ull, 0x0u},
    {1463, 6, 2, 0xfffffffc46536000ull, 0x0u},
    {1467, 6, 1, 0xee6b2800ull, 0x0u},
    {1475, 7, 2, 0x989680ull, 0xa0a04u},
    {1491, 4, 1, 0x4c4b400ull, 0x0u},
    {1494, 14, 1, 0x0ull, 0x0u},
    {1501, 6, 2, 0x1dcd65000ull, 0x0u},
    {1511, 1, 1, 0x0ull, 0x0u},
    {1526, 2, 2, 0x4c4b4000ull, 0x0u},
    {1527, 6, 2, 0x3b9aca00ull, 0x0u},
    {1533, 14, 1, 0x0ull, 0x0u},
    {1538, 6, 2, 0xffffffff1194d800ull, 0x0u},
    {1540, 7, 3, 0x9896800ull, 0x20001u},
    {1598, 6, 3, 0xee6b28000ull, 0x0u},
    {1605, 7, 2, 0x1312d00ull, 0xa3c04u},
    {1613, 4, 1, 0x4c4b4000ull, 0x0u},
    {1615, 10, 2, 0x989680ull, 0x3u},
    {1627, 10, 2, 0x4c4b400ull, 0x1u},
    {1643, 12, 2, 0x2625a00ull, 0x2u},
    {1652, 1, 1, 0x0ull, 0x0u},
    {1659, 1, 2, 0x4c4b400ull, 0x0u},
    {1668, 2, 2, 0x1312d000ull, 0x0u},
    {1670, 6, 2, 0x1dcd65000ull, 0x0u},
    {1676, 4, 3, 0x2625a000ull, 0x0u},
    {1689, 12, 1, 0x9896800ull, 0x3u},
    {1691, 1, 1, 0x0ull, 0x0u},
    {1711, 14, 2, 0x1312d00ull, 0x0u},
    {1719, 10, 3, 0x4c4b400ull, 0x1u},
    {1730, 2, 2, 0x2625a00ull, 0x0u},
    {1737, 12, 1, 0x9896800ull, 0x5u},
    {1755, 7, 3, 0x9896800ull, 0x20001u},
    {1757, 1, 2, 0x4c4b400ull, 0x0u},
    {1761, 4, 1, 0x2625a000ull, 0x0u},
    {1766, 10, 3, 0x9896800ull, 0x3u},
    {1818, 10, 2, 0x4c4b400ull, 0x3u},
    {1824, 7, 1, 0x989680ull, 0x400001u},
    {1827, 2, 1, 0x4c4b400ull, 0x0u},
    {1867, 14, 2, 0x9896800ull, 0x0u},
    {1879, 2, 3, 0x1312d00ull, 0x0u},
    {1880, 12, 1, 0x9896800ull, 0x3u},
    {1887, 12, 1, 0x1312d00ull, 0x5u},
    {1891, 4, 1, 0x1312d00ull, 0x0u},
    {1903, 1, 3, 0x0ull, 0x0u},
    {1946, 7, 3, 0x9896800ull, 0xa02u},
    {1956, 12, 1, 0x1312d00ull, 0x5u},
    {1959, 10, 1, 0x989680ull, 0x2u},
    {1960, 14, 1, 0x0ull, 0x0u},
    {1970, 12, 1, 0x2625a00ull, 0x5u},
    {1975, 10, 1, 0x9896800ull, 0x2u},
    {2041, 1, 2, 0x989680ull, 0x0u},
    {2061, 1, 1, 0x0ull, 0x0u},
    {2071, 12, 2, 0x4c4b400ull, 0x2u},
    {2084, 12, 2, 0x9896800ull, 0x6u},
    {2119, 12, 2, 0x4c4b400ull, 0x2u},
    {2134, 6, 1, 0x3b9aca000ull, 0x0u},
    {2135, 1, 2, 0x1312d000ull, 0x0u},
    {2148, 6, 2, 0xfffffff1194d8000ull, 0x0u},
    {2163, 14, 2, 0x9896800ull, 0x0u},
    {2164, 14, 2, 0x2625a000ull, 0x0u},
    {2175, 1, 2, 0x9896800ull, 0x0u},
    {2192, 2, 3, 0x9896800ull, 0x0u},
    {2193, 12, 2, 0x4c4b400ull, 0x6u},
    {2213, 6, 1, 0xffffffff1194d800ull, 0x0u},
    {2221, 14, 1, 0x0ull, 0x0u},
    {2222, 12, 2, 0x4c4b4000ull, 0x6u},
    {2234, 10, 1, 0x4c4b400ull, 0x2u},
    {2235, 4, 1, 0x989680ull, 0x0u},
    {2239, 7, 3, 0x4c4b400ull, 0x400001u},
    {2252, 6, 1, 0xfffffff88ca6c000ull, 0x0u},
    {2261, 2, 1, 0x2625a00ull, 0x0u},
    {2281, 6, 2, 0x3b9aca000ull, 0x0u},
    {2298, 14, 3, 0x0ull, 0x0u},
    {2318, 4, 1, 0x1312d00ull, 0x0u},
    {2333, 6, 2, 0x77359400ull, 0x0u},
    {2354, 7, 2, 0x1312d000ull, 0x4603u},
    {2366, 10, 2, 0x989680ull, 0x2u},
    {2375, 12, 2, 0x1312d00ull, 0x6u},
    {2382, 7, 1, 0x2625a000ull, 0x20001u},
    {2385, 14, 2, 0x4c4b400ull, 0x0u},
    {2388, 4, 2, 0x9896800ull, 0x0u},
    {2418, 1, 1, 0x0ull, 0x0u},
    {2425, 2, 3, 0x1312d000ull, 0x0u},
    {2431, 10, 3, 0x1312d000ull, 0x3u},
    {2439, 14, 1, 0x0ull, 0x0u},
    {2453, 2, 2, 0x9896800ull, 0x0u},
    {2454, 2, 2, 0x4c4b400ull, 0x0u},
    {2456, 10, 1, 0x2625a000ull, 0x3u},
    {2459, 7, 3, 0x1312d000ull, 0x20001u},
    {2476, 10, 1, 0x1312d000ull, 0x2u},
    {2484, 7, 1, 0x1312d000ull, 0x1402u},
    {2493, 10, 3, 0x1312d00ull, 0x1u},
};
static const uint64_t power_digests[60] = {
    0xdee95be467ff1932ull, 0xf63141eea5f94b6bull, 0x8e70bee67623fde2ull, 0x71b2de4c4557ec4eull,
    0x8f939f71cc06d358ull, 0xb315d4008b4c5fe4ull, 0x3c2c3fbc4ea7cf8bull, 0x4c7217e43736dcd4ull,
    0xb899033755b1cbe5ull, 0x70752169a5460735ull, 0xb77e37cb69d703faull, 0x0cde19d39635a539ull,
    0x213b0341697dbf2eull, 0xc44001443514a3aaull, 0x4db89102bbc1d8b9ull, 0xa7a1059838168ec3ull,
    0x1e3e320d702c9431ull, 0x47ce55712361b66dull, 0x48981adf43b16e74ull, 0x07957e647af610b4ull,
    0x14a013f7ae2ab9deull, 0xb8bba72b7b918133ull, 0xbcdfda1bf4c0e6caull, 0x6e5bac44680704a6ull,
    0x477e2ffde2ba3739ull, 0xdd307740d9bc02c9ull, 0xebe1dbee27f2e11dull, 0xbf15966be3086cebull,
    0x961399b91900e1c2ull, 0xa63babcae1c59872ull, 0x486135884a1b48c4ull, 0x427caa6637917440ull,
    0xf0d8385e6bd2c4bdull, 0x2b2cb8d69ffd149cull, 0xd3d9ab29d1cd264eull, 0xbe22f9e674e4374eull,
    0xfd84504189f68889ull, 0x4d079ae26ae3ce2aull, 0x5111b75214c5e5e2ull, 0x6a308409dff3cbadull,
    0x9606c2b49010c013ull, 0xa9b9a421dcfc9e83ull, 0xda20561d4d076217ull, 0xcdf0ce3ed4814f92ull,
    0xbd414abe8e3ea9bdull, 0x5a0490806ca2d921ull, 0x8eb0d74707aeda5aull, 0x0f2824c23585102aull,
    0x7655c19c8d839d8aull, 0x84709a4d70b246bfull, 0xa628979cc49e9466ull, 0x3761e3601610f77cull,
    0x429bf37a8f45d7adull, 0x2f46d02ffdc2dcd9ull, 0x6475244dd048e1b1ull, 0x4a50a33c0cd0d12dull,
    0xd2a7cee26f6f106cull, 0x581d5ac07cdb2791ull, 0xecda8f2c3e0503d4ull, 0x77041c1a36a6ded0ull,
};

#define POWER_KINDS (SPLIT_KINDS | (1u << FAULT_POWER))

static void test_power_decisions(void)
{
    CHECKF(POWER_KINDS == FAULT_KINDS_ALL, "all is every kind up to power");
    check_pins(POWER_KINDS, 1u << FAULT_POWER,
               (1u << FAULT_PAUSE) | (1u << FAULT_CLOCK) | (1u << FAULT_NET) | (1u << FAULT_DISK) |
                   (1u << FAULT_POWER),
               power_decisions, power_digests, "the code that added power");
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
    /* Among every kind: net is drawn, and no kind but net, disk and split has an arg. */
    struct sched all = s;
    all.fault_kinds = FAULT_KINDS_ALL;
    unsigned nets = 0, others = 0;
    for (uint64_t st = 0; st < 40000; st++) {
        struct fault_decision d = faults_decide(&all, st);
        nets += d.kind == FAULT_NET;
        others += d.kind != FAULT_NET && d.kind != FAULT_NONE;
        CHECKF(d.kind == FAULT_NET || d.kind == FAULT_DISK || d.kind == FAULT_SPLIT || d.arg == 0,
               "arg %x of kind %d", d.arg, (int)d.kind);
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
        if (d.kind != FAULT_KILL && d.kind != FAULT_POWER)
            CHECKF(same(&d, &r), "restarts change only kills and power cuts, at %llu",
                   (unsigned long long)st);
    }
    CHECKF(disks > 400 && disks < 1100, "%u disk faults among every kind (~500)", disks);
    /* The glob is no input of a decision (invariant 5). */
    struct sched g = all;
    snprintf(g.fault_disk_glob, sizeof(g.fault_disk_glob), "/data/*");
    for (uint64_t st = 0; st < 5000; st++) {
        struct fault_decision a = faults_decide(&all, st), b = faults_decide(&g, st);
        CHECKF(same(&a, &b), "the glob draws nothing, at %llu", (unsigned long long)st);
    }
}

/* Split faults (invariant 2), for every node count: a length of 10 ms..1.28
 * s in octaves (the one a net fault would have at the step), a first side
 * that is a non-empty proper subset of the nodes, named by its lowest node,
 * every such side drawn (up to 8 nodes); pure; at the steps a kill would be;
 * with one node, arg 0 and node 1. */
static void test_split(void)
{
    static unsigned char seen[1u << 16];
    for (uint32_t nodes = 1; nodes <= 16; nodes++) {
        struct sched s = {
            .seed = 9, .fault_kinds = 1u << FAULT_SPLIT, .fault_rate = 1000, .fault_nodes = nodes};
        CHECKF(sched_push(&s, 4, 0, UINT64_MAX, 0, 10000) == 0, "push");
        struct sched kill = s, net = s;
        kill.fault_kinds = 1u << FAULT_KILL;
        net.fault_kinds = 1u << FAULT_NET;
        uint32_t all = (1u << nodes) - 1, lows = 0;
        unsigned n = 0, bad = 0, lengths = 0, sides = 0;
        memset(seen, 0, sizeof(seen));
        for (uint64_t st = 0; st < 40000; st++) {
            struct fault_decision d = faults_decide(&s, st), again = faults_decide(&s, st);
            struct fault_decision k = faults_decide(&kill, st), nt = faults_decide(&net, st);
            bad += !same(&d, &again) || d.kind != (k.kind == FAULT_NONE ? FAULT_NONE : FAULT_SPLIT);
            if (d.kind == FAULT_NONE)
                continue;
            n++;
            bad += d.ns != nt.ns || d.ns < FAULT_PAUSE_MIN_NS || d.ns > FAULT_PAUSE_MAX_NS ||
                   d.ns % FAULT_PAUSE_MIN_NS != 0 ||
                   ((d.ns / FAULT_PAUSE_MIN_NS) & (d.ns / FAULT_PAUSE_MIN_NS - 1)) != 0;
            lengths |= 1u << __builtin_ctzll(d.ns / FAULT_PAUSE_MIN_NS);
            if (nodes < 2) { /* a split needs two nodes */
                bad += d.arg != 0 || d.node != 1;
                continue;
            }
            bad += d.arg == 0 || d.arg >= all || d.node != 1 + (uint32_t)__builtin_ctz(d.arg);
            lows |= 1u << (d.node - 1);
            sides += !seen[d.arg];
            seen[d.arg] = 1;
        }
        CHECKF(bad == 0, "%u nodes: %u decisions out of range", nodes, bad);
        CHECKF(n > 2000 && n < 6000, "%u nodes: %u splits at rate 1000 over 40,000 steps", nodes,
               n);
        CHECKF(lengths == 0xff, "%u nodes: every length, 10 ms to 1.28 s, drawn: %x", nodes,
               lengths);
        if (nodes >= 2 && nodes <= 8)
            CHECKF(sides == all - 1 && lows == all, "%u nodes: %u of %u sides, lowest nodes %x",
                   nodes, sides, all - 1, lows);
    }
    /* Three nodes: the six sides about even. */
    struct sched three = {
        .seed = 2, .fault_kinds = 1u << FAULT_SPLIT, .fault_rate = 1000, .fault_nodes = 3};
    CHECKF(sched_push(&three, 6, 0, UINT64_MAX, 0, 10000) == 0, "push");
    unsigned counts[8] = {0}, total = 0;
    for (uint64_t st = 0; st < 60000; st++) {
        struct fault_decision d = faults_decide(&three, st);
        if (d.kind == FAULT_SPLIT) {
            counts[d.arg & 7]++;
            total++;
        }
    }
    unsigned low = total;
    for (unsigned i = 1; i < 7; i++)
        low = counts[i] < low ? counts[i] : low;
    CHECKF(counts[0] == 0 && counts[7] == 0 && low > total / 9,
           "sides about even: %u %u %u %u %u %u of %u", counts[1], counts[2], counts[3], counts[4],
           counts[5], counts[6], total);
    /* Among every kind: split is drawn; a restart changes no split. */
    struct sched every = three;
    every.fault_kinds = FAULT_KINDS_ALL;
    struct sched rs = every;
    rs.fault_restart = 0x7;
    unsigned splits = 0;
    for (uint64_t st = 0; st < 40000; st++) {
        struct fault_decision d = faults_decide(&every, st), r = faults_decide(&rs, st);
        splits += d.kind == FAULT_SPLIT;
        CHECKF(d.kind != FAULT_SPLIT ||
                   (d.arg >= 1 && d.arg <= 6 && d.node == 1 + (uint32_t)__builtin_ctz(d.arg)),
               "a split's side among every kind at %llu", (unsigned long long)st);
        if (d.kind != FAULT_KILL && d.kind != FAULT_POWER)
            CHECKF(same(&d, &r), "restarts change only kills and power cuts, at %llu",
                   (unsigned long long)st);
    }
    CHECKF(splits > 400 && splits < 1000, "%u splits among every kind (~500)", splits);
}

/* Power cuts (invariant 2): drawn exactly as a kill is. With power alone,
 * every decision is the one kill alone would make (step, node, restart
 * delay), kind power and arg 0; with kill and power, one of the two at
 * each of those steps, the rest the same; among every kind, drawn. */
static void test_power(void)
{
    for (uint32_t restart = 0; restart <= 0x5; restart += 0x5) {
        struct sched s = {.seed = 13,
                          .fault_kinds = 1u << FAULT_POWER,
                          .fault_rate = 1000,
                          .fault_nodes = 4,
                          .fault_restart = restart};
        CHECKF(sched_push(&s, 2, 0, UINT64_MAX, 0, 10000) == 0, "push");
        struct sched kill = s, both = s;
        kill.fault_kinds = 1u << FAULT_KILL;
        both.fault_kinds = (1u << FAULT_KILL) | (1u << FAULT_POWER);
        unsigned n = 0, bad = 0, delayed = 0, kills = 0, cuts = 0, lengths = 0;
        for (uint64_t st = 0; st < 40000; st++) {
            struct fault_decision d = faults_decide(&s, st), again = faults_decide(&s, st);
            struct fault_decision k = faults_decide(&kill, st), b = faults_decide(&both, st);
            bad += !same(&d, &again);
            if (k.kind == FAULT_NONE) {
                bad += d.kind != FAULT_NONE || b.kind != FAULT_NONE;
                continue;
            }
            n++;
            bad += d.kind != FAULT_POWER || d.node != k.node || d.ns != k.ns || d.arg != 0;
            bad += (b.kind != FAULT_KILL && b.kind != FAULT_POWER) || b.node != k.node ||
                   b.ns != k.ns || b.arg != 0;
            kills += b.kind == FAULT_KILL;
            cuts += b.kind == FAULT_POWER;
            if ((restart >> (d.node - 1)) & 1) {
                bad += d.ns < FAULT_PAUSE_MIN_NS || d.ns > FAULT_PAUSE_MAX_NS ||
                       d.ns % FAULT_PAUSE_MIN_NS != 0;
                lengths |= 1u << __builtin_ctzll(d.ns / FAULT_PAUSE_MIN_NS);
                delayed++;
            } else {
                bad += d.ns != 0;
            }
        }
        CHECKF(bad == 0, "restarts %#x: %u power cuts not drawn as a kill", restart, bad);
        CHECKF(n > 2000 && n < 6000, "restarts %#x: %u power cuts at rate 1000 over 40,000 steps",
               restart, n);
        CHECKF(kills > n / 3 && cuts > n / 3, "kill and power: %u kills, %u power cuts", kills,
               cuts);
        if (restart)
            CHECKF(delayed > n / 3 && lengths == 0xff,
                   "%u power cuts with a restart delay, every delay drawn: %x", delayed, lengths);
        else
            CHECKF(delayed == 0, "no delay without restarts");
    }
    /* Among every kind: power is drawn, as a kill is. */
    struct sched all = {
        .seed = 13, .fault_kinds = FAULT_KINDS_ALL, .fault_rate = 1000, .fault_nodes = 4};
    CHECKF(sched_push(&all, 2, 0, UINT64_MAX, 0, 10000) == 0, "push");
    unsigned cuts = 0, kills = 0;
    for (uint64_t st = 0; st < 40000; st++) {
        struct fault_decision d = faults_decide(&all, st);
        cuts += d.kind == FAULT_POWER;
        kills += d.kind == FAULT_KILL;
        CHECKF(d.kind != FAULT_POWER || (d.ns == 0 && d.arg == 0),
               "a power cut without restarts at %llu", (unsigned long long)st);
    }
    CHECKF(cuts > 350 && cuts < 1000 && kills > 350 && kills < 1000,
           "%u power cuts, %u kills among every kind (~500 each)", cuts, kills);
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

/* Restart delays (invariants 2 and 4): a kill or a power cut of a node with
 * a restart gets a delay of 10 ms..1.28 s; every other decision is the one
 * without restarts. */
static void test_restart(void)
{
    struct sched s = {
        .seed = 11, .fault_kinds = FAULT_KINDS_ALL, .fault_rate = 1000, .fault_nodes = 3};
    CHECKF(sched_push(&s, 5, 0, UINT64_MAX, 0, 10000) == 0, "push");
    struct sched r = s;
    r.fault_restart = 1u << 1; /* node 2 has a restart command */
    unsigned delayed = 0, plain = 0, lengths = 0, cuts = 0;
    for (uint64_t st = 0; st < 40000; st++) {
        struct fault_decision a = faults_decide(&s, st), b = faults_decide(&r, st);
        int kills = a.kind == FAULT_KILL || a.kind == FAULT_POWER;
        if (kills && a.node == 2) {
            CHECKF(a.ns == 0 && b.kind == a.kind && b.node == 2 && b.arg == 0 &&
                       b.ns >= FAULT_PAUSE_MIN_NS && b.ns <= FAULT_PAUSE_MAX_NS &&
                       b.ns % FAULT_PAUSE_MIN_NS == 0,
                   "a kill or power cut of node 2 at %llu: restart in %llu ns",
                   (unsigned long long)st, (unsigned long long)b.ns);
            lengths |= 1u << __builtin_ctzll(b.ns / FAULT_PAUSE_MIN_NS);
            delayed++;
            cuts += a.kind == FAULT_POWER;
            continue;
        }
        CHECKF(same(&a, &b), "a restart changes nothing but its node's kills, at %llu",
               (unsigned long long)st);
        if (b.kind == FAULT_KILL || b.kind == FAULT_POWER) {
            CHECKF(b.ns == 0, "a kill of a node without a restart: ns %llu",
                   (unsigned long long)b.ns);
            plain++;
        }
    }
    CHECKF(delayed > 50 && plain > 100 && cuts > 20 && cuts < delayed,
           "%u kills and power cuts with a restart (%u power cuts), %u without", delayed, cuts,
           plain);
    CHECKF(lengths == 0xff, "every delay, 10 ms to 1.28 s, drawn: %x", lengths);
    struct sched every = s;
    every.fault_restart = 0x7;
    unsigned kills = 0;
    for (uint64_t st = 0; st < 40000; st++) {
        struct fault_decision d = faults_decide(&every, st), o = faults_decide(&s, st);
        if (d.kind == FAULT_KILL || d.kind == FAULT_POWER)
            kills += d.ns >= FAULT_PAUSE_MIN_NS && d.node == o.node && d.kind == o.kind;
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
        {REWIND_FAULT_LOST + 1, 0, 16, "kind 16"},
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
               !strcmp(faults_kind_name(REWIND_FAULT_SPLIT), "split") &&
               !strcmp(faults_kind_name(REWIND_FAULT_JOIN), "join") &&
               !strcmp(faults_kind_name(REWIND_FAULT_POWER), "power") &&
               !strcmp(faults_kind_name(REWIND_FAULT_LOST), "lost") &&
               !faults_kind_name(REWIND_FAULT_LOST + 1) && !faults_kind_name(0),
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

/* Splits and joins in words: the decision's (faults_describe) and the
 * trace's (describe_entry) name the same side; the decision's words fit
 * check's 90 bytes for every side of 16 nodes; malformed records (short
 * payloads in buffers of exactly their length, sides no split has, a node
 * that is not the side's lowest); the public parts. */
static void test_describe_split(void)
{
    static const struct {
        uint32_t side;
        unsigned node;
        const char *words;
    } sides[] = {
        {0x1, 1, "node 1"},
        {0x5, 1, "nodes 1,3"},
        {0xb, 1, "nodes 1,2,4"},
        {0x6, 2, "nodes 2,3"},
        {0x8000, 16, "node 16"},
        {0x7fff, 1, "nodes 1,2,3,4,5,6,7,8,9,10,11,12,13,14,15"},
        {0xfffe, 2, "nodes 2,3,4,5,6,7,8,9,10,11,12,13,14,15,16"},
    };
    char buf[200] = "", want[200]; /* CHECKF formats its message before the call */
    struct rw_fault_event f;
    for (size_t i = 0; i < sizeof(sides) / sizeof(sides[0]); i++) {
        CHECKF(faults_split_words(sides[i].side, buf, sizeof(buf)) == 0 &&
                   !strcmp(buf, sides[i].words),
               "side %#x: %s", sides[i].side, buf);
        struct fault_decision d = {FAULT_SPLIT, sides[i].node, 160000000, sides[i].side};
        snprintf(want, sizeof(want), "split %s from the rest for 160.000 ms", sides[i].words);
        faults_describe(&d, "n1", buf, sizeof(buf));
        CHECKF(!strcmp(buf, want), "%s", buf);
        faults_describe(&d, NULL, buf, sizeof(buf));
        CHECKF(!strcmp(buf, want), "without names: %s", buf);
        CHECKF(fault_words(REWIND_FAULT_SPLIT, sides[i].node, 160000000, 4, sides[i].side, 16, buf,
                           sizeof(buf), &f) == 0,
               "a split record's parts, side %#x", sides[i].side);
        snprintf(want, sizeof(want),
                 "fault split node %u for 160.000 ms: %s apart from the other nodes (the job "
                 "reaches every node)",
                 sides[i].node, sides[i].words);
        CHECKF(!strcmp(buf, want), "%s", buf);
        CHECKF(f.kind && !strcmp(f.kind, "split") && f.node == sides[i].node && f.ns == 160000000 &&
                   f.procs == 4 && f.split_side == sides[i].side && !f.net_mode && !f.disk_mode &&
                   !f.leader_pid,
               "split parts");
    }
    /* check's report keeps 90 bytes of a fault's words: every side of 16
     * nodes, at the longest length, fits. */
    size_t longest = 0;
    for (uint32_t side = 1; side < 0xffff; side++) {
        struct fault_decision d = {FAULT_SPLIT, 1 + (uint32_t)__builtin_ctz(side),
                                   FAULT_PAUSE_MAX_NS, side};
        faults_describe(&d, "a-sixteen-bytes", buf, sizeof(buf));
        longest = strlen(buf) > longest ? strlen(buf) : longest;
    }
    CHECKF(longest == 78, "the longest split words: %zu bytes", longest);
    /* One node: no split (the guest kernel ignores it); a side no split has. */
    struct fault_decision none = {FAULT_SPLIT, 1, 40000000, 0};
    faults_describe(&none, "n1", buf, sizeof(buf));
    CHECKF(!strcmp(buf, "split nothing for 40.000 ms (a split needs two nodes)"), "%s", buf);
    struct fault_decision odd = {FAULT_SPLIT, 1, 40000000, 0xffff};
    faults_describe(&odd, "n1", buf, sizeof(buf));
    CHECKF(!strcmp(buf, "split side 0xffff from the rest for 40.000 ms"), "%s", buf);
    const uint32_t no_side[] = {0, 0xffff, 0x10000, 0x10001, 0x80000000u, 0xffffffffu};
    for (size_t i = 0; i < sizeof(no_side) / sizeof(no_side[0]); i++)
        CHECKF(faults_split_words(no_side[i], buf, sizeof(buf)) < 0 && !buf[0],
               "no split's side: %#x", no_side[i]);
    /* A short buffer: cut, terminated, nothing written past it (ASan). */
    char *small = malloc(9);
    int cut = faults_split_words(0xfffe, small, 9);
    CHECKF(cut == 0 && !strcmp(small, "nodes 2,"), "%s", small);
    cut = faults_split_words(0x5, small, 1);
    CHECKF(cut == 0 && !small[0], "a buffer of one byte");
    free(small);
    CHECKF(fault_words(REWIND_FAULT_JOIN, 2, 0, 5, 0, 12, buf, sizeof(buf), &f) == 0 &&
               !strcmp(buf, "fault join node 2: the network is whole again") &&
               !strcmp(f.kind, "join") && f.node == 2 && f.procs == 5 && !f.split_side,
           "%s", buf);
    CHECKF(fault_words(REWIND_FAULT_JOIN, 2, 0, 5, 0x6, 16, buf, sizeof(buf), &f) == 0 &&
               !strcmp(buf, "fault join node 2: the network is whole again") && !f.split_side,
           "a join's longer payload: %s", buf);
    static const struct {
        uint32_t kind;
        unsigned node;
        uint32_t arg;
        size_t len;
        const char *what;
    } bad[] = {
        {REWIND_FAULT_SPLIT, 1, 0x5, 0, "a split record without payload"},
        {REWIND_FAULT_SPLIT, 1, 0x5, 8, "a split record of 8 bytes"},
        {REWIND_FAULT_SPLIT, 1, 0x5, 12, "a split record of 12 bytes"},
        {REWIND_FAULT_SPLIT, 1, 0x5, 15, "a split record of 15 bytes"},
        {REWIND_FAULT_SPLIT, 1, 0, 16, "side 0"},
        {REWIND_FAULT_SPLIT, 1, 0xffff, 16, "every node of 16"},
        {REWIND_FAULT_SPLIT, 1, 0x10001, 16, "node 17 on the side"},
        {REWIND_FAULT_SPLIT, 1, 0xffffffffu, 16, "side 0xffffffff"},
        {REWIND_FAULT_SPLIT, 3, 0x5, 16, "node 3 is not the side's lowest"},
        {REWIND_FAULT_SPLIT, 2, 0x5, 16, "node 2 is not on the side"},
        {REWIND_FAULT_SPLIT, 0, 0x5, 16, "node 0"},
        {REWIND_FAULT_SPLIT, 17, 0x10000, 16, "node 17"},
        {REWIND_FAULT_JOIN, 1, 0, 11, "a join record of 11 bytes"},
        {REWIND_FAULT_JOIN, 1, 0, 0, "a join record without payload"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        int rc = fault_words(bad[i].kind, bad[i].node, 40000000, 1, bad[i].arg, bad[i].len, buf,
                             sizeof(buf), &f);
        CHECKF(rc < 0 && strstr(buf, "malformed") && !f.kind && !f.split_side, "%s: %s",
               bad[i].what, buf);
    }
}

/* Power cuts and lost writes in words: the decision's (faults_describe),
 * with and without a restart, fitting check's report with the longest node
 * name; the trace's (describe_entry) for power and lost records, singular
 * and plural, with bytes not undone; malformed records (short payloads in
 * buffers of exactly their length, nodes out of range, stray aux bits);
 * the public parts. */
static void test_describe_power(void)
{
    char buf[200], want[200];
    const char *cut = "(SIGKILL to each of its processes; its writes since their last sync undone)";
    struct fault_decision p = {FAULT_POWER, 1, 0, 0};
    faults_describe(&p, "n1", buf, sizeof(buf));
    snprintf(want, sizeof(want), "cut node n1's power %s", cut);
    CHECKF(!strcmp(buf, want), "%s", buf);
    faults_describe(&p, NULL, buf, sizeof(buf));
    snprintf(want, sizeof(want), "cut node 1's power %s", cut);
    CHECKF(!strcmp(buf, want), "without names: %s", buf);
    struct fault_decision pr = {FAULT_POWER, 2, 40000000, 0};
    faults_describe(&pr, "n2", buf, sizeof(buf));
    snprintf(want, sizeof(want), "cut node n2's power %s; its restart command runs 40.000 ms later",
             cut);
    CHECKF(!strcmp(buf, want), "with a restart: %s", buf);
    /* The kill's restart words, the same ending. */
    struct fault_decision kr = {FAULT_KILL, 2, 40000000, 0};
    char kill[200];
    faults_describe(&kr, "n2", kill, sizeof(kill));
    CHECKF(strstr(kill, "; its restart command runs 40.000 ms later") &&
               !strcmp(strchr(kill, ';'), strrchr(buf, ';')),
           "a kill's restart words: %s", kill);
    /* check's report keeps the words whole: a name of NODE_NAME_MAX bytes,
     * the longest delay. */
    struct fault_decision longest = {FAULT_POWER, 16, FAULT_PAUSE_MAX_NS, 0};
    faults_describe(&longest, "abcdefghijklmnop", buf, sizeof(buf));
    size_t room = sizeof(((struct rw_check_report *)0)->deciding_what) - 1;
    CHECKF(strlen(buf) == 153 && strlen(buf) <= room && strstr(buf, "1280.000 ms later"),
           "%zu bytes of %zu (faults.h: at most 153): %s", strlen(buf), room, buf);
    struct rw_fault_event f;
    static const struct {
        uint64_t ns;
        uint32_t procs;
        size_t len;
        const char *words;
    } power[] = {
        {0, 2, 12, "fault power node 1: SIGKILL to 2 processes, its unsynced writes to be undone"},
        {0, 1, 12, "fault power node 1: SIGKILL to 1 process, its unsynced writes to be undone"},
        {40000000, 2, 12,
         "fault power node 1: SIGKILL to 2 processes, its unsynced writes to be undone; restart "
         "in 40.000 ms"},
        {0, 3, 16, "fault power node 1: SIGKILL to 3 processes, its unsynced writes to be undone"},
    };
    for (size_t i = 0; i < sizeof(power) / sizeof(power[0]); i++) {
        int rc = fault_words(REWIND_FAULT_POWER, 1, power[i].ns, power[i].procs, 77, power[i].len,
                             buf, sizeof(buf), &f);
        CHECKF(rc == 0 && !strcmp(buf, power[i].words), "%s", buf);
        CHECKF(f.kind && !strcmp(f.kind, "power") && f.node == 1 && f.ns == power[i].ns &&
                   f.procs == power[i].procs && !f.net_mode && !f.disk_mode && !f.leader_pid &&
                   !f.split_side && !f.lost_bytes && !f.lost_files && !f.lost_kept,
               "power parts %zu", i);
    }
    static const struct {
        unsigned node;
        uint64_t bytes;
        uint32_t files, kept;
        const char *words;
    } lost[] = {
        {1, 8192, 3, 0,
         "fault lost node 1: 3 files back to their last sync, 8192 bytes of writes "
         "undone"},
        {2, 8192, 3, 512,
         "fault lost node 2: 3 files back to their last sync, 8192 bytes of writes undone, 512 "
         "bytes not undone (over the limit)"},
        {3, 100, 1, 0,
         "fault lost node 3: 1 file back to its last sync, 100 bytes of writes undone"},
        {1, 1, 1, 1,
         "fault lost node 1: 1 file back to its last sync, 1 byte of writes undone, 1 byte not "
         "undone (over the limit)"},
        {16, 0, 0, 0,
         "fault lost node 16: 0 files back to their last sync, 0 bytes of writes "
         "undone"},
        {1, 0x8000000000000000ull, 4294967295u, 4294967295u,
         "fault lost node 1: 4294967295 files back to their last sync, 9223372036854775808 bytes "
         "of writes undone, 4294967295 bytes not undone (over the limit)"},
    };
    for (size_t i = 0; i < sizeof(lost) / sizeof(lost[0]); i++) {
        int rc = fault_words(REWIND_FAULT_LOST, lost[i].node, lost[i].bytes, lost[i].files,
                             lost[i].kept, 16, buf, sizeof(buf), &f);
        CHECKF(rc == 0 && !strcmp(buf, lost[i].words), "%s", buf);
        CHECKF(f.kind && !strcmp(f.kind, "lost") && f.node == lost[i].node &&
                   f.lost_bytes == lost[i].bytes && f.lost_files == lost[i].files &&
                   f.lost_kept == lost[i].kept && !f.ns && !f.procs && !f.net_mode &&
                   !f.disk_mode && !f.leader_pid && !f.split_side,
               "lost parts %zu", i);
    }
    /* A short buffer: cut and terminated, nothing written past it (ASan). */
    char *small = malloc(40);
    struct trace_entry e = {0};
    uint8_t pay[16] = {0};
    pay[0] = 1;
    pay[8] = 2;
    pay[12] = 3;
    e.rec.kind = REWIND_REC_FAULT;
    e.rec.aux = REWIND_FAULT_LOST | 1u << 8;
    e.payload = pay;
    e.payload_len = sizeof(pay);
    for (size_t n = 1; n <= 40; n++) {
        describe_entry(&e, small, n);
        CHECKF(strlen(small) < n, "a lost record's words in %zu bytes", n);
    }
    free(small);
    static const struct {
        uint32_t kind;
        unsigned node;
        size_t len;
        const char *what;
    } bad[] = {
        {REWIND_FAULT_POWER, 1, 0, "a power record without payload"},
        {REWIND_FAULT_POWER, 1, 8, "a power record of 8 bytes"},
        {REWIND_FAULT_POWER, 1, 11, "a power record of 11 bytes"},
        {REWIND_FAULT_POWER, 0, 12, "power at node 0"},
        {REWIND_FAULT_POWER, 17, 12, "power at node 17"},
        {REWIND_FAULT_LOST, 1, 0, "a lost record without payload"},
        {REWIND_FAULT_LOST, 1, 8, "a lost record of 8 bytes"},
        {REWIND_FAULT_LOST, 1, 12, "a lost record of 12 bytes"},
        {REWIND_FAULT_LOST, 1, 15, "a lost record of 15 bytes"},
        {REWIND_FAULT_LOST, 0, 16, "lost at node 0"},
        {REWIND_FAULT_LOST, 17, 16, "lost at node 17"},
        {REWIND_FAULT_LOST + 1, 1, 16, "kind 16"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        int rc =
            fault_words(bad[i].kind, bad[i].node, 8192, 3, 512, bad[i].len, buf, sizeof(buf), &f);
        CHECKF(rc < 0 && strstr(buf, "malformed") && !f.kind && !f.ns && !f.procs &&
                   !f.lost_bytes && !f.lost_files && !f.lost_kept,
               "%s: %s", bad[i].what, buf);
    }
    /* Stray aux bits above the node. */
    e.rec.aux = REWIND_FAULT_LOST | 1u << 8 | 1ull << 40;
    describe_entry(&e, buf, sizeof(buf));
    CHECKF(strstr(buf, "malformed") != NULL, "lost with stray bits: %s", buf);
    e.rec.aux = REWIND_FAULT_POWER | 1u << 8 | 1ull << 16;
    describe_entry(&e, buf, sizeof(buf));
    CHECKF(strstr(buf, "malformed") != NULL, "power with stray bits: %s", buf);
    struct rw_event ev = {.kind = REWIND_REC_FAULT,
                          .aux = REWIND_FAULT_LOST | 1u << 8 | 1ull << 40,
                          .payload = pay,
                          .payload_len = sizeof(pay)};
    CHECKF(rw_event_fault(&ev, &f) < 0 && !f.kind && !f.lost_bytes, "stray bits refused");
}

/* Each spec of bad (n of them) is refused, with no kinds left in back. */
static void check_refused(const char *const *bad, size_t n, struct sched *back)
{
    for (size_t i = 0; i < n; i++) {
        json_t *b = json_loads(bad[i], 0, NULL);
        CHECKF(b && spec_parse_perturb(b, back) < 0 && !back->fault_kinds, "refused: %s", bad[i]);
        json_decref(b);
    }
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
    check_refused(bad, sizeof(bad) / sizeof(bad[0]), &back);
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
    check_refused(bad, sizeof(bad) / sizeof(bad[0]), &back);
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

/* The spec's kinds with split: the canonical list, read back, no disk_glob
 * without disk; other spellings refused. */
static void test_spec_split(void)
{
    char *argv[] = {"/bin/true", NULL}, *env[] = {NULL};
    struct run_spec sp = {.argv = argv, .env = env, .cwd = "/", .mem_mib = 256, .quantum_ns = 5000};
    struct sched ks = {.fault_kinds = (1u << FAULT_KILL) | (1u << FAULT_SPLIT), .fault_rate = 2};
    sp.perturb = &ks;
    char *js = spec_to_json(&sp);
    CHECKF(js && strstr(js, "\"faults\":{\"kinds\":\"kill,split\",\"rate\":2}") &&
               !strstr(js, "disk_glob"),
           "%s", js ? js : "(null)");
    json_t *j = js ? json_loads(js, 0, NULL) : NULL;
    struct sched back = {0};
    CHECKF(j && spec_parse_perturb(j, &back) == 0 && back.fault_kinds == ks.fault_kinds &&
               back.fault_rate == 2 && !back.fault_disk_glob[0],
           "split round trip");
    json_decref(j);
    free(js);
    struct sched every = {.fault_kinds = FAULT_KINDS_ALL, .fault_rate = 5};
    snprintf(every.fault_disk_glob, sizeof(every.fault_disk_glob), "*");
    sp.perturb = &every;
    js = spec_to_json(&sp);
    CHECKF(js && strstr(js, "\"faults\":{\"disk_glob\":\"*\",\"kinds\":"
                            "\"kill,pause,partition,clock,net,disk,split,power\",\"rate\":5}"),
           "%s", js ? js : "(null)");
    j = js ? json_loads(js, 0, NULL) : NULL;
    CHECKF(j && spec_parse_perturb(j, &back) == 0 && back.fault_kinds == FAULT_KINDS_ALL &&
               back.fault_rate == 5 && !strcmp(back.fault_disk_glob, "*"),
           "every kind round trip");
    json_decref(j);
    free(js);
    const char *bad[] = {"{\"faults\":{\"kinds\":\"split,kill\",\"rate\":2}}",
                         "{\"faults\":{\"kinds\":\"join\",\"rate\":2}}",
                         "{\"faults\":{\"kinds\":\"split,split\",\"rate\":2}}",
                         "{\"faults\":{\"disk_glob\":\"*\",\"kinds\":\"kill,split\",\"rate\":2}}",
                         "{\"faults\":{\"disk_glob\":\"*\",\"kinds\":\"split,disk\",\"rate\":2}}"};
    check_refused(bad, sizeof(bad) / sizeof(bad[0]), &back);
}

/* The spec's kinds with power (invariant 5): disk_glob present with power
 * as with disk, read back; power without a glob, another order or a record
 * kind refused. */
static void test_spec_power(void)
{
    char *argv[] = {"/bin/true", NULL}, *env[] = {NULL};
    struct run_spec sp = {.argv = argv, .env = env, .cwd = "/", .mem_mib = 256, .quantum_ns = 5000};
    struct sched kp = {.fault_kinds = (1u << FAULT_KILL) | (1u << FAULT_POWER), .fault_rate = 2};
    snprintf(kp.fault_disk_glob, sizeof(kp.fault_disk_glob), "/data/*");
    sp.perturb = &kp;
    char *js = spec_to_json(&sp);
    CHECKF(js && strstr(js, "\"faults\":{\"disk_glob\":\"/data/*\",\"kinds\":\"kill,power\","
                            "\"rate\":2}"),
           "%s", js ? js : "(null)");
    json_t *j = js ? json_loads(js, 0, NULL) : NULL;
    struct sched back = {0};
    CHECKF(j && spec_parse_perturb(j, &back) == 0 && back.fault_kinds == kp.fault_kinds &&
               back.fault_rate == 2 && !strcmp(back.fault_disk_glob, "/data/*"),
           "power round trip");
    json_decref(j);
    free(js);
    struct sched dp = {.fault_kinds = (1u << FAULT_DISK) | (1u << FAULT_POWER), .fault_rate = 3};
    snprintf(dp.fault_disk_glob, sizeof(dp.fault_disk_glob), "*");
    sp.perturb = &dp;
    js = spec_to_json(&sp);
    CHECKF(js && strstr(js, "\"faults\":{\"disk_glob\":\"*\",\"kinds\":\"disk,power\",\"rate\":3}"),
           "one glob for disk and power: %s", js ? js : "(null)");
    free(js);
    /* Without power, the spec is what it was (test_spec_disk, test_spec_split). */
    struct sched ks = {.fault_kinds = (1u << FAULT_KILL) | (1u << FAULT_SPLIT), .fault_rate = 2};
    sp.perturb = &ks;
    js = spec_to_json(&sp);
    CHECKF(js && strstr(js, "\"faults\":{\"kinds\":\"kill,split\",\"rate\":2}") &&
               !strstr(js, "disk_glob") && !strstr(js, "power"),
           "%s", js ? js : "(null)");
    free(js);
    const char *bad[] = {
        "{\"faults\":{\"kinds\":\"kill,power\",\"rate\":2}}",
        "{\"faults\":{\"kinds\":\"power\",\"rate\":2}}",
        "{\"faults\":{\"disk_glob\":\"*\",\"kinds\":\"power,kill\",\"rate\":2}}",
        "{\"faults\":{\"disk_glob\":\"*\",\"kinds\":\"power,disk\",\"rate\":2}}",
        "{\"faults\":{\"disk_glob\":\"*\",\"kinds\":\"power,power\",\"rate\":2}}",
        "{\"faults\":{\"disk_glob\":\"*\",\"kinds\":\"lost\",\"rate\":2}}",
        "{\"faults\":{\"disk_glob\":\"*\",\"kinds\":\"kill,lost\",\"rate\":2}}",
        "{\"faults\":{\"disk_glob\":\"/a b\",\"kinds\":\"power\",\"rate\":2}}",
        "{\"faults\":{\"disk_glob\":\"\",\"kinds\":\"power\",\"rate\":2}}",
        "{\"faults\":{\"disk_glob\":\"*\",\"kinds\":\"kill,split\",\"rate\":2}}",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        json_t *b = json_loads(bad[i], 0, NULL);
        CHECKF(b && spec_parse_perturb(b, &back) < 0 && !back.fault_kinds &&
                   !back.fault_disk_glob[0],
               "refused: %s", bad[i]);
        json_decref(b);
    }
}

int main(void)
{
    test_parse();
    test_decisions();
    test_old_decisions();
    test_net_decisions();
    test_disk_decisions();
    test_split_decisions();
    test_power_decisions();
    test_net();
    test_disk();
    test_split();
    test_power();
    test_disk_glob();
    test_restart();
    test_describe();
    test_describe_new();
    test_describe_disk();
    test_describe_split();
    test_describe_power();
    test_spec();
    test_spec_disk();
    test_spec_split();
    test_spec_power();
    return unit_done();
}
