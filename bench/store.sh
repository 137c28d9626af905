#!/usr/bin/env bash
# bench/store.sh: the page store's speed on one core, per 4 KiB page.
#  - hashing: SHA-256 (libcrypto, SHA-NI) one-shot and with the store's reused
#    context, against BLAKE2b-256 (libsodium, loaded with dlopen; skipped if
#    libsodium.so.23 is absent);
#  - zstd level 1 alone on text pages, and against it zstd's fast
#    (negative) levels and LZ4 (issue 17 item 4), compress and decompress;
#  - the store: put of new pages (hash + compress + append), get (read +
#    decompress + re-hash), load (read + decompress, zstd's checksum instead
#    of the re-hash, as a restore reads), put of pages already present (dedup), single and
#    batched, for text pages (C headers from /usr/include) and random pages.
# MB/s is 10^6 bytes per second of the thread's CPU time (user + system), so
# other load on the machine does not count against it; wall-clock figures
# are shown beside. Writes land in the page cache (no fsync), reads come from
# it; store_sync of the whole set is timed on its own.
# Usage: bench/store.sh [pages per set, default 16384 = 64 MiB]
set -euo pipefail
cd "$(dirname "$0")/.."
pages=${1:-16384}
out=build/bench
mkdir -p "$out"
cat >"$out/store_bench.c" <<'EOF'
#include <dlfcn.h>
#include <fcntl.h>
#include <ftw.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <lz4.h>
#include <zstd.h>

#include "store/codec.h"
#include "store/store.h"

#define PG STORE_PAGE_SIZE
#define REPS 3

static size_t npages;

static double cpu_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

static double wall_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

struct timing {
    double cpu, wall;
};

static struct timing best = {1e30, 1e30};
static double t0c, t0w;

static void start(void)
{
    t0c = cpu_now();
    t0w = wall_now();
}

static void stop(void)
{
    double c = cpu_now() - t0c, w = wall_now() - t0w;
    if (c < best.cpu)
        best.cpu = c;
    if (w < best.wall)
        best.wall = w;
}

static void report(const char *label, size_t bytes)
{
    printf("  %-40s %6.0f MB/s   (wall %6.0f MB/s)\n", label, bytes / best.cpu / 1e6,
           bytes / best.wall / 1e6);
    best.cpu = best.wall = 1e30;
}

/* Text pages: C headers back to back, each page stamped with its number so
 * that none repeats. */
static void fill_text(unsigned char *buf)
{
    glob_t g;
    size_t have = 0, want = npages * PG;
    glob("/usr/include/*.h", 0, NULL, &g);
    glob("/usr/include/*/*.h", GLOB_APPEND, NULL, &g);
    glob("/usr/include/*/*/*.h", GLOB_APPEND, NULL, &g);
    for (size_t i = 0; have < want; i = (i + 1) % (g.gl_pathc ? g.gl_pathc : 1)) {
        if (!g.gl_pathc) {
            memset(buf + have, 'x', want - have);
            break;
        }
        FILE *f = fopen(g.gl_pathv[i], "rb");
        if (!f)
            continue;
        have += fread(buf + have, 1, want - have, f);
        fclose(f);
    }
    globfree(&g);
    for (size_t i = 0; i < npages; i++)
        memcpy(buf + i * PG, &i, sizeof(i));
}

static void fill_random(unsigned char *buf)
{
    uint64_t s = 0x9e3779b97f4a7c15ull;
    for (size_t k = 0; k < npages * PG; k += 8) {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        memcpy(buf + k, &s, 8);
    }
}

static int rm_one(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb, (void)flag, (void)ftw;
    return remove(p);
}

static struct store *fresh_store(const char *dir)
{
    struct store *s;
    char err[256];
    nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
    if (store_open(dir, &s, err, sizeof(err)) < 0) {
        fprintf(stderr, "store_open: %s\n", err);
        exit(1);
    }
    return s;
}

static void bench_hash(const unsigned char *buf)
{
    size_t bytes = npages * PG;
    hash256 h;
    unsigned char out[32];
    struct store_codec c;
    store_codec_init(&c);
    printf("hash, one 4 KiB page per call:\n");
    for (int r = 0; r < REPS; r++) {
        start();
        for (size_t i = 0; i < npages; i++)
            hash_buf(buf + i * PG, PG, &h);
        stop();
    }
    report("SHA-256 libcrypto, hash_buf (one-shot)", bytes);
    for (int r = 0; r < REPS; r++) {
        start();
        for (size_t i = 0; i < npages; i++)
            store_codec_hash(&c, buf + i * PG, &h);
        stop();
    }
    report("SHA-256 libcrypto, reused ctx (store)", bytes);
    void *so = dlopen("libsodium.so.23", RTLD_NOW);
    int (*init)(void) = so ? (int (*)(void))dlsym(so, "sodium_init") : NULL;
    int (*gh)(unsigned char *, size_t, const unsigned char *, unsigned long long,
              const unsigned char *, size_t) =
        so ? (int (*)(unsigned char *, size_t, const unsigned char *, unsigned long long,
                      const unsigned char *, size_t))dlsym(so, "crypto_generichash")
           : NULL;
    if (init && gh && init() >= 0) {
        for (int r = 0; r < REPS; r++) {
            start();
            for (size_t i = 0; i < npages; i++)
                gh(out, 32, buf + i * PG, PG, NULL, 0);
            stop();
        }
        report("BLAKE2b-256 libsodium", bytes);
    } else {
        printf("  BLAKE2b-256 libsodium: libsodium.so.23 not found, skipped\n");
    }
    store_codec_free(&c);
}

static void bench_zstd(const unsigned char *buf)
{
    size_t bytes = npages * PG, stored = 0;
    unsigned char *z = malloc(npages * PG), page[PG];
    size_t *len = malloc(npages * sizeof(*len));
    ZSTD_CCtx *cc = ZSTD_createCCtx();
    ZSTD_DCtx *dc = ZSTD_createDCtx();
    for (int r = 0; r < REPS; r++) {
        stored = 0;
        start();
        for (size_t i = 0; i < npages; i++) {
            len[i] = ZSTD_compressCCtx(cc, z + i * PG, PG, buf + i * PG, PG, 1);
            stored += len[i];
        }
        stop();
    }
    printf("zstd level 1 alone, text pages (ratio %.2f):\n", (double)bytes / stored);
    report("compress", bytes);
    for (int r = 0; r < REPS; r++) {
        start();
        for (size_t i = 0; i < npages; i++)
            ZSTD_decompressDCtx(dc, page, PG, z + i * PG, len[i]);
        stop();
    }
    report("decompress", bytes);
    ZSTD_freeCCtx(cc);
    ZSTD_freeDCtx(dc);
    free(z);
    free(len);
}

/* Issue 17 item 4: the fast codecs against zstd level 1 on the same pages,
 * one page per call as the store compresses them: zstd at levels 1 and
 * below (the negative "fast" levels) and LZ4 (liblz4) at accelerations 1
 * and 8. Compress and decompress MB/s per CPU second, and the ratio. */
static size_t zlevel_c(void *ctx, int arg, const unsigned char *src, unsigned char *dst, size_t cap)
{
    size_t r = ZSTD_compressCCtx(ctx, dst, cap, src, PG, arg);
    return ZSTD_isError(r) ? 0 : r;
}
static size_t zlevel_d(void *ctx, const unsigned char *src, size_t n, unsigned char *dst)
{
    size_t r = ZSTD_decompressDCtx(ctx, dst, PG, src, n);
    return ZSTD_isError(r) ? 0 : r;
}
static size_t lz4_c(void *ctx, int arg, const unsigned char *src, unsigned char *dst, size_t cap)
{
    (void)ctx;
    int r = LZ4_compress_fast((const char *)src, (char *)dst, PG, (int)cap, arg);
    return r > 0 ? (size_t)r : 0;
}
static size_t lz4_d(void *ctx, const unsigned char *src, size_t n, unsigned char *dst)
{
    (void)ctx;
    int r = LZ4_decompress_safe((const char *)src, (char *)dst, (int)n, PG);
    return r > 0 ? (size_t)r : 0;
}

static void bench_codecs(const char *kind, const unsigned char *buf)
{
    struct {
        const char *name;
        int arg, zstd;
    } cs[] = {{"zstd level 1", 1, 1},   {"zstd level -1", -1, 1}, {"zstd level -3", -3, 1},
              {"zstd level -5", -5, 1}, {"zstd level -10", -10, 1}, {"lz4 acceleration 1", 1, 0},
              {"lz4 acceleration 8", 8, 0}};
    size_t bytes = npages * PG, cap = PG + 512;
    unsigned char *z = malloc(npages * cap), page[PG];
    size_t *len = malloc(npages * sizeof(*len));
    ZSTD_CCtx *cc = ZSTD_createCCtx();
    ZSTD_DCtx *dc = ZSTD_createDCtx();
    printf("codecs, %s pages, one page per call (compress / decompress MB/s per core, ratio):\n",
           kind);
    for (size_t k = 0; k < sizeof(cs) / sizeof(cs[0]); k++) {
        size_t stored = 0, bad = 0;
        double c_mbs, d_mbs;
        for (int r = 0; r < REPS; r++) {
            stored = 0;
            start();
            for (size_t i = 0; i < npages; i++) {
                len[i] = cs[k].zstd ? zlevel_c(cc, cs[k].arg, buf + i * PG, z + i * cap, cap)
                                    : lz4_c(NULL, cs[k].arg, buf + i * PG, z + i * cap, cap);
                stored += len[i];
            }
            stop();
        }
        c_mbs = bytes / best.cpu / 1e6;
        best.cpu = best.wall = 1e30;
        for (int r = 0; r < REPS; r++) {
            start();
            for (size_t i = 0; i < npages; i++) {
                size_t n = cs[k].zstd ? zlevel_d(dc, z + i * cap, len[i], page)
                                      : lz4_d(NULL, z + i * cap, len[i], page);
                bad += n != PG || memcmp(page, buf + i * PG, PG) != 0;
            }
            stop();
        }
        d_mbs = bytes / best.cpu / 1e6;
        best.cpu = best.wall = 1e30;
        printf("  %-22s %6.0f / %6.0f MB/s   ratio %.2f%s\n", cs[k].name, c_mbs, d_mbs,
               (double)bytes / (stored ? stored : 1), bad ? "   (ROUND TRIP FAILED)" : "");
    }
    ZSTD_freeCCtx(cc);
    ZSTD_freeDCtx(dc);
    free(z);
    free(len);
}

static void bench_store(const char *dir, const char *kind, const unsigned char *buf)
{
    size_t bytes = npages * PG;
    hash256 *h = malloc(npages * sizeof(*h));
    unsigned char page[PG];
    struct store *s = NULL;
    struct store_stats st;
    double sync_s = 0;
    for (int r = 0; r < REPS; r++) {
        store_close(s);
        s = fresh_store(dir);
        start();
        for (size_t i = 0; i < npages; i++)
            store_put(s, buf + i * PG, &h[i]);
        stop();
    }
    store_stats(s, &st);
    printf("store, %s pages (stored %.1f%% of their size):\n", kind,
           100.0 * st.bytes_written / bytes);
    report("put, new pages", bytes);
    for (int r = 0; r < REPS; r++) {
        store_close(s);
        s = fresh_store(dir);
        start();
        store_put_batch(s, buf, npages, h);
        stop();
    }
    report("put_batch, new pages", bytes);
    double w = wall_now();
    store_sync(s);
    sync_s = wall_now() - w;
    int bad = 0;
    for (int r = 0; r < REPS; r++) {
        start();
        for (size_t i = 0; i < npages; i++)
            bad += store_get(s, &h[i], page) != 0;
        stop();
    }
    report("get + verify", bytes);
    for (int r = 0; r < REPS; r++) {
        start();
        for (size_t i = 0; i < npages; i++)
            bad += store_load(s, &h[i], page) != 0;
        stop();
    }
    report("load (restore: own checksummed frames)", bytes);
    for (int r = 0; r < REPS; r++) {
        start();
        for (size_t i = 0; i < npages; i++)
            store_put(s, buf + i * PG, &h[i]);
        stop();
    }
    report("put, pages already present (dedup)", bytes);
    for (int r = 0; r < REPS; r++) {
        start();
        store_put_batch(s, buf, npages, h);
        stop();
    }
    report("put_batch, pages already present", bytes);
    printf("  store_sync after writing them: %.0f ms wall%s\n", sync_s * 1e3,
           bad ? "   (SOME GETS FAILED)" : "");
    store_close(s);
    free(h);
}

int main(int argc, char **argv)
{
    npages = argc > 1 ? strtoul(argv[1], NULL, 10) : 16384;
    const char *dir = argc > 2 ? argv[2] : "build/bench/store";
    unsigned char *text = malloc(npages * PG), *rnd = malloc(npages * PG);
    fill_text(text);
    fill_random(rnd);
    printf("page store bench: %zu pages (%zu MiB) per set, best of %d; MB/s per CPU second of one "
           "thread\n",
           npages, npages * PG >> 20, REPS);
    bench_hash(text);
    bench_zstd(text);
    bench_codecs("text", text);
    bench_store(dir, "text", text);
    bench_store(dir, "random", rnd);
    nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
    free(text);
    free(rnd);
    return 0;
}
EOF
make -s build/librewind.a
cc -std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra -Isrc -Iinclude -o "$out/store_bench" "$out/store_bench.c" \
    build/librewind.a -lcrypto -lzstd -llz4 -ljansson -lelf -pthread -lm -ldl
echo "$(date -u +%F) $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), $(nproc) cores," \
    "load $(cut -d' ' -f1-3 /proc/loadavg)"
"$out/store_bench" "$pages" "$out/store"
