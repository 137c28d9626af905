/*
 * golden_test: the run id of a fixed spec and the job encoding are pinned.
 *
 * A run id is the first 16 hex digits of the SHA-256 of the spec's canonical
 * JSON (src/run/spec.h), and the guest's init parses the job bytes
 * (src/run/job.h), so a change to either silently changes every run id or
 * breaks every guest. The expected values below were computed once with the
 * code of issue 10's starting point (main at 503419c) and written in as
 * literals: this test fails if a refactor changes one byte of them.
 *
 * The schedule decisions (src/vmm/sched.h) are pinned the same way: a
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

#include "run/job.h"
#include "run/spec.h"
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
    .seg = {{.schedule = 3, .from = 0, .until = 1200, .origin = 0, .horizon = 65536},
            {.schedule = 4, .from = 1200, .until = UINT64_MAX, .origin = 1000, .horizon = 4096}},
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
                  a->origin == b->origin && a->horizon == b->horizon,
              "segment read back as written");
    }
    json_decref(j);
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
        struct sched_decision d = sched_decide(&s, step);
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

int main(void)
{
    test_spec_ids();
    test_sched_decisions();
    test_perturb_round_trip();
    test_job_bytes();
    return unit_done();
}
