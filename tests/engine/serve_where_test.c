/*
 * serve_where_test: the parts of src/serve/where.c that need no VM: a child
 * run while its client's socket is watched (inv. 2: a client that hangs up
 * ends it; inv. 5: its output is bounded), the slots (inv. 3), the answers
 * kept (inv. 4), the arguments and the error line. The children are this
 * very binary (serve_spawn runs /proc/self/exe) started as "rewind where
 * MODE": it answers, sleeps or floods, as MODE says.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "serve/action.c"
#include "serve/child.c"
#include "serve/spawn.c"
#include "serve/api.c"
#include "serve/where.c"
#include "unit.h"

/* The child: "where answer|sleep|flood". */
static int child_main(const char *mode)
{
    if (!strcmp(mode, "answer")) {
        printf("{\"pid\":7,\"threads\":[]}\n");
        fprintf(stderr, "rewind: a notice\n");
        return 0;
    }
    if (!strcmp(mode, "usage")) {
        fprintf(stderr, "rewind: no process 999 at step 5\n");
        return 2;
    }
    if (!strcmp(mode, "segv")) { /* dies as the test host's child did */
        signal(SIGSEGV, SIG_DFL);
        raise(SIGSEGV);
        return 1;
    }
    if (!strcmp(mode, "flood")) {
        static char b[65536];
        memset(b, 'x', sizeof b);
        for (int i = 0; i < 80; i++) /* 5 MiB */
            if (fwrite(b, 1, sizeof b, stdout) != sizeof b)
                return 1;
        return 0;
    }
    sleep(60); /* "sleep": ends only when killed */
    return 0;
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

struct run {
    struct serve_buf out, err;
    int status, gone;
    double secs;
};

static void run_mode(const char *mode, int sock, struct run *r)
{
    CHECK(serve_buf_init(&r->out, SERVE_WHERE_OUT) == 0 &&
              serve_buf_init(&r->err, SERVE_WHERE_ERR) == 0,
          "buffers");
    char *argv[] = {"rewind", "where", (char *)mode, NULL};
    double t0 = now_s();
    r->status = serve_child_run(argv, sock, &r->out, &r->err, &r->gone);
    r->secs = now_s() - t0;
}

static void run_free(struct run *r)
{
    free(r->out.p);
    free(r->err.p);
}

static void *hang_up_later(void *arg)
{
    usleep(300 * 1000);
    close(*(int *)arg);
    return NULL;
}

static void test_children(void)
{
    int sv[2];
    CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0, "socketpair");
    struct run r;
    run_mode("answer", sv[0], &r);
    CHECK(r.status == 0 && !r.gone, "an answer, the client still there");
    CHECK(!strcmp(r.out.p, "{\"pid\":7,\"threads\":[]}\n"), r.out.p);
    char line[512];
    serve_child_err_line(&r.err, line, sizeof line);
    CHECK(!strcmp(line, "a notice"), "the error line without 'rewind: '");
    run_free(&r);

    run_mode("usage", sv[0], &r);
    serve_child_err_line(&r.err, line, sizeof line);
    CHECK(r.status == 2 && !strcmp(line, "no process 999 at step 5"), r.err.p);
    run_free(&r);

    /* inv. 5: a flood is counted, not kept */
    run_mode("flood", sv[0], &r);
    CHECK(r.status == 0 && r.out.len == SERVE_WHERE_OUT && r.out.total == 80 * 65536,
          "the output is cut at SERVE_WHERE_OUT and its length counted");
    run_free(&r);

    /* inv. 2: the client hangs up while the child works: it is ended */
    pthread_t th;
    pthread_create(&th, NULL, hang_up_later, &sv[1]);
    run_mode("sleep", sv[0], &r);
    pthread_join(th, NULL);
    CHECK(r.gone, "the hang-up is seen");
    CHECK(r.status == 128 + SIGTERM, "the child is ended by SIGTERM");
    CHECK(r.secs < 5, "at once, not after the child's 60 s");
    run_free(&r);
    close(sv[0]);

    /* no socket to watch (sock -1): the child runs to its end */
    run_mode("answer", -1, &r);
    CHECK(r.status == 0 && !r.gone, "without a socket");
    run_free(&r);
}

static void test_slots(void)
{
    int sv[2];
    CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0, "socketpair");
    for (int i = 0; i < SERVE_WHERE_RUNNING; i++)
        CHECK(slot_take(sv[0]) == 0, "a free slot");
    close(sv[1]);
    double t0 = now_s();
    CHECK(slot_take(sv[0]) < 0, "no slot, and the client gone: given up");
    CHECK(now_s() - t0 < 3, "given up within seconds");
    for (int i = 0; i < SERVE_WHERE_RUNNING; i++)
        slot_give();
    CHECK(slot_take(sv[0]) == 0, "a slot again once given back");
    slot_give();
    close(sv[0]);
}

static void test_cache(void)
{
    json_t *b = json_pack("{s:i}", "n", 0);
    cache_put("run00", 10, 0, b);
    cache_put("run00b", 10, 0, b);
    json_decref(b);
    json_t *g = cache_get("run00", 10, 0); /* used again: run00b is now the oldest */
    CHECK(g && json_integer_value(json_object_get(g, "n")) == 0, "kept");
    json_decref(g);
    char id[RW_ID_MAX];
    for (int i = 1; i < SERVE_WHERE_CACHE; i++) { /* one more than fits */
        snprintf(id, sizeof id, "run%02d", i);
        b = json_pack("{s:i}", "n", i);
        cache_put(id, 10, 0, b);
        json_decref(b);
    }
    g = cache_get("run00", 10, 0);
    CHECK(g != NULL, "the entry used again is kept");
    json_decref(g);
    CHECK(cache_get("run00b", 10, 0) == NULL, "the least recently used entry is gone");
    snprintf(id, sizeof id, "run%02d", SERVE_WHERE_CACHE - 1);
    g = cache_get(id, 10, 0);
    CHECK(g && json_integer_value(json_object_get(g, "n")) == SERVE_WHERE_CACHE - 1,
          "the newest entry");
    /* a copy: changing the answer given out does not change what is kept */
    json_object_set_new(g, "n", json_integer(-1));
    json_decref(g);
    g = cache_get(id, 10, 0);
    CHECK(json_integer_value(json_object_get(g, "n")) == SERVE_WHERE_CACHE - 1,
          "a deep copy is given out");
    json_decref(g);
    CHECK(cache_get(id, 11, 0) == NULL && cache_get(id, 10, 5) == NULL,
          "keyed by step and pid too");
    int n = 0;
    for (int i = 0; i < SERVE_WHERE_CACHE; i++)
        n += cache[i].body != NULL;
    CHECK(n == SERVE_WHERE_CACHE, "never more than SERVE_WHERE_CACHE answers");
}

struct args {
    const char *k, *v;
};
static const char *get_arg(void *ctx, const char *key)
{
    const struct args *a = ctx;
    return a->k && !strcmp(a->k, key) ? a->v : NULL;
}

static void test_args(void)
{
    uint64_t x;
    struct args a = {"step", "42"};
    CHECK(serve_arg_u64(get_arg, &a, "step", 0, &x) == 0 && x == 42, "a number");
    CHECK(serve_arg_u64(get_arg, &a, "pid", 7, &x) == 0 && x == 7, "absent: the default");
    const char *bad[] = {"-1", "1x", " 1", "+1", "x", "99999999999999999999999"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        a.v = bad[i];
        CHECK(serve_arg_u64(get_arg, &a, "step", 0, &x) < 0, bad[i]);
    }
}

/* The error word of a reply ("" if it has none). */
static const char *reply_error(const struct serve_reply *r)
{
    const char *e = json_string_value(json_object_get(r->body, "error"));
    return e ? e : "";
}

/* A child killed by a signal is said so, not as an exit status. */
static void test_signal_death(void)
{
    struct run rr;
    run_mode("segv", -1, &rr);
    CHECK(rr.status == 128 + SIGSEGV, "the child died of SIGSEGV");
    struct serve_reply r = {0};
    CHECK(where_answer(rr.status, rr.gone, 0, &rr.out, &rr.err, &r) == NULL, "no answer");
    CHECK(r.status == 500 && !strcmp(reply_error(&r), "rewind where died of SIGSEGV"),
          reply_error(&r));
    json_decref(r.body);
    run_free(&rr);
}

/* inv. 4 of action.c: once the server's binary is replaced on disk (a
 * relink: the old file removed, a new one written), no child is started
 * and the reply says why (the test host's 9p share ran such children as a
 * mix of both files, which died of SIGSEGV). */
static void test_replaced_binary(void)
{
    char path[] = "/tmp/serve-where-test-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0 && write(fd, "v1", 2) == 2, "a stand-in for the binary");
    close(fd);
    CHECK(self_note(path) == 0, "noted");
    struct run rr;
    run_mode("answer", -1, &rr);
    CHECK(rr.status == 0, "the same file: the child runs");
    run_free(&rr);
    CHECK(unlink(path) == 0, "removed");
    fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
    CHECK(fd >= 0 && write(fd, "v1", 2) == 2, "written again");
    close(fd);
    run_mode("answer", -1, &rr);
    int e = errno;
    CHECK(rr.status == -1 && e == ESTALE, "replaced: no child");
    struct serve_reply r = {0};
    CHECK(where_answer(rr.status, rr.gone, e, &rr.out, &rr.err, &r) == NULL, "no answer");
    CHECK(r.status == 500 && strstr(reply_error(&r), path) &&
              strstr(reply_error(&r), "was replaced") && strstr(reply_error(&r), "restart"),
          reply_error(&r));
    json_decref(r.body);
    run_free(&rr);
    unlink(path);
    CHECK(self_note("/proc/self/exe") == 0, "the test binary again");
}

static void *shut_down_later(void *arg)
{
    (void)arg;
    usleep(300 * 1000);
    serve_child_shutdown();
    return NULL;
}

/* child.c inv. 3: the server stopping ends a child nobody watches (a fork
 * or cat: sock -1) and starts no more. Last: the shutdown is for good. */
static void test_shutdown_ends_children(void)
{
    struct run r;
    pthread_t th;
    pthread_create(&th, NULL, shut_down_later, NULL);
    run_mode("sleep", -1, &r);
    pthread_join(th, NULL);
    CHECK(r.status == 128 + SIGTERM && !r.gone, "a running child is ended by SIGTERM");
    CHECK(r.secs < 5, "at once, not after the child's 60 s");
    run_free(&r);
    struct serve_buf out, err;
    CHECK(serve_buf_init(&out, 64) == 0 && serve_buf_init(&err, 64) == 0, "buffers");
    char *argv[] = {"rewind", "where", "answer", NULL};
    int gone;
    errno = 0;
    CHECK(serve_child_run(argv, -1, &out, &err, &gone) == -1 && errno == ECANCELED && !out.len,
          "no child starts once the server stops");
    free(out.p);
    free(err.p);
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "where"))
        return child_main(argv[2]);
    signal(SIGPIPE, SIG_IGN);
    test_children();
    test_slots();
    test_cache();
    test_args();
    test_signal_death();
    test_replaced_binary();
    test_shutdown_ends_children();
    return unit_done();
}
