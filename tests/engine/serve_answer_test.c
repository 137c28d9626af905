/*
 * serve_answer_test: how rewind serve reads what its children did (child.c
 * inv. 4): only from the JSON answer on their stdout (the commands'
 * --json), never from their words on stderr. The parser on buffers (an
 * answer, a cut one, one that is not an object; a stderr line that is not
 * UTF-8), then fork and cat through serve_action_post over a fixture home
 * (runfix.h), their children being this very binary (serve_spawn runs
 * /proc/self/exe) started as "rewind fork ..." or "rewind cat ...": it
 * answers as $SERVE_TEST_CHILD says, with a huge stderr that is not UTF-8
 * and holds a decoy of the closing line the server once scraped. And what
 * serve_spawn hands its children (spawn.c, over rw_spawn): stdin
 * /dev/null, stdout and stderr on pipes, fds 0..2 alone, no signal blocked
 * and SIGPIPE at its default though the server blocks SIGINT and SIGTERM
 * and ignores SIGPIPE.
 */
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "runfix.h"
#include "serve/action.c"
#include "serve/api.c"
#include "serve/child.c"
#include "serve/spawn.c"
#include "unit.h"

#define RUN_A "aaaa000000000001"
#define RUN_NEW "cccc000000000003"
#define DECOY "rewind: run deadbeefdeadbeef exited:0 after 9 steps\n"

/* 2 MiB of stderr: bytes that are not UTF-8, the decoy line among them. */
static void flood_stderr(void)
{
    static const char junk[] = "\xff\xfe\xc3(\x80 not utf-8 \xed\xa0\x80\n";
    for (int i = 0; i < 2 * 1024 * 1024 / (int)(sizeof junk - 1); i++) {
        if (fwrite(junk, 1, sizeof junk - 1, stderr) != sizeof junk - 1)
            return;
        if (i % 1000 == 0)
            fputs(DECOY, stderr);
    }
}

/* The child, as `rewind fork|cat ... --json` would answer: mode "ok",
 * "error" (an error answer), "none" (no answer: it died), "flood" (an
 * answer larger than the server keeps). */
static int child_main(const char *cmd, const char *mode)
{
    flood_stderr();
    if (!strcmp(mode, "error")) {
        printf("{\"error\":\"no keyframe before step 5 in " RUN_A "\",\"code\":2}\n");
        fputs(DECOY "rewind: \xff\xfe a last line that is not UTF-8\n", stderr);
        return 2;
    }
    if (!strcmp(mode, "none")) {
        fputs(DECOY "rewind: \xff\xfe died \xc3\n", stderr);
        return 125;
    }
    if (!strcmp(mode, "flood")) {
        printf("{\"id\":\"" RUN_NEW "\",\"summary\":\"");
        for (int i = 0; i < 100000; i++)
            fputs("xxxxxxxxxx", stdout);
        printf("\"}\n");
        return 0;
    }
    if (!strcmp(cmd, "cat")) {
        printf("{\"path\":\"/etc/hostname\",\"step\":5,\"status\":0,\"size\":6,"
               "\"truncated\":false,\"binary\":false,\"content\":\"h\\u00e9st\\n\"}\n");
        return 0;
    }
    printf("{\"id\":\"" RUN_NEW "\",\"parent\":\"" RUN_A "\",\"exit_code\":1,"
           "\"summary\":\"run " RUN_NEW " exited:1 after 40 steps\"}\n");
    fputs(DECOY, stderr); /* the last line the old server would have taken */
    return 1;
}

/* The child of test_spawn_state (`rewind spawn-state`): its signal masks,
 * its open fds and whether stdin is /dev/null, on stdout; "err" on stderr. */
static int child_state(void)
{
    char line[256], fds[256] = "";
    unsigned long long blk = ~0ull, ign = ~0ull;
    FILE *f = fopen("/proc/self/status", "re");
    while (f && fgets(line, sizeof line, f)) {
        if (!strncmp(line, "SigBlk:", 7))
            blk = strtoull(line + 7, NULL, 16);
        if (!strncmp(line, "SigIgn:", 7))
            ign = strtoull(line + 7, NULL, 16);
    }
    if (f)
        fclose(f);
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;
    while (d && (e = readdir(d)) && strlen(fds) < 200)
        if (e->d_name[0] != '.' && atoi(e->d_name) != dirfd(d))
            snprintf(fds + strlen(fds), sizeof fds - strlen(fds), "%d ", atoi(e->d_name));
    if (d)
        closedir(d);
    struct stat st;
    int null_in = fstat(0, &st) == 0 && S_ISCHR(st.st_mode) && st.st_rdev == makedev(1, 3);
    printf("blk=%llx ign=%llx fds=%sstdin=%s\n", blk, ign, fds, null_in ? "null" : "other");
    fputs("err\n", stderr);
    return 0;
}

/* serve_spawn's child as the server starts it (spawn.c over rw_spawn). */
static void test_spawn_state(void)
{
    sigset_t both, old;
    sigemptyset(&both);
    sigaddset(&both, SIGINT);
    sigaddset(&both, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &both, &old); /* as http.c does; SIGPIPE: ignored in main */
    int leak = fcntl(2, F_DUPFD, 50);        /* not close-on-exec */
    char *argv[] = {"rewind", "spawn-state", NULL};
    int out = -1, err = -1;
    pid_t pid = serve_spawn(argv, -1, &out, &err);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (leak >= 0)
        close(leak);
    if (pid < 0) {
        CHECK(0, "serve_spawn started a child");
        return;
    }
    char o[512] = "", e[64] = "";
    ssize_t no = io_read_full(out, o, sizeof o - 1), ne = io_read_full(err, e, sizeof e - 1);
    o[no > 0 ? no : 0] = e[ne > 0 ? ne : 0] = 0;
    close(out);
    close(err);
    int st;
    CHECK(rw_spawn_wait(pid, &st, 1, NULL) == 1 && WIFEXITED(st) && WEXITSTATUS(st) == 0,
          "the child ran");
    unsigned long long blk = ~0ull, ign = ~0ull;
    char fds[64] = "", in[16] = "";
    CHECK(sscanf(o, "blk=%llx ign=%llx fds=%63[0-9 ]stdin=%15s", &blk, &ign, fds, in) == 4, o);
    CHECK(blk == 0, "no signal blocked in the child");
    CHECK(!(ign & (1ull << (SIGPIPE - 1))), "SIGPIPE at its default in the child");
    CHECK(!strcmp(fds, "0 1 2 "), "fds 0, 1 and 2 alone reach the child");
    CHECK(!strcmp(in, "null"), "stdin is /dev/null");
    CHECK(!strcmp(e, "err\n"), "stderr on its own pipe");
}

static void add_str(struct serve_buf *b, const char *s)
{
    serve_buf_add(b, s, strlen(s));
}

static void test_parser(void)
{
    struct serve_buf out, err;
    CHECK(serve_buf_init(&out, 64) == 0 && serve_buf_init(&err, 64) == 0, "buffers");
    add_str(&out, "{\"id\":\"x\"}\n");
    json_t *a = serve_child_json(&out);
    CHECK(a && !strcmp(json_string_value(json_object_get(a, "id")), "x"), "an answer");
    json_decref(a);
    out.len = out.total = 0;
    add_str(&out, "[1,2]");
    CHECK(serve_child_json(&out) == NULL, "not an object: no answer");
    out.len = out.total = 0;
    for (int i = 0; i < 10; i++)
        add_str(&out, "{\"id\":\"x\"}");
    CHECK(serve_child_json(&out) == NULL, "cut at the buffer's cap: no answer");
    out.len = out.total = 0;
    CHECK(serve_child_json(&out) == NULL, "nothing: no answer");

    char line[32];
    add_str(&err, "first\nrewind: \xff\xfe bad \xc3\n\n");
    serve_child_err_line(&err, line, sizeof line);
    CHECK(!strcmp(line, "?? bad ?"), line);
    json_t *s = json_string(line);
    CHECK(s != NULL, "the line is valid UTF-8");
    json_decref(s);
    err.len = err.total = 0;
    add_str(&err, "rewind: h\xc3\xa9 ok");
    serve_child_err_line(&err, line, sizeof line);
    CHECK(!strcmp(line, "h\xc3\xa9 ok"), "UTF-8 is kept as is");
    serve_child_err_line(&err, line, 3);
    CHECK(!strcmp(line, "h?"), "a character cut by the size is not left half");

    /* a stderr buffer keeps its tail (child.c inv. 1): the last line */
    err.len = err.total = 0;
    err.tail = 1;
    for (int i = 0; i < 50; i++)
        add_str(&err, "\xff junk \xfe\n");
    add_str(&err, "rewind: the last line\n");
    serve_child_err_line(&err, line, sizeof line);
    CHECK(err.len == err.cap && err.total == 50 * 9 + 22 && !strcmp(line, "the last line"), line);
    add_str(&err, "0123456789012345678901234567890123456789012345678901234567890123456789x");
    CHECK(err.len == 64 && err.p[63] == 'x' && err.p[64] == 0, "a write larger than the cap");

    a = json_pack("{s:s}", "error", "h\xc3\xa9\xc3\xa9\xc3\xa9");
    char buf[5];
    CHECK(!strcmp(serve_child_error(a, &err, buf, sizeof buf), "h\xc3\xa9"),
          "an error cut inside a character stays UTF-8");
    json_decref(a);
    free(out.p);
    free(err.p);
}

static const char *reply_error(const struct serve_reply *r)
{
    const char *e = json_string_value(json_object_get(r->body, "error"));
    return e ? e : "";
}

/* POST api/PATH body with the child answering as mode. */
static void post(rw_home *h, const char *path, const char *mode, const char *body,
                 struct serve_reply *r)
{
    setenv("SERVE_TEST_CHILD", mode, 1);
    json_error_t je;
    json_t *b = json_loads(body, 0, &je);
    *r = (struct serve_reply){0};
    serve_action_post(h, path, b, r);
    json_decref(b);
}

static void test_actions(void)
{
    (void)fix_put_pages, (void)fix_snapshot, (void)fix_page_readable; /* not needed here */
    char home[64], img[65];
    snprintf(home, sizeof home, "/tmp/serve_answer_test.%d", (int)getpid());
    rundir_remove_tree(home);
    rw_home *h = NULL;
    struct rw_error err;
    if (fix_image(home, "root image", img) < 0 ||
        fix_run(home, RUN_A, img, NULL, 0, NULL, 0, 0) < 0 || rw_home_open(home, &h, &err) < 0) {
        CHECK(0, "the fixture home");
        return;
    }
    const char *fork = "{\"run\":\"" RUN_A "\",\"step\":5,\"schedule\":1}";
    struct serve_reply r;
    post(h, "fork", "ok", fork, &r);
    CHECK(r.status == 200, reply_error(&r));
    CHECK(!strcmp(json_string_value(json_object_get(r.body, "id")), RUN_NEW),
          "the new run is the answer's, not the decoy on stderr");
    CHECK(!strcmp(json_string_value(json_object_get(r.body, "line")),
                  "run " RUN_NEW " exited:1 after 40 steps"),
          "its line is the answer's summary");
    CHECK(json_integer_value(json_object_get(r.body, "exit")) == 1 &&
              !strcmp(json_string_value(json_object_get(r.body, "parent")), RUN_A),
          "its exit status and parent");
    json_decref(r.body);

    post(h, "fork", "error", fork, &r);
    CHECK(r.status == 500 &&
              !strcmp(reply_error(&r), "fork failed (exit 2): no keyframe before step 5 in " RUN_A),
          reply_error(&r));
    json_decref(r.body);

    post(h, "fork", "none", fork, &r);
    CHECK(r.status == 500 && !strcmp(reply_error(&r), "fork failed (exit 125): ?? died ?"),
          reply_error(&r));
    json_decref(r.body);

    post(h, "fork", "flood", fork, &r);
    CHECK(r.status == 500 && strstr(reply_error(&r), "fork failed (exit 0)"), reply_error(&r));
    json_decref(r.body);

    const char *cat = "{\"run\":\"" RUN_A "\",\"step\":5,\"path\":\"/etc/hostname\"}";
    post(h, "cat", "ok", cat, &r);
    CHECK(r.status == 200 &&
              !strcmp(json_string_value(json_object_get(r.body, "content")), "h\xc3\xa9st\n") &&
              json_integer_value(json_object_get(r.body, "size")) == 6 &&
              json_is_false(json_object_get(r.body, "binary")) &&
              !strcmp(json_string_value(json_object_get(r.body, "run")), RUN_A),
          reply_error(&r));
    json_decref(r.body);

    post(h, "cat", "error", cat, &r);
    CHECK(r.status == 500 && strstr(reply_error(&r), "no keyframe before step 5"), reply_error(&r));
    json_decref(r.body);

    rw_home_close(h);
    rundir_remove_tree(home);
    unsetenv("SERVE_TEST_CHILD");
}

int main(int argc, char **argv)
{
    if (argc >= 2 && !strcmp(argv[1], "spawn-state"))
        return child_state();
    if (argc >= 2 && (!strcmp(argv[1], "fork") || !strcmp(argv[1], "cat"))) {
        const char *mode = getenv("SERVE_TEST_CHILD");
        return child_main(argv[1], mode ? mode : "ok");
    }
    signal(SIGPIPE, SIG_IGN);
    test_parser();
    test_actions();
    test_spawn_state();
    return unit_done();
}
