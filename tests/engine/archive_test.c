/* archive_test: export then import reproduces a run, its fork chain, pages
 * and image; a damaged, truncated, unsafe or conflicting archive is refused
 * with nothing added to the importing home. Hostile archives are made by
 * parsing a good one into entries, changing them and writing them back with a
 * correct END, so each check is reached on its own. */
#include <errno.h>
#include <stdio.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "archive/archive.h"
#include "archive/archive_int.h"
#include "runfix.h"
#include "rewind.h"
#include "unit.h"

static char base[64];

struct ent {
    uint32_t kind;
    char name[300];
    uint8_t *data;
    uint64_t len;
};

struct arc {
    uint8_t head[ARCH_HEADER_SIZE];
    struct ent e[256];
    size_t n;
};

static uint8_t *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *b = malloc((size_t)n + 1);
    if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
        free(b);
        b = NULL;
    }
    fclose(f);
    *len = (size_t)n;
    return b;
}

/* Entries of dir whose name starts with prefix; -1 if dir cannot be read
 * (so a missing directory never passes for an empty one). */
static int count_prefixed(const char *dir, const char *prefix)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        n += !strncmp(e->d_name, prefix, strlen(prefix));
    closedir(d);
    return n;
}

/* Parse a good archive (no checks: the test wrote it). */
static int parse(const uint8_t *b, size_t len, struct arc *a)
{
    memcpy(a->head, b, ARCH_HEADER_SIZE);
    size_t off = ARCH_HEADER_SIZE;
    a->n = 0;
    while (off + ARCH_ENTRY_SIZE <= len && a->n < 256) {
        struct ent *e = &a->e[a->n];
        e->kind = archive_get32(b + off);
        uint32_t nl = archive_get32(b + off + 4);
        e->len = archive_get64(b + off + 8);
        if (e->kind == ARCH_END)
            return 0;
        memcpy(e->name, b + off + 16, nl);
        e->name[nl] = 0;
        e->data = malloc(e->len ? e->len : 1);
        memcpy(e->data, b + off + 16 + nl, e->len);
        off += 16 + nl + e->len;
        a->n++;
    }
    return -1;
}

static void free_arc(struct arc *a)
{
    for (size_t i = 0; i < a->n; i++)
        free(a->e[i].data);
}

/* Write a with a correct END to path. */
static int emit(const struct arc *a, const char *path)
{
    size_t cap = ARCH_HEADER_SIZE + 16 + ARCH_END_LEN, off = 0;
    for (size_t i = 0; i < a->n; i++)
        cap += 16 + strlen(a->e[i].name) + a->e[i].len;
    uint8_t *b = malloc(cap);
    memcpy(b, a->head, ARCH_HEADER_SIZE);
    off = ARCH_HEADER_SIZE;
    for (size_t i = 0; i < a->n; i++) {
        size_t nl = strlen(a->e[i].name);
        archive_put32(b + off, a->e[i].kind);
        archive_put32(b + off + 4, (uint32_t)nl);
        archive_put64(b + off + 8, a->e[i].len);
        memcpy(b + off + 16, a->e[i].name, nl);
        memcpy(b + off + 16 + nl, a->e[i].data, a->e[i].len);
        off += 16 + nl + a->e[i].len;
    }
    hash256 h;
    hash_buf(b, off, &h);
    archive_put32(b + off, ARCH_END);
    archive_put32(b + off + 4, 0);
    archive_put64(b + off + 8, ARCH_END_LEN);
    archive_put64(b + off + 16, a->n);
    memcpy(b + off + 24, h.b, 32);
    off += 16 + ARCH_END_LEN;
    int rc = fix_write(path, b, off);
    free(b);
    return rc;
}

static int find_kind(const struct arc *a, uint32_t kind)
{
    for (size_t i = 0; i < a->n; i++)
        if (a->e[i].kind == kind)
            return (int)i;
    return -1;
}

static char *home_path(const char *name)
{
    static char p[64][256];
    static int k;
    char *o = p[k++ % 64];
    snprintf(o, 256, "%s/%s", base, name);
    return o;
}

/* Import path into a home that holds one earlier run; expect failure with
 * want in the message and the home unchanged. */
static void refused(const char *path, const char *want, const char *what)
{
    char err[1024] = "";
    struct archive_stats st;
    const char *h = home_path("victim");
    char *before = fix_snapshot(h);
    int rc = archive_import(h, path, &st, err, sizeof(err));
    char *after = fix_snapshot(h);
    CHECK(rc < 0, what);
    if (rc < 0 && !strstr(err, want))
        fprintf(stderr, "  %s: error was: %s\n", what, err);
    CHECK(rc < 0 && strstr(err, want), what);
    CHECK(before && after && !strcmp(before, after), "nothing added on a refused import");
    free(before);
    free(after);
}

static void build_source(char img[65], hash256 *pp, hash256 *cp)
{
    const char *src = home_path("src");
    CHECK(fix_image(src, "erofs image bytes of the test root", img) == 0, "image");
    CHECK(fix_put_pages(src, 100, 8, pp) == 0 && fix_put_pages(src, 200, 5, cp) == 0, "pages");
    cp[4] = pp[0];           /* a page shared by parent and child */
    store_zero_hash(&cp[3]); /* and a page that became zero */
    CHECK(fix_run(src, "parent", img, NULL, 0, pp, 8, 2) == 0, "parent run");
    CHECK(fix_run(src, "child", img, "parent", 10, cp, 5, 3) == 0, "child run (a fork)");
}

static int same_files(const char *a, const char *b)
{
    char *x = fix_snapshot(a), *y = fix_snapshot(b);
    int same = x && y && !strcmp(x, y);
    free(x);
    free(y);
    return same;
}

/* every page of the source's parent (pp, 8) and child (cp, 5) is in home */
static int pages_readable(const char *home, const hash256 *pp, const hash256 *cp)
{
    int ok = 1;
    for (int i = 0; i < 8; i++)
        ok &= fix_page_readable(home, &pp[i]);
    for (int i = 0; i < 5; i++)
        ok &= fix_page_readable(home, &cp[i]);
    return ok;
}

static void round_trip(const char *img, const hash256 *pp, const hash256 *cp)
{
    char err[1024], p[512];
    struct archive_stats st;
    const char *arc = home_path("child.rewind"), *dst = home_path("dst");
    CHECK(archive_export(home_path("src"), "child", 1, arc, &st, err, sizeof(err)) == 0,
          "export --replayable");
    CHECK(st.runs == 2 && st.pages == 11 && st.images == 1, "export counts");
    CHECK(archive_import(dst, arc, &st, err, sizeof(err)) == 0, "import");
    if (st.run[0] == 0)
        fprintf(stderr, "  import: %s\n", err);
    CHECK(!strcmp(st.run, "child") && st.events == 3 && st.keyframes == 3 && st.pages == 11 &&
              !st.already,
          "import counts");
    snprintf(p, sizeof(p), "%s/runs/child", home_path("src"));
    CHECK(same_files(p, home_path("dst/runs/child")), "child's files identical");
    snprintf(p, sizeof(p), "%s/runs/parent", home_path("src"));
    CHECK(same_files(p, home_path("dst/runs/parent")), "parent's files identical");
    struct kf_chain c;
    CHECK(kf_chain_load(dst, "child", &c, err, sizeof(err)) == 0 && c.nlinks == 2 &&
              c.link[0].count == 1 && c.link[1].count == 3,
          "the chain resolves in the new home");
    kf_chain_free(&c);
    CHECK(pages_readable(dst, pp, cp), "every page readable in the new home");
    snprintf(p, sizeof(p), "%s/images/%s.erofs", dst, img);
    hash256 h;
    char hex[65];
    CHECK(hash_file(p, &h) == 0 && (hash_hex(&h, hex), !strcmp(hex, img)), "image in place");
    CHECK(archive_import(dst, arc, &st, err, sizeof(err)) == 0 && st.already,
          "importing again: already here");
    CHECK(count_prefixed(home_path("dst/runs"), ".import.") == 0, "no staging left");

    /* a FIFO (as /dev/null, a device) is written in place, never renamed
     * over: exporting to -o /dev/null once replaced /dev/null with a file */
    const char *fifo = home_path("out.fifo");
    CHECK(mkfifo(fifo, 0600) == 0, "mkfifo");
    pid_t reader = fork();
    if (reader == 0) {
        int rfd = open(fifo, O_RDONLY);
        char buf[4096];
        while (rfd >= 0 && read(rfd, buf, sizeof(buf)) > 0) {
        }
        _exit(0);
    }
    struct stat fs;
    CHECK(archive_export(home_path("src"), "child", 0, fifo, &st, err, sizeof(err)) == 0,
          "export to a FIFO");
    int rst = 0;
    CHECK(waitpid(reader, &rst, 0) == reader, "the FIFO's reader ends");
    CHECK(stat(fifo, &fs) == 0 && S_ISFIFO(fs.st_mode), "the FIFO is still a FIFO");
    CHECK(count_prefixed(base, "out.fifo.tmp") == 0, "no temp file beside it");

    /* default export: readable, not replayable; adds no store or image */
    const char *plain = home_path("plain.rewind"), *d2 = home_path("plainhome");
    CHECK(archive_export(home_path("src"), "child", 0, plain, &st, err, sizeof(err)) == 0 &&
              st.runs == 1 && st.pages == 0,
          "default export");
    CHECK(archive_import(d2, plain, &st, err, sizeof(err)) == 0 && st.events == 3, "import it");
    snprintf(p, sizeof(p), "%s/store", d2);
    CHECK(access(p, F_OK) != 0 && access(home_path("plainhome/runs/child/keyframes"), F_OK) != 0,
          "no store, no keyframes");
}

/* A replayable archive without its image (export --without-image): no
 * image entry; refused, with nothing added, by a home without the image;
 * imported whole (keyframes and every page) by a home that has it. */
static void without_image(const char *img, const hash256 *pp, const hash256 *cp)
{
    char err[1024], p[512];
    struct archive_stats st;
    const char *arc = home_path("noimg.rewind");
    CHECK(archive_export(home_path("src"), "child", ARCHIVE_X_REPLAYABLE | ARCHIVE_X_NO_IMAGE, arc,
                         &st, err, sizeof(err)) == 0 &&
              st.runs == 2 && st.pages == 11 && st.images == 0,
          "export --replayable --without-image: pages, no image");
    size_t n = 0;
    uint8_t *b = slurp(arc, &n);
    struct arc a;
    CHECK(b && parse(b, n, &a) == 0 && find_kind(&a, ARCH_IMAGE) < 0 &&
              (find_kind(&a, ARCH_PAGE) >= 0 || find_kind(&a, ARCH_PAGEZ) >= 0),
          "the archive has pages and no image entry");
    if (b) {
        free_arc(&a);
        free(b);
    }
    refused(arc, "this home has none", "a home without the image refuses it");
    /* the public API: the image left out only of a replayable archive */
    rw_home *h = NULL;
    struct rw_error e;
    struct rw_archive_stats rs;
    CHECK(rw_home_open(home_path("src"), &h, &e) == 0, "open the source home");
    CHECK(h && rw_export(h, "child", RW_EXPORT_NO_IMAGE, home_path("api.rewind"), &rs, &e) < 0 &&
              e.code == RW_EUSAGE && strstr(e.msg, "goes with RW_EXPORT_REPLAYABLE") &&
              access(home_path("api.rewind"), F_OK) != 0,
          "rw_export refuses RW_EXPORT_NO_IMAGE alone, writing nothing");
    CHECK(h && rw_export(h, "child", 8, home_path("api.rewind"), &rs, &e) < 0 &&
              e.code == RW_EUSAGE,
          "rw_export refuses unknown flags");
    CHECK(h && rw_export(h, "child", RW_EXPORT_REPLAYABLE | RW_EXPORT_NO_IMAGE,
                         home_path("api.rewind"), &rs, &e) == 0 &&
              rs.images == 0 && rs.pages == 11,
          "rw_export with both flags: pages, no image");
    rw_home_close(h);
    /* a home that ran the same root: the image is there */
    const char *d = home_path("hasimg");
    char own[65];
    CHECK(fix_image(d, "erofs image bytes of the test root", own) == 0 && !strcmp(own, img),
          "a home with the same image");
    CHECK(archive_import(d, arc, &st, err, sizeof(err)) == 0 && !strcmp(st.run, "child") &&
              st.keyframes == 3 && st.pages == 11,
          "imported where the image is");
    struct kf_chain c;
    CHECK(kf_chain_load(d, "child", &c, err, sizeof(err)) == 0 && c.nlinks == 2,
          "its chain resolves");
    kf_chain_free(&c);
    CHECK(pages_readable(d, pp, cp), "every page readable there");
    snprintf(p, sizeof(p), "%s/runs/child", home_path("src"));
    CHECK(same_files(p, home_path("hasimg/runs/child")), "the run's files identical");
}

/* Hostile variants of the good archive. */
static void hostile(void)
{
    size_t len;
    uint8_t *good = slurp(home_path("child.rewind"), &len);
    CHECK(good != NULL, "read the archive");
    struct arc a;
    CHECK(parse(good, len, &a) == 0, "parse the archive");
    const char *bad = home_path("bad.rewind");
    int pg = find_kind(&a, ARCH_PAGEZ) >= 0 ? find_kind(&a, ARCH_PAGEZ) : find_kind(&a, ARCH_PAGE);
    int im = find_kind(&a, ARCH_IMAGE);
    CHECK(pg >= 0 && im >= 0, "the archive has pages and an image");

    /* a page whose bytes do not match its name (END still right) */
    a.e[pg].data[a.e[pg].len / 2] ^= 0x40;
    emit(&a, bad);
    refused(bad, a.e[pg].name, "a tampered page is refused, naming it");
    a.e[pg].data[a.e[pg].len / 2] ^= 0x40;
    int raw = find_kind(&a, ARCH_PAGE);
    if (raw >= 0) {
        a.e[raw].data[7] ^= 1;
        emit(&a, bad);
        refused(bad, "corrupt", "a tampered raw page is refused");
        a.e[raw].data[7] ^= 1;
    }
    /* the image */
    a.e[im].data[3] ^= 1;
    emit(&a, bad);
    refused(bad, "image", "a tampered image is refused");
    a.e[im].data[3] ^= 1;

    /* a flipped byte the names do not cover: the END checksum */
    FILE *f;
    uint8_t *copy = malloc(len);
    memcpy(copy, good, len);
    copy[ARCH_HEADER_SIZE + 16 + 20 + 10] ^= 1; /* inside parent/manifest.json's bytes */
    fix_write(bad, copy, len);
    refused(bad, "checksum", "a flipped byte in a run file is refused");

    /* unsafe and unknown names */
    static const char *names[] = {"../evil/manifest.json",
                                  "/tmp/evil/manifest.json",
                                  "child/../../evil",
                                  "child/../manifest.json",
                                  ".hidden/manifest.json",
                                  "child/passwd",
                                  "child/",
                                  "child/sub/trace",
                                  "child/manifest.json/x",
                                  "a b/trace"};
    char keep[300];
    snprintf(keep, sizeof(keep), "%s", a.e[0].name);
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        snprintf(a.e[0].name, sizeof(a.e[0].name), "%s", names[i]);
        emit(&a, bad);
        refused(bad, "", names[i]);
    }
    CHECK(access(home_path("evil"), F_OK) != 0 && access("/tmp/evil", F_OK) != 0,
          "nothing written outside");
    snprintf(a.e[0].name, sizeof(a.e[0].name), "%s", keep);

    /* an unknown entry kind; a duplicate entry; a page left out */
    uint32_t k = a.e[1].kind;
    a.e[1].kind = 9;
    emit(&a, bad);
    refused(bad, "unknown entry kind", "an unknown kind is refused");
    a.e[1].kind = 77777;
    emit(&a, bad);
    refused(bad, "unknown entry kind", "a large unknown kind is refused");
    a.e[1].kind = k;
    struct ent saved = a.e[a.n - 1];
    a.e[a.n] = a.e[0];
    a.n++;
    emit(&a, bad);
    refused(bad, "twice", "a duplicate file is refused");
    a.n--;
    a.e[pg].kind ^= 0; /* drop the page: move the last entry over it */
    struct ent dropped = a.e[pg];
    a.e[pg] = a.e[a.n - 1];
    a.n--;
    emit(&a, bad);
    refused(bad, "neither in the archive", "a page left out is refused");
    a.n++;
    a.e[a.n - 1] = saved;
    a.e[pg] = dropped;

    /* the image left out of a replayable archive */
    struct ent img = a.e[im];
    a.e[im] = a.e[a.n - 1];
    a.n--;
    emit(&a, bad);
    refused(bad, "root image", "a replayable archive without its image is refused");
    a.n++;
    a.e[a.n - 1] = a.e[im];
    a.e[im] = img;

    /* truncated anywhere */
    size_t cuts[] = {0,
                     4,
                     8,
                     ARCH_HEADER_SIZE - 1,
                     ARCH_HEADER_SIZE,
                     ARCH_HEADER_SIZE + 5,
                     ARCH_HEADER_SIZE + 40,
                     len / 3,
                     len / 2,
                     len - ARCH_END_LEN - 16,
                     len - ARCH_END_LEN,
                     len - 1};
    for (size_t i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++) {
        fix_write(bad, good, cuts[i]);
        char want[64];
        snprintf(want, sizeof(want), "truncated at byte %zu", cuts[i]);
        refused(bad, cuts[i] < 8 ? "not a rewind archive" : want, want);
    }
    /* data after the end */
    f = fopen(bad, "wb");
    fwrite(good, 1, len, f);
    fputc(0, f);
    fclose(f);
    refused(bad, "after its end", "trailing data is refused");
    /* a length field claiming far more than is there */
    memcpy(copy, good, len);
    archive_put64(copy + ARCH_HEADER_SIZE + 8, 1ull << 62);
    fix_write(bad, copy, len);
    refused(bad, "too large", "a huge length is refused");

    free(copy);
    free_arc(&a);
    free(good);
}

static void conflicts(void)
{
    char err[1024];
    struct archive_stats st;
    const char *h = home_path("victim");
    /* runs/child here with other content */
    char img[65];
    hash256 pg[1];
    CHECK(fix_put_pages(h, 999, 1, pg) == 0 && fix_image(h, "other", img) == 0, "victim setup");
    CHECK(fix_run(h, "child", img, NULL, 0, pg, 1, 1) == 0, "a different run named child");
    refused(home_path("child.rewind"), "other content", "a conflicting run is refused");
    CHECK(archive_import(h, home_path("nonexistent.rewind"), &st, err, sizeof(err)) < 0,
          "a missing file");
    CHECK(archive_export(home_path("src"), ".child.123", 0, home_path("x"), &st, err, sizeof(err)) <
                  0 &&
              strstr(err, "did not finish"),
          "an unfinished run is not exported");
    CHECK(access(home_path("x"), F_OK) != 0, "no output on failure");
    /* a missing page in the source store: export fails, no file left */
    char p[512];
    snprintf(p, sizeof(p), "%s/store", home_path("src"));
    rundir_remove_tree(p);
    CHECK(archive_export(home_path("src"), "child", 1, home_path("y.rewind"), &st, err,
                         sizeof(err)) < 0,
          "export without the pages fails");
    CHECK(access(home_path("y.rewind"), F_OK) != 0, "and leaves no file");
}

int main(void)
{
    snprintf(base, sizeof(base), "/tmp/archive_test.%d", (int)getpid());
    rundir_remove_tree(base);
    io_mkdir_p(base);
    char img[65];
    hash256 pp[8], cp[5];
    build_source(img, pp, cp);
    /* the victim home already holds a run, so "nothing added" is tested
     * against a home in use */
    char vimg[65];
    hash256 vp[2];
    CHECK(fix_put_pages(home_path("victim"), 5000, 2, vp) == 0 &&
              fix_image(home_path("victim"), "victim image", vimg) == 0 &&
              fix_run(home_path("victim"), "mine", vimg, NULL, 0, vp, 2, 1) == 0,
          "victim home");
    round_trip(img, pp, cp);
    without_image(img, pp, cp);
    hostile();
    conflicts();
    rundir_remove_tree(base);
    return unit_done();
}
