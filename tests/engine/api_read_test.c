/* api_read_test: the Reading API of include/rewind.h on a fixture home
 * (runfix.h, no VM): listing with filters and killed runs, a run's info,
 * the fork tree, events by step, position and kind, the log, the process
 * tree at a step, the diff of two traces and of two state logs, and remove
 * (refused for a run others build on, nothing removed on a typo). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rewind.h"
#include "runfix.h"
#include "unit.h"
#include "util/bytes.h"

#define RUN_A "aaaa000000000001"
#define RUN_B "bbbb000000000002"
#define RUN_C "cccc000000000003"

static char home[64];

static void path_of(char *out, size_t n, const char *run, const char *file)
{
    snprintf(out, n, "%s/runs/%s%s%s", home, run, file ? "/" : "", file ? file : "");
}

static int write_manifest(const char *run, const char *json)
{
    char p[4300];
    path_of(p, sizeof(p), run, "manifest.json");
    return rundir_write_file(p, json);
}

static void rec(struct trace_writer *w, uint64_t step, unsigned kind, uint32_t pid, uint32_t tid,
                uint64_t aux, unsigned flags, const char *payload, size_t n)
{
    uint8_t buf[256];
    struct rewind_record *r = (struct rewind_record *)buf;
    memset(buf, 0, sizeof(buf));
    r->len = (uint32_t)(sizeof(*r) + n);
    r->kind = (uint16_t)kind;
    r->flags = (uint16_t)flags;
    r->pid = pid;
    r->tid = tid;
    r->aux = aux;
    memcpy(buf + sizeof(*r), payload, n);
    trace_append(w, step, r);
}

/* A small process life: init forks 2, 2 execs sh and writes, forks 3 and a
 * thread, 3 exits, 2 writes to stderr. last_aux changes the last event. */
static int write_trace(const char *run, uint64_t last_aux)
{
    char p[4300];
    struct trace_writer w;
    path_of(p, sizeof(p), run, "trace");
    if (trace_open_write(&w, p) < 0)
        return -1;
    rec(&w, 10, REWIND_REC_FORK, 1, 1, 2, 0, "", 0);
    rec(&w, 11, REWIND_REC_EXEC, 2, 2, 0, 0, "/bin/sh\0sh\0-c\0", 14);
    rec(&w, 12, REWIND_REC_OUTPUT, 2, 2, 1, 0, "hi\n", 3);
    rec(&w, 13, REWIND_REC_FORK, 2, 2, 3, 0, "", 0);
    rec(&w, 14, REWIND_REC_FORK, 2, 2, 4, 1, "", 0);
    rec(&w, 20, REWIND_REC_EXIT, 3, 3, 0, 0, "sh", 2);
    rec(&w, 30, REWIND_REC_OUTPUT, 2, 2, last_aux, 0, "bye", 3);
    return trace_close(&w);
}

static int write_states(const char *run, uint64_t last_hash)
{
    uint8_t b[48];
    bytes_put_u64(b, 5);
    bytes_put_u64(b + 8, 0x1111);
    bytes_put_u64(b + 16, 5 | 1ull << 63);
    bytes_put_u64(b + 24, 0x2222);
    bytes_put_u64(b + 32, 6);
    bytes_put_u64(b + 40, last_hash);
    char p[4300];
    path_of(p, sizeof(p), run, "states");
    return fix_write(p, b, sizeof(b));
}

struct list {
    char ids[8][RW_ID_MAX];
    struct rw_run_info first;
    int n, incomplete, errors;
};

static int collect(void *ctx, const struct rw_run_info *r, const struct rw_error *why)
{
    struct list *l = ctx;
    if (!r) {
        l->errors++;
        return 0;
    }
    if (l->n == 0)
        l->first = *r;
    if (l->n < 8)
        snprintf(l->ids[l->n], RW_ID_MAX, "%s", r->id);
    l->n++;
    l->incomplete += r->incomplete;
    (void)why;
    return 0;
}

static int list(rw_home *h, const struct rw_run_filter *f, struct list *l)
{
    memset(l, 0, sizeof(*l));
    return rw_runs_list(h, f, collect, l, NULL);
}

struct evs {
    uint64_t steps[16], index[16];
    char text[256];
    int n;
};

static int on_event(void *ctx, const struct rw_event *e)
{
    struct evs *v = ctx;
    if (v->n < 16) {
        v->steps[v->n] = e->step;
        v->index[v->n] = e->index;
    }
    if (v->n == 0) {
        size_t k = e->payload_len < sizeof(v->text) - 1 ? e->payload_len : sizeof(v->text) - 1;
        memcpy(v->text, e->payload, k);
        v->text[k] = 0;
    }
    v->n++;
    return 0;
}

struct procs {
    struct rw_proc v[8];
    int n;
};

static int on_proc(void *ctx, const struct rw_proc *p)
{
    struct procs *s = ctx;
    if (s->n < 8)
        s->v[s->n] = *p;
    s->n++;
    return 0;
}

struct removed {
    char ids[4][RW_ID_MAX];
    int n;
};

static void on_removed(void *ctx, const char *id, const char *path, int ok)
{
    struct removed *r = ctx;
    (void)path;
    if (ok && r->n < 4)
        snprintf(r->ids[r->n++], RW_ID_MAX, "%s", id);
}

static int run_exists(const char *run)
{
    char p[4300];
    path_of(p, sizeof(p), run, NULL);
    return access(p, F_OK) == 0;
}

int main(void)
{
    snprintf(home, sizeof(home), "/tmp/api_read_test.%d", (int)getpid());
    rundir_remove_tree(home);
    char img[65], p[4300];
    hash256 pages[2];
    CHECK(fix_image(home, "root image", img) == 0, "fixture image");
    CHECK(fix_put_pages(home, 7, 2, pages) == 0 && fix_page_readable(home, &pages[1]),
          "fixture pages");
    /* A: a plain run; B: forked from A (its keyframes name A as parent);
     * C: a run nothing builds on; a staging directory of a killed run. */
    CHECK(fix_run(home, RUN_A, img, NULL, 0, NULL, 0, 0) == 0, "fixture run A");
    CHECK(fix_run(home, RUN_B, img, RUN_A, 5, pages, 2, 1) == 0, "fixture run B");
    CHECK(fix_run(home, RUN_C, img, NULL, 0, NULL, 0, 0) == 0, "fixture run C");
    CHECK(fix_run(home, ".dddd000000000004.99", img, NULL, 0, NULL, 0, 0) == 0, "killed run");
    CHECK(write_manifest(RUN_A, "{\"id\":\"" RUN_A "\",\"name\":\"alpha\",\"created\":100,"
                                "\"outcome\":\"exited\",\"exit_code\":3,\"steps\":500,"
                                "\"spec\":{\"argv\":[\"/bin/echo\",\"hi\"],\"seed\":9}}\n") == 0,
          "manifest A");
    CHECK(write_manifest(RUN_B, "{\"id\":\"" RUN_B "\",\"created\":300,\"outcome\":\"panic\","
                                "\"steps\":40,\"parent\":\"" RUN_A "\",\"fork_step\":50,"
                                "\"spec\":{\"argv\":[\"/bin/true\"]}}\n") == 0,
          "manifest B");
    CHECK(write_manifest(RUN_C, "{\"id\":\"" RUN_C "\",\"created\":200,\"outcome\":\"exited\","
                                "\"steps\":7,\"spec\":{\"argv\":[]}}\n") == 0,
          "manifest C");
    CHECK(write_trace(RUN_A, 2) == 0 && write_trace(RUN_B, 1) == 0, "traces");
    CHECK(write_states(RUN_A, 0x3333) == 0 && write_states(RUN_B, 0x4444) == 0, "state logs");

    rw_home *h = NULL;
    struct rw_error err;
    CHECK(rw_home_open(home, &h, &err) == 0 && h, "open the home");
    if (!h)
        return unit_done();

    /* listing: newest first, then the killed run, only when unfiltered */
    struct list l;
    CHECK(list(h, NULL, &l) == 0 && l.n == 4, "four runs listed");
    CHECK(!strcmp(l.ids[0], RUN_B) && !strcmp(l.ids[1], RUN_C) && !strcmp(l.ids[2], RUN_A),
          "newest first");
    CHECK(!strcmp(l.ids[3], "dddd000000000004") && l.incomplete == 1, "killed run last");
    CHECK(l.first.has_parent && !strcmp(l.first.parent, RUN_A) && l.first.fork_step == 50 &&
              !strcmp(l.first.outcome, "panic") && l.first.steps == 40,
          "B's fields");
    struct rw_run_filter f = {.status = "exited"};
    CHECK(list(h, &f, &l) == 0 && l.n == 2 && !l.incomplete, "status filter");
    f = (struct rw_run_filter){.name = "alpha"};
    CHECK(list(h, &f, &l) == 0 && l.n == 1 && !strcmp(l.ids[0], RUN_A), "name filter");
    CHECK(l.first.has_name && !strcmp(l.first.command, "/bin/echo hi") && l.first.exit_code == 3 &&
              l.first.created == 100,
          "A's fields");
    f = (struct rw_run_filter){.since = 150};
    CHECK(list(h, &f, &l) == 0 && l.n == 2 && !strcmp(l.ids[1], RUN_C), "since filter");

    /* info by name, by prefix; an unknown reference */
    struct rw_run_info in;
    CHECK(rw_run_info(h, "alpha", &in, &err) == 0 && !strcmp(in.id, RUN_A) && in.seed == 9,
          "info by name");
    CHECK(in.manifest_json && strstr(in.manifest_json, "\"alpha\"") && in.spec_json &&
              strstr(in.spec_json, "/bin/echo"),
          "raw manifest and spec");
    rw_run_info_free(&in);
    CHECK(rw_run_info(h, "cccc", &in, &err) == 0 && !strcmp(in.id, RUN_C), "info by prefix");
    rw_run_info_free(&in);
    CHECK(rw_run_info(h, "nope", &in, &err) < 0 && err.code == RW_EUSAGE, "unknown run");

    /* the fork tree */
    char root[RW_ID_MAX];
    memset(&l, 0, sizeof(l));
    CHECK(rw_forks(h, RUN_A, root, collect, &l, &err) == 1 && !strcmp(root, RUN_A) && l.n == 1 &&
              !strcmp(l.ids[0], RUN_B) && l.first.generation == 1,
          "A has one fork, B");
    memset(&l, 0, sizeof(l));
    CHECK(rw_forks(h, RUN_C, root, collect, &l, &err) == 0 && l.n == 0, "C has none");

    /* events: step range, position range, kind; the log; a torn-free read */
    struct evs v = {0};
    struct rw_event_query q = RW_EVENTS_ALL;
    struct rw_trace_status st;
    q.from = 11;
    q.to = 13;
    CHECK(rw_events(h, RUN_A, &q, on_event, &v, &st, &err) == 0 && v.n == 3 && v.steps[0] == 11 &&
              v.steps[2] == 13 && v.index[0] == 1,
          "events in steps 11..13");
    CHECK(!st.torn && strstr(st.path, RUN_A "/trace"), "trace status");
    memset(&v, 0, sizeof(v));
    q = RW_EVENTS_ALL;
    q.first_index = q.last_index = 5;
    CHECK(rw_events(h, RUN_A, &q, on_event, &v, NULL, &err) == 0 && v.n == 1 && v.steps[0] == 20,
          "event at position 5");
    memset(&v, 0, sizeof(v));
    q = RW_EVENTS_ALL;
    q.kind = rw_event_kind("fork");
    CHECK(q.kind == REWIND_REC_FORK && rw_events(h, RUN_A, &q, on_event, &v, NULL, &err) == 0 &&
              v.n == 3,
          "fork events");
    memset(&v, 0, sizeof(v));
    CHECK(rw_log(h, RUN_A, 20, on_event, &v, NULL, &err) == 0 && v.n == 1 &&
              !strcmp(v.text, "hi\n"),
          "log up to step 20");
    memset(&v, 0, sizeof(v));
    CHECK(rw_log(h, RUN_A, UINT64_MAX, on_event, &v, NULL, &err) == 0 && v.n == 2, "whole log");
    CHECK(rw_events(h, "nope", &q, on_event, &v, NULL, &err) < 0, "no trace: an error");

    /* ps: at step 15 init, sh (2 threads) and its child; at 25 the child is gone */
    struct procs ps = {0};
    CHECK(rw_ps(h, RUN_A, 15, on_proc, &ps, NULL, &err) == 0 && ps.n == 3, "3 processes at 15");
    CHECK(ps.v[0].pid == 1 && ps.v[0].depth == 0 && !strcmp(ps.v[0].argv, "/init"), "init first");
    CHECK(ps.v[1].pid == 2 && ps.v[1].ppid == 1 && ps.v[1].threads == 2 &&
              !strcmp(ps.v[1].argv, "sh -c") && ps.v[1].depth == 1,
          "sh with its thread");
    CHECK(ps.v[2].pid == 3 && ps.v[2].ppid == 2 && ps.v[2].depth == 2 &&
              !strcmp(ps.v[2].argv, "sh -c"),
          "the child inherits argv");
    memset(&ps, 0, sizeof(ps));
    CHECK(rw_ps(h, RUN_A, 25, on_proc, &ps, NULL, &err) == 0 && ps.n == 2, "child gone at 25");

    /* diff: A and B part at their last event; state logs at step 6 */
    struct rw_diff d;
    CHECK(rw_diff(h, RUN_A, RUN_B, &d, &err) == 0 && !d.identical && d.event == 6 &&
              d.common == 6 && d.step_a == 30 && d.step_b == 30,
          "A and B part at event 6");
    CHECK(rw_diff(h, RUN_A, RUN_A, &d, &err) == 0 && d.identical && d.common == 7, "A equals A");
    CHECK(rw_diff(h, RUN_A, "nope", &d, &err) < 0 && !strcmp(err.msg, "missing"), "no trace");
    struct rw_state_diff sd;
    CHECK(rw_diff_states(h, RUN_A, RUN_B, &sd) == 0 && sd.recorded && sd.regs_step == 6 &&
              sd.ram_equal_step == 5 && !sd.ram_step,
          "registers part at step 6");
    CHECK(rw_diff_states(h, RUN_A, RUN_C, &sd) == 0 && !sd.recorded, "C logged no states");

    /* remove: a typo removes nothing; a parent is kept without force */
    struct removed rm = {0};
    char *before = fix_snapshot(home);
    const char *typo[] = {RUN_C, "nope"};
    CHECK(rw_remove(h, typo, 2, 0, on_removed, &rm, &err) < 0 && rm.n == 0 && run_exists(RUN_C),
          "typo: nothing removed");
    CHECK(strstr(err.msg, "(nothing removed)") != NULL, "typo: says so");
    const char *parent[] = {RUN_A};
    CHECK(rw_remove(h, parent, 1, 0, on_removed, &rm, &err) < 0 && run_exists(RUN_A) &&
              strstr(err.msg, RUN_B),
          "a fork's parent is kept");
    char *after = fix_snapshot(home);
    CHECK(before && after && !strcmp(before, after), "refused removes changed nothing");
    free(before);
    free(after);
    const char *c[] = {"cccc"};
    CHECK(rw_remove(h, c, 1, 0, on_removed, &rm, &err) == 0 && rm.n == 1 &&
              !strcmp(rm.ids[0], RUN_C) && !run_exists(RUN_C),
          "C removed");
    const char *both[] = {RUN_A, RUN_B};
    CHECK(rw_remove(h, both, 2, 0, on_removed, &rm, &err) == 0 && !run_exists(RUN_A) &&
              !run_exists(RUN_B),
          "A with its fork removed");
    CHECK(list(h, NULL, &l) == 0 && l.n == 1 && l.incomplete == 1, "only the killed run left");

    rw_home_close(h);
    snprintf(p, sizeof(p), "%s", home);
    rundir_remove_tree(p);
    return unit_done();
}
