/* harden_test: regression tests for the known defects of issue 11, each on
 * a fixture home (runfix.h, no VM): a pid cycle in a trace (ps reports each
 * process once), a page whose first index entry is corrupt (gc keeps the
 * good copy), show's reading of a bare manifest, spec and manifest fields
 * that are not names (refused as paths). */
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "archive/archive.h"
#include "archive/archive_int.h"
#include "rewind.h"
#include "run/modes.h"
#include "runfix.h"
#include "store/pack.h"
#include "store/store_int.h"
#include "unit.h"

#define RUN_P "eeee000000000001"
#define RUN_BARE "ffff000000000002"
#define RUN_IMG "ffff000000000003"
#define RUN_PAR "ffff000000000004"

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

static int manifest(const char *run, const char *json)
{
    char p[4300];
    snprintf(p, sizeof(p), "%s/runs/%s/manifest.json", home, run);
    return rundir_write_file(p, json);
}

/* Defect 1: show on a manifest with nothing but an id (an incomplete or a
 * hand-made imported run): the reading API and the command line cope. */
static void test_show_bare_manifest(rw_home *h)
{
    struct rw_run_info in;
    struct rw_error err;
    char *line = NULL;
    int exact = 0;
    CHECK(manifest(RUN_BARE, "{\"id\":\"x\"}") == 0, "bare manifest");
    CHECK(rw_run_info(h, RUN_BARE, &in, &err) == 0 && !in.has_parent && !in.cwd[0] &&
              !in.image[0] && in.manifest_json,
          "run info of a bare manifest");
    rw_run_info_free(&in);
    CHECK(rw_command_line(h, RUN_BARE, &line, &exact, &err) == 0 && line &&
              strstr(line, "--cwd '' ") && exact,
          "the command line of a bare manifest");
    free(line);
}

/* Defect 4: spec.image and manifest.parent become paths under the home
 * (paths.h invariant 2): a value that is not a name is refused by show's
 * command line, by replay and seek (run_stored_load) and by the keyframes
 * chain a shell session's replay starts from. */
static void test_fields_as_paths(rw_home *h)
{
    struct rw_error err;
    char *line = NULL;
    int exact = 0;
    CHECK(manifest(RUN_IMG, "{\"id\":\"" RUN_IMG "\",\"steps\":9,\"spec\":{\"image\":"
                            "\"../../../etc/passwd\",\"argv\":[\"/bin/true\"],\"cwd\":\"/\","
                            "\"env\":[],\"mem_mib\":64,\"quantum_ns\":1000}}") == 0,
          "manifest with a path as its image");
    memset(&err, 0, sizeof(err));
    CHECK(rw_command_line(h, RUN_IMG, &line, &exact, &err) == -1 && !line &&
              strstr(err.msg, "bad image"),
          "show: the command line refuses an image that is a path");
    free(line);
    struct run_stored st;
    memset(&err, 0, sizeof(err));
    CHECK(run_stored_load(home, RUN_IMG, "/nonexistent", "/nonexistent", &st, &err) == -1 &&
              strstr(err.msg, "bad image"),
          "replay, seek: a spec's image that is a path is refused");
    CHECK(manifest(RUN_PAR, "{\"id\":\"" RUN_PAR "\",\"parent\":\"../../x\",\"spec\":{}}") == 0,
          "manifest with a path as its parent");
    memset(&err, 0, sizeof(err));
    CHECK(run_stored_load(home, RUN_PAR, "/nonexistent", "/nonexistent", &st, &err) == -1 &&
              strstr(err.msg, "bad parent"),
          "replay: a manifest's parent that is a path is refused");
    CHECK(manifest(RUN_PAR, "{\"id\":\"" RUN_PAR "\",\"parent\":\".x.5\",\"spec\":{}}") == 0,
          "manifest with a staging directory as its parent");
    memset(&err, 0, sizeof(err));
    CHECK(run_stored_load(home, RUN_PAR, "/nonexistent", "/nonexistent", &st, &err) == -1 &&
              strstr(err.msg, "bad parent"),
          "replay: a manifest's parent that is a staging directory is refused");
    /* gc reads spec.image only to keep images: a path there is no image. */
    char victim[4300];
    snprintf(victim, sizeof(victim), "%s/victim.erofs", home);
    CHECK(fix_write(victim, "x", 1) == 0, "a file outside images/");
    CHECK(manifest(RUN_IMG, "{\"id\":\"" RUN_IMG "\",\"spec\":{\"image\":\"../victim\"}}") == 0,
          "manifest naming it as the image");
    struct rw_gc_stats gs;
    CHECK(rw_gc(h, 0, 0, &gs, &err) == 0 && access(victim, F_OK) == 0,
          "gc: an image that is a path neither fails gc nor touches the file");
    struct kf_chain ch;
    char msg[512] = "";
    CHECK(kf_chain_load(home, "../../x", &ch, msg, sizeof(msg)) == -1,
          "the keyframes chain refuses a path as its first run");
}

/* Defect 5: a run replaced by a new one of the same id (a re-run) is, at
 * every instant, the old or the new run: a crash in the middle of the
 * replacement never leaves runs/<id> missing. */
static void test_replace_crash(void)
{
    const char *id = "abab000000000009";
    char man[4300], err[256] = "";
    snprintf(man, sizeof(man), "%s/runs/%s/manifest.json", home, id);
    struct rundir d;
    CHECK(rundir_begin(&d, home, id, "{}\n", err, sizeof(err)) == 0 &&
              rundir_finish(&d, "{\"v\":1}\n", err, sizeof(err)) == 0,
          "the first run");
    pid_t pid = fork();
    if (pid == 0) {
        setenv("REWIND_RUNDIR_CRASH", "1", 1);
        if (rundir_begin(&d, home, id, "{}\n", err, sizeof(err)) == 0)
            rundir_finish(&d, "{\"v\":2}\n", err, sizeof(err));
        _exit(0);
    }
    int ws = 0;
    CHECK(pid > 0 && waitpid(pid, &ws, 0) == pid && WIFEXITED(ws) && WEXITSTATUS(ws) == 99,
          "the replacement was killed at its crash point");
    FILE *f = fopen(man, "r");
    char text[64] = "";
    if (f) {
        if (!fgets(text, sizeof(text), f))
            text[0] = 0;
        fclose(f);
    }
    CHECK(!strcmp(text, "{\"v\":1}\n") || !strcmp(text, "{\"v\":2}\n"),
          "after a crash mid-replacement the run is the old or the new one");
    /* A replacement that completes leaves the new run and no debris. */
    CHECK(rundir_begin(&d, home, id, "{}\n", err, sizeof(err)) == 0 &&
              rundir_finish(&d, "{\"v\":3}\n", err, sizeof(err)) == 0,
          "a replacement");
    f = fopen(man, "r");
    text[0] = 0;
    if (f) {
        if (!fgets(text, sizeof(text), f))
            text[0] = 0;
        fclose(f);
    }
    CHECK(!strcmp(text, "{\"v\":3}\n"), "the replacement is published");
    char stage[4400];
    snprintf(stage, 4300, "%s/runs/.%s.%d", home, id, (int)getpid());
    CHECK(access(stage, F_OK) != 0, "no staging directory left");
    strcat(stage, ".old");
    CHECK(access(stage, F_OK) != 0, "no old run left");
}

/* Defect 6: a page this handle names but another process stored and has
 * not synced is made durable by this handle's store_sync: the pack holding
 * it is among those store_sync fdatasyncs (white box: its dirty mark). */
static void test_sync_named_pages(void)
{
    char dir[4200], err[256] = "";
    snprintf(dir, sizeof(dir), "%s/syncstore", home);
    uint8_t page[STORE_PAGE_SIZE];
    fix_page(page, 77);
    struct store *a = NULL, *b = NULL;
    CHECK(store_open(dir, &a, err, sizeof(err)) == 0 && store_open(dir, &b, err, sizeof(err)) == 0,
          "two handles");
    if (!a || !b) {
        store_close(a);
        store_close(b);
        return;
    }
    hash256 ha, hb;
    CHECK(store_put(a, page, &ha) == 0, "A stores the page, not synced");
    CHECK(store_put(b, page, &hb) == 0 && !memcmp(ha.b, hb.b, sizeof(ha.b)) &&
              b->st.dedup_hits == 1 && b->st.written == 0,
          "B names the same page without writing it");
    struct store_slot *sl = store_table_find(&b->table, &hb);
    CHECK(sl && sl->pack < b->packs.nv && b->packs.v[sl->pack].dirty,
          "B's store_sync will fdatasync the pack A wrote the page to");
    CHECK(store_sync(b) == 0 && sl && !b->packs.v[sl->pack].dirty, "B's store_sync did");
    store_close(b);
    store_close(a);
}

static uint8_t *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    uint8_t *b = NULL;
    long sz = -1;
    if (f && fseek(f, 0, SEEK_END) == 0 && (sz = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (b = malloc((size_t)sz)) && fread(b, 1, (size_t)sz, f) != (size_t)sz) {
        free(b);
        b = NULL;
    }
    if (f)
        fclose(f);
    *n = b ? (size_t)sz : 0;
    return b;
}

/* Defect 7: what import stages is bounded by the archive's size. An archive
 * of very compressible pages is imported with every file capped at twice
 * its size (RLIMIT_FSIZE), and an entry claiming 1 TiB is refused before
 * anything of it is staged. */
static void test_import_bounded(void)
{
    enum { N = 300 };
    char src[512], dst[512], arc[600], bad[600], err[1024] = "", dir[600];
    snprintf(src, sizeof(src), "%s/impsrc", home);
    snprintf(dst, sizeof(dst), "%s/impdst", home);
    snprintf(arc, sizeof(arc), "%s/big.rewind", home);
    snprintf(bad, sizeof(bad), "%s/bad.rewind", home);
    snprintf(dir, sizeof(dir), "%s/store", src);
    char img[65];
    CHECK(fix_image(src, "root image", img) == 0, "import: source image");
    struct store *s = NULL;
    static hash256 h[N];
    CHECK(io_mkdir_p(src) == 0 && store_open(dir, &s, err, sizeof(err)) == 0, "source store");
    if (!s)
        return;
    uint8_t page[STORE_PAGE_SIZE];
    int ok = 1;
    for (uint32_t i = 0; i < N; i++) { /* one nonzero word each: ~20 bytes compressed */
        memset(page, 0, sizeof(page));
        memcpy(page + (i % 512) * 8, &(uint64_t){i + 1}, 8);
        ok &= store_put(s, page, &h[i]) == 0;
    }
    ok &= store_sync(s) == 0;
    store_close(s);
    CHECK(ok && fix_run(src, "big", img, NULL, 0, h, N, 1) == 0, "import: a run of 300 pages");
    struct archive_stats st;
    CHECK(archive_export(src, "big", 1, arc, &st, err, sizeof(err)) == 0 && st.pages == N,
          "import: export it");
    size_t n;
    uint8_t *a = slurp(arc, &n);
    CHECK(a && n < (size_t)N * STORE_PAGE_SIZE / 8, "the archive is small");
    if (!a)
        return;
    pid_t pid = fork();
    if (pid == 0) {
        signal(SIGXFSZ, SIG_IGN);
        struct rlimit rl = {.rlim_cur = 2 * n + 4096, .rlim_max = 2 * n + 4096};
        setrlimit(RLIMIT_FSIZE, &rl);
        int rc = archive_import(dst, arc, &st, err, sizeof(err));
        if (rc < 0)
            fprintf(stderr, "  import under RLIMIT_FSIZE: %s\n", err);
        _exit(rc == 0 ? 0 : 1);
    }
    int ws = 0;
    CHECK(pid > 0 && waitpid(pid, &ws, 0) == pid && WIFEXITED(ws) && WEXITSTATUS(ws) == 0,
          "import stages no file larger than twice the archive");
    CHECK(fix_page_readable(dst, &h[N - 1]), "import: the pages arrived");
    /* The run's trace entry claims 1 TiB. */
    size_t at = ARCH_HEADER_SIZE;
    int found = 0;
    while (at + ARCH_ENTRY_SIZE <= n && !found) {
        uint32_t nl = bytes_get_u32(a + at + 4);
        uint64_t len = bytes_get_u64(a + at + 8);
        if (nl >= 6 && at + ARCH_ENTRY_SIZE + nl <= n &&
            !memcmp(a + at + ARCH_ENTRY_SIZE + nl - 6, "/trace", 6)) {
            archive_put64(a + at + 8, 1ull << 40);
            found = 1;
        }
        at += ARCH_ENTRY_SIZE + nl + len;
    }
    CHECK(found && fix_write(bad, a, n) == 0, "an archive whose trace claims 1 TiB");
    free(a);
    snprintf(dst, sizeof(dst), "%s/impdst2", home);
    err[0] = 0;
    CHECK(archive_import(dst, bad, &st, err, sizeof(err)) < 0 && strstr(err, "too large"),
          "an entry claiming more than the archive holds is refused up front");
}

int main(void)
{
    snprintf(home, sizeof(home), "/tmp/harden_test.%d", (int)getpid());
    rundir_remove_tree(home);
    char img[65];
    CHECK(fix_image(home, "root image", img) == 0, "fixture image");
    CHECK(fix_run(home, RUN_P, img, NULL, 0, NULL, 0, 0) == 0 &&
              fix_run(home, RUN_BARE, img, NULL, 0, NULL, 0, 0) == 0 &&
              fix_run(home, RUN_IMG, img, NULL, 0, NULL, 0, 0) == 0 &&
              fix_run(home, RUN_PAR, img, NULL, 0, NULL, 0, 0) == 0,
          "fixture runs");
    rw_home *h = NULL;
    struct rw_error err;
    CHECK(rw_home_open(home, &h, &err) == 0 && h, "open the home");
    if (h) {
        test_ps_pid_cycle(h);
        test_show_bare_manifest(h);
        test_fields_as_paths(h);
        rw_home_close(h);
    }
    test_gc_keeps_good_copy();
    test_replace_crash();
    test_sync_named_pages();
    test_import_bounded();
    rundir_remove_tree(home);
    (void)fix_put_pages, (void)fix_snapshot;
    return unit_done();
}
