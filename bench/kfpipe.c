/*
 * bench/kfpipe.c (built and run by bench/kfpipe.sh): what a keyframe
 * capture costs the step path, synchronous (REWIND_KF_SYNC=1: naming,
 * compressing and storing on the vCPU's thread, as before issue 29 item 3)
 * against threaded (the copy on the step path, the rest on the pipe's
 * worker: src/run/kfpipe.h), side by side in one process, rounds
 * interleaved. A fake VM (no /dev/kvm: kvm_vm.dirty_log is the seam) whose
 * RAM is the input files' pages, a third more zero pages; capture 1 has
 * every page dirty (a boot keyframe), captures 2..5 a tenth of the pages,
 * each rewritten with another page's bytes (new pages for the store). The
 * page memo is off (REWIND_NO_PAGE_MEMO=1): every page is hashed.
 * Modes: synchronous, threaded with the default budget (64 MiB: capture 1
 * is larger, so its step waits for the worker), threaded with 512 MiB
 * (every capture fits: the copy alone).
 * Per mode: the step path's time per dirty page (kfcap_put), the join's
 * wait (kfcap_sync right after the last capture: the worker's backlog),
 * the worker's time per page and the new pages' rate into the store
 * (MB/s of pages handed over per second of the worker, one core).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "run/kfcap.h"
#include "store/store.h"
#include "vmm/kvm.h"

#define ROUNDS 3
#define LATER 4

static uint8_t *src;
static size_t nsrc;
static uint64_t *gdirty;
static uint64_t npfn;

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void load(const char *path, size_t max)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        exit(2);
    }
    uint8_t buf[4096];
    while (nsrc < max && fread(buf, 1, 4096, f) == 4096) {
        src = realloc(src, (nsrc + 1) * 4096);
        if (!src)
            exit(2);
        memcpy(src + nsrc++ * 4096, buf, 4096);
    }
    fclose(f);
}

static int dirty_log(struct kvm_vm *vm, uint64_t *bitmap)
{
    (void)vm;
    for (uint64_t i = 0; i < npfn / 64; i++)
        bitmap[i] |= gdirty[i];
    memset(gdirty, 0, npfn / 8);
    return 0;
}

struct fig {
    double step_s, join_s, work_s;
    uint64_t pages, waits;
};

static void run(int mode, int round, struct fig *fg)
{
    int threaded = mode > 0;
    char dir[128], sp[160], kp[160], err[512], cmd[200];
    snprintf(dir, sizeof dir, "/tmp/kfpipe_bench.%d.%d.%d", (int)getpid(), mode, round);
    snprintf(cmd, sizeof cmd, "rm -rf %s && mkdir -p %s", dir, dir);
    if (system(cmd) != 0)
        exit(2);
    snprintf(sp, sizeof sp, "%s/store", dir);
    snprintf(kp, sizeof kp, "%s/keyframes", dir);
    struct kvm_vm vm;
    kvm_init(&vm);
    vm.ram_size = npfn * 4096;
    vm.ram = calloc(npfn, 4096);
    vm.written = calloc(npfn / 64, 8);
    vm.dirty = calloc(npfn / 64, 8);
    vm.dirty_log = dirty_log;
    struct store *s;
    struct kfcap k;
    if (!vm.ram || store_open(sp, &s, err, sizeof err) < 0 ||
        kfcap_init(&k, &vm, s, err, sizeof err) < 0) {
        fprintf(stderr, "kfpipe: %s\n", err);
        exit(2);
    }
    k.threaded = threaded;
    if (mode == 2)
        k.budget = 512; /* room for every capture: the copy alone */
    kfcap_begin_run(&k);
    if (kfcap_open(&k, kp, NULL, 0, err, sizeof err) < 0)
        exit(2);
    memcpy(vm.ram, src, nsrc * 4096); /* the rest stays zero */
    memset(gdirty, 0xff, npfn / 8);
    uint8_t state[9216] = {1};
    uint64_t seed = 88172645463325252ull + (uint64_t)round;
    for (int c = 0; c <= LATER; c++) {
        if (c > 0) /* a tenth of the pages get another page's bytes */
            for (uint64_t i = 0; i < npfn / 10; i++) {
                seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
                uint64_t to = seed % npfn, from = (seed >> 20) % nsrc;
                memcpy(vm.ram + to * 4096, src + from * 4096, 4096);
                vm.ram[to * 4096 + 100] ^= (uint8_t)(c * 31 + 1); /* not a page stored before */
                gdirty[to / 64] |= 1ull << (to % 64);
                vm.written[to / 64] |= 1ull << (to % 64);
            }
        double t0 = now();
        if (kfcap_put(&k, (uint64_t)c * 4096, state, sizeof state, err, sizeof err) < 0) {
            fprintf(stderr, "kfpipe: %s\n", err);
            exit(1);
        }
        fg->step_s += now() - t0;
    }
    double t0 = now();
    if (kfcap_sync(&k, err, sizeof err) < 0) {
        fprintf(stderr, "kfpipe: %s\n", err);
        exit(1);
    }
    fg->join_s += now() - t0;
    fg->pages += k.dirty_pages;
    fg->waits += k.waits;
    fg->work_s += k.work_s;
    kfcap_end_run(&k);
    kfcap_free(&k);
    store_close(s);
    free(vm.ram);
    free(vm.written);
    free(vm.dirty);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        exit(2);
}

int main(int argc, char **argv)
{
    setenv("REWIND_NO_PAGE_MEMO", "1", 1);
    for (int i = 1; i < argc; i++)
        load(argv[i], 12288); /* at most 48 MiB of input pages */
    if (!nsrc)
        return 2;
    npfn = (nsrc + nsrc / 2 + 63) / 64 * 64; /* a third of RAM zero */
    gdirty = calloc(npfn / 64, 8);
    struct fig f[3];
    memset(f, 0, sizeof f);
    for (int r = 0; r < ROUNDS; r++)
        for (int t = 0; t < 3; t++)
            run(t, r, &f[t]);
    printf("RAM %llu pages (%llu from the input), %d captures x %d rounds, memo off\n",
           (unsigned long long)npfn, (unsigned long long)nsrc, LATER + 1, ROUNDS);
    printf("%-12s %10s %14s %10s %14s %14s %8s\n", "capture", "pages", "step us/page", "join s",
           "worker us/pg", "worker MB/s", "waits");
    const char *name[3] = {"synchronous", "threaded", "threaded-512"};
    for (int t = 0; t < 3; t++) {
        double pg = (double)f[t].pages;
        /* the synchronous capture's work is all on the step path */
        double work = t ? f[t].work_s : f[t].step_s;
        printf("%-12s %10.0f %14.2f %10.3f %14.2f %14.0f %8llu\n", name[t], pg,
               f[t].step_s * 1e6 / pg, f[t].join_s / ROUNDS, work * 1e6 / pg,
               pg * 4096 / 1e6 / work, (unsigned long long)f[t].waits);
    }
    printf("step path, threaded / synchronous: %.3f (64 MiB budget), %.3f (512 MiB)\n",
           f[1].step_s / f[0].step_s, f[2].step_s / f[0].step_s);
    return 0;
}
