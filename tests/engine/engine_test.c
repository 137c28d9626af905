/* engine_test: the files the Slurm engine and its tasks exchange
 * (src/explore/engine.h): a plan and an outcome survive the round trip,
 * and a plan or an outcome file that is damaged (a missing field, a
 * negative or huge number, a run name that is a path) is refused with one
 * line, never used; a worker's answer becomes an outcome with the words
 * check prints. No VM. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "explore/engine.h"
#include "unit.h"

static int parse(const char *text)
{
    struct eng_plan p;
    void *hold;
    char err[300];
    int rc = eng_plan_parse(text, &p, &hold, err, sizeof(err));
    if (rc == 0)
        json_decref(hold);
    return rc;
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    fputs(text, f);
    fclose(f);
}

/* A worker's answer as an outcome (eng_outcome_of): the words `check`
 * prints for a schedule that could not run. */
static void test_outcome_of(void)
{
    struct cworker_result r;
    struct eng_outcome o;
    memset(&r, 0, sizeof(r));
    r.signal = 9;
    CHECK(eng_outcome_of(-1, &r, 5, &o) == -1 && !o.ok && o.schedule == 5 &&
              !strcmp(o.why, "its worker died (signal 9)"),
          "a worker killed by a signal");
    r.signal = 0;
    CHECK(eng_outcome_of(-1, &r, 5, &o) == -1 && !strcmp(o.why, "its worker died"),
          "a worker that died otherwise");
    CHECK(eng_outcome_of(0, &r, 6, &o) == -1 && !strcmp(o.why, "it failed"), "failed, no words");
    snprintf(r.e.msg, sizeof(r.e.msg), "no such run");
    CHECK(eng_outcome_of(0, &r, 6, &o) == -1 && !strcmp(o.why, "no such run"), "failed: why");
    r.ok = 1;
    snprintf(r.r.id, sizeof(r.r.id), "feedfeedfeedfeed");
    CHECK(eng_outcome_of(0, &r, 7, &o) == 0 && o.ok && o.schedule == 7 &&
              !strcmp(o.r.id, "feedfeedfeedfeed"),
          "a run");
}

int main(void)
{
    test_outcome_of();
    struct eng_plan p = {.home = "/h",
                         .base = "0123456789abcdef",
                         .first = 1,
                         .last = 32,
                         .start = 1234,
                         .horizon = 99,
                         .vary_seed = 1,
                         .timeout_s = 60,
                         .spin_limit_s = 0,
                         .kernel = "/k",
                         .jobs = 4};
    char *t = eng_plan_json(&p);
    CHECK(t != NULL, "the plan as JSON");
    struct eng_plan q;
    void *hold = NULL;
    char err[300];
    CHECK(eng_plan_parse(t, &q, &hold, err, sizeof(err)) == 0, "the plan parses back");
    CHECK(q.first == 1 && q.last == 32 && q.start == 1234 && q.horizon == 99 && q.vary_seed == 1 &&
              q.jobs == 4 && q.timeout_s == 60 && !strcmp(q.base, p.base) &&
              !strcmp(q.kernel, "/k") && q.init == NULL,
          "every field survives");
    free(t);
    json_decref(hold);

    const char *good = "{\"version\":1,\"home\":\"/h\",\"base\":\"0123456789abcdef\",\"first\":1,"
                       "\"last\":2,\"start\":5,\"horizon\":3,\"jobs\":1,\"vary_seed\":false,"
                       "\"timeout_s\":1.0,\"spin_limit_s\":0.0";
    char buf[1024];
    snprintf(buf, sizeof(buf), "%s}", good);
    CHECK(parse(buf) == 0, "a minimal plan parses");
    snprintf(buf, sizeof(buf), "%s,\"base\":\"../../etc\"}", good);
    CHECK(parse(buf) < 0, "a base run that is a path is refused");
    snprintf(buf, sizeof(buf), "%s,\"first\":0}", good);
    CHECK(parse(buf) < 0, "schedule 0 is not a task's");
    snprintf(buf, sizeof(buf), "%s,\"last\":99999999999}", good);
    CHECK(parse(buf) < 0, "a huge range is refused");
    snprintf(buf, sizeof(buf), "%s,\"start\":-1}", good);
    CHECK(parse(buf) < 0, "a negative step is refused");
    snprintf(buf, sizeof(buf), "%s,\"version\":2}", good);
    CHECK(parse(buf) < 0, "another version is refused");
    CHECK(parse("[1,2]") < 0 && parse("not json") < 0, "not an object");

    char dir[] = "/tmp/engine_test.XXXXXX";
    CHECK(mkdtemp(dir) != NULL, "a temporary directory");
    char path[256];
    snprintf(path, sizeof(path), "%s/7.json", dir);
    struct eng_outcome o = {.schedule = 7, .ok = 1};
    snprintf(o.r.id, sizeof(o.r.id), "fedcba9876543210");
    o.r.outcome = RW_EXITED;
    o.r.exit_code = 3;
    o.r.steps = 12345;
    snprintf(o.r.output_hash, sizeof(o.r.output_hash), "%064d", 0);
    snprintf(o.where, sizeof(o.where), "node2 task 1");
    CHECK(eng_outcome_write(path, &o, err, sizeof(err)) == 0, "an outcome is written");
    struct eng_outcome b;
    CHECK(eng_outcome_read(path, &b, err, sizeof(err)) == 0, "and read back");
    CHECK(b.schedule == 7 && b.ok && !strcmp(b.r.id, o.r.id) && b.r.outcome == RW_EXITED &&
              b.r.exit_code == 3 && b.r.steps == 12345 && !strcmp(b.where, "node2 task 1") &&
              !strcmp(b.r.output_hash, o.r.output_hash),
          "every field survives");
    write_file(path, "{\"schedule\":7,\"ok\":true,\"where\":\"n\",\"id\":\"../x\",\"outcome\":1,"
                     "\"exit_code\":0,\"steps\":1,\"output_hash\":\"a\"}");
    CHECK(eng_outcome_read(path, &b, err, sizeof(err)) < 0, "a run id that is a path is refused");
    write_file(path, "{\"schedule\":7,\"ok\":true,\"where\":\"n\",\"id\":\"abc\",\"outcome\":9999,"
                     "\"exit_code\":0,\"steps\":1,\"output_hash\":\"a\"}");
    CHECK(eng_outcome_read(path, &b, err, sizeof(err)) < 0, "an unknown outcome is refused");
    write_file(path, "{\"schedule\":7,\"ok\":false,\"where\":\"n\"}");
    CHECK(eng_outcome_read(path, &b, err, sizeof(err)) < 0, "a failure without why is refused");
    write_file(path, "{\"schedule\":7,\"ok\":false,\"where\":\"n\",\"why\":\"boom\"}");
    CHECK(eng_outcome_read(path, &b, err, sizeof(err)) == 0 && !b.ok && !strcmp(b.why, "boom"),
          "a failure with why reads");
    write_file(path, "{\"schedule\":7,");
    CHECK(eng_outcome_read(path, &b, err, sizeof(err)) < 0, "a torn file is refused");
    unlink(path);
    rmdir(dir);
    return unit_done();
}
