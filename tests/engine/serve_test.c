/*
 * serve_test: the pure parts of rewind serve (src/serve): run references
 * from URLs (api.c inv. 2), the at-step log's ring (inv. 3: the last
 * SERVE_LOG_MAX bytes, in order, whatever the chunks), and the state file's
 * round trip and refusals (state.c inv. 1), and that two requests on two
 * runs proceed at once (api.c inv. 1: no lock around the engine) over a
 * fixture home (runfix.h). api.c and state.c are compiled into this test:
 * src/serve is a front end, not part of librewind.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* api.c's test hook (SERVE_TEST_RUN_HOOK): a request for the run named
 * park_id stops after resolving it, before the engine reads it, until the
 * test releases it or PARK_TIMEOUT_S passed (then park_timed_out). */
#define PARK_TIMEOUT_S 10
static pthread_mutex_t park_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t park_cv = PTHREAD_COND_INITIALIZER;
static char park_id[64];
static int parked, released, park_timed_out;

static void deadline_in(struct timespec *t, int s)
{
    clock_gettime(CLOCK_REALTIME, t);
    t->tv_sec += s;
}

static void park_hook(const char *id)
{
    if (strcmp(id, park_id))
        return;
    struct timespec until;
    deadline_in(&until, PARK_TIMEOUT_S);
    pthread_mutex_lock(&park_mu);
    parked = 1;
    pthread_cond_broadcast(&park_cv);
    int rc = 0;
    while (!released && rc != ETIMEDOUT)
        rc = pthread_cond_timedwait(&park_cv, &park_mu, &until);
    park_timed_out = !released;
    pthread_mutex_unlock(&park_mu);
}
#define SERVE_TEST_RUN_HOOK(id) park_hook(id)

#include "runfix.h"
#include "serve/api.c"
#include "serve/state.c"
#include "unit.h"

static void test_refs(void)
{
    CHECK(serve_ref_ok("65829798c7715aed"), "an id");
    CHECK(serve_ref_ok("6582"), "a prefix");
    CHECK(serve_ref_ok("@") && serve_ref_ok("@3"), "@ and @N");
    CHECK(serve_ref_ok("abc~1") && serve_ref_ok("my-run_2.x"), "id~N and a name");
    CHECK(!serve_ref_ok("..") && !serve_ref_ok("a..b"), "'..'");
    CHECK(!serve_ref_ok("a/b") && !serve_ref_ok("/etc"), "a slash");
    CHECK(!serve_ref_ok("") && !serve_ref_ok(NULL), "empty");
    CHECK(!serve_ref_ok("a b") && !serve_ref_ok("a%2f"), "a space, a percent");
    char big[300];
    memset(big, 'a', sizeof big - 1);
    big[sizeof big - 1] = 0;
    CHECK(!serve_ref_ok(big), "too long");
}

/* The ring against a plain copy of everything written, for chunk sizes
 * that wrap it in every way (inv. 3). */
static void test_log_ring(void)
{
    size_t total = 5 * SERVE_LOG_MAX + 777;
    uint8_t *all = malloc(total);
    char *lin = malloc(SERVE_LOG_MAX);
    for (size_t i = 0; i < total; i++)
        all[i] = (uint8_t)(i * 7 + i / 251);
    static const size_t sizes[] = {
        1, 3, 100, 4096, SERVE_LOG_MAX - 1, SERVE_LOG_MAX, SERVE_LOG_MAX + 5};
    int ok = 1;
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        struct at_ctx c = {0};
        c.log = malloc(SERVE_LOG_MAX);
        size_t off = 0, step = 0;
        while (off < total) {
            size_t n = sizes[(k + step++) % (sizeof sizes / sizeof sizes[0])];
            if (n > total - off)
                n = total - off;
            log_add(&c, all + off, n);
            off += n;
            /* after each chunk: the kept bytes are the last ones written */
            size_t want = off < SERVE_LOG_MAX ? off : SERVE_LOG_MAX;
            log_linear(&c, lin);
            if (c.log_len != want || c.log_total != off || memcmp(lin, all + off - want, want))
                ok = 0;
        }
        free(c.log);
    }
    CHECK(ok, "the ring keeps the last SERVE_LOG_MAX bytes in order");
    CHECK(utf8_skip_cont("\x80\x80x", 3) == 2 && utf8_skip_cont("abc", 3) == 0 &&
              utf8_skip_cont("\x80\x80\x80\x80", 4) == 3,
          "a cut tail skips at most 3 continuation bytes");
    free(all);
    free(lin);
}

static void test_state(void)
{
    char dir[] = "/tmp/serve_test.XXXXXX", path[128];
    if (!mkdtemp(dir)) {
        SKIP("no temporary directory");
        return;
    }
    snprintf(path, sizeof path, "%s/serve.json", dir);
    struct serve_state a = {.pid = 1234, .port = 8080}, b;
    snprintf(a.bind, sizeof a.bind, "127.0.0.1");
    memcpy(a.token, "0123456789abcdef0123456789abcdef", SERVE_TOKEN_LEN + 1);
    CHECK(serve_state_write(path, &a) == 0, "write");
    struct stat st;
    CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600, "mode 0600");
    CHECK(serve_state_read(path, &b) == 0 && b.pid == 1234 && b.port == 8080 &&
              !strcmp(b.bind, "127.0.0.1") && !strcmp(b.token, a.token),
          "read back");
    static const char *bad[] = {
        "{}",
        "not json",
        "{\"pid\":1,\"port\":80,\"bind\":\"127.0.0.1\",\"token\":\"short\"}",
        "{\"pid\":1,\"port\":70000,\"bind\":\"127.0.0.1\",\"token\":"
        "\"0123456789abcdef0123456789abcdef\"}",
        "{\"pid\":1,\"port\":80,\"bind\":\"127.0.0.1\",\"token\":"
        "\"0123456789abcdef0123456789abcdeZ\"}",
        "{\"pid\":-1,\"port\":80,\"bind\":\"127.0.0.1\",\"token\":"
        "\"0123456789abcdef0123456789abcdef\"}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        FILE *f = fopen(path, "w");
        fputs(bad[i], f);
        fclose(f);
        CHECK(serve_state_read(path, &b) < 0, bad[i]);
    }
    /* a state file naming no live server is not taken for one */
    a.pid = 999999999;
    CHECK(!serve_state_alive(&a), "a dead pid is not alive");
    unlink(path);
    rmdir(dir);
}

#define RUN_A "aaaa000000000001"
#define RUN_B "bbbb000000000002"

static const char *no_arg(void *ctx, const char *key)
{
    (void)ctx;
    (void)key;
    return NULL;
}

struct request {
    rw_home *h;
    const char *path;
    struct serve_reply r;
};

static void *request_main(void *arg)
{
    struct request *q = arg;
    serve_api_get(q->h, q->path, no_arg, NULL, &q->r);
    return NULL;
}

/* api.c inv. 1: a request on run A parked in the hook (it holds whatever
 * the server holds around the engine) until a request on run B has been
 * answered. With a lock shared by the two, B waits for A and A for B: A's
 * park times out and the test fails; it cannot pass by luck, A is released
 * only by B's answer. */
static void test_two_runs_at_once(void)
{
    (void)fix_put_pages, (void)fix_snapshot, (void)fix_page_readable; /* not needed here */
    char home[64];
    snprintf(home, sizeof home, "/tmp/serve_test.%d", (int)getpid());
    rundir_remove_tree(home);
    char img[65];
    rw_home *h = NULL;
    struct rw_error err;
    if (fix_image(home, "root image", img) < 0 ||
        fix_run(home, RUN_A, img, NULL, 0, NULL, 0, 0) < 0 ||
        fix_run(home, RUN_B, img, NULL, 0, NULL, 0, 0) < 0 || rw_home_open(home, &h, &err) < 0) {
        CHECK(0, "the fixture home");
        return;
    }
    snprintf(park_id, sizeof park_id, "%s", RUN_A);
    struct request a = {.h = h, .path = "run/" RUN_A "/events"};
    struct request b = {.h = h, .path = "run/" RUN_B "/events"};
    pthread_t ta;
    CHECK(pthread_create(&ta, NULL, request_main, &a) == 0, "request A started");
    struct timespec until;
    deadline_in(&until, PARK_TIMEOUT_S);
    pthread_mutex_lock(&park_mu);
    int rc = 0;
    while (!parked && rc != ETIMEDOUT)
        rc = pthread_cond_timedwait(&park_cv, &park_mu, &until);
    int a_parked = parked;
    pthread_mutex_unlock(&park_mu);
    CHECK(a_parked, "request A reached the engine and parked");
    request_main(&b); /* on this thread, while A is parked */
    pthread_mutex_lock(&park_mu);
    released = 1;
    int b_first = !park_timed_out; /* B answered while A was still parked */
    pthread_cond_broadcast(&park_cv);
    pthread_mutex_unlock(&park_mu);
    pthread_join(ta, NULL);
    CHECK(b_first && !park_timed_out, "B was answered while A was parked (no lock shared)");
    CHECK(b.r.status == 200 && json_array_size(json_object_get(b.r.body, "events")) == 3,
          "B's answer: its 3 events");
    CHECK(a.r.status == 200 && json_array_size(json_object_get(a.r.body, "events")) == 3,
          "A's answer after its release: its 3 events");
    json_decref(a.r.body);
    json_decref(b.r.body);
    park_id[0] = 0;
    rw_home_close(h);
    rundir_remove_tree(home);
}

int main(void)
{
    test_refs();
    test_log_ring();
    test_state();
    test_two_runs_at_once();
    return unit_done();
}
