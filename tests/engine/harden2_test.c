/* harden2_test: regression tests for defects 8, 10 and 11 of issue 11, on a
 * fixture home (runfix.h, no VM): a write blocked on a full pipe gives up
 * when the abort flag is set, the disk limits' arithmetic, names that keep
 * resolving and never stand for an id, "@" that a future "created" cannot
 * take, ls --json that escapes what a manifest says, an import that refuses
 * hostile names, dates and memory sizes, and a session's inputs that travel
 * in an archive. docs/reliability.md says what each limit and check is. */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "archive/archive.h"
#include "home/runnames.h"
#include "rewind.h"
#include "run/ctx.h"
#include "input/limits.h"
#include "runfix.h"
#include "unit.h"
#include "util/io.h"

#define RUN_A "aaaa000000000001"
#define RUN_B "bbbb000000000002"
#define RUN_C "cccc000000000003"
#define RUN_S "dddd000000000004"

static char home[64];

/* ---- defect 8: a write blocked on a full pipe, --timeout ---------------- */

static volatile sig_atomic_t flag, alarms;

static void on_alarm(int sig)
{
    (void)sig;
    flag = 1;
    if (++alarms > 20) { /* the loop retried for 2 s after the flag: it hangs */
        static const char m[] = "FAIL harden2_test: io_write_all ignores the abort flag\n";
        (void)!write(2, m, sizeof(m) - 1);
        _exit(1);
    }
}

static void test_write_gives_up_on_abort(void)
{
    int p[2];
    CHECK(pipe(p) == 0, "pipe");
    /* fill the pipe: nobody reads it */
    fcntl(p[1], F_SETFL, O_NONBLOCK);
    char buf[65536];
    memset(buf, 'x', sizeof(buf));
    while (write(p[1], buf, sizeof(buf)) > 0)
        ;
    fcntl(p[1], F_SETFL, 0);
    struct sigaction sa = {.sa_handler = on_alarm}; /* no SA_RESTART, as the CLI's */
    sigemptyset(&sa.sa_mask);
    sigaction(SIGALRM, &sa, NULL);
    struct itimerval it = {.it_interval = {0, 100000}, .it_value = {0, 100000}};
    io_set_abort(&flag);
    setitimer(ITIMER_REAL, &it, NULL);
    int rc = io_write_all(p[1], buf, sizeof(buf));
    int e = errno;
    struct itimerval off = {0};
    setitimer(ITIMER_REAL, &off, NULL);
    io_set_abort(NULL);
    CHECK(rc == -1 && e == EINTR, "a write blocked on a full pipe gives up once aborted");
    CHECK(alarms <= 2, "it gives up at the first interruption after the flag");
    close(p[0]);
    close(p[1]);
}

static void test_limits(void)
{
    struct run_limits l;
    CHECK(run_limits_bytes(1) == 1u << 20 && run_limits_bytes(UINT64_MAX) == UINT64_MAX &&
              run_limits_bytes(1ull << 44) == UINT64_MAX,
          "MiB to bytes saturates instead of wrapping");
    run_limits_init(&l, 0, 0);
    CHECK(l.max_trace == rw_defaults.max_trace_mb << 20 && l.max_disk == rw_defaults.max_disk_mb
                                                                             << 20,
          "0 takes the defaults");
    run_limits_init(&l, 1, 3);
    int hit = 0;
    uint64_t n = 0;
    while (!hit && n < 100000) {
        hit = run_limits_trace(&l, 4000); /* entries of 4016 bytes */
        n++;
    }
    CHECK(hit && l.hit && !strcmp(l.hit, "trace") && n == (1u << 20) / 4016 + 1,
          "the trace cap is hit by the entry that passes 1 MiB");
    CHECK(!run_limits_trace(&l, 4000), "a cap is reported once");
    char msg[256];
    run_limits_message(&l, 77, msg, sizeof(msg));
    CHECK(strstr(msg, "trace limit of 1 MiB (--max-trace) hit at step 77") != NULL, msg);
    run_limits_init(&l, 10, 2);
    CHECK(!run_limits_trace(&l, 100) && !run_limits_keyframes(&l, 1 << 20) &&
              run_limits_keyframes(&l, 2 << 20) && !strcmp(l.hit, "disk"),
          "the disk cap counts trace, keyframes and pages together");
    run_limits_init(&l, 10, 1);
    CHECK(!run_limits_trace(&l, 100) && !run_limits_states(&l, (1 << 20) - 120) &&
              run_limits_states(&l, 8) && !strcmp(l.hit, "disk"),
          "the disk cap counts the --state-log file");
    run_limits_message(&l, 5, msg, sizeof(msg));
    CHECK(strstr(msg, "of state log") != NULL, msg);
    run_limits_init(&l, 10, 1);
    CHECK(!run_limits_states(&l, UINT64_MAX) || !strcmp(l.hit, "disk"),
          "a huge state log saturates, no wrap");
}

/* ---- defects 10 and 11: names, "@", ls --json ---------------------------- */

static int manifest(const char *run, const char *json)
{
    char p[4300];
    snprintf(p, sizeof(p), "%s/runs/%s/manifest.json", home, run);
    return rundir_write_file(p, json);
}

static int resolves_to(rw_home *h, const char *ref, const char *want)
{
    char id[RW_ID_MAX];
    struct rw_error err;
    return rw_resolve(h, ref, id, &err) == 0 && !strcmp(id, want);
}

static void test_names(rw_home *h)
{
    CHECK(runnames_valid("a") && runnames_valid("my run") && !runnames_valid("") &&
              !runnames_valid("@x") && !runnames_valid(".x") && !runnames_valid("a/b") &&
              !runnames_valid("a\nb") && !runnames_valid(RUN_A) && !runnames_valid(RUN_A "~2") &&
              runnames_valid("aaaa00000000000"),
          "what a name may be");
    /* run --name a, then the same spec again with --name b: run_finish
     * merges the names of the run it replaces (runnames_merged). */
    CHECK(manifest(RUN_A, "{\"id\":\"" RUN_A "\",\"created\":100,\"name\":\"a\"}") == 0,
          "a run named a");
    json_t *names = runnames_merged(home, RUN_A, "b");
    char *text = names ? json_dumps(names, JSON_COMPACT) : NULL;
    CHECK(text && !strcmp(text, "[\"a\",\"b\"]"), "the second name joins the first");
    char m[512];
    snprintf(m, sizeof(m), "{\"id\":\"" RUN_A "\",\"created\":100,\"name\":\"b\",\"names\":%s}",
             text ? text : "[]");
    free(text);
    json_decref(names);
    CHECK(manifest(RUN_A, m) == 0, "the re-run replaces the manifest");
    CHECK(resolves_to(h, "a", RUN_A) && resolves_to(h, "b", RUN_A),
          "both names resolve to the run");
    names = runnames_merged(home, RUN_A, NULL);
    CHECK(json_array_size(names) == 2, "a re-run without --name keeps both names");
    json_decref(names);

    /* An imported run named like a local id and created far in the future
     * takes neither the id nor "@". */
    CHECK(manifest(RUN_B, "{\"id\":\"" RUN_B "\",\"created\":200}") == 0 &&
              manifest(RUN_C, "{\"id\":\"" RUN_C "\",\"created\":9000000000000000000,"
                              "\"name\":\"" RUN_B "\"}") == 0,
          "a hostile manifest");
    CHECK(resolves_to(h, RUN_B, RUN_B), "an id resolves to its run, not to a run named so");
    CHECK(resolves_to(h, "@", RUN_B), "a far-future created does not make a run '@'");
}

static void test_ls_json_escapes(void)
{
    char rewind[4300], cmd[8800];
    if (access("build/rewind", X_OK) != 0) {
        SKIP("build/rewind is not built (run from the top of the tree)");
        return;
    }
    snprintf(rewind, sizeof(rewind), "build/rewind");
    CHECK(manifest(RUN_S, "{\"id\":\"" RUN_S "\",\"created\":300,\"state\":\"complete\","
                          "\"outcome\":\"ex\\\"ited\\\\\",\"parent\":\"p\\\"q\","
                          "\"spec\":{\"argv\":[\"a\\\"b\"]}}") == 0,
          "a manifest with quotes in outcome and parent");
    snprintf(cmd, sizeof(cmd), "REWIND_HOME=%s %s ls --json 2>/dev/null", home, rewind);
    FILE *p = popen(cmd, "r");
    char out[1 << 16];
    size_t n = p ? fread(out, 1, sizeof(out) - 1, p) : 0;
    if (p)
        pclose(p);
    out[n] = 0;
    json_error_t je;
    json_t *j = json_loads(out, 0, &je);
    CHECK(json_is_array(j), "ls --json is JSON whatever a manifest says");
    size_t i;
    json_t *x;
    int seen = 0;
    json_array_foreach(j, i, x)
    {
        const char *id = json_string_value(json_object_get(x, "id"));
        if (id && !strcmp(id, RUN_S))
            seen = !strcmp(json_string_value(json_object_get(x, "outcome")), "ex\"ited\\") &&
                   !strcmp(json_string_value(json_object_get(x, "parent")), "p\"q");
    }
    CHECK(seen, "outcome and parent come back as written");
    json_decref(j);
}

/* ---- defect 10: import validation, mem_mib, inputs ----------------------- */

static int import_of(const char *src_home, const char *run, const char *dst, char *err, size_t n)
{
    char arc[4300];
    struct archive_stats st;
    snprintf(arc, sizeof(arc), "%s/x.rewind", src_home);
    if (archive_export(src_home, run, 0, arc, &st, err, n) < 0)
        return -2;
    return archive_import(dst, arc, &st, err, n);
}

static void test_import_checks(void)
{
    char src[128], dst[128], img[65], err[512], p[4400];
    snprintf(src, sizeof(src), "%s/src", home);
    snprintf(dst, sizeof(dst), "%s/dst", home);
    char ra[17]; /* the source run: its id is its spec's hash (issue 27) */
    CHECK(fix_image(src, "root", img) == 0 && fix_hashed_run(src, img, ra, NULL, 0, 0) == 0 &&
              fix_run(dst, RUN_B, img, NULL, 0, NULL, 0, 0) == 0,
          "fixture homes");
    char m[512];
    snprintf(p, sizeof(p), "%s/runs/%s/manifest.json", src, ra);
    const char *bad[][2] = {
        {"\"name\":\"" RUN_B "\"", "a name that is a local id"},
        {"\"names\":[\"ok\",\"" RUN_C "\"]", "a name shaped like an id"},
        {"\"name\":\"a/b\"", "a name with a slash"},
        {"\"created\":9223372036854775807", "a far-future created"},
        {"\"spec\":{\"mem_mib\":17592186044416}", "mem_mib that wraps << 20"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        snprintf(m, sizeof(m), "{\"id\":\"%s\",\"state\":\"complete\",%s}\n", ra, bad[i][0]);
        CHECK(rundir_write_file(p, m) == 0, "hostile manifest");
        int rc = import_of(src, ra, dst, err, sizeof(err));
        char what[128];
        snprintf(what, sizeof(what), "import refuses %s", bad[i][1]);
        CHECK(rc == -1, what);
        char there[4400];
        snprintf(there, sizeof(there), "%s/runs/%s", dst, ra);
        CHECK(access(there, F_OK) != 0, "nothing of it is added");
    }
    /* a fine one, named, with a shell session's inputs */
    snprintf(m, sizeof(m),
             "{\"id\":\"%s\",\"state\":\"complete\",\"name\":\"fine\",\"created\":5,"
             "\"spec\":{\"image\":\"%s\",\"argv\":[\"/bin/true\"]}}\n",
             ra, img);
    CHECK(rundir_write_file(p, m) == 0, "fine manifest");
    snprintf(p, sizeof(p), "%s/runs/%s/inputs", src, ra);
    CHECK(fix_write(p, "RWINPUT1", 8) == 0, "an inputs file");
    int rc = import_of(src, ra, dst, err, sizeof(err));
    CHECK(rc == 0, err);
    snprintf(p, sizeof(p), "%s/runs/%s/inputs", dst, ra);
    CHECK(access(p, R_OK) == 0, "a session's inputs are exported and imported");

    /* a stored spec with a huge mem_mib is refused on load, not wrapped */
    json_t *spec =
        json_pack("{s:s, s:s, s:[s], s:[], s:I, s:I}", "image", img, "cwd", "/", "argv", "true",
                  "env", "mem_mib", (json_int_t)(1ll << 50), "quantum_ns", (json_int_t)5000);
    struct run_opts o;
    struct run_inspect ins;
    memset(&o, 0, sizeof(o));
    rc = run_opts_from_spec(spec, src, &o, &ins, err, sizeof(err));
    CHECK(rc < 0 && strstr(err, "MiB of guest RAM"), "a wrapping mem_mib is refused on load");
    json_decref(spec);
}

/* An import whose main run cannot be added after its parent was: the
 * parent is taken back (a dangling link in the main run's place passes the
 * checks, as a run appearing during the import would, and fails the
 * rename). */
static void test_import_takes_back_parents(void)
{
    char src[128], dst[128], img[65], err[512], p[4400], arc[4400];
    hash256 pp[4], cp[3];
    snprintf(src, sizeof(src), "%s/fsrc", home);
    snprintf(dst, sizeof(dst), "%s/fdst", home);
    CHECK(fix_image(src, "root", img) == 0 && fix_put_pages(src, 300, 4, pp) == 0 &&
              fix_put_pages(src, 400, 3, cp) == 0 &&
              fix_run(src, "parent", img, NULL, 0, pp, 4, 2) == 0 &&
              fix_run(src, "child", img, "parent", 10, cp, 3, 2) == 0,
          "a fork and its parent");
    struct archive_stats st;
    snprintf(arc, sizeof(arc), "%s/child.rewind", src);
    CHECK(archive_export(src, "child", 1, arc, &st, err, sizeof(err)) == 0 && st.runs == 2,
          "export --replayable");
    snprintf(p, sizeof(p), "%s/runs", dst);
    CHECK(io_mkdir_p(p) == 0, "runs/");
    snprintf(p, sizeof(p), "%s/runs/child", dst);
    CHECK(symlink("/nonexistent/rewind-test", p) == 0, "a dangling link where the child goes");
    CHECK(archive_import(dst, arc, &st, err, sizeof(err)) < 0, "the import fails");
    snprintf(p, sizeof(p), "%s/runs/parent", dst);
    CHECK(access(p, F_OK) != 0, "the parent it added is taken back");
}

int main(void)
{
    snprintf(home, sizeof(home), "/tmp/harden2_test.%d", (int)getpid());
    rundir_remove_tree(home);
    test_write_gives_up_on_abort();
    test_limits();
    char img[65];
    CHECK(fix_image(home, "root image", img) == 0, "fixture image");
    rw_home *h = NULL;
    struct rw_error err;
    CHECK(fix_run(home, RUN_A, img, NULL, 0, NULL, 0, 0) == 0 &&
              fix_run(home, RUN_B, img, NULL, 0, NULL, 0, 0) == 0 &&
              fix_run(home, RUN_C, img, NULL, 0, NULL, 0, 0) == 0 &&
              fix_run(home, RUN_S, img, NULL, 0, NULL, 0, 0) == 0,
          "fixture runs");
    CHECK(rw_home_open(home, &h, &err) == 0 && h, "open the home");
    if (h) {
        test_names(h);
        rw_home_close(h);
    }
    test_ls_json_escapes();
    test_import_checks();
    test_import_takes_back_parents();
    rundir_remove_tree(home);
    (void)fix_put_pages, (void)fix_snapshot, (void)fix_page_readable;
    return unit_done();
}
