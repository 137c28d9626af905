/* harden3_test: regression tests for issue 27 ("Hardening, second round")
 * on fixture homes (runfix.h, no VM): show's command line is shell text
 * (2); an archive cannot take over a name, an id prefix or a directory
 * that is not its id, its trace is checked against its hash, and what it
 * adds is marked imported (3); a flipped byte in a keyframes file is damage,
 * not a torn tail, and gc then frees nothing (4); verify finds damage in an
 * image, a trace and a manifest, and export refuses a damaged run (5); a
 * sparse archive stages nothing (7); two staging directories of one id
 * and one pid do not collide (8). docs/reliability.md says what each check
 * is. */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "archive/archive.h"
#include "home/homelock.h"
#include "home/rungc.h"
#include "rewind.h"
#include "runfix.h"
#include "trace/tracehash.h"
#include "trace/proctree.h"
#include "unit.h"
#include "util/bytes.h"

/* the fixture run: its id is its spec's hash (fix_hashed_run), so verify
 * finds it whole; the same in every fresh_home (one image, one spec) */
static char run_a[17];
#define RUN_A ((const char *)run_a)
#define RUN_B "bbbb000000000002"

static char top[64];

static const char *at(const char *rel)
{
    static char buf[8][4400];
    static int k;
    char *b = buf[k++ % 8];
    snprintf(b, sizeof(buf[0]), "%s/%s", top, rel);
    return b;
}

static int exists(const char *p)
{
    return access(p, F_OK) == 0;
}

/* A fresh home named rel with run RUN_A: an image, 6 pages, 3 keyframes,
 * the manifest's trace_hash that of its trace. */
static const char *fresh_home(const char *rel, hash256 *pages, char img[65])
{
    const char *h = at(rel);
    return fix_traced_home(h, img, run_a, pages) == 0 ? h : NULL;
}

static off_t file_size(const char *p)
{
    struct stat sb;
    return stat(p, &sb) == 0 ? sb.st_size : -1;
}

static void flip(const char *p, off_t off)
{
    int fd = open(p, O_RDWR);
    unsigned char c = 0;
    if (fd >= 0 && pread(fd, &c, 1, off) == 1) {
        c ^= 0x40;
        (void)!pwrite(fd, &c, 1, off);
    }
    if (fd >= 0)
        close(fd);
}

static struct rw_verify_report verify(const char *home)
{
    struct rw_verify_report r;
    struct rw_error err;
    rw_home *h = NULL;
    memset(&r, 0, sizeof(r));
    if (rw_home_open(home, &h, &err) < 0 || rw_verify(h, &r, &err) < 0)
        r.damaged_runs = 9999; /* made to fail the caller's checks */
    rw_home_close(h);
    return r;
}

/* ---- 2: show's command line ------------------------------------------- */

static void test_show_quotes(void)
{
    hash256 pg[6];
    char img[65], p[4500], *line = NULL;
    int exact;
    struct rw_error err;
    const char *home = fresh_home("show x'y $(z)", pg, img);
    rw_home *h = NULL;
    CHECK(home && rw_home_open(home, &h, &err) == 0, "a home whose path needs quoting");
    if (!h)
        return;
    CHECK(rw_command_line(h, RUN_A, &line, &exact, &err) == 0 && line, "a command line");
    char want[4600];
    snprintf(want, sizeof(want), "rewind run --root '%s/show x'\\''y $(z)/images/%s.erofs' --cwd",
             top, img);
    CHECK(line && !strncmp(line, want, strlen(want)), "the root is quoted for a shell");
    if (line && strncmp(line, want, strlen(want)))
        fprintf(stderr, "  got  %s\n  want %s\n", line, want);
    free(line);
    line = NULL;
    snprintf(p, sizeof(p), "%s/runs/%s/manifest.json", home, RUN_B);
    io_mkdir_p(at("show x'y $(z)/runs/" RUN_B));
    CHECK(rundir_write_file(p, "{\"id\":\"" RUN_B "\",\"spec\":{\"image\":\"x;touch PWNED;echo \","
                               "\"argv\":[\"true\"]}}") == 0,
          "a manifest whose image is shell text");
    CHECK(rw_command_line(h, RUN_B, &line, &exact, &err) < 0 && !line &&
              strstr(err.msg, "bad image"),
          "an image that is not 64 hex digits is refused, not printed");
    free(line);
    rw_home_close(h);
}

/* ---- 4: keyframes damage, gc ------------------------------------------ */

static void test_keyframes_damage(void)
{
    hash256 pg[6];
    char img[65], kp[4500], err[512];
    struct rungc_stats st;
    struct kf_file k;
    const char *home = fresh_home("kf", pg, img);
    CHECK(home != NULL, "fixture home");
    snprintf(kp, sizeof(kp), "%s/runs/%s/keyframes", home, RUN_A);
    CHECK(kf_open(kp, &k) == 0 && k.n == 3 && !k.torn && !k.damaged, "3 whole keyframes");
    uint64_t second = k.n == 3 ? k.e[1].offset : 0, third = k.n == 3 ? k.e[2].offset : 0;
    kf_close_read(&k);

    /* a flipped byte in the middle record's state */
    flip(kp, (off_t)second + 30);
    CHECK(kf_open(kp, &k) == 0 && k.n == 1 && k.torn && k.damaged,
          "a flipped byte before the end is damage, not a torn tail");
    kf_close_read(&k);
    CHECK(rungc_run(home, 0, 0, &st, err, sizeof(err)) < 0, "gc refuses to free anything");
    int all = 1;
    for (int i = 0; i < 6; i++)
        all &= fix_page_readable(home, &pg[i]);
    CHECK(all, "every page the later keyframes name is still stored");
    struct rw_verify_report r = verify(home);
    CHECK(r.damaged_runs == 1 && r.unreadable_runs == 1 && strstr(r.damage, "keyframes"),
          "verify says the keyframes are damaged");
    flip(kp, (off_t)second + 30);

    /* a flipped byte in the last record, which ends at the end of the file */
    flip(kp, (off_t)third + 40);
    CHECK(kf_open(kp, &k) == 0 && k.n == 2 && k.damaged,
          "a flipped byte in a whole last record is damage too");
    kf_close_read(&k);
    CHECK(rungc_run(home, 0, 0, &st, err, sizeof(err)) < 0, "gc refuses");
    flip(kp, (off_t)third + 40);

    /* a torn tail: the last record cut short, or its end zeroed */
    off_t size = file_size(kp);
    CHECK(truncate(kp, size - 10) == 0, "cut the last record");
    CHECK(kf_open(kp, &k) == 0 && k.n == 2 && k.torn && !k.damaged, "a short tail is torn");
    kf_close_read(&k);
    CHECK(rungc_run(home, 1, 0, &st, err, sizeof(err)) == 0, "gc reads a torn tail");
    CHECK(truncate(kp, (off_t)third + 24) == 0 && truncate(kp, size) == 0,
          "the last record's body lost: zeros where it was");
    CHECK(kf_open(kp, &k) == 0 && k.n == 2 && k.torn && !k.damaged, "a zero tail is torn");
    kf_close_read(&k);
}

/* ---- 5: verify and export find damage ---------------------------------- */

static void test_verify_damage(void)
{
    hash256 pg[6];
    char img[65], p[4500], err[512], kp[4500];
    const char *home = fresh_home("v", pg, img);
    struct rw_verify_report r = verify(home);
    CHECK(home && r.damaged_runs == 0 && r.runs_checked == 1 && r.images_checked == 1 && !r.bad &&
              !r.missing,
          "a whole home verifies");

    snprintf(p, sizeof(p), "%s/images/%s.erofs", home, img);
    flip(p, 3);
    r = verify(home);
    CHECK(r.bad_images == 1 && r.damaged_runs == 1 && !strcmp(r.first_bad_image, img),
          "a flipped byte in an image");
    flip(p, 3);

    snprintf(p, sizeof(p), "%s/runs/%s/trace", home, RUN_A);
    off_t size = file_size(p);
    int missed = 0; /* every byte of the last entry, the crc's and the padding too */
    for (off_t at = size - 48; at < size; at++) {
        flip(p, at);
        r = verify(home);
        missed += !(r.damaged_runs == 1 && strstr(r.damage, "trace"));
        flip(p, at);
    }
    CHECK(missed == 0, "a flipped byte anywhere in a trace's last entry");
    char *whole = malloc((size_t)size);
    FILE *f = fopen(p, "rb");
    CHECK(whole && f && fread(whole, 1, (size_t)size, f) == (size_t)size, "read the trace");
    if (f)
        fclose(f);
    CHECK(truncate(p, size - 5) == 0, "truncate the trace mid-entry");
    r = verify(home);
    CHECK(r.damaged_runs == 1 && strstr(r.damage, "trace"), "a truncated trace");
    /* a trace cut at an entry's end reads whole: only its hash tells */
    uint64_t ev;
    char hex[65];
    off_t cut = size - 1;
    while (cut > 16) {
        CHECK(fix_write(p, whole, (size_t)cut) == 0, "write a shorter trace");
        if (tracehash_file(p, NULL, hex, &ev) == TRACEHASH_OK && ev == 2)
            break;
        cut--;
    }
    CHECK(ev == 2, "a trace of 2 whole entries");
    r = verify(home);
    CHECK(r.damaged_runs == 1 && strstr(r.damage, "trace_hash"),
          "a trace cut at an entry's end does not hash to the manifest's trace_hash");
    fix_write(p, whole, (size_t)size);
    free(whole);

    /* the spec: a flipped byte, an edit that still parses, another spec in
     * the manifest than in spec.json (what a replay runs) */
    char sp[4500], *spec = NULL;
    snprintf(sp, sizeof(sp), "%s/runs/%s/spec.json", home, RUN_A);
    off_t ssize = file_size(sp);
    spec = malloc((size_t)ssize + 1);
    f = fopen(sp, "rb");
    CHECK(spec && f && fread(spec, 1, (size_t)ssize, f) == (size_t)ssize, "read the spec");
    if (f)
        fclose(f);
    int spec_missed = 0;
    for (off_t at = 0; at < ssize; at++) {
        flip(sp, at);
        r = verify(home);
        spec_missed += !(r.damaged_runs == 1 && strstr(r.damage, "spec"));
        flip(sp, at);
    }
    CHECK(spec_missed == 0, "a flipped byte anywhere in the spec");
    CHECK(fix_write(sp, "{\"argv\":[\"/bin/true\"]}\n", 23) == 0, "a spec that parses");
    r = verify(home);
    CHECK(r.damaged_runs == 1 && strstr(r.damage, "does not hash to its id"),
          "a spec that does not hash to the run's id");
    fix_write(sp, spec, (size_t)ssize);
    snprintf(p, sizeof(p), "%s/runs/%s/manifest.json", home, RUN_A);
    char *man = NULL;
    size = file_size(p);
    man = malloc((size_t)size + 1);
    f = fopen(p, "rb");
    CHECK(man && f && fread(man, 1, (size_t)size, f) == (size_t)size, "read the manifest");
    if (f)
        fclose(f);
    char *argv = man ? strstr(man, "/bin/true") : NULL;
    CHECK(argv != NULL, "the manifest holds the spec");
    if (argv)
        memcpy(argv, "/bin/echo", 9); /* same length: the manifest still parses */
    fix_write(p, man, (size_t)size);
    r = verify(home);
    CHECK(r.damaged_runs == 1 && strstr(r.damage, "another spec"),
          "a manifest whose spec is not spec.json's");
    if (argv)
        memcpy(argv, "/bin/true", 9);
    fix_write(p, man, (size_t)size);
    free(man);
    free(spec);
    /* two damaged files of one run: one run damaged, both said */
    snprintf(sp, sizeof(sp), "%s/runs/%s/trace", home, RUN_A);
    flip(sp, file_size(sp) - 20);
    snprintf(kp, sizeof(kp), "%s/runs/%s/keyframes", home, RUN_A);
    struct kf_file k;
    CHECK(kf_open(kp, &k) == 0 && k.n == 3, "3 keyframes");
    off_t second = k.n == 3 ? (off_t)k.e[1].offset : 0;
    kf_close_read(&k);
    flip(kp, second + 30);
    r = verify(home);
    CHECK(r.damaged_runs == 1 && strstr(r.damage, "trace") && strstr(r.damage, "keyframes"),
          "a run with a damaged trace and damaged keyframes is one damaged run, both said");
    flip(kp, second + 30);
    flip(sp, file_size(sp) - 20);
    r = verify(home);
    CHECK(r.damaged_runs == 0, "whole again");

    snprintf(p, sizeof(p), "%s/runs/%s/manifest.json", home, RUN_A);
    size = file_size(p);
    CHECK(truncate(p, size / 2) == 0, "truncate the manifest");
    r = verify(home);
    CHECK(r.damaged_runs == 1 && strstr(r.damage, "manifest"), "a truncated manifest");
    struct archive_stats st;
    CHECK(archive_export(home, RUN_A, 0, at("v.rewind"), &st, err, sizeof(err)) < 0 &&
              strstr(err, "manifest"),
          "export of a run with a truncated manifest fails");
    CHECK(!exists(at("v.rewind")), "and writes no archive");
}

/* a fork's keyframes restore through its parent's: verify reads the chain */
static void test_verify_chain(void)
{
    hash256 pg[6];
    char img[65];
    const char *home = fresh_home("vchain", pg, img);
    CHECK(home && fix_run(home, "child", img, RUN_A, 15, pg, 6, 1) == 0,
          "a fork of the run, its keyframes naming it");
    struct rw_verify_report r = verify(home);
    CHECK(r.damaged_runs == 0 && r.runs_checked == 2, "a fork whose parent is here verifies");
    CHECK(fix_run(home, "orphan", img, "gone", 15, pg, 6, 1) == 0,
          "a fork whose parent is not here");
    r = verify(home);
    CHECK(r.damaged_runs == 1 && !strcmp(r.damaged_run, "orphan") && strstr(r.damage, "chain"),
          "verify says the orphan's chain of keyframes cannot be read");
}

static void set_manifest(const char *home, const char *run, const char *json)
{
    char p[4500];
    snprintf(p, sizeof(p), "%s/runs/%s/manifest.json", home, run);
    rundir_write_file(p, json);
}

static int export_import(const char *src, const char *run, const char *dst, char *err, size_t n);

/* a shell session's inputs decide its replay, and its id covers them */
static void test_verify_inputs(void)
{
    hash256 pg[6];
    char img[65], p[4500], m[1024];
    const char *home = fresh_home("vin", pg, img);
    CHECK(home && fix_run(home, "sess", img, NULL, 0, NULL, 0, 0) == 0, "a session's run");
    uint8_t in[64];
    size_t n = 8;
    memcpy(in, "RWINPUT1", 8);
    hash_ctx *h = hash_new();
    static const char *const keys[] = {"ls\n", "x\n"};
    for (int i = 0; i < 2; i++) {
        uint32_t len = (uint32_t)strlen(keys[i]);
        bytes_put_u64(in + n, 5 + 4 * (uint64_t)i);
        bytes_put_u32(in + n + 8, len);
        memcpy(in + n + 16, keys[i], len);
        bytes_put_u32(in + n + 12, trace_crc32(trace_crc32(0, in + n, 8), in + n + 16, len));
        hash_update(h, in + n, 8);
        hash_update(h, keys[i], len);
        n += 16 + len;
    }
    hash256 ih;
    char hex[65];
    hash_final(h, &ih);
    hash_hex(&ih, hex);
    snprintf(m, sizeof(m),
             "{\"image\":\"%s\",\"argv\":[\"/bin/true\"],"
             "\"inspect\":{\"kind\":\"shell\",\"inputs\":\"%s\"}}",
             img, hex);
    snprintf(p, sizeof(p), "%s/runs/sess/spec.json", home);
    CHECK(rundir_write_file(p, m) == 0, "its spec names its inputs' hash");
    char man[1200];
    snprintf(man, sizeof(man), "{\"id\":\"sess\",\"state\":\"complete\",\"spec\":%s}", m);
    set_manifest(home, "sess", man);
    snprintf(p, sizeof(p), "%s/runs/sess/inputs", home);
    CHECK(fix_write(p, in, n) == 0, "its inputs");
    struct rw_verify_report r = verify(home);
    CHECK(r.damaged_runs == 0, "a session whose inputs hash to its spec's verifies");
    char err[512], dst[128];
    snprintf(dst, sizeof(dst), "%s", at("vin-dst"));
    rundir_remove_tree(dst);
    CHECK(export_import(home, "sess", dst, err, sizeof(err)) == 0, err);
    flip(p, 8 + 16 + 1);
    rundir_remove_tree(dst);
    CHECK(export_import(home, "sess", dst, err, sizeof(err)) == -1 && strstr(err, "inputs"),
          "import refuses a session whose inputs are damaged");
    flip(p, 8 + 16 + 1);
    int missed = 0;
    for (off_t at = 8; at < (off_t)n; at++) {
        flip(p, at);
        r = verify(home);
        missed += !(r.damaged_runs == 1 && strstr(r.damage, "inputs"));
        flip(p, at);
    }
    CHECK(missed == 0, "a flipped byte anywhere in a session's inputs");
    CHECK(truncate(p, (off_t)n - 2) == 0, "cut the last record");
    r = verify(home);
    CHECK(r.damaged_runs == 1 && strstr(r.damage, "inputs"), "a cut session's inputs");
    CHECK(fix_write(p, in, 8 + 16 + 3) == 0, "only the first record");
    r = verify(home);
    CHECK(r.damaged_runs == 1 && strstr(r.damage, "do not hash"), "a record missing");
    unlink(p);
    r = verify(home);
    CHECK(r.damaged_runs == 1 && strstr(r.damage, "missing"), "no inputs at all");
}

/* ---- 3: what an archive says is verified, never trusted ----------------- */

/* 1 after a run at its spec's hash with an image of its own (text): not
 * RUN_A, whose image is another */
static int other_run(const char *home, const char *text, char img[65], char id[17])
{
    return fix_image(home, text, img) == 0 && fix_hashed_run(home, img, id, NULL, 0, 0) == 0;
}

static int export_import(const char *src, const char *run, const char *dst, char *err, size_t n)
{
    struct archive_stats st;
    if (archive_export(src, run, 0, at("x.rewind"), &st, err, n) < 0)
        return -2;
    return archive_import(dst, at("x.rewind"), &st, err, n);
}

static void test_import_takeover(void)
{
    hash256 pg[6];
    char img[65], err[512], p[4500];
    char src[128], dst[128]; /* at()'s buffers are reused */
    CHECK(fresh_home("isrc", pg, img) && fresh_home("idst", pg, img), "two homes");
    snprintf(src, sizeof(src), "%s", at("isrc"));
    snprintf(dst, sizeof(dst), "%s", at("idst"));
    /* the local run is named "mine" */
    char m[1024];
    snprintf(m, sizeof(m),
             "{\"id\":\"%s\",\"state\":\"complete\",\"name\":\"mine\",\"created\":5,"
             "\"spec\":{\"image\":\"%s\",\"argv\":[\"/bin/true\"]}}\n",
             RUN_A, img);
    set_manifest(dst, RUN_A, m);

    /* a directory that is not its manifest's id */
    CHECK(fix_run(src, "mine", img, NULL, 0, NULL, 0, 0) == 0, "a run in directory mine");
    set_manifest(src, "mine", "{\"id\":\"" RUN_B "\",\"state\":\"complete\"}\n");
    CHECK(export_import(src, "mine", dst, err, sizeof(err)) == -1 && strstr(err, "its id"),
          "a run whose directory is not its manifest's id is refused");
    /* a directory named like a local name */
    set_manifest(src, "mine", "{\"id\":\"mine\",\"state\":\"complete\"}\n");
    CHECK(export_import(src, "mine", dst, err, sizeof(err)) == -1 && strstr(err, "take over"),
          "a run whose directory is a local name is refused");
    CHECK(!exists(at("idst/runs/mine")), "nothing of it is added");
    /* a directory that is a prefix of a local id */
    char pre[5];
    snprintf(pre, sizeof(pre), "%.4s", RUN_A);
    CHECK(fix_run(src, pre, img, NULL, 0, NULL, 0, 0) == 0, "a run in directory aaaa");
    CHECK(export_import(src, pre, dst, err, sizeof(err)) == -1 && strstr(err, "take over"),
          "a run whose directory is a local id's prefix is refused");
    /* an id whose spec does not hash to it */
    CHECK(fix_run(src, RUN_B, img, NULL, 0, NULL, 0, 0) == 0, "run B");
    CHECK(export_import(src, RUN_B, dst, err, sizeof(err)) == -1 && strstr(err, "hash to its id"),
          "a run whose spec does not hash to its id is refused");
    /* a manifest that holds another spec than spec.json (the one replayed) */
    char ra[17], img3[65];
    CHECK(other_run(src, "a third root image", img3, ra), "a run whose id is its spec's hash");
    snprintf(m, sizeof(m),
             "{\"id\":\"%s\",\"state\":\"complete\","
             "\"spec\":{\"image\":\"%s\",\"argv\":[\"/bin/sh\",\"-c\",\"evil\"]}}\n",
             ra, img3);
    set_manifest(src, ra, m);
    CHECK(export_import(src, ra, dst, err, sizeof(err)) == -1 && strstr(err, "another spec"),
          "a run whose manifest holds another spec than its spec.json is refused");
    /* a trace that is not the one the manifest hashes */
    char rb[17], mj[512], img2[65]; /* another image: another spec, another id than RUN_A's */
    CHECK(other_run(src, "another root image", img2, rb), "a run whose id is its spec's hash");
    snprintf(mj, sizeof(mj),
             "{\"id\":\"%s\",\"state\":\"complete\",\"trace_hash\":"
             "\"0000000000000000000000000000000000000000000000000000000000000000\"}\n",
             rb);
    set_manifest(src, rb, mj);
    CHECK(export_import(src, rb, dst, err, sizeof(err)) == -1 && strstr(err, "trace_hash"),
          "a trace that does not hash to the manifest's trace_hash is refused");
    /* a name that names a local run already (found by fuzz_runs) */
    snprintf(mj, sizeof(mj),
             "{\"id\":\"%s\",\"state\":\"complete\",\"name\":\"mine\",\"created\":100}\n", rb);
    set_manifest(src, rb, mj);
    CHECK(export_import(src, rb, dst, err, sizeof(err)) == -1 && strstr(err, "names run"),
          "a run named like a local run's name is refused");
    /* a fine one is added, marked imported */
    snprintf(mj, sizeof(mj), "{\"id\":\"%s\",\"state\":\"complete\"}\n", rb);
    set_manifest(src, rb, mj);
    int rc = export_import(src, rb, dst, err, sizeof(err));
    CHECK(rc == 0, err);
    snprintf(p, sizeof(p), "%s/runs/%s/%s", dst, rb, RUNDIR_IMPORTED);
    CHECK(exists(p), "an imported run is marked (never a stored reference)");
    CHECK(export_import(src, rb, dst, err, sizeof(err)) == 0, "imported again: identical");
}

/* Two imports of one archive at once: both succeed (one adds, one finds it
 * identical), never "it appeared during the import". */
struct imp_arg {
    const char *dst, *arc;
    int rc;
    char err[512];
};

static void *import_main(void *a)
{
    struct imp_arg *x = a;
    struct archive_stats st;
    x->rc = archive_import(x->dst, x->arc, &st, x->err, sizeof(x->err));
    return NULL;
}

static void test_import_concurrent(void)
{
    hash256 pg[6];
    char img[65], err[512];
    const char *src = fresh_home("csrc", pg, img);
    struct archive_stats st;
    char id[17];
    snprintf(id, sizeof(id), "%s", RUN_A); /* fresh_home's run: its id is its spec's hash */
    CHECK(src && archive_export(src, id, 1, at("c.rewind"), &st, err, sizeof(err)) == 0,
          "an archive");
    int bad = 0;
    for (int i = 0; i < 8; i++) {
        char d[64];
        snprintf(d, sizeof(d), "cdst%d", i);
        struct imp_arg a = {.dst = at(d), .arc = at("c.rewind")}, b = a;
        pthread_t ta, tb;
        pthread_create(&ta, NULL, import_main, &a);
        pthread_create(&tb, NULL, import_main, &b);
        pthread_join(ta, NULL);
        pthread_join(tb, NULL);
        if (a.rc || b.rc) {
            bad++;
            fprintf(stderr, "  %s | %s\n", a.err, b.err);
        }
    }
    CHECK(bad == 0, "two imports of one archive at once both succeed");
}

/* ---- 7: a sparse archive ----------------------------------------------- */

static void test_import_sparse(void)
{
    const char *dst = at("sdst"), *arc = at("sparse.rewind");
    uint8_t h[80 + 16 + 32] = {0};
    memcpy(h, ARCHIVE_MAGIC, 8);
    bytes_put_u32(h + 8, ARCHIVE_VERSION);
    memcpy(h + 16, RUN_A, 16);
    bytes_put_u32(h + 80, 1);  /* a file entry */
    bytes_put_u32(h + 84, 22); /* its name's length */
    bytes_put_u64(h + 88, 512ull << 20);
    memcpy(h + 96, RUN_A, 16);
    memcpy(h + 112, "/trace", 6);
    CHECK(fix_write(arc, h, 96 + 22) == 0 && truncate(arc, (512ll << 20) + 200) == 0,
          "a 512 MiB sparse archive");
    char err[512];
    struct archive_stats st;
    time_t t0 = time(NULL);
    CHECK(archive_import(dst, arc, &st, err, sizeof(err)) < 0 && strstr(err, "sparse"),
          "a sparse archive is refused");
    CHECK(time(NULL) - t0 < 5, "before staging it");
    struct stat sb;
    CHECK(stat(at("sdst/runs"), &sb) != 0, "nothing is left in the home");
    unlink(arc);
}

/* ---- 6: process trees in O(n log n) ------------------------------------ */

struct ps_count {
    size_t n;
    int maxdepth;
};

static int on_proc(void *ctx, const struct rw_proc *p)
{
    struct ps_count *c = ctx;
    c->n++;
    if (p->depth > c->maxdepth)
        c->maxdepth = p->depth;
    return 0;
}

/* runs/<run>: a trace of n forks: a chain (pid k forks k + 1) or flat
 * (init forks them all), then, flat, every other one exits. */
static int fork_run(const char *home, const char *run, uint32_t n, int chain)
{
    char d[4300], p[4400];
    snprintf(d, sizeof(d), "%s/runs/%s", home, run);
    if (io_mkdir_p(d) < 0)
        return -1;
    snprintf(p, sizeof(p), "%s/manifest.json", d);
    int rc = rundir_write_file(p, "{\"id\":\"x\",\"state\":\"complete\"}\n");
    struct trace_writer w;
    snprintf(p, sizeof(p), "%s/trace", d);
    rc |= trace_open_write(&w, p);
    struct rewind_record r;
    uint64_t step = 1;
    for (uint32_t k = 0; k < n; k++) {
        memset(&r, 0, sizeof(r));
        r.len = sizeof(r);
        r.kind = REWIND_REC_FORK;
        r.pid = r.tid = chain ? 1 + k : 1;
        r.aux = 2 + k;
        trace_append(&w, step++, &r);
    }
    for (uint32_t k = 0; !chain && k < n; k += 2) {
        memset(&r, 0, sizeof(r));
        r.len = sizeof(r);
        r.kind = REWIND_REC_EXIT;
        r.pid = r.tid = 2 + k;
        trace_append(&w, step++, &r);
    }
    rc |= trace_close(&w);
    return rc;
}

/* rw_ps's work on run (proctree.h): its loop steps per event applied and
 * process reported, which invariant 3 of proctree.c bounds by a constant
 * (a walk of the table at each exit, or a quadratic report, makes it grow
 * with the run). Counted, not timed: a loaded host changes nothing. */
static double work_per_item(uint64_t procs)
{
    uint64_t steps, events;
    proctree_last_work(&steps, &events);
    return (double)steps / (double)(events + procs);
}

static void test_ps_linear(void)
{
    const char *home = at("ps");
    rundir_remove_tree(home);
    rw_home *h = NULL;
    struct rw_error err;
    CHECK(fork_run(home, "chain", 8000, 1) == 0 && fork_run(home, "flat", 40000, 0) == 0 &&
              fork_run(home, "flat-small", 4000, 0) == 0 && rw_home_open(home, &h, &err) == 0,
          "a chain of 8,000 forks and 40,000 (and 4,000) processes under init");
    if (!h)
        return;
    struct ps_count c = {0};
    CHECK(rw_ps(h, "chain", UINT64_MAX, on_proc, &c, NULL, &err) == 0, "ps of the chain");
    CHECK(c.n == 4096 && c.maxdepth == 4095, "the chain down to the depth limit");
    double chain = work_per_item(c.n);
    CHECK(chain < 8, "the chain: a bounded number of loop steps per event and process");
    c = (struct ps_count){0};
    CHECK(rw_ps(h, "flat-small", UINT64_MAX, on_proc, &c, NULL, &err) == 0, "ps of 4,000");
    CHECK(c.n == 2001 && c.maxdepth == 1, "init and the 2,000 still alive");
    double small = work_per_item(c.n);
    c = (struct ps_count){0};
    CHECK(rw_ps(h, "flat", UINT64_MAX, on_proc, &c, NULL, &err) == 0, "ps of the flat tree");
    CHECK(c.n == 20001 && c.maxdepth == 1, "init and the 20,000 still alive");
    double flat = work_per_item(c.n);
    CHECK(flat < 8 && flat < 2 * small + 1,
          "40,000 processes: as few loop steps per event and process as 4,000");
    if (!(chain < 8 && flat < 8 && flat < 2 * small + 1))
        fprintf(stderr, "  steps per item: chain %.2f, flat %.2f, small %.2f\n", chain, flat,
                small);
    rw_home_close(h);
}

/* ---- 9: remove is atomic and locked ------------------------------------- */

struct rm_arg {
    rw_home *h;
    int rc;
};

static void *remove_main(void *a)
{
    struct rm_arg *x = a;
    const char *refs[] = {RUN_A};
    struct rw_error err;
    x->rc = rw_remove(x->h, refs, 1, 0, NULL, NULL, &err);
    return NULL;
}

static void test_remove_locked(void)
{
    hash256 pg[6];
    char img[65], home[128], err[512], p[4500];
    CHECK(fresh_home("rm", pg, img) != NULL, "fixture home");
    snprintf(home, sizeof(home), "%s", at("rm"));
    rw_home *h = NULL;
    struct rw_error e;
    CHECK(rw_home_open(home, &h, &e) == 0, "open");
    if (!h)
        return;
    int lock = homelock_take(home, 1, 0, err, sizeof(err));
    CHECK(lock >= 0, "gc's lock held");
    struct rm_arg a = {.h = h};
    pthread_t t;
    pthread_create(&t, NULL, remove_main, &a);
    usleep(300 * 1000);
    snprintf(p, sizeof(p), "%s/runs/%s/trace", home, RUN_A);
    CHECK(exists(p), "remove waits for the home lock");
    homelock_release(lock);
    pthread_join(t, NULL);
    snprintf(p, sizeof(p), "%s/runs/%s", home, RUN_A);
    CHECK(a.rc == 0 && !exists(p), "then removes the run");
    /* what a remove killed after its rename leaves: hidden, and gc's */
    snprintf(p, sizeof(p), "%s/runs/.%s.77.0000abcd.old", home, RUN_A);
    CHECK(io_mkdir_p(p) == 0, "a killed remove's directory");
    rw_home_close(h);
    struct rungc_stats st;
    CHECK(rungc_run(home, 0, 0, &st, err, sizeof(err)) == 0 && !exists(p),
          "gc removes what a killed remove left");
}

/* ---- 12: ls and show print no control characters; ls --status checks -- */

/* Run build/rewind with args in home; its stdout into out (n bytes).
 * Returns its exit status, or -1. */
static int rewind_cli(const char *home, const char *args, char *out, size_t n)
{
    char cmd[8800];
    snprintf(cmd, sizeof(cmd), "REWIND_HOME='%s' build/rewind %s 2>/dev/null", home, args);
    FILE *p = popen(cmd, "r");
    if (!p)
        return -1;
    size_t k = fread(out, 1, n - 1, p);
    out[k] = 0;
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void test_cli_text(void)
{
    if (access("build/rewind", X_OK) != 0) {
        SKIP("build/rewind is not built (run from the top of the tree)");
        return;
    }
    hash256 pg[6];
    char img[65], home[128], out[1 << 16], m[1024];
    CHECK(fresh_home("cli", pg, img) != NULL, "fixture home");
    snprintf(home, sizeof(home), "%s", at("cli"));
    snprintf(m, sizeof(m),
             "{\"id\":\"%s\",\"state\":\"complete\",\"created\":5,\"name\":\"n\\u001b]0;x\","
             "\"outcome\":\"ex\\u001b[2Jited\",\"parent\":\"p\\u0007q\","
             "\"spec\":{\"image\":\"%s\",\"cwd\":\"/\",\"argv\":[\"echo\",\"a\\u001b[31mb\"]}}\n",
             RUN_A, img);
    set_manifest(home, RUN_A, m);
    CHECK(rewind_cli(home, "ls", out, sizeof(out)) == 0 && strstr(out, RUN_A) && !strchr(out, 0x1b),
          "ls prints no escape character from a manifest");
    char show[64];
    snprintf(show, sizeof(show), "show %s", RUN_A);
    CHECK(rewind_cli(home, show, out, sizeof(out)) == 0 && !strchr(out, 0x1b) && !strchr(out, 0x07),
          "show prints no control character from a manifest");
    CHECK(strstr(out, "$'a\\x1b[31mb'") != NULL, "the command line writes it as $'\\x1b'");
    CHECK(rewind_cli(home, "ls --status bogus", out, sizeof(out)) == 2,
          "ls --status with no outcome's word is an error");
    CHECK(rewind_cli(home, "ls --status exited", out, sizeof(out)) == 0, "ls --status exited");

    /* verify quotes what a damaged file says (jansson's error holds its
     * bytes): one line of text, and its JSON answer names the damage */
    char zz[4500];
    CHECK(fresh_home("cli", pg, img) != NULL, "the fixture home again (its run whole)");
    snprintf(zz, sizeof(zz), "%s/runs/zz", home);
    CHECK(io_mkdir_p(zz) == 0, "a run directory zz");
    snprintf(zz, sizeof(zz), "%s/runs/zz/manifest.json", home);
    CHECK(fix_write(zz, "{\"id\": \x1b[31m\xff}", 14) == 0, "a manifest with an escape");
    CHECK(rewind_cli(home, "verify", out, sizeof(out)) == 1 && strstr(out, "run zz") &&
              !strchr(out, 0x1b) && !strchr(out, 0xff),
          "verify prints no control character or stray byte from a damaged file");
    CHECK(rewind_cli(home, "verify --json", out, sizeof(out)) == 1, "verify --json");
    json_error_t je;
    json_t *v = json_loads(out, 0, &je);
    CHECK(json_is_string(json_object_get(json_object_get(v, "first_damaged"), "what")),
          "verify --json names the damage in valid JSON");
    json_decref(v);
    /* a run directory named by any bytes is still listed by ls --json */
    snprintf(zz, sizeof(zz), "%s/runs/a\xff\x1b[2Jb", home);
    CHECK(io_mkdir_p(zz) == 0, "a run directory named with 0xff and an escape");
    snprintf(zz, sizeof(zz), "%s/runs/a\xff\x1b[2Jb/manifest.json", home);
    CHECK(fix_write(zz, "{\"id\":\"a\"}", 10) == 0, "its manifest");
    CHECK(rewind_cli(home, "ls --json", out, sizeof(out)) == 0, "ls --json");
    v = json_loads(out, 0, &je);
    int ids = 0;
    for (size_t i = 0; i < json_array_size(v); i++)
        ids += json_is_string(json_object_get(json_array_get(v, i), "id"));
    CHECK(json_array_size(v) >= 2 && ids == (int)json_array_size(v),
          "ls --json gives every run its id, whatever the bytes of its directory's name");
    json_decref(v);
    /* an error line quotes what it was given: no control character either */
    char cmd[4600];
    snprintf(cmd, sizeof(cmd),
             "REWIND_HOME='%s' build/rewind show \"$(printf 'x\\033]0;t\\007y')\" 2>&1", home);
    FILE *pp = popen(cmd, "r");
    size_t got = pp ? fread(out, 1, sizeof(out) - 1, pp) : 0;
    out[got] = 0;
    if (pp)
        pclose(pp);
    CHECK(strstr(out, "rewind: ") && !strchr(out, 0x1b) && !strchr(out, 0x07),
          "an error line holds no control character");
}

/* ---- 8: staging names -------------------------------------------------- */

static void test_staging_names(void)
{
    const char *home = at("stage");
    rundir_remove_tree(home);
    struct rundir a, b;
    char err[512];
    CHECK(rundir_begin(&a, home, RUN_A, "{}", err, sizeof(err)) == 0, "one run staged");
    CHECK(rundir_begin(&b, home, RUN_A, "{}", err, sizeof(err)) == 0,
          "a second run of the same id from the same pid (another PID namespace)");
    CHECK(strcmp(a.staging, b.staging) != 0, "two staging directories");
    char p[4500];
    snprintf(p, sizeof(p), "%s/spec.json", a.staging);
    CHECK(exists(p), "the first is not deleted by the second");
    rundir_abort(&a);
    rundir_abort(&b);
}

int main(void)
{
    snprintf(top, sizeof(top), "/tmp/harden3_test.%d", (int)getpid());
    rundir_remove_tree(top);
    io_mkdir_p(top);
    test_show_quotes();
    test_keyframes_damage();
    test_verify_damage();
    test_verify_chain();
    test_verify_inputs();
    test_import_takeover();
    test_import_concurrent();
    test_import_sparse();
    test_ps_linear();
    test_remove_locked();
    test_cli_text();
    test_staging_names();
    rundir_remove_tree(top);
    (void)fix_snapshot;
    return unit_done();
}
