/*
 * props_test: properties (src/explore/props.h) judged over a fake stored run
 * (a manifest and a trace written here), the validation of --expect, the
 * Wilson interval, and that a spec or job without properties is byte for
 * byte what it was before properties existed.
 */
#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "explore/checkrec.h"
#include "explore/props.h"
#include "input/expect.h"
#include "input/job.h"
#include "input/spec.h"
#include "trace/trace.h"
#include "unit.h"

static char home[256];

static void rec(struct trace_writer *w, uint64_t step, unsigned kind, unsigned pid, uint64_t aux,
                const char *payload, size_t len)
{
    static uint8_t buf[REWIND_RECORD_MAX];
    struct rewind_record *r = (struct rewind_record *)buf;
    memset(r, 0, sizeof(*r));
    r->len = (uint32_t)(sizeof(*r) + len);
    r->kind = (uint16_t)kind;
    r->pid = pid;
    r->tid = pid;
    r->aux = aux;
    memcpy(buf + sizeof(*r), payload, len);
    trace_append(w, step, r);
}

#define MARK(w, step, pid, s) rec(w, step, REWIND_REC_MARK, pid, 0, s, sizeof(s) - 1)

/* A run "name" that exited with code, printed out, and whose rewind-init
 * reported the property's exit pexit (or none if < 0) and file 0's content. */
static void fake_run(const char *name, const char *expect_json, const char *property, int code,
                     const char *out, int pexit, const char *file0, int forge)
{
    char p[512];
    snprintf(p, sizeof(p), "%s/runs/%s", home, name);
    mkdir(p, 0755);
    json_t *spec = json_pack("{s:s}", "cwd", "/");
    if (expect_json)
        json_object_set_new(spec, "expect", json_loads(expect_json, 0, NULL));
    if (property)
        json_object_set_new(spec, "property", json_string(property));
    json_t *m = json_pack("{s:o,s:s,s:i,s:i}", "spec", spec, "outcome", "exited", "exit_code", code,
                          "steps", 1000000000);
    snprintf(p, sizeof(p), "%s/runs/%s/manifest.json", home, name);
    json_dump_file(m, p, 0);
    json_decref(m);
    snprintf(p, sizeof(p), "%s/runs/%s/trace", home, name);
    struct trace_writer w;
    CHECK(trace_open_write(&w, p) == 0, "trace written");
    rec(&w, 10, REWIND_REC_OUTPUT, 7, 1, out, strlen(out));
    if (forge) /* the job (pid 7) writes rewind-init's tag: ignored */
        MARK(&w, 20, 7, "rewind-init:property-exit\n0");
    if (pexit >= 0) {
        MARK(&w, 30, 1, "rewind-init:property-output\nchecking");
        char b[64];
        int n = snprintf(b, sizeof(b), "rewind-init:property-exit\n%d", pexit);
        rec(&w, 31, REWIND_REC_MARK, 1, 0, b, (size_t)n);
    }
    if (file0) {
        char b[256];
        int n = snprintf(b, sizeof(b), "rewind-init:file:0\n%s", file0);
        rec(&w, 40, REWIND_REC_MARK, 1, 0, b, (size_t)n);
    }
    MARK(&w, 50, 1, "rewind-init:file:7\nout of range"); /* index not in the spec */
    trace_close(&w);
}

static void test_valid(void)
{
    char why[300];
    CHECK(expect_valid("exit=0", why, sizeof(why)) == 0, "exit=0");
    CHECK(expect_valid("exit=255", why, sizeof(why)) == 0, "exit=255");
    CHECK(expect_valid("exit=256", why, sizeof(why)) < 0, "exit=256");
    CHECK(expect_valid("exit=", why, sizeof(why)) < 0, "exit=");
    CHECK(expect_valid("outcome=timeout", why, sizeof(why)) == 0, "outcome word");
    CHECK(expect_valid("outcome=fine", why, sizeof(why)) < 0, "unknown outcome");
    CHECK(expect_valid("output~^a+$", why, sizeof(why)) == 0, "output ERE");
    CHECK(expect_valid("output~(", why, sizeof(why)) < 0, "bad ERE");
    CHECK(strstr(why, "regular expression") != NULL, "says why");
    CHECK(expect_valid("file:/tmp/x~ok", why, sizeof(why)) == 0, "file");
    CHECK(expect_valid("file:tmp/x~ok", why, sizeof(why)) < 0, "relative file");
    CHECK(expect_valid("file:/tmp/x", why, sizeof(why)) < 0, "file without ~");
    CHECK(expect_valid("sometimes", why, sizeof(why)) < 0, "unknown kind");
}

static void test_judge(void)
{
    struct rw_prop_verdict v[RW_PROPS_MAX];
    int n = -1;
    char err[300];
    const char *ex = "[\"exit=0\",\"output~^saved$\",\"file:/tmp/count~^2$\"]";
    fake_run("good", ex, "test 1", 0, "saved\n", 0, "2\n", 0);
    CHECK(explore_props_judge(home, "good", v, RW_PROPS_MAX, &n, err, sizeof(err)) == 0, "judged");
    CHECK(n == 4, "three expectations and the property");
    for (int i = 0; i < n; i++)
        CHECK(v[i].passed && v[i].reached, v[i].what);
    CHECK(!strcmp(v[3].what, "property: test 1") && v[3].step == 31, "the property's step");
    CHECK(v[2].step == 40, "the file's step");

    fake_run("bad", ex, "test 1", 3, "saved\n", 1, "1\n", 1);
    CHECK(explore_props_judge(home, "bad", v, RW_PROPS_MAX, &n, err, sizeof(err)) == 0, "judged");
    CHECK(n == 4 && !v[0].passed && !strcmp(v[0].detail, "exit 3"), "exit=0 fails: exit 3");
    CHECK(v[1].passed, "the output is unchanged");
    CHECK(!v[2].passed && v[2].reached, "the file does not match");
    CHECK(!v[3].passed && strstr(v[3].detail, "exit 1, output: checking"), v[3].detail);

    /* A job that forges rewind-init's mark is not PID 1 (invariant 2). */
    fake_run("forged", "[]", "true", 0, "", -1, NULL, 1);
    CHECK(explore_props_judge(home, "forged", v, RW_PROPS_MAX, &n, err, sizeof(err)) == 0,
          "judged");
    CHECK(n == 1 && !v[0].passed && !v[0].reached, "a forged property exit is ignored");

    fake_run("none", NULL, NULL, 0, "x", -1, NULL, 0);
    CHECK(explore_props_judge(home, "none", v, RW_PROPS_MAX, &n, err, sizeof(err)) == 0 && n == 0,
          "no properties: no verdicts");
    /* A bad property in a stored (untrusted) spec is an error, not a crash. */
    fake_run("corrupt", "[\"output~(\"]", NULL, 0, "x", -1, NULL, 0);
    CHECK(explore_props_judge(home, "corrupt", v, RW_PROPS_MAX, &n, err, sizeof(err)) < 0,
          "a corrupt property is refused");
    /* The manifest claims 1e9 steps; the trace ends at step 50. */
    CHECK(explore_trace_last_step(home, "good") == 50, "the trace's last step");
    CHECK(v[0].step <= 51, "verdict steps are bounded by the trace");
}

static void test_wilson(void)
{
    double lo, hi;
    explore_wilson(0, 16, &lo, &hi);
    CHECK(lo == 0 && fabs(hi - 0.1936) < 0.001, "0 of 16: [0, 19.4%]");
    explore_wilson(8, 16, &lo, &hi);
    CHECK(fabs(lo - 0.2801) < 0.001 && fabs(hi - 0.7199) < 0.001, "8 of 16");
    explore_wilson(16, 16, &lo, &hi);
    CHECK(fabs(lo - 0.8064) < 0.001 && hi == 1, "16 of 16");
    explore_wilson(0, 0, &lo, &hi);
    CHECK(lo == 0 && hi == 1, "no schedules: nothing known");
}

static void test_unchanged_without_properties(void)
{
    static char *argv_[] = {"sh", "-c", "true", NULL}, *env_[] = {"HOME=/root", NULL};
    static char *ex[] = {"exit=0", "file:/a~b", "output~c", "file:/d/e~f", NULL};
    size_t l1, l2;
    char *a = job_encode(argv_, env_, "/", &l1);
    char *b = job_encode_props(argv_, env_, "/", NULL, NULL, &l2);
    CHECK(a && b && l1 == l2 && !memcmp(a, b, l1), "a job without properties is unchanged");
    free(b);
    static char *ex2[] = {"exit=0", NULL};
    b = job_encode_props(argv_, env_, "/", NULL, ex2, &l2);
    CHECK(b && l1 == l2 && !memcmp(a, b, l1), "only exit= properties: the job is unchanged");
    free(b);
    b = job_encode_props(argv_, env_, "/", "test -e x", ex, &l2);
    static const char tail[] = "REWINDPROPS1\0test -e x\0002\0/a\0/d/e";
    CHECK(b && l2 == l1 + sizeof(tail) && !memcmp(a, b, l1) && !memcmp(b + l1, tail, sizeof(tail)),
          "the properties section");
    free(a);
    free(b);

    struct run_spec s;
    memset(&s, 0, sizeof(s));
    s.argv = argv_;
    s.env = env_;
    s.cwd = "/";
    s.cpu_model = "x";
    char *j0 = spec_to_json(&s), id0[17], id1[17];
    spec_id(&s, id0);
    CHECK(j0 && !strstr(j0, "expect") && !strstr(j0, "property"), "no property fields");
    s.expect = ex2;
    s.property = "true";
    char *j1 = spec_to_json(&s);
    spec_id(&s, id1);
    CHECK(j1 && strstr(j1, "\"expect\":[\"exit=0\"]") && strstr(j1, "\"property\":\"true\""),
          "property fields in the spec");
    CHECK(strcmp(id0, id1) != 0, "properties change the id");
    static char *none[] = {NULL};
    s.expect = none;
    s.property = NULL;
    char *j2 = spec_to_json(&s);
    CHECK(j2 && !strcmp(j0, j2), "an empty expect list is absent");
    free(j0);
    free(j1);
    free(j2);
}

/* the range of each listed check: ranged's first is 2, every other's 1 */
static char ranged[RW_ID_MAX];
static int firsts_ok = 1;

struct seen {
    int n;
    const char *id;
};

static int count_check(void *ctx, const struct rw_check_info *c)
{
    struct seen *sn = ctx;
    if (!strcmp(c->id, sn->id)) {
        CHECK(!strcmp(c->base, "base1") && c->tried == 3 && c->failures == 1,
              "the record's fields");
        CHECK(c->nruns == 2 && !strcmp(c->runs[1], "run2"), "the record's runs");
        CHECK(c->found && c->narrowed && !strcmp(c->deciding, "77"), "the verdict");
    }
    if (c->first != (!strcmp(c->id, ranged) ? 2u : 1u))
        firsts_ok = 0;
    sn->n++;
    return 0;
}

static void test_checkrec(void)
{
    struct rw_check_report rep;
    memset(&rep, 0, sizeof(rep));
    rep.tried = 3;
    rep.failures = 1;
    rep.found = 1;
    rep.narrowed = 1;
    rep.schedule = 2;
    rep.deciding_step = 77;
    snprintf(rep.failing.id, sizeof(rep.failing.id), "run2");
    rep.nprops = 1;
    snprintf(rep.props[0].what, sizeof(rep.props[0].what), "exit=0");
    char runs[2][RW_ID_MAX] = {"run1", "run2"}, id[RW_ID_MAX], id2[RW_ID_MAX], err[300];
    struct checkrec_opts o = {.base = "base1", .start = 10, .schedules = 3};
    CHECK(checkrec_save(home, &o, &rep, runs, 2, id, err, sizeof(err)) == 0, "saved");
    CHECK(checkrec_save(home, &o, &rep, runs, 2, id2, err, sizeof(err)) == 0 && !strcmp(id, id2),
          "the same check has the same id (invariant 1)");
    o.schedules = 4;
    CHECK(checkrec_save(home, &o, &rep, runs, 1, id2, err, sizeof(err)) == 0 && strcmp(id, id2),
          "another check has another id");
    /* --schedules A..B: 1..N is the check of N (its id as before ranges
     * existed); a range that starts above 1 is another check */
    o.schedules = 3;
    o.first = 1;
    CHECK(checkrec_save(home, &o, &rep, runs, 2, id2, err, sizeof(err)) == 0 && !strcmp(id, id2),
          "schedules 1..3 is the check of 3 schedules: the same id");
    o.first = 2;
    CHECK(checkrec_save(home, &o, &rep, runs, 2, ranged, err, sizeof(err)) == 0 &&
              strcmp(id, ranged),
          "schedules 2..3 is another check");
    char p[600];
    snprintf(p, sizeof(p), "%s/checks/0123456789abcdef.json", home);
    FILE *f = fopen(p, "w");
    if (f) {
        fputs("{\"id\": 3", f);
        fclose(f);
    }
    rw_home *h;
    struct rw_error e;
    CHECK(rw_home_open(home, &h, &e) == 0, "home");
    struct seen sn = {0, id};
    CHECK(rw_checks_list(h, count_check, &sn, &e) == 3 && sn.n == 3,
          "three readable checks listed");
    CHECK(firsts_ok, "each listed check has its range's first schedule (2, or 1 for 1..N)");
    char *json = NULL, pre[8];
    snprintf(pre, sizeof(pre), "%.6s", id);
    CHECK(rw_check_record(h, pre, &json, &e) == 0 && json && strstr(json, "\"run2\""),
          "a record by its id's prefix");
    free(json);
    CHECK(rw_check_record(h, "0123456789abcdef", &json, &e) < 0 && e.code == RW_EUSAGE,
          "a corrupt record is refused (invariant 3)");
    CHECK(rw_check_record(h, "ffffffff", &json, &e) < 0 && strstr(e.msg, "no check"), "no check");
    rw_home_close(h);
}

int main(void)
{
    snprintf(home, sizeof(home), "/tmp/props_test.%d", (int)getpid());
    char p[300];
    mkdir(home, 0755);
    snprintf(p, sizeof(p), "%s/runs", home);
    mkdir(p, 0755);
    test_valid();
    test_judge();
    test_wilson();
    test_unchanged_without_properties();
    test_checkrec();
    char cmd[400];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", home);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", home);
    return unit_done();
}
