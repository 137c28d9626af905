/*
 * fuzz_runs: a structured target (issue 27): the input does not become a
 * file's bytes but chooses the fields of a valid-looking run (its directory
 * name, the manifest's id, names, created date, counts, trace hash,
 * outcome, the spec's image, argv and cwd) and a piece of damage (a flipped
 * or cut keyframes file, trace or manifest, a flipped image). The run is
 * written to a source home with runfix.h's writers, verified, exported and
 * imported into a home that holds a run of its own, named "mine"; then
 * every run of that home is read back through the Reading API (info,
 * command line, processes, listing) and gc looks at it (a dry run).
 * spec.json mostly holds the manifest's spec (an import refuses a manifest
 * with another) and a run at its spec's hash moves with it.
 * The byte-mutating targets rarely get past an archive's checksum or a
 * manifest's parser to these fields; this one starts past them.
 *
 * Invariants:
 *  1. Whatever the fields, nothing crashes and no sanitizer reports.
 *  2. What an archive says never displaces what the home had: after the
 *     import, "mine" and the local id still resolve to the local run, and
 *     an id prefix of it resolves to it or to nothing (ambiguous), never
 *     to the archive's run.
 *  3. The command line `show` prints holds no control character (they are
 *     written as $'\xNN') and names its image by 64 hex digits or not at all.
 *  4. A manifest cut in half, or an image with a flipped byte, is reported
 *     by verify as damage.
 */
#include <jansson.h>
#include <time.h>

#include "../unit/runfix.h"
#include "archive/archive.h"
#include "fuzz.h"
#include "home/rungc.h"
#include "trace/tracehash.h"
#include "rewind.h"
#include "util/check.h"

#define LOCAL "aaaa000000000001"

struct in {
    const uint8_t *p;
    size_t n;
};

static unsigned u8(struct in *in)
{
    if (!in->n)
        return 0;
    in->n--;
    return *in->p++;
}

static const char *pick(struct in *in, const char *const *v, size_t n)
{
    return v[u8(in) % n];
}

static void set_file(const char *home, const char *run, const char *file, const char *text)
{
    char p[4400];
    snprintf(p, sizeof(p), "%s/runs/%s/%s", home, run, file);
    rundir_write_file(p, text);
}

static void flip_at(const char *path, unsigned k)
{
    FILE *f = fopen(path, "r+b");
    if (!f)
        return;
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    if (size > 0) {
        long at = (long)(k * 7919u) % size;
        fseek(f, at, SEEK_SET);
        int c = fgetc(f);
        fseek(f, at, SEEK_SET);
        fputc(c ^ 0x20, f);
    }
    fclose(f);
}

static int no_proc(void *ctx, const struct rw_proc *p)
{
    (void)ctx, (void)p;
    return 0;
}

static int each_run(void *ctx, const struct rw_run_info *r, const struct rw_error *why)
{
    rw_home *h = ctx;
    (void)why;
    if (!r || r->incomplete)
        return 0;
    struct rw_run_info in;
    struct rw_error err;
    if (rw_run_info(h, r->dir, &in, &err) == 0)
        rw_run_info_free(&in);
    char *line = NULL;
    int exact;
    if (rw_command_line(h, r->dir, &line, &exact, &err) == 0 && line) {
        for (const char *c = line; *c; c++) /* invariant 3 */
            RW_ASSERT((unsigned char)*c >= 0x20 && *c != 0x7f);
        const char *root = strstr(line, "/images/");
        if (root && strncmp(root + 8, "?.erofs", 7)) {
            RW_ASSERT(strspn(root + 8, "0123456789abcdef") == 64);
            RW_ASSERT(!strncmp(root + 8 + 64, ".erofs", 6));
        }
    }
    free(line);
    struct rw_trace_status st;
    rw_ps(h, r->dir, UINT64_MAX, no_proc, NULL, &st, &err);
    return 0;
}

static int resolves(rw_home *h, const char *ref, char *id)
{
    struct rw_error err;
    return rw_resolve(h, ref, id, &err) == 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct in in = {data, size};
    char src[512], dst[512], img[65], arc[512], err[1024], p[4400];
    hash256 pg[4], lp[2];
    fuzz_path(src, sizeof(src), "src");
    fuzz_path(dst, sizeof(dst), "dst");
    fuzz_path(arc, sizeof(arc), "x.rewind");
    if (fix_image(src, "root image", img) < 0 || fix_put_pages(src, 7, 4, pg) < 0 ||
        fix_image(dst, "root image", img) < 0 || fix_put_pages(dst, 70, 2, lp) < 0 ||
        fix_run(dst, LOCAL, img, NULL, 0, lp, 2, 1) < 0)
        abort(); /* the harness's failure */
    char m[2048];
    snprintf(m, sizeof(m),
             "{\"id\":\"%s\",\"state\":\"complete\",\"created\":%lld,\"name\":\"mine\","
             "\"spec\":{\"image\":\"%s\",\"argv\":[\"true\"],\"cwd\":\"/\"}}\n",
             LOCAL, (long long)time(NULL), img);
    set_file(dst, LOCAL, "manifest.json", m);

    /* the archive's run */
    static const char *const dirs[] = {
        "bbbb000000000002",
        "mine",
        "aaaa",
        "aaaa000000000001",
        "aaaa000000000001~1",
        "aaaa000000000002",
        "other",
        "@",
        "bbbb000000000002~7",
        "#",
        "#",
    };
    const char *dir = pick(&in, dirs, sizeof(dirs) / sizeof(dirs[0]));
    unsigned nkf = u8(&in) % 4;
    char hashed[17]; /* "#": the id an import accepts, its spec's hash */
    int made = !strcmp(dir, "#")
                   ? fix_hashed_run(src, img, hashed, nkf ? pg : NULL, nkf ? 4 : 0, nkf ? nkf : 1)
                   : fix_run(src, dir, img, NULL, 0, nkf ? pg : NULL, nkf ? 4 : 0, nkf ? nkf : 1);
    if (!strcmp(dir, "#"))
        dir = hashed;
    if (made < 0) {
        fuzz_clear("src");
        fuzz_clear("dst");
        return 0; /* "@" is no directory runfix makes */
    }
    static const char *const ids[] = {"=", "aaaa000000000001", "bbbb000000000002", "x", ""};
    static const char *const names[] = {
        "mine", "aaaa000000000001", "fine", "a\x1b[2Jb", "\xff\xfe", "aaaa", "@", ".x"};
    static const char *const texts[] = {"exited", "ex\x1b]0;t\x07ited", "\xc3", "panic", "",
                                        "a\nb"};
#define ZEROS16 "0000000000000000"
    static const char *const images[] = {"=", "x;touch PWNED;echo ", "../../etc/passwd",
                                         ZEROS16 ZEROS16 ZEROS16 ZEROS16, ""};
    static const long long nums[] = {
        -1, 0, 3, 5, 1ll << 62, (1ll << 62) + 1, 9223372036854775807ll};
    const char *id = pick(&in, ids, 5);
    const char *image = pick(&in, images, 5);
    json_t *man = json_pack(
        "{s:s,s:s,s:s,s:I,s:I,s:I,s:s,s:{s:s,s:[s,s],s:s,s:I}}", "id", !strcmp(id, "=") ? dir : id,
        "state", "complete", "name", pick(&in, names, 8), "created",
        (json_int_t)(u8(&in) & 1 ? (long long)time(NULL) + 2 * 86400 * (u8(&in) & 1)
                                 : nums[u8(&in) % 7]),
        "steps", (json_int_t)nums[u8(&in) % 7], "events", (json_int_t)nums[u8(&in) % 7], "outcome",
        pick(&in, texts, 6), "spec", "image", !strcmp(image, "=") ? img : image, "argv", "echo",
        pick(&in, texts, 6), "cwd", pick(&in, texts, 6), "mem_mib", (json_int_t)nums[u8(&in) % 7]);
    if (man && u8(&in) & 1) {
        char tp[4400], hex[65];
        uint64_t ev;
        snprintf(tp, sizeof(tp), "%s/runs/%s/trace", src, dir);
        if (tracehash_file(tp, NULL, hex, &ev) == 0)
            json_object_set_new(man, "trace_hash", json_string(u8(&in) & 1 ? hex : "00"));
    }
    /* mostly, spec.json is the manifest's spec (import refuses another);
     * a run at its spec's hash ("#") moves to the new hash */
    if (man && u8(&in) % 4) {
        char *sj = json_dumps(json_object_get(man, "spec"), JSON_COMPACT | JSON_SORT_KEYS);
        if (sj)
            set_file(src, dir, "spec.json", sj);
        if (sj && dir == hashed) {
            hash256 sh;
            char hex[65], from[4400], to[4400];
            hash_buf(sj, strlen(sj), &sh);
            hash_hex(&sh, hex);
            snprintf(from, sizeof(from), "%s/runs/%s", src, hashed);
            snprintf(hashed, sizeof(hashed), "%.16s", hex);
            snprintf(to, sizeof(to), "%s/runs/%s", src, hashed);
            if (rename(from, to) < 0)
                abort(); /* the harness's failure */
            if (!strcmp(id, "="))
                json_object_set_new(man, "id", json_string(hashed));
        }
        free(sj);
    }
    char *mt = man ? json_dumps(man, JSON_COMPACT) : NULL;
    json_decref(man);
    if (mt)
        set_file(src, dir, "manifest.json", mt);
    free(mt);

    /* a piece of damage */
    unsigned dmg = u8(&in) % 6, k = u8(&in) | u8(&in) << 8;
    int certain = 0;
    if (dmg == 1) {
        snprintf(p, sizeof(p), "%s/runs/%s/keyframes", src, dir);
        flip_at(p, k);
    } else if (dmg == 2) {
        snprintf(p, sizeof(p), "%s/runs/%s/trace", src, dir);
        flip_at(p, k);
    } else if (dmg == 3) {
        snprintf(p, sizeof(p), "%s/runs/%s/trace", src, dir);
        if (truncate(p, 16 + k % 200) < 0)
            (void)0;
    } else if (dmg == 4) {
        snprintf(p, sizeof(p), "%s/runs/%s/manifest.json", src, dir);
        FILE *f = fopen(p, "rb");
        long n = 0;
        if (f && !fseek(f, 0, SEEK_END))
            n = ftell(f);
        if (f)
            fclose(f);
        certain = n > 2 && truncate(p, n / 2) == 0;
    } else if (dmg == 5) {
        snprintf(p, sizeof(p), "%s/images/%s.erofs", src, img);
        flip_at(p, k);
        certain = !strcmp(image, "=");
    }
    rw_home *h = NULL;
    struct rw_error e;
    struct rw_verify_report r;
    if (rw_home_open(src, &h, &e) == 0 && rw_verify(h, &r, &e) == 0 && certain)
        RW_ASSERT(r.damaged_runs > 0); /* invariant 4 */
    rw_home_close(h);

    /* export, import beside the local run, read everything back */
    struct archive_stats st;
    int xrc = archive_export(src, dir, u8(&in) & 1, arc, &st, err, sizeof(err)), irc = -9;
    if (xrc == 0)
        irc = archive_import(dst, arc, &st, err, sizeof(err));
    if (getenv("FUZZ_RUNS_DEBUG")) /* what this input made, to read a crash */
        fprintf(stderr, "dir %s image %s damage %u: export %d import %d: %s\n", dir, image, dmg,
                xrc, irc, err);
    h = NULL;
    if (rw_home_open(dst, &h, &e) == 0) {
        char got[RW_ID_MAX];
        RW_ASSERT(resolves(h, "mine", got) && !strcmp(got, LOCAL)); /* invariant 2 */
        RW_ASSERT(resolves(h, LOCAL, got) && !strcmp(got, LOCAL));
        RW_ASSERT(!resolves(h, "aaaa", got) || !strcmp(got, LOCAL));
        rw_runs_list(h, NULL, each_run, h, &e);
        rw_home_close(h);
    }
    struct rungc_stats gs;
    rungc_run(dst, 1, 0, &gs, err, sizeof(err));
    (void)fix_snapshot, (void)fix_page_readable;
    fuzz_clear("src");
    fuzz_clear("dst");
    fuzz_clear("x.rewind");
    return 0;
}
