/*
 * serve_test: the pure parts of rewind serve (src/serve): run references
 * from URLs (api.c inv. 2), the at-step log's ring (inv. 3: the last
 * SERVE_LOG_MAX bytes, in order, whatever the chunks), and the state file's
 * round trip and refusals (state.c inv. 1). api.c and state.c are compiled
 * into this test: src/serve is a front end, not part of librewind.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "serve/api.c"
#include "serve/state.c"
#include "unit.h"

void serve_assert_failed(const char *file, int line, const char *cond)
{
    fprintf(stderr, "assertion failed at %s:%d: %s\n", file, line, cond);
    abort();
}

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

int main(void)
{
    test_refs();
    test_log_ring();
    test_state();
    return unit_done();
}
