/*
 * serve_harden_test: defects 1 and 11 of issue 27 against serve's reading
 * API (src/serve/api.c, compiled in) over a fixture home (runfix.h): a
 * lanes range from 0 to 2^64 - 1 and a manifest whose "steps" is -1 do not
 * divide by a wrapped 0 (api.c inv. 5); an error line that is not UTF-8
 * gives an error reply, not a NULL body (inv. 4); a lane whose exec name is
 * not UTF-8, or cut inside a character, is still listed.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runfix.h"
#include "serve/api.c"
#include "unit.h"

#define RUN_A "aaaa000000000001"
#define RUN_M "eeee000000000005"

static char home[64];

struct args {
    const char *k[4], *v[4];
};

static const char *arg_of(void *ctx, const char *key)
{
    struct args *a = ctx;
    for (int i = 0; i < 4 && a->k[i]; i++)
        if (!strcmp(a->k[i], key))
            return a->v[i];
    return NULL;
}

static struct serve_reply get(rw_home *h, const char *path, struct args *a)
{
    struct serve_reply r = {0};
    struct args none = {0};
    serve_api_get(h, path, arg_of, a ? a : &none, &r);
    return r;
}

/* runs/RUN_M: a trace of exec records by pids 2, 3, 4 whose names are
 * UTF-8, not UTF-8, and UTF-8 cut inside a character by the lane's 63
 * bytes, and a manifest that says "steps": -1. */
static int fix_exec_run(void)
{
    char d[200], p[300];
    snprintf(d, sizeof d, "%s/runs/%s", home, RUN_M);
    if (io_mkdir_p(d) < 0)
        return -1;
    snprintf(p, sizeof p, "%s/manifest.json", d);
    int rc = rundir_write_file(p, "{\"id\":\"" RUN_M "\",\"state\":\"complete\",\"steps\":-1,"
                                  "\"events\":-5,\"created\":7,\"spec\":{\"argv\":[\"x\"]}}\n");
    snprintf(p, sizeof p, "%s/spec.json", d);
    rc |= rundir_write_file(p, "{\"argv\":[\"x\"]}\n");
    char cut[96] = "/bin/";
    size_t k = strlen(cut);
    while (k < 5 + 62)
        cut[k++] = 'a';
    memcpy(cut + k, "\xc3\xa9\xc3\xa9", 4); /* the lane's 63 bytes end inside the first é */
    cut[k + 4] = 0;
    const char *names[] = {"/bin/caf\xc3\xa9", "/bin/\xff\xfe-bad", cut};
    struct trace_writer w;
    snprintf(p, sizeof p, "%s/trace", d);
    rc |= trace_open_write(&w, p);
    for (int i = 0; i < 3; i++) {
        uint8_t buf[256] = {0};
        struct rewind_record *r = (struct rewind_record *)buf;
        size_t n = strlen(names[i]);
        r->kind = REWIND_REC_EXEC;
        r->pid = r->tid = (uint32_t)(2 + i);
        r->len = (uint32_t)(sizeof(*r) + n + 1);
        memcpy(buf + sizeof(*r), names[i], n + 1);
        trace_append(&w, 10 + (uint64_t)i, r);
    }
    rc |= trace_close(&w);
    return rc;
}

static void test_lanes_whole_range(rw_home *h)
{
    struct args a = {{"from", "to", "n"}, {"0", "18446744073709551615", "4096"}};
    struct serve_reply r = get(h, "run/" RUN_A "/lanes", &a);
    CHECK(r.status == 200 && json_integer_value(json_object_get(r.body, "count")) == 3,
          "lanes from 0 to 2^64-1 count the run's 3 events (no SIGFPE)");
    json_decref(r.body);
    struct args b = {{"from", "to", "n"}, {"18446744073709551615", "18446744073709551615", "7"}};
    r = get(h, "run/" RUN_A "/lanes", &b);
    CHECK(r.status == 200 && json_integer_value(json_object_get(r.body, "n")) == 1,
          "a one-step range at 2^64-1 has one bucket");
    json_decref(r.body);
}

static void test_summary_negative_steps(rw_home *h)
{
    struct args a = {{"n"}, {"4096"}};
    struct serve_reply r = get(h, "run/" RUN_M "/summary", &a);
    CHECK(r.status == 200 && r.body, "summary of a manifest with steps -1 answers");
    json_t *run = json_object_get(r.body, "run");
    CHECK(json_integer_value(json_object_get(run, "steps")) == 0 &&
              json_integer_value(json_object_get(run, "events")) == 0,
          "negative counts read as 0");
    /* defect 11: every lane is listed, with a name that is valid UTF-8 */
    json_t *lanes = json_object_get(r.body, "lanes");
    CHECK(json_array_size(lanes) == 3, "three lanes, whatever their exec names' bytes");
    const char *n0 = json_string_value(json_object_get(json_array_get(lanes, 0), "name"));
    const char *n2 = json_string_value(json_object_get(json_array_get(lanes, 2), "name"));
    CHECK(n0 && !strcmp(n0, "caf\xc3\xa9"), "a UTF-8 name as is");
    CHECK(n2 && strlen(n2) == 62 && n2[61] == 'a', "a name cut inside a character loses that part");
    json_decref(r.body);
}

static void test_error_not_utf8(void)
{
    struct serve_reply r = {0};
    serve_reply_error(&r, 500, "fork failed: %s", "\xff\xfe\xc3");
    const char *e = json_string_value(json_object_get(r.body, "error"));
    CHECK(r.status == 500 && e && !strncmp(e, "fork failed: ", 13),
          "an error line that is not UTF-8 still makes an error reply");
    json_decref(r.body);
    char big[2000];
    memset(big, 'x', sizeof big);
    memcpy(big + 1180, "\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac", 12);
    big[sizeof big - 1] = 0;
    r = (struct serve_reply){0};
    serve_reply_error(&r, 500, "%s", big); /* cut at 1199 bytes, inside a € */
    e = json_string_value(json_object_get(r.body, "error"));
    CHECK(e && strlen(e) < 1200 && !strncmp(e, "xxxx", 4), "a long error cut inside a character");
    json_decref(r.body);
}

/* a number in a query is decimal digits below 2^64, nothing else: a sign,
 * a space, a wrap or a word is a 400, never a number strtoull made of it */
static void test_query_numbers(rw_home *h)
{
    static const char *const bad[] = {"-1", "+5",  " 5",  "18446744073709551616",
                                      "5x", "abc", "0x10"};
    int refused = 0;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct args a = {{"from", "to"}, {bad[i], "3"}};
        struct serve_reply r = get(h, "run/" RUN_A "/lanes", &a);
        refused += r.status == 400;
        if (r.status != 400)
            fprintf(stderr, "  from=%s: %u\n", bad[i], r.status);
        json_decref(r.body);
    }
    CHECK(refused == (int)(sizeof(bad) / sizeof(bad[0])), "every malformed number is a 400");
    uint64_t v = 0;
    struct args ok = {{"n"}, {"18446744073709551615"}};
    CHECK(serve_arg_u64(arg_of, &ok, "n", 0, &v) == 0 && v == UINT64_MAX, "2^64 - 1 is a number");
}

int main(void)
{
    (void)fix_put_pages, (void)fix_snapshot, (void)fix_page_readable;
    snprintf(home, sizeof home, "/tmp/serve_harden_test.%d", (int)getpid());
    rundir_remove_tree(home);
    char img[65];
    rw_home *h = NULL;
    struct rw_error err;
    if (fix_image(home, "root image", img) < 0 ||
        fix_run(home, RUN_A, img, NULL, 0, NULL, 0, 0) < 0 || fix_exec_run() < 0 ||
        rw_home_open(home, &h, &err) < 0) {
        CHECK(0, "the fixture home");
        return unit_done();
    }
    test_lanes_whole_range(h);
    test_summary_negative_steps(h);
    test_error_not_utf8();
    test_query_numbers(h);
    rw_home_close(h);
    rundir_remove_tree(home);
    return unit_done();
}
