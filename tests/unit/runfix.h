/* runfix.h - fixtures for the gc and archive tests: a temp $REWIND_HOME with
 * fake runs (manifest, spec, a short trace, a keyframes file naming pages put
 * in the store), images, and a snapshot of a tree to prove nothing changed. */
#ifndef REWIND_TESTS_RUNFIX_H
#define REWIND_TESTS_RUNFIX_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "trace/keyframe.h"
#include "home/rundir.h"
#include "util/io.h"
#include "store/store.h"
#include "trace/trace.h"
#include "trace/tracehash.h"

static void fix_page(uint8_t *p, uint32_t seed)
{
    uint64_t s = seed * 0x9e3779b97f4a7c15ull + 1;
    for (size_t k = 0; k < STORE_PAGE_SIZE; k += 8) {
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        uint64_t v = (k < 2048) ? s : (seed & 0xff); /* half random, half compressible */
        memcpy(p + k, &v, 8);
    }
}

/* Put pages seed0..seed0+n-1 into home/store; names into out. */
static int fix_put_pages(const char *home, uint32_t seed0, size_t n, hash256 *out)
{
    char dir[4200], err[256];
    struct store *s;
    snprintf(dir, sizeof(dir), "%s/store", home);
    io_mkdir_p(home);
    if (store_open(dir, &s, err, sizeof(err)) < 0)
        return -1;
    uint8_t p[STORE_PAGE_SIZE];
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        fix_page(p, seed0 + (uint32_t)i);
        rc = store_put(s, p, &out[i]);
    }
    rc |= store_sync(s);
    store_close(s);
    return rc;
}

/* 1 if the page named *h can be read from home/store (a fresh handle). */
static int fix_page_readable(const char *home, const hash256 *h)
{
    char dir[4200], err[256];
    struct store *s;
    snprintf(dir, sizeof(dir), "%s/store", home);
    if (store_open(dir, &s, err, sizeof(err)) < 0)
        return 0;
    uint8_t p[STORE_PAGE_SIZE];
    int ok = store_get(s, h, p) == 0;
    store_close(s);
    return ok;
}

static int fix_write(const char *path, const void *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    int ok = fwrite(p, 1, n, f) == n;
    return fclose(f) == 0 && ok ? 0 : -1;
}

/* images/<hex>.erofs holding text; hex out. */
static int fix_image(const char *home, const char *text, char hex[65])
{
    char dir[4200], path[4300];
    hash256 h;
    hash_buf(text, strlen(text), &h);
    hash_hex(&h, hex);
    snprintf(dir, sizeof(dir), "%s/images", home);
    io_mkdir_p(dir);
    snprintf(path, sizeof(path), "%s/%s.erofs", dir, hex);
    return fix_write(path, text, strlen(text));
}

/* runs/<dir>: manifest (id, spec with image), spec.json, a 3-event trace and,
 * if npages, a keyframes file of nkf keyframes (steps 10, 20, ...) naming
 * the pages (keyframe i: pages i, i+nkf, ...; pfn = index). */
static int fix_run(const char *home, const char *dir, const char *image_hex, const char *parent,
                   uint64_t upto, const hash256 *pages, size_t npages, size_t nkf)
{
    char d[4200], p[4400], text[512];
    snprintf(d, sizeof(d), "%s/runs/%s", home, dir);
    if (io_mkdir_p(d) < 0)
        return -1;
    snprintf(text, sizeof(text),
             "{\"id\":\"%s\",\"state\":\"complete\",\"events\":3,\"spec\":{\"image\":\"%s\","
             "\"argv\":[\"/bin/true\"]}}\n",
             dir, image_hex);
    snprintf(p, sizeof(p), "%s/manifest.json", d);
    int rc = rundir_write_file(p, text);
    snprintf(text, sizeof(text), "{\"image\":\"%s\",\"argv\":[\"/bin/true\"]}\n", image_hex);
    snprintf(p, sizeof(p), "%s/spec.json", d);
    rc |= rundir_write_file(p, text);
    struct trace_writer w;
    snprintf(p, sizeof(p), "%s/trace", d);
    rc |= trace_open_write(&w, p);
    uint8_t buf[64] = {0};
    struct rewind_record *r = (struct rewind_record *)buf;
    r->kind = REWIND_REC_MARK;
    r->len = sizeof(*r) + 5;
    memcpy(buf + sizeof(*r), "hello", 5);
    for (uint64_t i = 0; i < 3; i++)
        trace_append(&w, 100 + i, r);
    rc |= trace_close(&w);
    if (!npages || rc)
        return rc;
    struct kf_writer kw;
    snprintf(p, sizeof(p), "%s/keyframes", d);
    if (kf_create(&kw, p, parent, upto) < 0)
        return -1;
    struct kf_page *kp = calloc(npages, sizeof(*kp));
    for (size_t k = 0; k < nkf && kp; k++) {
        uint32_t n = 0;
        for (size_t i = k; i < npages; i += nkf)
            kp[n++] = (struct kf_page){.pfn = i, .hash = pages[i]};
        char state[13] = "state-blob-x";
        state[11] = (char)('0' + k);
        rc |= kf_append(&kw, upto + 10 * (k + 1), state, sizeof(state), kp, n);
    }
    free(kp);
    rc |= kf_close(&kw);
    return rc;
}

/* fix_run's run under the id an import accepts for it: the first 16 hex
 * digits of the SHA-256 of its spec.json (spec_id), into id; the manifest
 * names that id. */
static inline int fix_hashed_run(const char *home, const char *image_hex, char id[17],
                                 const hash256 *pages, size_t npages, size_t nkf)
{
    char from[4200], to[4200], p[4400], text[512], hex[65];
    if (fix_run(home, "fixhashed", image_hex, NULL, 0, pages, npages, nkf) < 0)
        return -1;
    hash256 h;
    snprintf(p, sizeof(p), "%s/runs/fixhashed/spec.json", home);
    if (hash_file(p, &h) < 0)
        return -1;
    hash_hex(&h, hex);
    memcpy(id, hex, 16);
    id[16] = 0;
    snprintf(from, sizeof(from), "%s/runs/fixhashed", home);
    snprintf(to, sizeof(to), "%s/runs/%s", home, id);
    if (rename(from, to) < 0)
        return -1;
    snprintf(text, sizeof(text),
             "{\"id\":\"%s\",\"state\":\"complete\",\"events\":3,\"spec\":{\"image\":\"%s\","
             "\"argv\":[\"/bin/true\"]}}\n",
             id, image_hex);
    snprintf(p, sizeof(p), "%s/manifest.json", to);
    return rundir_write_file(p, text);
}

/* fix_hashed_run's run whole (what verify finds undamaged): its manifest
 * states the trace_hash of its 3-event trace and holds its spec. */
static inline int fix_traced_run(const char *home, const char *image_hex, char id[17],
                                 const hash256 *pages, size_t npages, size_t nkf)
{
    char p[4400], hex[65], m[1024];
    uint64_t n;
    if (fix_hashed_run(home, image_hex, id, pages, npages, nkf) < 0)
        return -1;
    snprintf(p, sizeof(p), "%s/runs/%s/trace", home, id);
    if (tracehash_file(p, NULL, hex, &n) != TRACEHASH_OK || n != 3)
        return -1;
    snprintf(m, sizeof(m),
             "{\"id\":\"%s\",\"state\":\"complete\",\"events\":3,\"created\":5,"
             "\"trace_hash\":\"%s\",\"spec\":{\"image\":\"%s\",\"argv\":[\"/bin/true\"]}}\n",
             id, hex, image_hex);
    snprintf(p, sizeof(p), "%s/runs/%s/manifest.json", home, id);
    return rundir_write_file(p, m);
}

/* A fresh home h holding one whole run (fix_traced_run) at id: an image
 * ("root image bytes", img), 6 pages, 3 keyframes. 0 or -1. */
static inline int fix_traced_home(const char *h, char img[65], char id[17], hash256 pages[6])
{
    rundir_remove_tree(h);
    return fix_image(h, "root image bytes", img) == 0 && fix_put_pages(h, 1000, 6, pages) == 0 &&
                   fix_traced_run(h, img, id, pages, 6, 3) == 0
               ? 0
               : -1;
}

/* Append "path size sha256" for every entry under dir (sorted by the
 * caller's readdir order, which is stable for an unchanged tree) to out. */
static void fix_snapshot_into(const char *dir, const char *rel, char *out, size_t n)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") || !strcmp(e->d_name, "gc.lock") ||
            !strcmp(e->d_name, RUNDIR_IMPORTED)) /* an import's mark: not the run's content */
            continue;
        char p[4400], r[4400], hex[65] = "-";
        snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
        snprintf(r, sizeof(r), "%s/%s", rel, e->d_name);
        struct stat sb;
        if (lstat(p, &sb) < 0)
            continue;
        hash256 h;
        if (S_ISREG(sb.st_mode) && hash_file(p, &h) == 0)
            hash_hex(&h, hex);
        size_t l = strlen(out);
        snprintf(out + l, n - l, "%s %lld %.12s\n", r, (long long)sb.st_size, hex);
        if (S_ISDIR(sb.st_mode))
            fix_snapshot_into(p, r, out, n);
    }
    closedir(d);
}

static char *fix_snapshot(const char *dir)
{
    size_t n = 1 << 20;
    char *out = calloc(1, n);
    if (out)
        fix_snapshot_into(dir, "", out, n);
    return out;
}

#endif
