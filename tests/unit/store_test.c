/* store_test: the page store round-trips pages, stores each once, refuses
 * corrupt ones, survives torn indexes, short packs, concurrent writers and a
 * crash at every phase of gc, and gc frees what is dead and nothing else. */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "store/codec.h"
#include "store/index.h"
#include "store/pack.h"
#include "store/store.h"
#include "unit.h"

#define PG STORE_PAGE_SIZE

static char base[64];

/* ---- helpers ---------------------------------------------------------- */

static void mkpath(char *out, size_t n, const char *name)
{
    snprintf(out, n, "%s/%s", base, name);
}

static uint64_t rng_next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* Page i of kind 'r' (random), 't' (text-like) or 'z' (zero). */
static void make_page(uint8_t *p, char kind, uint64_t i)
{
    static const char *words[] = {
        "the ",   "page ",   "store ", "keeps ",     "every ",  "run ",   "fork ", "and ",
        "frame ", "0x7ffd ", "NULL ",  "{\"pid\": ", "return ", "error ", "int ",  "memory "};
    uint64_t s = i * 0x9e3779b97f4a7c15ull + (uint64_t)kind + 1;
    if (kind == 'z') {
        memset(p, 0, PG);
    } else if (kind == 'r') {
        for (size_t k = 0; k < PG; k += 8) {
            uint64_t v = rng_next(&s);
            memcpy(p + k, &v, 8);
        }
    } else {
        size_t k = (size_t)snprintf((char *)p, PG, "page %llu: ", (unsigned long long)i);
        while (k < PG) {
            const char *w = words[rng_next(&s) % 16];
            size_t n = strlen(w);
            if (k + n > PG)
                n = PG - k;
            memcpy(p + k, w, n);
            k += n;
        }
    }
}

static int same_hash(const hash256 *a, const hash256 *b)
{
    return memcmp(a->b, b->b, 32) == 0;
}

static long file_size(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 ? (long)sb.st_size : -1;
}

static long dir_bytes(const char *dir)
{
    char cmd[256], out[64] = "";
    snprintf(cmd, sizeof(cmd), "du -sb --apparent-size %s", dir);
    FILE *f = popen(cmd, "r");
    if (!f)
        return -1;
    if (!fgets(out, sizeof(out), f))
        out[0] = 0;
    pclose(f);
    return atol(out);
}

static int rm_one(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(p);
}

static void rm_rf(const char *p)
{
    nftw(p, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static struct store *open_or_die(const char *dir)
{
    struct store *s = NULL;
    char err[256] = "";
    if (store_open(dir, &s, err, sizeof(err)) != 0) {
        fprintf(stderr, "store_open %s: %s\n", dir, err);
        exit(2);
    }
    return s;
}

/* Put pages kind[i % strlen(kinds)] for i in [from, to), one at a time;
 * names into h[i]. Returns the number of failed puts. */
static int put_range(struct store *s, const char *kinds, uint64_t from, uint64_t to, hash256 *h)
{
    uint8_t p[PG];
    int bad = 0;
    size_t nk = strlen(kinds);
    for (uint64_t i = from; i < to; i++) {
        make_page(p, kinds[i % nk], i);
        bad += store_put(s, p, &h[i]) != 0;
    }
    return bad;
}

/* Number of pages in [from, to) that come back equal to what was put. */
static int count_readable(struct store *s, const char *kinds, uint64_t from, uint64_t to,
                          const hash256 *h)
{
    uint8_t want[PG], got[PG];
    int ok = 0;
    size_t nk = strlen(kinds);
    for (uint64_t i = from; i < to; i++) {
        make_page(want, kinds[i % nk], i);
        memset(got, 0xaa, PG);
        ok += store_get(s, &h[i], got) == 0 && memcmp(want, got, PG) == 0;
    }
    return ok;
}

/* ---- tests ------------------------------------------------------------ */

static void test_roundtrip(void)
{
    char dir[128], pack[160];
    mkpath(dir, sizeof(dir), "rt");
    snprintf(pack, sizeof(pack), "%s/packs/000001.pack", dir);
    struct store *s = open_or_die(dir);
    hash256 h[150], z, zref;
    uint8_t p[PG], got[PG];
    CHECK(put_range(s, "rtz", 0, 150, h) == 0, "put random, text and zero pages");
    CHECK(count_readable(s, "rtz", 0, 150, h) == 150, "all pages read back equal");
    int names_ok = 1;
    for (uint64_t i = 0; i < 150; i++) {
        hash256 ref;
        make_page(p, "rtz"[i % 3], i);
        hash_buf(p, PG, &ref);
        names_ok &= same_hash(&ref, &h[i]);
    }
    CHECK(names_ok, "names are SHA-256 of the page (equal to hash_buf)");
    memset(p, 0, PG);
    hash_buf(p, PG, &zref);
    store_zero_hash(&z);
    CHECK(same_hash(&z, &zref), "store_zero_hash is SHA-256 of the zero page");
    CHECK(same_hash(&h[2], &z), "put of the zero page returns its well-known name");
    struct store_stats st;
    store_stats(s, &st);
    CHECK(st.written == 100 && st.zero_puts == 50 && st.pages == 100, "zero page never stored");
    CHECK(st.bytes_written < 50 * PG + 50 * PG / 3, "text-like pages are compressed");
    CHECK(file_size(pack) == STORE_PACK_HEADER + (long)st.bytes_written, "pack holds exactly them");
    long before = file_size(pack);
    hash256 hz;
    CHECK(store_put(s, p, &hz) == 0 && file_size(pack) == before, "zero page: nothing written");
    memset(got, 0xaa, PG);
    CHECK(store_get(s, &z, got) == 0 && memcmp(got, p, PG) == 0, "get of the zero name: zeros");
    CHECK(store_has(s, &z) == 1 && store_has(s, &h[0]) == 1, "has: zero and stored");
    hash256 absent;
    memset(absent.b, 0x5a, 32);
    memset(got, 0xaa, PG);
    errno = 0;
    CHECK(store_get(s, &absent, got) == -1 && errno == ENOENT, "absent page: -1 ENOENT");
    CHECK(got[0] == 0xaa && got[PG - 1] == 0xaa, "absent page: buffer untouched");
    CHECK(store_has(s, &absent) == 0, "has: absent");
    CHECK(store_sync(s) == 0, "sync");
    store_close(s);
    s = open_or_die(dir);
    CHECK(count_readable(s, "rtz", 0, 150, h) == 150, "all pages read back after reopen");
    store_stats(s, &st);
    CHECK(st.pages == 100 && st.ignored == 0, "reopen: 100 pages in the index");
    store_close(s);
}

static void test_batch_and_roll(void)
{
    char dir[128], pack[160];
    mkpath(dir, sizeof(dir), "batch");
    struct store *s = open_or_die(dir);
    CHECK(store_set_pack_limit(s, 1000) == -1 && errno == EINVAL,
          "pack limit below 64 KiB refused");
    CHECK(store_set_pack_limit(s, 64 << 10) == 0, "pack limit 64 KiB");
    enum { N = 700 };
    uint8_t *pages = malloc((size_t)N * PG);
    hash256 *h = malloc(N * sizeof(*h));
    uint64_t repeats = 0;
    for (uint64_t i = 0; i < N; i++) { /* every 7th page repeats page i-1 */
        if (i % 7 == 6) {
            memcpy(pages + i * PG, pages + (i - 1) * PG, PG);
            repeats += "rtzr"[(i - 1) % 4] != 'z';
        } else {
            make_page(pages + i * PG, "rtzr"[i % 4], i);
        }
    }
    CHECK(store_put_batch(s, pages, N, h) == 0, "batch of 700 pages");
    int ok = 1;
    for (uint64_t i = 0; i < N; i++) {
        hash256 ref;
        uint8_t got[PG];
        hash_buf(pages + i * PG, PG, &ref);
        ok &= same_hash(&ref, &h[i]) && store_get(s, &h[i], got) == 0 &&
              memcmp(got, pages + i * PG, PG) == 0;
    }
    CHECK(ok, "batch: names right, every page readable");
    struct store_stats st;
    store_stats(s, &st);
    CHECK(st.dedup_hits == repeats && repeats > 50, "batch: repeats inside one batch stored once");
    /* One append (up to 256 pages) goes whole into one pack: 3 appends here. */
    snprintf(pack, sizeof(pack), "%s/packs/000003.pack", dir);
    CHECK(file_size(pack) > 0, "batch: one pack per append past the limit");
    store_close(s);
    rm_rf(dir);
    s = open_or_die(dir);
    store_set_pack_limit(s, 64 << 10);
    CHECK(put_range(s, "r", 0, 100, h) == 0, "100 random pages, one put each");
    int within = 1;
    for (int k = 1; k <= 6; k++) {
        snprintf(pack, sizeof(pack), "%s/packs/%06d.pack", dir, k);
        within &= file_size(pack) > (48 << 10) && file_size(pack) <= (64 << 10);
    }
    CHECK(within, "packs roll at the limit and stay within it");
    CHECK(count_readable(s, "r", 0, 100, h) == 100, "every page readable across packs");
    store_close(s);
    rm_rf(dir);
    s = open_or_die(dir);
    CHECK(store_put_batch(s, pages, N, h) == 0, "batch again, default limit");
    store_close(s);
    s = open_or_die(dir);
    ok = 1;
    for (uint64_t i = 0; i < N; i++) {
        uint8_t got[PG];
        ok &= store_get(s, &h[i], got) == 0 && memcmp(got, pages + i * PG, PG) == 0;
    }
    CHECK(ok, "batch: every page readable after reopen");
    store_close(s);
    free(pages);
    free(h);
}

static void test_dedup(void)
{
    char dir[128], index[160];
    mkpath(dir, sizeof(dir), "dedup");
    snprintf(index, sizeof(index), "%s/index", dir);
    struct store *s = open_or_die(dir), *s2 = open_or_die(dir);
    uint8_t p[PG];
    hash256 a, b, c;
    make_page(p, 't', 42);
    CHECK(store_put(s, p, &a) == 0 && store_put(s, p, &b) == 0, "same page twice");
    CHECK(same_hash(&a, &b), "same name");
    struct store_stats st;
    store_stats(s, &st);
    CHECK(st.written == 1 && st.dedup_hits == 1, "stored once, one dedup hit");
    CHECK(file_size(index) == STORE_INDEX_HEADER + STORE_INDEX_ENTRY, "one index entry");
    CHECK(store_put(s2, p, &c) == 0 && same_hash(&a, &c), "another handle puts it");
    store_stats(s2, &st);
    CHECK(st.written == 0 && st.dedup_hits == 1, "another handle finds it stored");
    CHECK(file_size(index) == STORE_INDEX_HEADER + STORE_INDEX_ENTRY, "still one index entry");
    store_close(s);
    store_close(s2);
}

static void flip_byte(const char *path, long off)
{
    int fd = open(path, O_RDWR);
    uint8_t b = 0;
    if (pread(fd, &b, 1, off) == 1) {
        b ^= 0x40;
        if (pwrite(fd, &b, 1, off) != 1)
            perror("pwrite");
    }
    close(fd);
}

static void test_corrupt(void)
{
    char dir[128], pack[160];
    mkpath(dir, sizeof(dir), "corrupt");
    snprintf(pack, sizeof(pack), "%s/packs/000001.pack", dir);
    uint8_t want[PG], got[PG];
    hash256 h[2];
    for (int k = 0; k < 2; k++) { /* a compressed page, then a raw one */
        rm_rf(dir);
        struct store *s = open_or_die(dir);
        make_page(want, "tr"[k], 7);
        CHECK(store_put(s, want, &h[k]) == 0, "put");
        long size = file_size(pack);
        flip_byte(pack, STORE_PACK_HEADER + (size - STORE_PACK_HEADER) / 2);
        memset(got, 0xaa, PG);
        errno = 0;
        CHECK(store_get(s, &h[k], got) == -1 && errno == EIO, "corrupt page: -1 EIO");
        CHECK(got[0] == 0xaa && got[PG / 2] == 0xaa, "corrupt page: no bytes returned");
        CHECK(store_has(s, &h[k]) == 0, "corrupt page: has says 0 after a failed get");
        store_close(s);
        s = open_or_die(dir);
        CHECK(store_get(s, &h[k], got) == -1, "corrupt page: still refused after reopen");
        hash256 again;
        CHECK(store_put(s, want, &again) == 0 && file_size(pack) > size, "re-put writes a copy");
        CHECK(store_get(s, &h[k], got) == 0 && memcmp(got, want, PG) == 0, "re-put: readable");
        store_close(s);
        s = open_or_die(dir);
        CHECK(store_get(s, &h[k], got) == 0 && memcmp(got, want, PG) == 0,
              "reopen: the good second copy is found behind the bad first one");
        store_close(s);
    }
}

/* store_load (codec.c invariant 3): a page this store compressed carries
 * zstd's content checksum (STORE_F_SUM in its entry) and comes back without
 * a re-hash, yet any corrupt byte of its frame, the checksum included, is
 * refused; a raw page (no checksum) is still re-hashed. */
static void test_load(void)
{
    char dir[128], pack[160], index[160];
    mkpath(dir, sizeof(dir), "load");
    snprintf(pack, sizeof(pack), "%s/packs/000001.pack", dir);
    snprintf(index, sizeof(index), "%s/index", dir);
    uint8_t want[PG], got[PG];
    for (int k = 0; k < 3; k++) { /* text: corrupt its middle, then its checksum; raw */
        rm_rf(dir);
        struct store *s = open_or_die(dir);
        make_page(want, "ttr"[k], 9);
        hash256 h;
        CHECK(store_put(s, want, &h) == 0, "load: put");
        uint8_t e[STORE_INDEX_ENTRY];
        int fd = open(index, O_RDONLY);
        CHECK(fd >= 0 && pread(fd, e, sizeof(e), STORE_INDEX_HEADER) == (ssize_t)sizeof(e),
              "load: index entry read");
        if (fd >= 0)
            close(fd);
        unsigned flags = e[42] | e[43] << 8;
        CHECK(flags == (k < 2 ? STORE_F_SUM : STORE_F_RAW),
              "load: a compressed page has a checksum");
        CHECK(store_load(s, &h, got) == 0 && memcmp(got, want, PG) == 0, "load: the page");
        long size = file_size(pack);
        flip_byte(pack, k == 1 ? size - 2 : STORE_PACK_HEADER + (size - STORE_PACK_HEADER) / 2);
        store_close(s);
        s = open_or_die(dir); /* no copy of the good page in memory */
        memset(got, 0xaa, PG);
        errno = 0;
        CHECK(store_load(s, &h, got) == -1 && errno == EIO, "load: a corrupt frame is refused");
        CHECK(got[0] == 0xaa, "load: no bytes returned");
        store_close(s);
    }
}

static void test_torn_index(void)
{
    char dir[128], index[160];
    mkpath(dir, sizeof(dir), "torn");
    snprintf(index, sizeof(index), "%s/index", dir);
    hash256 h[12];
    struct store *s = open_or_die(dir);
    CHECK(put_range(s, "tr", 0, 10, h) == 0, "put 10 pages, one entry each");
    store_close(s);
    long whole9 = STORE_INDEX_HEADER + 9 * STORE_INDEX_ENTRY;
    CHECK(truncate(index, whole9 + 20) == 0, "cut the index inside entry 10");
    s = open_or_die(dir);
    CHECK(file_size(index) == whole9, "open trims the torn tail to 9 whole entries");
    CHECK(count_readable(s, "tr", 0, 9, h) == 9, "the 9 whole entries are there");
    CHECK(store_has(s, &h[9]) == 0, "the torn one is gone");
    CHECK(put_range(s, "tr", 9, 12, h) == 0, "new puts work");
    CHECK(file_size(index) == whole9 + 3 * STORE_INDEX_ENTRY, "appended on an entry boundary");
    store_close(s);
    /* A whole-sized garbage tail (zeros after an OS crash) is cut too. */
    int fd = open(index, O_WRONLY | O_APPEND);
    uint8_t zeros[STORE_INDEX_ENTRY * 2] = {0};
    CHECK(write(fd, zeros, sizeof(zeros)) == (ssize_t)sizeof(zeros), "append 2 zero entries");
    close(fd);
    s = open_or_die(dir);
    CHECK(file_size(index) == whole9 + 3 * STORE_INDEX_ENTRY, "bad whole entries at the tail cut");
    CHECK(count_readable(s, "tr", 0, 12, h) == 12, "all 12 pages readable after reopen");
    store_close(s);
    /* A bad entry in the middle is skipped; the ones after it still count. */
    flip_byte(index, STORE_INDEX_HEADER + 3 * STORE_INDEX_ENTRY + 5);
    s = open_or_die(dir);
    struct store_stats st;
    store_stats(s, &st);
    CHECK(st.ignored == 1 && store_has(s, &h[3]) == 0, "bad middle entry ignored");
    CHECK(count_readable(s, "tr", 4, 12, h) == 8, "entries after it still read");
    store_close(s);
    /* Created, then an OS crash lost the header's bytes: opens as new. */
    char dir2[128], index2[160];
    mkpath(dir2, sizeof(dir2), "torn-header");
    store_close(open_or_die(dir2));
    snprintf(index2, sizeof(index2), "%s/index", dir2);
    fd = open(index2, O_WRONLY | O_TRUNC);
    CHECK(write(fd, zeros, STORE_INDEX_HEADER) == STORE_INDEX_HEADER, "zero the header");
    close(fd);
    s = open_or_die(dir2);
    hash256 h2;
    CHECK(put_range(s, "t", 0, 1, &h2) == 0 && count_readable(s, "t", 0, 1, &h2) == 1,
          "a zeroed header is rewritten and the store works");
    store_close(s);
    /* Not an index at all: open fails with a message. */
    fd = open(index, O_WRONLY | O_TRUNC);
    CHECK(write(fd, "this is not an index file, just text.........\n\n", 48) == 48, "garbage");
    close(fd);
    char err[256] = "";
    CHECK(store_open(dir, &s, err, sizeof(err)) == -1 && strstr(err, "not a version-1"),
          "foreign index refused with a message");
}

static void test_short_pack(void)
{
    char dir[128], pack[160], pack2[160];
    mkpath(dir, sizeof(dir), "short");
    snprintf(pack, sizeof(pack), "%s/packs/000001.pack", dir);
    snprintf(pack2, sizeof(pack2), "%s/packs/000002.pack", dir);
    hash256 h[8];
    struct store *s = open_or_die(dir);
    CHECK(put_range(s, "tr", 0, 5, h) == 0, "put 5 pages");
    store_close(s);
    long size = file_size(pack);
    CHECK(truncate(pack, size - 10) == 0, "cut the last page's bytes (index entry kept)");
    s = open_or_die(dir);
    struct store_stats st;
    store_stats(s, &st);
    CHECK(st.ignored == 1 && st.pages == 4, "entry past the pack's end ignored");
    CHECK(count_readable(s, "tr", 0, 4, h) == 4, "the other 4 pages read");
    uint8_t got[PG];
    errno = 0;
    CHECK(store_get(s, &h[4], got) == -1 && errno == ENOENT && store_has(s, &h[4]) == 0,
          "the cut page is absent, no crash");
    CHECK(put_range(s, "tr", 4, 8, h) == 0, "put it again and 3 more");
    CHECK(file_size(pack) == size - 10 && file_size(pack2) > 0,
          "a pack an entry points past is never appended to again");
    CHECK(count_readable(s, "tr", 0, 8, h) == 8, "all 8 readable");
    store_close(s);
    s = open_or_die(dir);
    CHECK(count_readable(s, "tr", 0, 8, h) == 8, "all 8 readable after reopen");
    store_close(s);
}

/* Child of test_concurrent: put pages [from, to) in a scrambled order, mixing
 * single puts and batches, with small packs so both roll concurrently. */
static int writer(const char *dir, uint64_t from, uint64_t to, uint64_t seed)
{
    struct store *s = open_or_die(dir);
    store_set_pack_limit(s, 64 << 10);
    uint64_t n = to - from, r = seed;
    uint8_t *pages = malloc(8 * PG);
    hash256 h[8];
    int bad = 0;
    for (uint64_t k = 0; k < n;) {
        uint64_t m = rng_next(&r) % 3 == 0 ? 8 : 1;
        if (k + m > n)
            m = n - k;
        for (uint64_t j = 0; j < m; j++) {
            uint64_t i = from + (k + j) * 37 % n; /* 37 is prime to n */
            make_page(pages + j * PG, "tr"[i % 2], i);
        }
        bad += m == 1 ? store_put(s, pages, h) != 0 : store_put_batch(s, pages, m, h) != 0;
        k += m;
    }
    free(pages);
    store_close(s);
    return bad ? 1 : 0;
}

/* Child of test_concurrent: whenever has() says yes, get() must succeed. */
static int reader(const char *dir, const hash256 *h, uint64_t n)
{
    struct store *s = open_or_die(dir);
    uint8_t got[PG];
    int bad = 0, seen = 0;
    for (int round = 0; round < 200 && seen < (int)n; round++) {
        seen = 0;
        for (uint64_t i = 0; i < n; i++)
            if (store_has(s, &h[i])) {
                seen++;
                bad += store_get(s, &h[i], got) != 0;
            }
        usleep(2000);
    }
    store_close(s);
    return bad ? 1 : 0;
}

static void test_concurrent(void)
{
    char dir[128], index[160];
    mkpath(dir, sizeof(dir), "conc");
    snprintf(index, sizeof(index), "%s/index", dir);
    enum { N = 900 };
    hash256 *h = malloc(N * sizeof(*h));
    uint8_t p[PG];
    for (uint64_t i = 0; i < N; i++) {
        make_page(p, "tr"[i % 2], i);
        hash_buf(p, PG, &h[i]);
    }
    mkdir(dir, 0755);
    pid_t pid[3];
    for (int c = 0; c < 3; c++) {
        pid[c] = fork();
        if (pid[c] == 0) {
            int rc = c == 0   ? writer(dir, 0, 600, 1)
                     : c == 1 ? writer(dir, 300, N, 2)
                              : reader(dir, h, N);
            _exit(rc);
        }
    }
    int ok = 1;
    for (int c = 0; c < 3; c++) {
        int status = 0;
        waitpid(pid[c], &status, 0);
        ok &= WIFEXITED(status) && WEXITSTATUS(status) == 0;
    }
    CHECK(ok, "two writers with overlapping sets and a reader, all succeed");
    struct store *s = open_or_die(dir);
    CHECK(count_readable(s, "tr", 0, N, h) == N, "both sets readable");
    struct store_stats st;
    store_stats(s, &st);
    long entries = (file_size(index) - STORE_INDEX_HEADER) / STORE_INDEX_ENTRY;
    CHECK(st.pages == N && entries >= N && st.ignored == 0,
          "every page indexed, duplicates allowed");
    store_close(s);
    free(h);
}

/* ---- gc --------------------------------------------------------------- */

struct liveset {
    const hash256 *h;
    uint64_t n;
    int calls;
};

/* Pages with an even index are live. */
static int is_live_even(void *ctx, const hash256 *h)
{
    struct liveset *ls = ctx;
    ls->calls++;
    for (uint64_t i = 0; i < ls->n; i += 2)
        if (same_hash(&ls->h[i], h))
            return 1;
    return 0;
}

static int is_live_all(void *ctx, const hash256 *h)
{
    (void)ctx;
    (void)h;
    return 1;
}

/* Fill dir with n pages (text and random, small packs, a few batches). */
static void fill_for_gc(const char *dir, hash256 *h, uint64_t n)
{
    rm_rf(dir);
    struct store *s = open_or_die(dir);
    store_set_pack_limit(s, 64 << 10);
    put_range(s, "trt", 0, n, h);
    store_close(s);
}

/* Every even page readable and every odd one but page except absent. */
static int gc_outcome_except(struct store *s, const hash256 *h, uint64_t n, int odd_must_be_gone,
                             uint64_t except)
{
    uint8_t want[PG], got[PG];
    int ok = 1;
    for (uint64_t i = 0; i < n; i++) {
        make_page(want, "trt"[i % 3], i);
        if (i % 2 == 0)
            ok &= store_get(s, &h[i], got) == 0 && memcmp(got, want, PG) == 0;
        else if (odd_must_be_gone && i != except)
            ok &= store_has(s, &h[i]) == 0 && store_get(s, &h[i], got) == -1;
    }
    return ok;
}

/* Every even page readable and every odd one absent. */
static int gc_outcome_ok(struct store *s, const hash256 *h, uint64_t n, int odd_must_be_gone)
{
    return gc_outcome_except(s, h, n, odd_must_be_gone, n);
}

/* A listing of the store's files with sizes and a sum of their bytes. */
static void snapshot(const char *dir, char *out, size_t n)
{
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "cd %s && find . -type f | sort | xargs md5sum", dir);
    FILE *f = popen(cmd, "r");
    size_t k = f ? fread(out, 1, n - 1, f) : 0;
    out[k] = 0;
    if (f)
        pclose(f);
}

static void test_gc(void)
{
    char dir[128], packs[160];
    mkpath(dir, sizeof(dir), "gc");
    snprintf(packs, sizeof(packs), "%s/packs", dir);
    enum { N = 400 };
    hash256 h[N];
    fill_for_gc(dir, h, N);
    struct liveset ls = {h, N, 0};
    struct store_gc_stats st;
    char err[256] = "", before[8192], after[8192];
    struct store *s = open_or_die(dir), *stale = open_or_die(dir);

    snapshot(dir, before, sizeof(before));
    CHECK(store_gc(s, is_live_even, &ls, 1, &st, err, sizeof(err)) == 0, "gc --dry-run");
    snapshot(dir, after, sizeof(after));
    CHECK(strcmp(before, after) == 0 && strlen(before) > 100, "dry run changes no file");
    CHECK(st.live_pages == N / 2 && st.dead_pages == N / 2 && st.bytes_after < st.bytes_before,
          "dry run reports what it would free");
    CHECK(gc_outcome_ok(s, h, N, 0), "dry run: every page still readable");

    long du_before = dir_bytes(packs);
    ls.calls = 0;
    CHECK(store_gc(s, is_live_even, &ls, 0, &st, err, sizeof(err)) == 0, "gc");
    CHECK(ls.calls == N, "is_live asked once per stored page");
    CHECK(st.live_pages == N / 2 && st.dead_pages == N / 2 && st.corrupt_pages == 0, "gc counts");
    CHECK(st.copied_pages > 0 && st.packs_rewritten + st.packs_deleted > 0,
          "gc copied and deleted");
    CHECK(gc_outcome_ok(s, h, N, 1), "after gc: live readable, dead gone");
    long du_after = dir_bytes(packs);
    CHECK(du_after < du_before * 3 / 4 && st.bytes_after < st.bytes_before * 3 / 4,
          "disk usage dropped");
    /* A handle opened before the gc, first used after it. */
    uint8_t p[PG], got[PG];
    hash256 hn;
    make_page(p, "trt"[1 % 3], 1); /* page 1: dead, deleted by the gc */
    CHECK(store_put(stale, p, &hn) == 0 && same_hash(&hn, &h[1]) && store_get(s, &h[1], got) == 0 &&
              memcmp(got, p, PG) == 0,
          "a handle whose view predates gc stores a page gc deleted again (no stale dedup)");
    CHECK(gc_outcome_except(stale, h, N, 1, 1), "a handle opened before gc reads the live pages");
    make_page(p, 'r', 5000);
    CHECK(store_put(stale, p, &hn) == 0 && store_has(s, &hn) == 1, "and its puts are seen");
    store_close(stale);
    store_close(s);
    s = open_or_die(dir);
    CHECK(gc_outcome_except(s, h, N, 1, 1), "after reopen: live readable, dead gone");
    snapshot(dir, before, sizeof(before));
    CHECK(store_gc(s, is_live_all, NULL, 0, &st, err, sizeof(err)) == 0, "gc, everything live");
    CHECK(st.packs_rewritten == 0 && st.packs_deleted == 0, "all-live packs are kept");
    snapshot(dir, after, sizeof(after));
    CHECK(strcmp(before, after) == 0, "a gc with nothing to do changes no file");
    store_close(s);
}

/* Live: even pages below n_even, and every page from 1000 on. */
static int is_live_mixed(void *ctx, const hash256 *h)
{
    struct liveset *ls = ctx;
    for (uint64_t i = 0; i < ls->n; i++)
        if ((i >= 1000 || i % 2 == 0) && same_hash(&ls->h[i], h))
            return 1;
    return 0;
}

static void test_gc_concurrent(void)
{
    char dir[128];
    mkpath(dir, sizeof(dir), "gcconc");
    enum { N = 1300 };
    static hash256 h[N];
    uint8_t p[PG];
    for (uint64_t i = 0; i < N; i++) {
        make_page(p, "trt"[i % 3], i);
        hash_buf(p, PG, &h[i]);
    }
    fill_for_gc(dir, h, 400);
    char done[160];
    snprintf(done, sizeof(done), "%s.done", dir);
    pid_t rd = fork();
    if (rd == 0) { /* reader: the live pages must read while gc moves them */
        struct store *s = open_or_die(dir);
        int bad = 0;
        for (int round = 0; round < 2000 && file_size(done) < 0; round++)
            for (uint64_t i = 0; i < 400; i += 2)
                bad += count_readable(s, "trt", i, i + 1, h) != 1;
        store_close(s);
        _exit(bad ? 1 : 0);
    }
    pid_t wr = fork();
    if (wr == 0) { /* writer: live pages put while gc runs */
        struct store *s = open_or_die(dir);
        store_set_pack_limit(s, 64 << 10);
        hash256 tmp[N];
        int bad = 0;
        for (uint64_t i = 1000; i < N; i++) {
            bad += put_range(s, "trt", i, i + 1, tmp);
            usleep(1000);
        }
        store_close(s);
        _exit(bad ? 1 : 0);
    }
    struct store *s = open_or_die(dir);
    struct liveset ls = {h, N, 0};
    char err[256] = "";
    int gcs_ok = 1;
    for (int k = 0; k < 6; k++) {
        gcs_ok &= store_gc(s, is_live_mixed, &ls, 0, NULL, err, sizeof(err)) == 0;
        usleep(20000);
    }
    int st_rd = 0, st_wr = 0;
    waitpid(wr, &st_wr, 0);
    close(open(done, O_WRONLY | O_CREAT, 0644));
    waitpid(rd, &st_rd, 0);
    CHECK(gcs_ok, "six gcs while a reader and a writer run");
    CHECK(WIFEXITED(st_rd) && WEXITSTATUS(st_rd) == 0, "the reader never missed a live page");
    CHECK(WIFEXITED(st_wr) && WEXITSTATUS(st_wr) == 0, "the writer's puts all succeeded");
    CHECK(store_gc(s, is_live_mixed, &ls, 0, NULL, err, sizeof(err)) == 0, "a last gc");
    CHECK(gc_outcome_ok(s, h, 400, 1), "live old pages readable, dead gone");
    CHECK(count_readable(s, "trt", 1000, N, h) == N - 1000, "every page the writer put readable");
    store_close(s);
}

static void test_gc_crash(void)
{
    char dir[128], tmp[160];
    mkpath(dir, sizeof(dir), "gccrash");
    snprintf(tmp, sizeof(tmp), "%s/index.tmp", dir);
    enum { N = 300 };
    hash256 h[N];
    struct liveset ls = {h, N, 0};
    char err[256] = "";
    for (int point = 1; point <= 5; point++) {
        fill_for_gc(dir, h, N);
        pid_t pid = fork();
        if (pid == 0) {
            setenv("REWIND_STORE_GC_CRASH",
                   point == 1   ? "1"
                   : point == 2 ? "2"
                   : point == 3 ? "3"
                   : point == 4 ? "4"
                                : "5",
                   1);
            struct store *s = open_or_die(dir);
            store_gc(s, is_live_even, &ls, 0, NULL, err, sizeof(err));
            _exit(0); /* not reached when the hook fires */
        }
        int status = 0;
        waitpid(pid, &status, 0);
        char what[96];
        snprintf(what, sizeof(what), "gc stopped at point %d", point);
        CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 99, what);
        struct store *s = open_or_die(dir);
        snprintf(what, sizeof(what), "crash at point %d: every live page readable", point);
        CHECK(gc_outcome_ok(s, h, N, point >= 4), what);
        struct store_gc_stats st;
        CHECK(store_gc(s, is_live_even, &ls, 0, &st, err, sizeof(err)) == 0, "the next gc");
        snprintf(what, sizeof(what), "crash at point %d, then gc: live readable, dead gone", point);
        CHECK(gc_outcome_ok(s, h, N, 1), what);
        CHECK(file_size(tmp) == -1, "no index.tmp left");
        CHECK(store_gc(s, is_live_even, &ls, 0, &st, err, sizeof(err)) == 0 &&
                  st.packs_rewritten == 0 && st.packs_deleted == 0,
              "no orphan or dead bytes left");
        store_close(s);
    }
    /* SIGKILL at arbitrary moments of a bigger gc: whatever the moment, the
     * store opens with every live page. */
    enum { M = 3000 };
    static hash256 hm[M];
    struct liveset lm = {hm, M, 0};
    int all_ok = 1;
    for (int k = 0; k < 6; k++) {
        fill_for_gc(dir, hm, M);
        pid_t pid = fork();
        if (pid == 0) {
            struct store *s = open_or_die(dir);
            store_gc(s, is_live_even, &lm, 0, NULL, err, sizeof(err));
            _exit(0);
        }
        struct timespec d = {0, 15000000L * k};
        nanosleep(&d, NULL);
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        struct store *s = open_or_die(dir);
        all_ok &= gc_outcome_ok(s, hm, M, 0);
        store_close(s);
    }
    CHECK(all_ok, "SIGKILL during gc at 6 moments: every live page readable");
}

/* The bytes on disk are the format of index.h and pack.h, checked against
 * the test's own bitwise CRC-32C, so a change of polynomial, byte order or
 * layout fails here even if the store still reads what it wrote. */
static uint32_t ref_crc32c(const uint8_t *p, size_t n)
{
    uint32_t c = 0xffffffffu;
    while (n--) {
        c ^= *p++;
        for (int k = 0; k < 8; k++)
            c = (c >> 1) ^ (c & 1 ? 0x82f63b78u : 0);
    }
    return ~c;
}

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void test_format(void)
{
    char dir[128], path[160];
    mkpath(dir, sizeof(dir), "format");
    struct store *s = open_or_die(dir);
    uint8_t page[PG], buf[2 * STORE_INDEX_ENTRY];
    make_page(page, 'r', 7); /* random: stored raw, so its bytes are known */
    hash256 h;
    CHECK(store_put(s, page, &h) == 0, "format: put");
    store_close(s);

    snprintf(path, sizeof(path), "%s/index", dir);
    int fd = open(path, O_RDONLY);
    CHECK(fd >= 0 && read(fd, buf, sizeof(buf)) == (ssize_t)sizeof(buf), "format: index read");
    if (fd >= 0)
        close(fd);
    static const uint8_t header[44] = {'R', 'W', 'S', 'T', 'I', 'D', 'X', '1', 1, 0, 0, 0,
                                       48,  0,   0,   0,   0,   16,  0,   0,   1, 0, 0, 0};
    CHECK(memcmp(buf, header, 44) == 0, "format: index header fields");
    CHECK(le32(buf + 44) == 0x8c89b9a5u, "format: index header CRC-32C (pinned)");
    CHECK(le32(buf + 44) == ref_crc32c(buf, 44), "format: header CRC is CRC-32C");
    const uint8_t *e = buf + STORE_INDEX_HEADER;
    CHECK(memcmp(e, h.b, 32) == 0, "format: entry names the page");
    CHECK(le32(e + 32) == 1 && le32(e + 36) == STORE_PACK_HEADER, "format: pack 1, first offset");
    CHECK((e[40] | e[41] << 8) == PG && (e[42] | e[43] << 8) == STORE_F_RAW, "format: raw page");
    CHECK(le32(e + 44) == ref_crc32c(e, 44), "format: entry CRC is CRC-32C");

    uint8_t pk[STORE_PACK_HEADER + PG];
    snprintf(path, sizeof(path), "%s/packs/000001.pack", dir);
    fd = open(path, O_RDONLY);
    CHECK(fd >= 0 && read(fd, pk, sizeof(pk)) == (ssize_t)sizeof(pk), "format: pack read");
    if (fd >= 0)
        close(fd);
    CHECK(memcmp(pk, "RWSTPACK", 8) == 0 && le32(pk + 8) == 1 && le32(pk + 12) == 1,
          "format: pack header");
    CHECK(memcmp(pk + STORE_PACK_HEADER, page, PG) == 0, "format: the page follows it");
}

int main(void)
{
    snprintf(base, sizeof(base), "/tmp/store_test.XXXXXX");
    if (!mkdtemp(base)) {
        perror("mkdtemp");
        return 1;
    }
    test_roundtrip();
    test_format();
    test_batch_and_roll();
    test_dedup();
    test_corrupt();
    test_load();
    test_torn_index();
    test_short_pack();
    test_concurrent();
    test_gc();
    test_gc_concurrent();
    test_gc_crash();
    rm_rf(base);
    return unit_done();
}
