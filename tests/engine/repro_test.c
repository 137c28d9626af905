/* repro_test: the analysis `rewind repro` and `rewind blame` print, tested
 * below the CLI on a fixture home (a run of a made-up trace, no VM): where two byte strings
 * differ (rw_diff_range), where the builds collect and track writes
 * (rw_repro_paths), whether they ended alike (rw_repro_ended_alike), and
 * who wrote a byte (rw_blame: the last covering write, whether the file
 * still holds it, the writer's chain up to init). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rewind.h"
#include "home/rundir.h"
#include "trace/trace.h"
#include "unit.h"
#include "util/bytes.h"
#include "util/io.h"

#define RUN "eeee000000000005"

static void test_diff_range(void)
{
    uint64_t f = 77, l = 77;
    const unsigned char *a = (const unsigned char *)"abcdef";
    CHECK(rw_diff_range(a, 6, a, 6, &f, &l) == 0 && f == 77 && l == 77, "equal: untouched");
    CHECK(rw_diff_range(a, 6, (const unsigned char *)"abXdeY", 6, &f, &l) == 1 && f == 2 && l == 5,
          "first and last differing byte");
    CHECK(rw_diff_range(a, 6, a, 4, &f, &l) == 1 && f == 4 && l == 5, "the shorter one ends");
    CHECK(rw_diff_range(a, 0, a, 3, &f, &l) == 1 && f == 0 && l == 2, "empty against three");
}

static void test_paths(void)
{
    struct rw_repro_config c;
    char base[2200], glob[2300];
    rw_repro_config_init(&c);
    CHECK(c.builds == 2 && c.vary_seed && c.vary_dirorder && c.vary_epoch, "defaults");
    c.run.cwd = "/src/";
    c.run.collect = "out";
    rw_repro_paths(&c, NULL, base, sizeof(base), glob, sizeof(glob));
    CHECK(!strcmp(base, "/src/out") && c.run.track_writes == glob && !strcmp(glob, "/src/out/*"),
          "relative PATH against cwd, writes tracked under it");
    rw_repro_config_init(&c);
    c.run.cwd = "/build";
    c.run.collect = "/nix/store/x-out";
    rw_repro_paths(&c, "/nix/store/x-out", base, sizeof(base), glob, sizeof(glob));
    CHECK(!strcmp(base, "/nix/store/x-out") && !strcmp(c.run.track_writes, "/nix/store/x-out*"),
          "a derivation's output: a file or a directory");
    rw_repro_config_init(&c);
    c.run.cwd = "/";
    c.run.collect = "/o/";
    c.run.track_writes = "/o/a";
    rw_repro_paths(&c, NULL, base, sizeof(base), glob, sizeof(glob));
    CHECK(!strcmp(base, "/o/") && !strcmp(c.run.track_writes, "/o/a"), "--track-writes kept");

    struct rw_repro_build b[3] = {{.outcome = RW_EXITED, .exit_code = 0},
                                  {.outcome = RW_EXITED, .exit_code = 0},
                                  {.outcome = RW_EXITED, .exit_code = 1}};
    CHECK(rw_repro_ended_alike(b, 2) == 1, "two builds alike");
    CHECK(rw_repro_ended_alike(b, 3) == 0, "the third exits otherwise");
}

static void rec(struct trace_writer *w, uint64_t step, unsigned kind, uint32_t pid, uint64_t aux,
                const void *payload, size_t n)
{
    uint8_t buf[256];
    struct rewind_record *r = (struct rewind_record *)buf;
    memset(buf, 0, sizeof(buf));
    r->len = (uint32_t)(sizeof(*r) + n);
    r->kind = (uint16_t)kind;
    r->pid = pid;
    r->tid = pid;
    r->aux = aux;
    memcpy(buf + sizeof(*r), payload, n);
    trace_append(w, step, r);
}

/* A write record: aux the offset; payload length, FNV-1a-64, path. */
static void rec_write(struct trace_writer *w, uint64_t step, uint32_t pid, uint64_t off,
                      const char *bytes, const char *path)
{
    uint8_t p[128];
    size_t len = strlen(bytes), pl = strlen(path);
    bytes_put_u64(p, len);
    bytes_put_u64(p + 8, rw_fnv64(bytes, len));
    memcpy(p + 16, path, pl);
    rec(w, step, REWIND_REC_WRITE, pid, off, p, 16 + pl);
}

/* init forks 2 (sh), 2 forks 3 (cc); 3 writes "AAAA" at 0 of /o/f, then
 * 2 writes "BB" at 2; 3 writes /o/g. */
static int write_trace(const char *home)
{
    char p[4300];
    struct trace_writer w;
    snprintf(p, sizeof(p), "%s/runs/%s/trace", home, RUN);
    if (trace_open_write(&w, p) < 0)
        return -1;
    rec(&w, 10, REWIND_REC_FORK, 1, 2, "", 0);
    rec(&w, 11, REWIND_REC_EXEC, 2, 0, "/bin/sh\0sh\0-c\0", 14);
    rec(&w, 12, REWIND_REC_FORK, 2, 3, "", 0);
    rec(&w, 13, REWIND_REC_EXEC, 3, 0, "/bin/cc\0cc\0", 11);
    rec_write(&w, 20, 3, 0, "AAAA", "/o/f");
    rec_write(&w, 30, 2, 2, "BB", "/o/f");
    rec_write(&w, 40, 3, 0, "G", "/o/g");
    return trace_close(&w);
}

static void test_blame(rw_home *h)
{
    struct rw_blame *b = malloc(sizeof(*b));
    struct rw_error err;
    if (!b)
        return;
    CHECK(rw_blame(h, RUN, "/o/f", 0, "AABB", 4, b, &err) == 0 && b->found && b->writes == 2,
          "byte 0 blamed, two writes to the file");
    CHECK(b->w.pid == 3 && b->w.step == 20 && b->w.offset == 0 && b->w.length == 4,
          "the first write covers byte 0");
    CHECK(b->holds == 0, "the file's bytes there changed since (AABB, not AAAA)");
    CHECK(b->chain_n == 3 && b->chain[0].pid == 3 && b->chain[1].pid == 2 && b->chain[2].pid == 1 &&
              strstr(b->chain[0].argv, "cc"),
          "the chain: cc <- sh <- init");
    CHECK(rw_blame(h, RUN, "/o/f", 3, "AABB", 4, b, &err) == 0 && b->found && b->w.pid == 2 &&
              b->w.step == 30 && b->holds == 1,
          "byte 3: the later write wins, still held");
    CHECK(rw_blame(h, RUN, "/o/f", 3, NULL, 0, b, &err) == 0 && b->holds == -1,
          "no content: unknown");
    CHECK(rw_blame(h, RUN, "/o/f", 4, NULL, 0, b, &err) == 0 && !b->found && b->writes == 2,
          "byte 4: no write covers it");
    CHECK(rw_blame(h, RUN, "/o/h", 0, NULL, 0, b, &err) == 0 && !b->found && b->writes == 0,
          "a file never written");
    free(b);
}

int main(void)
{
    char home[64], dir[200];
    snprintf(home, sizeof(home), "/tmp/repro_test.%d", (int)getpid());
    rundir_remove_tree(home);
    test_diff_range();
    test_paths();
    snprintf(dir, sizeof(dir), "%s/runs/%s", home, RUN);
    CHECK(io_mkdir_p(dir) == 0 && write_trace(home) == 0, "fixture run with write records");
    rw_home *h = NULL;
    struct rw_error err;
    CHECK(rw_home_open(home, &h, &err) == 0 && h, "open the home");
    if (h) {
        test_blame(h);
        rw_home_close(h);
    }
    rundir_remove_tree(home);
    return unit_done();
}
