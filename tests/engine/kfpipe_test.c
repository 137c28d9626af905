/*
 * kfpipe_test: keyframes captured off the step path (src/run/kfpipe.h,
 * src/run/kfcap.h invariant 6) are the keyframes captured synchronously.
 * A fake VM (calloc'd RAM, no fds, kvm_vm.dirty_log as the seam) runs a
 * made-up guest that writes pages step by step (text-like, random, zero,
 * rewritten with the same bytes); kfcap_due decides the keyframe steps and
 * kfcap_put captures with a made-up machine state. The guest writes on
 * right after each capture returns, while the worker still holds the pages.
 *
 * Cases, each against the synchronous pipe (REWIND_KF_SYNC's path) run on
 * the same script into its own store:
 *  - threaded, default budget: the store directory (index and packs) and
 *    the keyframes file are byte for byte the same, and so are cur[], the
 *    RAM hash kfcap_ram_hash gives and the keyframe steps; every record's
 *    page map read back from the store equals the RAM at its step;
 *  - threaded, a budget of one batch and a slow worker: the step path
 *    waited (figures), and the result is still byte for byte the same;
 *  - abort mid-capture (kfcap_abort with captures in flight): the file
 *    reads whole (no torn or damaged record), is a prefix of the
 *    synchronous file, every page it names is in the store, and cur[]
 *    plus the dirty log still give the RAM's hash (kfpipe.h invariant 5);
 *  - a crash in the worker while it appends a record (the kill_at hook,
 *    in a child process): the file's whole records name stored pages;
 *  - the disk cap counted with captures in flight (limits.h invariant 3).
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "input/limits.h"
#include "run/kfcap.h"
#include "store/store.h"
#include "trace/keyframe.h"
#include "unit.h"
#include "vmm/kvm.h"

#define NPFN 2048 /* 8 MiB of RAM */
#define EVERY 64
#define STEPS 700
#define MAXKF 64

static char top[64];
static uint64_t gdirty[NPFN / 64]; /* pages the guest wrote since the last dirty_log */
static uint64_t rng;

static int fake_dirty_log(struct kvm_vm *vm, uint64_t *bitmap)
{
    (void)vm;
    for (size_t i = 0; i < NPFN / 64; i++)
        bitmap[i] |= gdirty[i];
    memset(gdirty, 0, sizeof(gdirty));
    return 0;
}

static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* The guest writes page pfn one of four ways. */
static void guest_page(struct kvm_vm *vm, uint64_t pfn, unsigned how, uint64_t step)
{
    uint8_t *p = vm->ram + pfn * 4096;
    if (how == 0) { /* text-like: compressible */
        for (int i = 0; i < 4096; i++)
            p[i] = (uint8_t)("static int x = 0;\n"[(i + step) % 18] + (i / 512 == (int)(pfn % 8)));
    } else if (how == 1) { /* random: stored raw */
        for (int i = 0; i < 4096; i += 8) {
            uint64_t r = next();
            memcpy(p + i, &r, 8);
        }
    } else if (how == 2) { /* zero */
        memset(p, 0, 4096);
    } /* how == 3: the same bytes again (dirty, unchanged) */
    gdirty[pfn / 64] |= 1ull << (pfn % 64);
    vm->written[pfn / 64] |= 1ull << (pfn % 64);
}

/* One step of the guest: the boot writes much, later steps a few pages. */
static void guest_step(struct kvm_vm *vm, uint64_t step)
{
    unsigned n = step == 0 ? NPFN * 3 / 4 : (step % 97 == 0 ? 300 : 6);
    for (unsigned i = 0; i < n; i++) {
        uint64_t pfn = step == 0 ? i : next() % NPFN;
        guest_page(vm, pfn, (unsigned)(next() % 4), step);
    }
}

struct result {
    uint64_t steps[MAXKF];
    unsigned nkf;
    hash256 cur[NPFN];
    unsigned char ramhash[32], ramhash2[32];
    uint64_t waits;
};

struct opts {
    int threaded;
    unsigned budget;
    unsigned slow_us;
    unsigned abort_after; /* kfcap_abort right after this many captures (0: never) */
    uint64_t kill_at;     /* the worker dies appending record kill_at (0: never) */
    unsigned pause_us;    /* the guest pauses this long after each of the first 2 captures */
    uint8_t (*snaps)[NPFN * 4096]; /* RAM at each keyframe, or NULL */
};

static void setup_vm(struct kvm_vm *vm)
{
    kvm_init(vm);
    vm->ram_size = (uint64_t)NPFN * 4096;
    vm->ram = calloc(NPFN, 4096);
    vm->written = calloc(NPFN / 64, 8);
    vm->dirty = calloc(NPFN / 64, 8);
    vm->dirty_log = fake_dirty_log;
    memset(gdirty, 0, sizeof(gdirty));
}

static void free_vm(struct kvm_vm *vm)
{
    free(vm->ram);
    free(vm->written);
    free(vm->dirty);
}

/* Run the script into top/<name> (store/ and keyframes). */
static int run_script(const char *name, const struct opts *o, struct result *r)
{
    char dir[160], sp[200], kp[200], err[512];
    snprintf(dir, sizeof dir, "%s/%s", top, name);
    snprintf(sp, sizeof sp, "%s/store", dir);
    snprintf(kp, sizeof kp, "%s/keyframes", dir);
    mkdir(dir, 0755);
    memset(r, 0, sizeof(*r));
    rng = 0x9e3779b97f4a7c15ull;
    struct kvm_vm vm;
    setup_vm(&vm);
    struct store *s = NULL;
    struct kfcap k;
    if (store_open(sp, &s, err, sizeof err) < 0 || kfcap_init(&k, &vm, s, err, sizeof err) < 0) {
        fprintf(stderr, "%s\n", err);
        return -1;
    }
    k.threaded = o->threaded;
    k.budget = o->budget ? o->budget : k.budget;
    k.kill_at = o->kill_at;
    kfcap_begin_run(&k);
    int rc = kfcap_open(&k, kp, NULL, 0, err, sizeof err);
    k.pipe.slow_us = o->slow_us;
    uint8_t state[9000];
    for (uint64_t step = 0; step <= STEPS && rc == 0; step++) {
        guest_step(&vm, step);
        if (step > 0 && !kfcap_due(&k, EVERY, step))
            continue;
        memset(state, (int)(step & 0xff), sizeof state);
        memcpy(state, &step, sizeof step);
        if (o->snaps && r->nkf < 8)
            memcpy(o->snaps[r->nkf], vm.ram, (size_t)NPFN * 4096);
        rc = kfcap_put(&k, step, state, sizeof state, err, sizeof err);
        r->steps[r->nkf++] = step;
        if (o->abort_after && r->nkf == o->abort_after) {
            kfcap_abort(&k); /* the captures in flight are dropped */
            break;
        }
        /* the guest runs on at once: the pages the worker holds are copies */
        guest_step(&vm, step + 1000000);
        if (o->pause_us && r->nkf <= 2)
            usleep(o->pause_us);
    }
    if (rc < 0)
        fprintf(stderr, "%s: %s\n", name, err);
    CHECK(kfcap_ram_hash(&k, r->ramhash) == 0 && kvm_ram_hash(&vm, r->ramhash2) == 0, "RAM hashes");
    memcpy(r->cur, k.cur, sizeof(r->cur));
    if (kfcap_end_run(&k) < 0)
        rc = -1;
    r->waits = k.waits;
    if (getenv("KFT_DEBUG"))
        fprintf(stderr,
                "%s: %u keyframes, %llu taken, %llu pages, %llu waits, work %.3f s, step %.3f s\n",
                name, r->nkf, (unsigned long long)k.taken, (unsigned long long)k.delta_pages,
                (unsigned long long)k.waits, k.work_s, k.capture_s);
    kfcap_free(&k);
    store_close(s);
    free_vm(&vm);
    return rc;
}

/* The two stores and keyframes files of runs a and b are byte for byte equal. */
static int same_dirs(const char *a, const char *b)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "diff -r -q '%s/%s' '%s/%s' >/dev/null", top, a, top, b);
    return system(cmd) == 0;
}

/* Every page the records of file kp name is in store sp and, for the
 * first nsnap records, the record's whole page map is that RAM. */
static int check_file(const char *name, uint8_t (*snaps)[NPFN * 4096], size_t nsnap, size_t *nrec,
                      int *torn)
{
    char sp[200], kp[200], err[512];
    snprintf(sp, sizeof sp, "%s/%s/store", top, name);
    snprintf(kp, sizeof kp, "%s/%s/keyframes", top, name);
    struct kf_file f;
    struct store *s;
    if (kf_open(kp, &f) != 0 || store_open(sp, &s, err, sizeof err) < 0)
        return 0;
    static hash256 map[NPFN];
    memset(map, 0, sizeof map);
    uint8_t page[4096];
    int ok = !f.damaged;
    *nrec = f.n;
    *torn = f.torn;
    for (size_t i = 0; i < f.n && ok; i++) {
        struct kf_page *pg = NULL;
        if (kf_read_pages(&f, i, &pg) < 0) {
            ok = 0;
            break;
        }
        for (uint32_t j = 0; j < f.e[i].npages; j++) {
            ok &= pg[j].pfn < NPFN && store_has(s, &pg[j].hash);
            if (pg[j].pfn < NPFN)
                map[pg[j].pfn] = pg[j].hash;
        }
        free(pg);
        for (uint64_t pfn = 0; ok && i < nsnap && pfn < NPFN; pfn++) {
            static const hash256 none;
            if (!memcmp(&map[pfn], &none, sizeof none))
                ok &= !memcmp(snaps[i] + pfn * 4096, (uint8_t[4096]){0}, 4096);
            else
                ok &= store_get(s, &map[pfn], page) == 0 &&
                      !memcmp(page, snaps[i] + pfn * 4096, 4096);
        }
    }
    kf_close_read(&f);
    store_close(s);
    return ok;
}

static struct result sync_r;

static void test_threaded_equals_sync(void)
{
    static uint8_t snaps[8][NPFN * 4096];
    struct opts os = {.threaded = 0, .snaps = snaps};
    CHECK(run_script("sync", &os, &sync_r) == 0, "the synchronous capture runs");
    CHECK(sync_r.nkf > 8, "several keyframes");
    size_t n;
    int torn;
    CHECK(check_file("sync", snaps, 8, &n, &torn) && n == sync_r.nkf && !torn,
          "the synchronous records restore the RAM of their steps");
    struct result r;
    struct opts ot = {.threaded = 1};
    CHECK(run_script("threaded", &ot, &r) == 0, "the threaded capture runs");
    CHECK(r.nkf == sync_r.nkf && !memcmp(r.steps, sync_r.steps, sizeof r.steps),
          "the same keyframe steps (the cadence)");
    CHECK(same_dirs("sync", "threaded"), "the same store (index, packs) and keyframes file");
    CHECK(!memcmp(r.cur, sync_r.cur, sizeof r.cur), "the same cur[]");
    CHECK(!memcmp(r.ramhash, sync_r.ramhash, 32) && !memcmp(r.ramhash, r.ramhash2, 32),
          "kfcap_ram_hash is the RAM's hash, the same as the synchronous one");
    CHECK(check_file("threaded", snaps, 8, &n, &torn) && n == r.nkf,
          "the threaded records restore the RAM of their steps");
}

static void test_tiny_budget(void)
{
    struct result r;
    struct opts o = {.threaded = 1, .budget = 1, .slow_us = 200};
    CHECK(run_script("tiny", &o, &r) == 0, "a budget of one batch runs");
    CHECK(r.waits > 0, "the step path waited for the worker (the budget holds)");
    CHECK(same_dirs("sync", "tiny"), "and the store and file are still the same");
    CHECK(!memcmp(r.cur, sync_r.cur, sizeof r.cur), "the same cur[]");
}

static void test_abort(void)
{
    struct result r;
    struct opts o = {
        .threaded = 1, .budget = 2, .slow_us = 3000, .abort_after = 5, .pause_us = 60000};
    (void)run_script("abort", &o, &r);
    size_t n = 0;
    int torn = 1;
    char a[200], b[200];
    snprintf(a, sizeof a, "%s/abort/keyframes", top);
    snprintf(b, sizeof b, "%s/sync/keyframes", top);
    CHECK(check_file("abort", NULL, 0, &n, &torn) && !torn,
          "after an abort the file reads whole and every page it names is stored");
    CHECK(n >= 1 && n < 5, "records before the abort kept, the captures in flight dropped");
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "cmp -s -n $(stat -c %%s '%s') '%s' '%s'", a, a, b);
    CHECK(system(cmd) == 0, "the file is a prefix of the synchronous one");
    CHECK(!memcmp(r.ramhash, r.ramhash2, 32),
          "after the abort cur[] and the dirty log still give the RAM's hash");
}

static void test_crash(void)
{
    pid_t pid = fork();
    if (pid == 0) {
        struct result r;
        struct opts o = {.threaded = 1, .budget = 2, .slow_us = 500, .kill_at = 3};
        unsetenv("REWIND_TEST_KILL_IN_KEYFRAME");
        run_script("crash", &o, &r);
        _exit(0); /* not reached: killed in the worker */
    }
    int st = 0;
    waitpid(pid, &st, 0);
    CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "the worker killed its process");
    size_t n = 0;
    int torn = 0;
    CHECK(check_file("crash", NULL, 0, &n, &torn), "every page the whole records name is stored");
    CHECK(n == 2 && torn, "two whole records and a torn one");
}

static uint64_t settled;
static int settles;
static int settle(void *ctx, uint64_t *bytes)
{
    (void)ctx;
    settles++;
    *bytes = settled;
    return 0;
}

static void test_limits(void)
{
    struct run_limits l;
    run_limits_init(&l, 0, 1); /* a disk cap of 1 MiB */
    run_limits_settler(&l, settle, NULL);
    settled = 600 << 10;
    CHECK(!run_limits_keyframes_unsure(&l, 100 << 10, 200 << 10) && settles == 0,
          "far under the cap: no join");
    CHECK(!run_limits_keyframes_unsure(&l, 300 << 10, 900 << 10) && settles == 1 &&
              l.kf_bytes == settled,
          "the bound passes the cap: joined, exact count under it");
    settled = 1100 << 10;
    CHECK(run_limits_keyframes_unsure(&l, 700 << 10, 500 << 10) && settles == 2 && l.hit,
          "the exact count passes the cap: hit");
}

int main(void)
{
    snprintf(top, sizeof top, "/tmp/kfpipe_test.XXXXXX");
    if (!mkdtemp(top)) {
        perror("mkdtemp");
        return 1;
    }
    char cache[96];
    snprintf(cache, sizeof cache, "%s/cache", top);
    setenv("REWIND_CACHE", cache, 1); /* the memo: the first run writes a frame, later use it */
    test_threaded_equals_sync();
    test_tiny_budget();
    test_abort();
    test_crash();
    test_limits();
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", top);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", top);
    return unit_done();
}
