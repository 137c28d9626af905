/* kfcache_test: a cached keyframe (src/run/kfcache.c) maps back with the
 * names, sums and pages written; a page whose bytes were changed on disk no
 * longer matches its sum; a file for another RAM size, a truncated file and
 * a bad header are refused; at most 8 files are kept. The adaptive cadence
 * (src/run/kfcap.h invariant 5): a stretch that changed few pages keeps the
 * base cadence, one that changed pages as fast as it ran steps halves it,
 * the boot keyframe's stretch is one step, and a chain whose steps do not
 * increase (a hostile file) still gives a shift within bounds. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "run/kfcache.h"
#include "run/kfcap.h"
#include "unit.h"

#define NPFN 64

static char home[64];

static void fill(uint8_t *ram, hash256 *names)
{
    memset(ram, 0, NPFN * 4096);
    memset(names, 0, NPFN * sizeof(*names));
    for (int p = 0; p < NPFN; p += 3) { /* every third page present */
        for (int i = 0; i < 4096; i++)
            ram[p * 4096 + i] = (uint8_t)(p * 7 + i);
        memset(&names[p], p + 1, sizeof(names[p]));
    }
}

static void test_roundtrip(void)
{
    static uint8_t ram[NPFN * 4096];
    static hash256 names[NPFN];
    fill(ram, names);
    CHECK(kfcache_write(home, "0123456789abcdef", 77, names, ram, NPFN) == 0, "write");
    struct kfmat m;
    CHECK(kfcache_open(&m, home, "0123456789abcdef", NPFN) == 0, "open");
    CHECK(m.step == 77 && m.npages == (NPFN + 2) / 3, "header: step and pages");
    int same = 1;
    for (int p = 0; p < NPFN; p++) {
        same &= !memcmp(&m.map[p], &names[p], sizeof(names[p]));
        if (p % 3 == 0)
            same &= !memcmp(m.pages + p * 4096, ram + p * 4096, 4096) &&
                    m.sums[p] == kfcache_sum(ram + p * 4096);
        else
            same &= m.sums[p] == 0;
    }
    CHECK(same, "names, sums and pages as written");
    kfmat_free(&m);
    CHECK(kfcache_open(&m, home, "0123456789abcdef", NPFN * 2) == -1, "another RAM size: refused");
    CHECK(kfcache_open(&m, home, "fedcba9876543210", NPFN) == -1, "no file: none");
    CHECK(kfcache_open(&m, home, "../x", NPFN) == -1, "a bad name: none");

    /* a page changed on disk: its sum no longer matches (kfcap.c copies it
     * only if it does) */
    char path[256];
    snprintf(path, sizeof(path), "%s/cache/frames/0123456789abcdef", home);
    struct stat st;
    CHECK(stat(path, &st) == 0, "the file is there");
    int fd = open(path, O_RDWR);
    uint8_t b = 0x5a;
    CHECK(fd >= 0 && pwrite(fd, &b, 1, st.st_size - NPFN * 4096 + 3 * 4096 + 100) == 1,
          "corrupt page 3");
    close(fd);
    CHECK(kfcache_open(&m, home, "0123456789abcdef", NPFN) == 0, "still opens");
    CHECK(kfcache_sum(m.pages + 3 * 4096) != m.sums[3], "page 3 fails its sum");
    CHECK(kfcache_sum(m.pages + 6 * 4096) == m.sums[6], "page 6 still matches");
    kfmat_free(&m);
    /* truncated, and a bad header: refused */
    CHECK(truncate(path, st.st_size - 4096) == 0, "truncate");
    CHECK(kfcache_open(&m, home, "0123456789abcdef", NPFN) == -1, "a short file: refused");
    CHECK(kfcache_write(home, "0123456789abcdef", 77, names, ram, NPFN) == 0, "write again");
    fd = open(path, O_RDWR);
    CHECK(fd >= 0 && pwrite(fd, "X", 1, 0) == 1, "break the magic");
    close(fd);
    CHECK(kfcache_open(&m, home, "0123456789abcdef", NPFN) == -1, "a bad header: refused");
    /* at most 8 files */
    for (int i = 0; i < 12; i++) {
        char run[17];
        snprintf(run, sizeof(run), "%016x", i);
        kfcache_write(home, run, 1, names, ram, NPFN);
    }
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "test $(ls %s/cache/frames | wc -l) -le 8", home);
    CHECK(system(cmd) == 0, "at most 8 cached keyframes");
}

static void test_cadence(void)
{
    CHECK(kfcap_shift(8192, 1, 4096, 5) == 0, "a step-bound stretch keeps the base cadence");
    CHECK(kfcap_shift(8192, 1, 4096, 4095) == 0 && kfcap_shift(8192, 1, 4096, 4096) == 1,
          "halved from one changed page per step on");
    CHECK(kfcap_shift(1000, 1, 500, 2560) == 2, "500 steps, 2,560 pages: a quarter");
    CHECK(kfcap_shift(0, 0, 0, 6000) == KFCAP_SHIFT_MAX, "the boot keyframe: at most the max");
    CHECK(kfcap_shift(300, 1, 300, 0) == 0 && kfcap_shift(300, 1, 900, 1000) <= KFCAP_SHIFT_MAX,
          "steps that do not increase (a hostile chain)");
    CHECK(kfcap_shift(28, 1, 0, 5000) == kfcap_shift(28, 0, 0, 5000), "a stretch from boot");
    struct kfcap k;
    memset(&k, 0, sizeof(k));
    k.shift = 2;
    CHECK(kfcap_due(&k, 4096, 3072) && !kfcap_due(&k, 4096, 3000), "every 1,024 steps");
    k.shift = KFCAP_SHIFT_MAX;
    CHECK(kfcap_due(&k, 8, 5), "a cadence below one step is every step");
}

int main(void)
{
    test_cadence();
    snprintf(home, sizeof(home), "/tmp/kfcache_test.XXXXXX");
    if (!mkdtemp(home))
        return 1;
    test_roundtrip();
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", home);
    if (system(cmd) != 0)
        return 1;
    return unit_done();
}
