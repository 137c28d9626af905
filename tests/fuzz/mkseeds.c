/*
 * mkseeds: write the fuzzers' seed corpora into OUT/<target>/ from the same
 * writers the unit tests use (tests/unit/runfix.h: a fake home with a run
 * and a fork of it, their traces, keyframes, pages and image), so every
 * seed is a file rewind itself produced. Small real files from real runs
 * are committed beside them under tests/fuzz/corpus/<target>/.
 *
 * Usage: mkseeds OUT. Exit status 0, or 1 with a message.
 *
 * Invariants:
 *  1. Each seed is in the exact input format its target documents at its top.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "archive/archive.h"
#include "runfix.h"

#define IMAGE_TEXT "erofs image bytes of the fuzz seed root"

static const char *out;

static void die(const char *what)
{
    fprintf(stderr, "mkseeds: %s\n", what);
    exit(1);
}

static char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        die(path);
    fseek(f, 0, SEEK_END);
    long sz = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *p = malloc((size_t)sz + 1);
    if (!p || fread(p, 1, (size_t)sz, f) != (size_t)sz)
        die(path);
    fclose(f);
    *n = (size_t)sz;
    return p;
}

/* OUT/target/name holding a then b. */
static void seed2(const char *target, const char *name, const void *a, size_t na, const void *b,
                  size_t nb)
{
    char dir[4200], p[4400];
    snprintf(dir, sizeof(dir), "%s/%s", out, target);
    io_mkdir_p(dir);
    snprintf(p, sizeof(p), "%s/%s", dir, name);
    FILE *f = fopen(p, "wb");
    if (!f || fwrite(a, 1, na, f) != na || (nb && fwrite(b, 1, nb, f) != nb) || fclose(f))
        die(p);
}

static void seed_file(const char *target, const char *name, const char *path)
{
    size_t n;
    char *p = slurp(path, &n);
    seed2(target, name, p, n, NULL, 0);
    free(p);
}

/* A platform program: the ops of fuzz_platform.c. */
struct prog {
    uint8_t b[4096];
    size_t n;
};
static void put(struct prog *g, uint64_t v, size_t bytes)
{
    for (size_t i = 0; i < bytes; i++)
        g->b[g->n++] = (uint8_t)(v >> (8 * i));
}
static void op_out(struct prog *g, uint16_t port, uint32_t v)
{
    put(g, 1, 1);
    put(g, (uint64_t)(port - REWIND_PORT_BASE), 1);
    put(g, v, 4);
}
static void op_poke(struct prog *g, uint32_t gpa, const void *p, uint8_t n)
{
    put(g, 0, 1);
    put(g, gpa, 4);
    put(g, n, 1);
    for (uint8_t i = 0; i < n; i++)
        put(g, ((const uint8_t *)p)[i], 1);
}
static void op_record(struct prog *g, uint32_t gpa, uint16_t len, uint16_t kind)
{
    put(g, 2, 1);
    put(g, gpa, 4);
    put(g, len, 2);
    put(g, kind, 2);
}

static void platform_seeds(void)
{
    struct prog g = {.n = 0};
    put(&g, 3, 1); /* register the shared page */
    put(&g, 0x2000, 4);
    op_poke(&g, 0x8000 + sizeof(struct rewind_record), "hello\n", 6);
    op_record(&g, 0x8000, sizeof(struct rewind_record) + 6, REWIND_REC_OUTPUT);
    op_out(&g, REWIND_PORT_CLOCK, 0);
    uint64_t t = 5000;
    op_poke(&g, 0x2000 + offsetof(struct rewind_shared, timer_ns), &t, 8);
    op_out(&g, REWIND_PORT_TIMER, 0);
    op_out(&g, REWIND_PORT_IDLE, 0);
    put(&g, 4, 1); /* inspect */
    put(&g, 3, 1);
    put(&g, 'p', 1), put(&g, 's', 1), put(&g, 0, 1);
    put(&g, 5, 1); /* input */
    put(&g, 2, 1);
    put(&g, 'l', 1), put(&g, '\n', 1);
    put(&g, 8, 1); /* perturb */
    put(&g, 1, 8), put(&g, 0, 4), put(&g, 100, 4);
    op_out(&g, REWIND_PORT_YIELD, 0);
    uint64_t status = 0;
    op_poke(&g, 0x2000 + offsetof(struct rewind_shared, job_status), &status, 8);
    op_out(&g, REWIND_PORT_STOP, REWIND_STOP_POWEROFF);
    seed2("platform", "job", g.b, g.n, NULL, 0);
    struct prog h = {.n = 0};
    op_record(&h, 0xfffff, 100, 1); /* a record running off the end of RAM */
    seed2("platform", "past-ram", h.b, h.n, NULL, 0);
}

int main(int argc, char **argv)
{
    if (argc != 2)
        die("usage: mkseeds OUT");
    out = argv[1];
    char home[1024], p[4400], img[65];
    (void)fix_snapshot; /* runfix.h helpers this program does not need */
    (void)fix_page_readable;
    snprintf(home, sizeof(home), "%s/home", out);
    hash256 pp[4], cp[3];
    if (fix_image(home, IMAGE_TEXT, img) < 0 || fix_put_pages(home, 100, 4, pp) < 0 ||
        fix_put_pages(home, 200, 3, cp) < 0)
        die("fixture pages");
    cp[2] = pp[0];
    if (fix_run(home, "parent", img, NULL, 0, pp, 4, 2) < 0 ||
        fix_run(home, "child", img, "parent", 10, cp, 3, 2) < 0)
        die("fixture runs");

    /* archive: the fork, plain and replayable (with its parent, pages, image). */
    struct archive_stats st;
    char err[1024];
    snprintf(p, sizeof(p), "%s/child.rewind", out);
    if (archive_export(home, "child", 1, p, &st, err, sizeof(err)) < 0)
        die(err);
    seed_file("archive", "replayable", p);
    if (archive_export(home, "parent", 0, p, &st, err, sizeof(err)) < 0)
        die(err);
    seed_file("archive", "plain", p);
    remove(p);

    /* trace, keyframes. */
    snprintf(p, sizeof(p), "%s/runs/parent/trace", home);
    seed_file("trace", "fixture", p);
    snprintf(p, sizeof(p), "%s/runs/parent/keyframes", home);
    seed_file("keyframes", "root", p);
    snprintf(p, sizeof(p), "%s/runs/child/keyframes", home);
    seed_file("keyframes", "fork", p);

    /* manifest: "<manifest>\0<spec>" with the image fuzz_manifest.c provides. */
    const char *spec =
        "{\"argv\":[\"sh\",\"-c\",\"echo hi\"],\"cwd\":\"/\",\"env\":[\"HOME=/root\"],"
        "\"epoch\":1795996800,\"image\":\"aa00000000000000000000000000000000000000"
        "000000000000000000000000\",\"init\":\"x\",\"kernel\":\"y\",\"mem_mib\":512,"
        "\"perturb\":[[1,0,null,0,100],[2,5,50,5,45]],"
        "\"quantum_ns\":5000,\"schedule\":0,\"seed\":0,\"version\":1}";
    char man[2048];
    snprintf(man, sizeof(man),
             "{\"created\":1796059122,\"events\":10,\"id\":\"r\",\"keyframes\":2,\"outcome\":"
             "\"exited\",\"parent\":null,\"spec\":%s,\"state\":\"complete\",\"status\":0,"
             "\"steps\":95,\"name\":\"n\",\"version\":1}",
             spec);
    seed2("manifest", "complete", man, strlen(man) + 1, spec, strlen(spec));
    const char *killed = "{\"id\":\"r\",\"state\":\"running\"}";
    seed2("manifest", "running", killed, strlen(killed) + 1, spec, strlen(spec));

    /* store: u16 index length, the index, the pack. */
    size_t ni, np;
    snprintf(p, sizeof(p), "%s/store/index", home);
    char *ix = slurp(p, &ni);
    snprintf(p, sizeof(p), "%s/store/packs/000001.pack", home);
    char *pk = slurp(p, &np);
    if (ni > 0xffff)
        die("index too big for a seed");
    uint8_t *s = malloc(2 + ni);
    s[0] = (uint8_t)ni, s[1] = (uint8_t)(ni >> 8);
    memcpy(s + 2, ix, ni);
    seed2("store", "fixture", s, 2 + ni, pk, np);
    free(s), free(ix), free(pk);

    platform_seeds();
    rundir_remove_tree(home);
    return 0;
}
