/* kfmemo_test: the memo of page names (src/run/kfmemo.c) names a page only
 * where its bytes equal the frame's page of that name and that page still
 * matches its sum (invariant 1); the names it gives are the store's names
 * of the same bytes, and the store keeps the same bytes under them
 * (invariant 3); a frame is written only where there is none; a frame for another RAM
 * size, REWIND_NO_PAGE_MEMO=1, or a cache directory others may write leave
 * the memo naming nothing. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "run/kfcache.h"
#include "run/kfmemo.h"
#include "store/store.h"
#include "util/hash.h"
#include "unit.h"

#define NPFN 96

static char cache[64];
static uint8_t ram[NPFN * 4096];
static hash256 names[NPFN]; /* all-zero: the zero page */
static uint64_t pfns[NPFN];

static void fill(unsigned seed)
{
    memset(ram, 0, sizeof ram);
    memset(names, 0, sizeof names);
    for (int p = 0; p < NPFN; p++) {
        pfns[p] = (uint64_t)p;
        if (p % 4 == 3)
            continue; /* every fourth page the zero page */
        for (int i = 0; i < 4096; i++)
            ram[p * 4096 + i] = (uint8_t)(seed * 131 + p * 7 + i * (p + 1));
        hash_buf(ram + p * 4096, 4096, &names[p]);
    }
}

static int nonzero_pages(void)
{
    int n = 0;
    for (int p = 0; p < NPFN; p++)
        n += p % 4 != 3;
    return n;
}

/* The frame file of slot 0 (boot) for NPFN pages. */
static void frame_path(char *out, size_t n)
{
    snprintf(out, n, "%s/frames/boot-%d", cache, NPFN);
}

static void test_written_after_a_poor_capture_then_names(void)
{
    fill(1);
    struct kfmemo m;
    kfmemo_open(&m, NPFN);
    CHECK(m.dirfd >= 0, "the memo opens in $REWIND_CACHE/frames");
    hash256 got[NPFN];
    uint8_t known[NPFN];
    CHECK(kfmemo_names(&m, KFMEMO_BOOT, ram, pfns, NPFN, got, known) == 0,
          "an empty memo names nothing");
    kfmemo_after(&m, KFMEMO_BOOT, NPFN, 1, names, ram);
    kfmemo_close(&m);
    char fp[128];
    frame_path(fp, sizeof fp);
    struct stat st;
    CHECK(stat(fp, &st) == 0, "a capture the memo did not serve writes its frame");

    kfmemo_open(&m, NPFN);
    memset(got, 0, sizeof got);
    size_t k = kfmemo_names(&m, KFMEMO_BOOT, ram, pfns, NPFN, got, known);
    CHECK(k == (size_t)nonzero_pages(), "every page but the zero pages named");
    int same = 1;
    for (int p = 0; p < NPFN; p++)
        if (known[p] && memcmp(&got[p], &names[p], sizeof got[p]))
            same = 0;
    CHECK(same, "each name the memo gives is the SHA-256 of the page");
    CHECK(kfmemo_names(&m, KFMEMO_LATER, ram, pfns, NPFN, got, known) == 0,
          "the other frame (not written) names nothing");

    /* a page whose bytes changed is not named; the others still are */
    ram[5 * 4096 + 100] ^= 1;
    k = kfmemo_names(&m, KFMEMO_BOOT, ram, pfns, NPFN, got, known);
    CHECK(k == (size_t)nonzero_pages() - 1 && !known[5], "a changed page is hashed, not named");
    ram[5 * 4096 + 100] ^= 1;

    /* a frame that is there is never replaced, served well or poorly */
    kfmemo_after(&m, KFMEMO_BOOT, NPFN, 2, names, ram);
    kfmemo_after(&m, KFMEMO_BOOT, NPFN, 3, names, ram);
    struct stat st2;
    CHECK(stat(fp, &st2) == 0 && st2.st_ino == st.st_ino, "a frame that is there is not replaced");
    struct stat st3;
    /* a capture of few pages says nothing */
    kfmemo_after(&m, KFMEMO_LATER, 10, 5, names, ram);
    char lp[128];
    snprintf(lp, sizeof lp, "%s/frames/later-%d", cache, NPFN);
    CHECK(stat(lp, &st3) != 0, "a 10-page capture writes no frame");
    kfmemo_close(&m);
}

/* Invariant 1: bytes damaged on disk are never named, even where RAM holds
 * exactly the damaged bytes (a name taken for them would be wrong). */
static void test_damaged_frame_names_nothing_wrong(void)
{
    fill(1);
    char fp[128];
    frame_path(fp, sizeof fp);
    struct kfmat f;
    char dir[96];
    snprintf(dir, sizeof dir, "%s/frames", cache);
    CHECK(kfcache_open_at(&f, dir, "boot-96", NPFN) == 0, "the frame maps");
    uint64_t off = (uint64_t)(f.pages - f.file) + 9 * 4096 + 17;
    kfmat_free(&f);
    int fd = open(fp, O_RDWR);
    uint8_t b = 0;
    CHECK(fd >= 0 && pread(fd, &b, 1, (off_t)off) == 1, "read a byte of page 9");
    b ^= 0x40;
    CHECK(pwrite(fd, &b, 1, (off_t)off) == 1, "damage it");
    close(fd);
    ram[9 * 4096 + 17] ^= 0x40; /* RAM now equals the damaged bytes */
    struct kfmemo m;
    kfmemo_open(&m, NPFN);
    hash256 got[NPFN];
    uint8_t known[NPFN];
    size_t k = kfmemo_names(&m, KFMEMO_BOOT, ram, pfns, NPFN, got, known);
    CHECK(!known[9], "the damaged page is not named");
    CHECK(k == (size_t)nonzero_pages() - 1, "the others are");
    kfmemo_close(&m);
    ram[9 * 4096 + 17] ^= 0x40;
}

/* Invariant 3 at the store: pages put with the memo's names are the pages
 * put without it, under the same names, and read back as the same bytes. */
static void test_store_takes_the_names(void)
{
    fill(2);
    char d1[128], d2[128], err[256];
    snprintf(d1, sizeof d1, "%s/s1", cache);
    snprintf(d2, sizeof d2, "%s/s2", cache);
    struct store *a, *b;
    CHECK(store_open(d1, &a, err, sizeof err) == 0 && store_open(d2, &b, err, sizeof err) == 0,
          err);
    hash256 na[NPFN], nb[NPFN];
    uint8_t known[NPFN];
    CHECK(store_put_batch(a, ram, NPFN, na) == 0, "put without names");
    memset(nb, 0xee, sizeof nb);
    for (int p = 0; p < NPFN; p++) {
        known[p] = p % 2 == 0; /* half the pages named by the caller (none a zero page) */
        if (known[p])
            nb[p] = names[p];
    }
    CHECK(store_put_batch_named(b, ram, NPFN, nb, known) == 0, "put with names");
    CHECK(!memcmp(na, nb, sizeof na), "the same names with and without");
    struct store_stats st;
    store_stats(b, &st);
    CHECK(st.named_puts == NPFN / 2, "the named pages (the even ones) were not hashed");
    uint8_t page[4096];
    int ok = 1;
    for (int p = 0; p < NPFN; p++)
        if (store_get(b, &nb[p], page) != 0 || memcmp(page, ram + p * 4096, 4096))
            ok = 0;
    CHECK(ok, "every page reads back (re-hashed by store_get) under its name");
    store_close(a);
    store_close(b);
}

static void test_other_ram_size_and_off_switch(void)
{
    fill(1);
    struct kfmemo m;
    hash256 got[NPFN];
    uint8_t known[NPFN];
    kfmemo_open(&m, NPFN * 2); /* no frame for that RAM */
    CHECK(kfmemo_names(&m, KFMEMO_BOOT, ram, pfns, NPFN, got, known) == 0,
          "a frame of another RAM size is not used");
    kfmemo_close(&m);
    setenv("REWIND_NO_PAGE_MEMO", "1", 1);
    kfmemo_open(&m, NPFN);
    CHECK(m.dirfd < 0 && kfmemo_names(&m, KFMEMO_BOOT, ram, pfns, NPFN, got, known) == 0,
          "REWIND_NO_PAGE_MEMO=1: the memo names nothing");
    kfmemo_close(&m);
    unsetenv("REWIND_NO_PAGE_MEMO");
    char dir[96];
    snprintf(dir, sizeof dir, "%s/frames", cache);
    CHECK(chmod(dir, 0777) == 0, "chmod");
    kfmemo_open(&m, NPFN);
    CHECK(m.dirfd < 0 && kfmemo_names(&m, KFMEMO_BOOT, ram, pfns, NPFN, got, known) == 0,
          "a frames directory others may write is not used");
    kfmemo_close(&m);
    CHECK(chmod(dir, 0700) == 0, "chmod back");
}

int main(void)
{
    snprintf(cache, sizeof cache, "/tmp/kfmemo_test.XXXXXX");
    if (!mkdtemp(cache)) {
        perror("mkdtemp");
        return 1;
    }
    setenv("REWIND_CACHE", cache, 1);
    test_written_after_a_poor_capture_then_names();
    test_damaged_frame_names_nothing_wrong();
    test_store_takes_the_names();
    test_other_ram_size_and_off_switch();
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", cache);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", cache);
    return unit_done();
}
