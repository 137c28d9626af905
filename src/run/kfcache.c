/*
 * kfcache: recently restored keyframes kept materialized on disk, so that the
 * next seek into the same run copies its pages instead of reading,
 * decompressing and checking each from the page store (issue 17 item 2).
 *
 * One file per run, <home>/cache/frames/<run>, holding the last keyframe of
 * that run a throwaway (cat, seek) restored from the store: any keyframe of
 * the run can use it, page by page, where its page names match. At most
 * KFCACHE_KEEP files are kept (the oldest by mtime go first); they are
 * derived data, safe to delete at any time.
 *
 * Format (little-endian, native layout is checked by the header):
 *   header (4096 bytes) "RWFRAME1" | u32 version 1 | u32 0 | u64 npfn |
 *          u64 step | u64 npages
 *   names  npfn x 32 bytes (all-zero: the zero page)
 *   sums   npfn x 8 bytes: kfcache_sum of each page (0 for the zero page)
 *   pages  npfn x 4096 bytes at a page boundary, sparse (holes for zero pages)
 *
 * Invariants:
 *  1. A file is untrusted input: it is used only if its size is exactly what
 *     its header says for the RAM being restored, and each page is copied
 *     only if its name equals the name the keyframe wants (kfcap.c) and its
 *     bytes match its sum; anything else is read from the store instead.
 *  2. A file appears whole or not at all (written to a temporary name,
 *     renamed); a reader holds its own mapping, so a rename under it is safe.
 */
#include "run/kfcache.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/homepath.h"
#include "home/rundir.h"
#include "util/io.h"

#define KFCACHE_MAGIC "RWFRAME1"
#define KFCACHE_HEADER 4096u
#define KFCACHE_KEEP 8

struct kfcache_header {
    char magic[8];
    uint32_t version, zero;
    uint64_t npfn, step, npages;
};

uint64_t kfcache_sum(const void *page)
{
    /* four independent multiply-xor lanes over the 512 words of a page: a
     * checksum against corruption, fast enough to check every page copied */
    const uint8_t *p = page;
    uint64_t h[4] = {1, 2, 3, 4};
    for (size_t i = 0; i < 4096; i += 32)
        for (int l = 0; l < 4; l++) {
            uint64_t w;
            memcpy(&w, p + i + 8 * l, 8);
            h[l] = (h[l] ^ w) * 0x9e3779b97f4a7c15ull;
            h[l] ^= h[l] >> 29;
        }
    uint64_t r = h[0] ^ (h[1] << 1) ^ (h[2] << 2) ^ (h[3] << 3);
    return r ? r : 1; /* 0 marks the zero page */
}

static int cache_dir(const char *home, char *out, size_t n)
{
    char root[4096];
    if (home_path(root, sizeof(root), home, HOME_ROOT, NULL, NULL) < 0)
        return -1;
    int k = snprintf(out, n, "%s/cache/frames", root);
    return k < 0 || (size_t)k >= n ? -1 : 0;
}

static uint64_t layout(uint64_t npfn, uint64_t *names, uint64_t *sums, uint64_t *pages)
{
    *names = KFCACHE_HEADER;
    *sums = *names + npfn * 32;
    *pages = (*sums + npfn * 8 + 4095) & ~4095ull;
    return *pages + npfn * 4096;
}

/* A file name of this cache: a run id, or a memo's name (kfmemo.c). */
static int good_name(const char *n)
{
    size_t k = strlen(n);
    if (k == 0 || k > 64 || n[0] == '.')
        return 0;
    return strspn(n, "abcdefghijklmnopqrstuvwxyz0123456789-") == k;
}

int kfcache_open(struct kfmat *m, const char *home, const char *run, uint64_t npfn)
{
    char dir[4200];
    memset(m, 0, sizeof(*m));
    m->fd = -1;
    if (!home_safe_name(run) || cache_dir(home, dir, sizeof(dir)) < 0)
        return -1;
    return kfcache_open_at(m, dir, run, npfn);
}

int kfcache_open_at(struct kfmat *m, const char *dir, const char *name, uint64_t npfn)
{
    memset(m, 0, sizeof(*m));
    m->fd = -1;
    char path[4300];
    if (!good_name(name) || snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path))
        return -1;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return -1;
    uint64_t on, os, op, total = layout(npfn, &on, &os, &op);
    struct stat st;
    struct kfcache_header h;
    if (fstat(fd, &st) < 0 || (uint64_t)st.st_size != total ||
        io_pread_full(fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h) ||
        memcmp(h.magic, KFCACHE_MAGIC, 8) || h.version != 1 || h.npfn != npfn) { /* invariant 1 */
        close(fd);
        return -1;
    }
    uint8_t *base = mmap(NULL, total, PROT_READ, MAP_SHARED, fd, 0);
    close(fd);
    if (base == MAP_FAILED)
        return -1;
    m->file = base;
    m->file_bytes = total;
    m->map = (hash256 *)(base + on);
    m->sums = (const uint64_t *)(base + os);
    m->pages = base + op;
    m->npfn = npfn;
    m->bytes = npfn * 4096;
    m->step = h.step;
    m->npages = h.npages;
    return 0;
}

void kfcache_unmap(struct kfmat *m)
{
    if (m->file)
        munmap(m->file, m->file_bytes);
    memset(m, 0, sizeof(*m));
    m->fd = -1;
}

/* Keep at most KFCACHE_KEEP files: remove the oldest beyond that. */
static void trim(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct {
        char name[256];
        time_t t;
    } f[64];
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < 64) {
        if (e->d_name[0] == '.')
            continue;
        char p[4608];
        struct stat st;
        if (snprintf(p, sizeof(p), "%.4200s/%.255s", dir, e->d_name) >= (int)sizeof(p))
            continue;
        if (stat(p, &st) == 0) {
            snprintf(f[n].name, sizeof(f[n].name), "%s", e->d_name);
            f[n++].t = st.st_mtime;
        }
    }
    closedir(d);
    while (n > KFCACHE_KEEP) {
        int old = 0;
        for (int i = 1; i < n; i++)
            if (f[i].t < f[old].t)
                old = i;
        char p[4608];
        if (snprintf(p, sizeof(p), "%.4200s/%.255s", dir, f[old].name) < (int)sizeof(p))
            unlink(p);
        f[old] = f[--n];
    }
}

int kfcache_write(const char *home, const char *run, uint64_t step, const hash256 *names,
                  const uint8_t *ram, uint64_t npfn)
{
    char dir[4200];
    if (!home_safe_name(run) || cache_dir(home, dir, sizeof(dir)) < 0 || io_mkdir_p(dir) < 0)
        return -1;
    if (kfcache_write_at(dir, run, step, names, ram, npfn) < 0)
        return -1;
    trim(dir);
    return 0;
}

int kfcache_write_at(const char *dir, const char *name, uint64_t step, const hash256 *names,
                     const uint8_t *ram, uint64_t npfn)
{
    char path[4300], tmp[4400];
    if (!good_name(name))
        return -1;
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    snprintf(tmp, sizeof(tmp), "%s/.%s.%d", dir, name, (int)getpid());
    uint64_t on, os, op, total = layout(npfn, &on, &os, &op);
    int fd = open(tmp, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return -1;
    uint64_t *sums = calloc(npfn ? npfn : 1, sizeof(*sums));
    struct kfcache_header h = {.version = 1, .npfn = npfn, .step = step};
    memcpy(h.magic, KFCACHE_MAGIC, 8);
    static const hash256 none;
    int ok = sums && ftruncate(fd, (off_t)total) == 0;
    /* one write per run of consecutive pages that are not the zero page */
    for (uint64_t pfn = 0; ok && pfn < npfn;) {
        if (!memcmp(&names[pfn], &none, sizeof(none))) {
            pfn++;
            continue;
        }
        uint64_t end = pfn;
        for (; end < npfn && memcmp(&names[end], &none, sizeof(none)); end++) {
            sums[end] = kfcache_sum(ram + end * 4096);
            h.npages++;
        }
        ok = io_pwrite_all(fd, ram + pfn * 4096, (end - pfn) * 4096, (off_t)(op + pfn * 4096)) == 0;
        pfn = end;
    }
    ok = ok && io_pwrite_all(fd, names, npfn * 32, (off_t)on) == 0 &&
         io_pwrite_all(fd, sums, npfn * 8, (off_t)os) == 0 &&
         io_pwrite_all(fd, &h, sizeof(h), 0) == 0;
    free(sums);
    if (close(fd) != 0)
        ok = 0;
    if (!ok || rename(tmp, path) != 0) { /* invariant 2; no fsync: a cache */
        unlink(tmp);
        return -1;
    }
    return 0;
}
