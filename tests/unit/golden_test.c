/*
 * golden_test: the run id of a fixed spec and the job encoding are pinned.
 *
 * A run id is the first 16 hex digits of the SHA-256 of the spec's canonical
 * JSON (src/input/spec.h), and the guest's init parses the job bytes
 * (src/input/job.h), so a change to either silently changes every run id or
 * breaks every guest. The expected values below were computed once with the
 * code of issue 10's starting point (main at 503419c) and written in as
 * literals: this test fails if a refactor changes one byte of them.
 *
 * The schedule decisions (src/input/sched.h) are pinned the same way: a
 * perturbed run's id does not hash them, but its behaviour follows them.
 *
 * A real run's id cannot be pinned here, nor as a literal in a system test:
 * it hashes the kernel, init and root image builds (by content), which
 * differ from machine to machine. The system suite pins real runs relative
 * to each other instead (tests/system/t_determinism.sh: the same inputs give
 * the same id, run after run; t_boot.sh: a directory, a tarball and an erofs
 * image of one tree give one id).
 */
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "input/job.h"
#include "input/patch.h"
#include "input/spec.h"
#include "unit.h"
#include "util/hash.h"

static char *argv_[] = {"sh", "-c", "echo \"h\xc3\xa9llo\" $HOME; exit 3", NULL};
static char *env_[] = {"PATH=/usr/bin:/bin", "HOME=/root", "SP=a b", NULL};

#define HASH_A "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define HASH_B "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
#define HASH_C "cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc"
#define HASH_I "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

/* The fields every spec below shares: a plain `rewind run`. */
static struct run_spec base_spec(void)
{
    struct run_spec s;
    memset(&s, 0, sizeof(s));
    memcpy(s.kernel_hash, HASH_A, 65);
    memcpy(s.init_hash, HASH_B, 65);
    memcpy(s.image_hash, HASH_I, 65);
    s.argv = argv_;
    s.env = env_;
    s.cwd = "/tmp/w";
    s.mem_mib = 512;
    s.seed = 42;
    s.schedule = 0;
    s.quantum_ns = 5000;
    s.epoch_s = 1767225600; /* 2026-01-01 */
    s.cpu_model = "rewind-v1";
    return s;
}

/* Two segments: schedule 3 over [0, 1200), then schedule 4 from 1200 on. */
static const struct sched perturb_ = {
    .seed = 42,
    .n = 2,
    .seg = {{.schedule = 3,
             .from = 0,
             .until = 1200,
             .origin = 0,
             .horizon = 65536,
             .span_from = 0,
             .span_until = 1200},
            {.schedule = 4,
             .from = 1200,
             .until = UINT64_MAX,
             .origin = 1000,
             .horizon = 4096,
             .span_from = 1200,
             .span_until = UINT64_MAX}},
};

#define JSON_HEAD                                                                                  \
    "{\"argv\":[\"sh\",\"-c\",\"echo \\\"h\\u00E9llo\\\" $HOME; exit 3\"],\"cpu\":\"rewind-v1\","  \
    "\"cwd\":\"/tmp/w\",\"env\":[\"PATH=/usr/bin:/bin\",\"HOME=/root\",\"SP=a b\"],"               \
    "\"epoch\":1767225600,\"image\":\"" HASH_I "\",\"init\":\"" HASH_B "\","
#define JSON_TAIL "\"mem_mib\":512,"

static const char plain_json[] = JSON_HEAD "\"kernel\":\"" HASH_A "\"," JSON_TAIL
                                           "\"quantum_ns\":5000,\"schedule\":0,\"seed\":42,"
                                           "\"version\":1}";
static const char perturbed_json[] =
    JSON_HEAD "\"kernel\":\"" HASH_A "\"," JSON_TAIL
              "\"perturb\":[[3,0,1200,0,65536],[4,1200,null,1000,4096]],"
              "\"quantum_ns\":5000,\"schedule\":3,\"seed\":42,\"version\":1}";
static const char session_json[] =
    JSON_HEAD "\"inspect\":{\"at\":123456,\"inputs\":\"" HASH_C "\",\"kind\":\"shell\",\"pid\":17},"
              "\"kernel\":\"" HASH_A "\"," JSON_TAIL
              "\"quantum_ns\":5000,\"schedule\":0,\"seed\":42,\"version\":1}";

/* spec_to_json(s) is exactly want, and spec_id(s) exactly id. */
static void check_spec(const struct run_spec *s, const char *want, const char *id, const char *what)
{
    char *j = spec_to_json(s);
    char got[17];
    CHECK(j && !strcmp(j, want), what);
    if (j && strcmp(j, want))
        fprintf(stderr, "  got:  %s\n  want: %s\n", j, want);
    free(j);
    spec_id(s, got);
    CHECK(!strcmp(got, id), what);
    if (strcmp(got, id))
        fprintf(stderr, "  id got %s, want %s\n", got, id);
}

static void test_spec_ids(void)
{
    struct run_spec s = base_spec();
    check_spec(&s, plain_json, "9000e98d419f8e27", "plain spec: canonical JSON and id");

    s.perturb = &perturb_;
    s.schedule = 3;
    check_spec(&s, perturbed_json, "6c50b59e93ef9df9", "perturbed spec: canonical JSON and id");

    /* an empty perturbation is no perturbation: the plain id */
    struct sched none = {.seed = 42};
    s.perturb = &none;
    s.schedule = 0;
    check_spec(&s, plain_json, "9000e98d419f8e27", "no segments: the unperturbed id");

    s = base_spec();
    s.inspect_kind = "shell";
    s.inspect_pid = 17;
    s.inspect_at = 123456;
    s.inputs_hash = HASH_C;
    check_spec(&s, session_json, "54169eb9de0a41f7", "shell session spec: canonical JSON and id");
}

/* The perturbation read back from the JSON is the one written. */
static void test_perturb_round_trip(void)
{
    json_error_t je;
    json_t *j = json_loads(perturbed_json, 0, &je);
    struct sched back;
    memset(&back, 0, sizeof(back));
    CHECK(j && spec_parse_perturb(j, &back) == 0, "parse the perturbation back");
    CHECK(back.n == perturb_.n, "as many segments");
    for (unsigned i = 0; i < back.n && i < perturb_.n; i++) {
        const struct sched_segment *a = &back.seg[i], *b = &perturb_.seg[i];
        CHECK(a->schedule == b->schedule && a->from == b->from && a->until == b->until &&
                  a->origin == b->origin && a->horizon == b->horizon &&
                  a->span_from == b->span_from && a->span_until == b->span_until,
              "segment read back as written");
    }
    json_decref(j);
    /* a narrowing probe's segment: its span as two more fields (sched.h
     * invariant 3); a span that does not hold the window, or spans out of
     * order, are refused (a spec may come from an archive) */
    static const char *const ok = "{\"perturb\":[[4,500,900,30,800,30,null]]}";
    static const char *const bad[] = {
        "{\"perturb\":[[4,500,900,30,800,600,null]]}", /* span starts inside */
        "{\"perturb\":[[4,500,900,30,800,30,700]]}",   /* span ends inside */
        "{\"perturb\":[[4,500,900,30,800,30]]}",       /* six fields */
        "{\"perturb\":[[4,500,900,30,800,30,\"x\"]]}",
        "{\"perturb\":[[3,0,1200,0,9],[4,100,null,0,9]]}", /* overlapping */
        "{\"perturb\":[[4,500,500,30,800]]}",              /* an empty span */
        "{\"perturb\":[[4,-1,900,30,800]]}",               /* a negative step */
        "{\"perturb\":[[4,30,900,30,800,-5,null]]}",       /* a negative span */
    };
    memset(&back, 0, sizeof(back));
    j = json_loads(ok, 0, &je);
    CHECK(j && spec_parse_perturb(j, &back) == 0 && back.n == 1 && back.seg[0].span_from == 30 &&
              back.seg[0].span_until == UINT64_MAX && back.seg[0].from == 500 &&
              back.seg[0].until == 900,
          "a probe's span read back");
    json_decref(j);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        memset(&back, 0, sizeof(back));
        j = json_loads(bad[i], 0, &je);
        CHECK(j && spec_parse_perturb(j, &back) < 0, bad[i]);
        json_decref(j);
    }
}

static void check_job(char **argv, char **env, const char *cwd, const char *want, size_t wantlen,
                      const char *what)
{
    size_t len = 0;
    char *b = job_encode(argv, env, cwd, &len);
    CHECK(b && len == wantlen && !memcmp(b, want, wantlen), what);
    free(b);
}

static void test_job_bytes(void)
{
    static const char full[] = "REWINDJOB1\0"
                               "3\0"
                               "sh\0"
                               "-c\0"
                               "echo \"h\xc3\xa9llo\" $HOME; exit 3\0"
                               "3\0"
                               "PATH=/usr/bin:/bin\0"
                               "HOME=/root\0"
                               "SP=a b\0"
                               "/tmp/w";
    CHECK(sizeof(full) == 93, "the literal is the 93 bytes computed on main");
    check_job(argv_, env_, "/tmp/w", full, sizeof(full), "job bytes of a full job");

    static const char empty[] = "REWINDJOB1\0"
                                "0\0"
                                "0\0"
                                "/";
    char *none[] = {NULL};
    check_job(none, NULL, "/", empty, sizeof(empty), "job bytes of an empty job");
}

/* The decisions of schedule sch (seed 42, window [0, end), horizon h) over
 * steps 0..19999, one "step action ns" line each, hashed; the first few
 * into first[]. A perturbed run's behaviour (not its id) hangs on these. */
static void decisions(uint64_t sch, uint64_t h, char hex[65], uint64_t first[][3], int nfirst,
                      int *count)
{
    struct sched s = {.seed = 42};
    CHECK(sched_push(&s, sch, 0, UINT64_MAX, 0, h) == 0, "push a segment");
    size_t cap = 1 << 20, o = 0;
    char *buf = malloc(cap);
    *count = 0;
    for (uint64_t step = 0; buf && step < 20000; step++) {
        struct sched_decision d = sched_decide(&s, step, 0);
        if (d.action == SCHED_NONE)
            continue;
        o += (size_t)snprintf(buf + o, cap - o, "%llu %d %llu\n", (unsigned long long)step,
                              (int)d.action, (unsigned long long)d.ns);
        if (*count < nfirst) {
            first[*count][0] = step;
            first[*count][1] = (uint64_t)d.action;
            first[*count][2] = d.ns;
        }
        (*count)++;
    }
    hash256 digest;
    hash_buf(buf ? buf : "", o, &digest);
    hash_hex(&digest, hex);
    free(buf);
}

static void test_sched_decisions(void)
{
    char hex[65];
    uint64_t got[4][3];
    int n;
    decisions(3, 65536, hex, got, 4, &n);
    static const uint64_t random4[4][3] = {{16, SCHED_STALL, 660000},
                                           {22, SCHED_PREEMPT, 0},
                                           {26, SCHED_PREEMPT, 0},
                                           {30, SCHED_TIMER_SLACK, 630000}};
    CHECK(n == 1291, "random: 1291 decisions in 20000 steps");
    CHECK(!memcmp(got, random4, sizeof(random4)), "random: the first four decisions");
    CHECK(!strcmp(hex, "d9357fad47025af08dc84f93febb94b20714670dc65ff68182330ff1a7a48a8e"),
          "random: every decision");
    decisions(4, 20000, hex, got, 3, &n);
    static const uint64_t pct3[3][3] = {{12867, SCHED_STALL, 2000000},
                                        {13767, SCHED_STALL, 4000000},
                                        {13881, SCHED_STALL, 2000000}};
    CHECK(n == 3 && !memcmp(got, pct3, sizeof(pct3)), "pct: its three change points");
    CHECK(!strcmp(hex, "6e4a62d26c761167df38f2b017b719b799c16ea4350d820807f0fd6af02e0040"),
          "pct: every decision");
}

/* gdb's writes (src/input/patch.h): a spec with them gets a "gdb_writes"
 * key (pinned), they parse back to the same writes, and every form but
 * the canonical one, or beyond the limits, is refused (invariant 4). */
static struct rw_patch patch_;
static void test_gdb_writes(void)
{
    struct rw_patch *p = &patch_;
    memset(p, 0, sizeof(*p));
    p->at = 1234;
    struct rw_regs r = {.rax = 0x1234abcd, .rip = 0x401000, .rflags = 0x246, .r15 = UINT64_MAX};
    CHECK(rw_patch_mem(p, 77, 0x4c6f30, "\x40\x42\x0f\x00", 4) == 0, "a memory write");
    CHECK(rw_patch_regs(p, 78, &r) == 0, "a register write");
    CHECK(rw_patch_mem(p, 77, 1, "", 0) < 0, "an empty memory write is refused");
    struct run_spec s = base_spec();
    s.patch = p;
    char *j = spec_to_json(&s);
    const char *want =
        "\"gdb_writes\":{\"at\":1234,\"ops\":[[\"mem\",77,\"4c6f30\",\"40420f00\"],[\"regs\",78,"
        "\"cdab341200000000000000000000000000000000000000000000000000000000000000000000000000000000"
        "0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
        "0000000000000000000000000000000000000000000000000000000000000000ffffffffffffffff00104000"
        "000000004602000000000000\"]]}";
    CHECK(j && strstr(j, want), "the spec names the writes in order, canonically");
    json_error_t je;
    json_t *o = j ? json_loads(j, 0, &je) : NULL;
    struct rw_patch *back = NULL;
    CHECK(o &&
              patch_from_json(json_object_get(o, "gdb_writes"), &back, je.text, sizeof(je.text)) ==
                  0 &&
              back,
          "the writes parse back");
    CHECK(back && back->at == 1234 && back->n == 2 && back->op[0].len == 4 &&
              !memcmp(back->bytes, "\x40\x42\x0f\x00", 4) && back->op[1].regs &&
              !memcmp(&back->op[1].r, &r, sizeof(r)),
          "the same writes");
    free(back);
    json_decref(o);
    free(j);
    s.patch = NULL;
    j = spec_to_json(&s);
    CHECK(j && !strstr(j, "gdb_writes"), "a spec without writes has no gdb_writes key");
    free(j);
    static const char *bad[] = {
        "{\"at\":5,\"ops\":[[\"mem\",77,\"04c6f30\",\"40\"]]}", /* a leading zero */
        "{\"at\":5,\"ops\":[[\"mem\",77,\"4C6F30\",\"40\"]]}",  /* uppercase */
        "{\"at\":5,\"ops\":[[\"mem\",77,\"4c6f30\",\"4\"]]}",   /* odd hex */
        "{\"at\":5,\"ops\":[[\"mem\",77,\"4c6f30\",\"\"]]}",    /* no bytes */
        "{\"at\":5,\"ops\":[[\"mem\",0,\"4c6f30\",\"40\"]]}",   /* pid 0 */
        "{\"at\":5,\"ops\":[[\"mem\",77,\"10000000000000000\",\"40\"]]}",
        "{\"at\":0,\"ops\":[[\"mem\",77,\"4c6f30\",\"40\"]]}", /* step 0 */
        "{\"at\":5,\"ops\":[]}",
        "{\"at\":5,\"ops\":[[\"regs\",77,\"00\"]]}",
        "{\"at\":5,\"ops\":[[\"poke\",77,\"4c6f30\",\"40\"]]}",
        "{\"at\":5,\"ops\":[[\"mem\",77,\"4c6f30\",\"40\"]],\"x\":1}",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        json_t *v = json_loads(bad[i], 0, &je);
        struct rw_patch *q = NULL;
        char why[200];
        CHECK(v && patch_from_json(v, &q, why, sizeof(why)) < 0 && !q, bad[i]);
        json_decref(v);
    }
    /* The limits: 257 writes, and 65537 bytes of memory writes. */
    json_t *ops = json_array();
    for (int i = 0; i < RW_PATCH_OPS_MAX + 1; i++)
        json_array_append_new(ops, json_pack("[s,i,s,s]", "mem", 77, "10", "40"));
    json_t *v = json_pack("{s:i,s:o}", "at", 5, "ops", ops);
    char why[200];
    struct rw_patch *q = NULL;
    CHECK(patch_from_json(v, &q, why, sizeof(why)) < 0 && !q, "257 writes are refused");
    json_decref(v);
    char *big = malloc(2 * (RW_PATCH_BYTES_MAX + 1) + 1);
    memset(big, 'a', 2 * (RW_PATCH_BYTES_MAX + 1));
    big[2 * (RW_PATCH_BYTES_MAX + 1)] = 0;
    v = json_pack("{s:i,s:[[s,i,s,s]]}", "at", 5, "ops", "mem", 77, "10", big);
    CHECK(v && patch_from_json(v, &q, why, sizeof(why)) < 0 && !q, "65537 bytes are refused");
    json_decref(v);
    big[2 * RW_PATCH_BYTES_MAX] = 0;
    v = json_pack("{s:i,s:[[s,i,s,s]]}", "at", 5, "ops", "mem", 77, "10", big);
    CHECK(v && patch_from_json(v, &q, why, sizeof(why)) == 0 && q && q->nbytes == 65536,
          "65536 bytes are not");
    free(q);
    json_decref(v);
    free(big);
}

int main(void)
{
    test_spec_ids();
    test_gdb_writes();
    test_sched_decisions();
    test_perturb_round_trip();
    test_job_bytes();
    return unit_done();
}
