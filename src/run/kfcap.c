/*
 * kfcap: see kfcap.h.
 */
#include "util/fail.h"
#include "run/kfcap.h"
#include "util/check.h"
#include "util/failpoint.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include <unistd.h>

#include <zstd.h>

#include "util/homepath.h"
#include "run/kfcache.h"

#define fail util_fail

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* All-zero bytes stand for the zero page in cur[] and in maps. */
int kfcap_init(struct kfcap *k, struct kvm_vm *vm, struct store *s, char *err, size_t errlen)
{
    memset(k, 0, sizeof(*k));
    k->vm = vm;
    k->store = s;
    k->npfn = vm->ram_size / 4096;
    kfmemo_open(&k->memo, k->npfn);
    k->cur = calloc(k->npfn, sizeof(*k->cur));
    k->pfns = malloc((k->npfn ? k->npfn : 1) * sizeof(*k->pfns));
    if (!k->cur || !k->pfns)
        return fail(err, errlen, "out of memory for keyframes");
    const char *sync = getenv("REWIND_KF_SYNC"), *mb = getenv("REWIND_KF_BUDGET_MB");
    k->threaded = !(sync && !strcmp(sync, "1"));
    k->budget = KFPIPE_BUDGET_MIB; /* a batch is 1 MiB */
    if (mb && strtoul(mb, NULL, 10) > 0 && strtoul(mb, NULL, 10) < 65536)
        k->budget = (unsigned)strtoul(mb, NULL, 10);
    const char *kill = getenv("REWIND_TEST_KILL_IN_KEYFRAME");
    const char *holes = getenv("REWIND_TEST_HOLES");
    const char *keep = getenv("REWIND_TEST_RESTORE_KEEP_DIRTY");
    if (kill && holes && !strcmp(holes, "1")) /* like every test hole: tests only */
        k->kill_at = strtoull(kill, NULL, 10);
    k->timed = getenv("REWIND_TIMING") != NULL;
    if (k->timed && !(k->zcctx = ZSTD_createCCtx()))
        k->timed = 0;
    if (keep && holes && !strcmp(holes, "1") && !strcmp(keep, "1"))
        k->keep_dirty = 1; /* the negative twin of invariant 3 (tests/system/t_workers.sh) */
    const char *unseeded = getenv("REWIND_TEST_CADENCE_UNSEEDED");
    if (unseeded && holes && !strcmp(holes, "1") && !strcmp(unseeded, "1"))
        k->unseeded = 1; /* the negative twin of invariant 5 (tests/system/t_keyframes.sh) */
    /* bench/cadence.sh's anchor: the fixed cadence (every kf_every steps) */
    const char *cad = getenv("REWIND_KF_CADENCE");
    k->fixed = cad && !strcmp(cad, "fixed");
    return 0;
}

unsigned kfcap_shift(uint64_t step, int have_prev, uint64_t prev, uint64_t npages)
{
    uint64_t s = have_prev && prev < step ? step - prev : step;
    if (s == 0)
        s = 1; /* the boot keyframe, before step 1 */
    unsigned shift = 0;
    /* halve while the stretch cost (s + npages) is 2^(shift+1) times its steps */
    while (shift < KFCAP_SHIFT_MAX && s + npages >= s << (shift + 1))
        shift++;
    return shift;
}

/* Would some shift take a keyframe at step? */
static int maybe_due(uint64_t every, uint64_t step)
{
    for (unsigned sh = 0; sh <= KFCAP_SHIFT_MAX; sh++) {
        uint64_t n = every >> sh;
        if (step % (n ? n : 1) == 0)
            return 1;
    }
    return 0;
}

static void cadence_after(struct kfcap *k, uint64_t step, int have_prev, uint64_t prev,
                          uint64_t npages);

int kfcap_due(struct kfcap *k, uint64_t every, uint64_t step)
{
    if (k->cad_pending) { /* invariant 6: the shift needs the last capture's names */
        if (!maybe_due(every, step))
            return 0;
        size_t nd = 0;
        char why[512];
        if (kfpipe_wait_named(&k->pipe, &nd, why, sizeof(why)) < 0)
            return 1; /* kfcap_take says why */
        k->cad_pending = 0;
        cadence_after(k, k->last_step, k->cad_have_prev, k->cad_prev, nd);
    }
    RW_ASSERT(k->shift <= KFCAP_SHIFT_MAX);
    uint64_t n = every >> k->shift;
    return step % (n ? n : 1) == 0;
}

/* Invariant 5: the cadence after the keyframe at step naming npages. */
static void cadence_after(struct kfcap *k, uint64_t step, int have_prev, uint64_t prev,
                          uint64_t npages)
{
    k->shift = k->fixed ? 0 : kfcap_shift(step, have_prev, prev, npages);
    k->have_last = 1;
    k->last_step = step;
}

int kfcap_open(struct kfcap *k, const char *path, const char *parent, uint64_t parent_upto,
               char *err, size_t errlen)
{
    RW_FAILPOINT("kfcap.create");
    if (kf_create(&k->w, path, parent, parent_upto) < 0)
        return fail(err, errlen, "cannot create %s: %s", path, strerror(errno));
    struct kfpipe *q = &k->pipe;
    q->store = k->store;
    q->memo = &k->memo;
    q->w = &k->w;
    q->cur = k->cur;
    q->npfn = k->npfn;
    q->timed = k->timed;
    q->zcctx = k->zcctx;
    q->kill_at = k->kill_at;
    if (kfpipe_start(q, k->threaded, k->budget, err, errlen) < 0) {
        kf_close(&k->w);
        return -1;
    }
    k->cad_pending = 0;
    k->writing = 1;
    return 0;
}

/* kfpipe_dropped's callback: the page's cur[] may be stale (invariant 1). */
static void redirty(void *ctx, uint64_t pfn)
{
    struct kfcap *k = ctx;
    RW_ASSERT(pfn < k->npfn);
    k->vm->dirty[pfn / 64] |= 1ull << (pfn % 64);
    /* its name in cur[] was taken when the batch was named, but no record
     * holds it: a name no page has (all 0xff) makes the next capture or
     * restore take the page as changed (invariant 1) */
    memset(&k->cur[pfn], 0xff, sizeof(k->cur[pfn]));
}

static void take_figures(struct kfcap *k)
{
    struct kfpipe_figs f;
    kfpipe_figures(&k->pipe, &f);
    k->taken = f.appended;
    k->delta_pages = f.delta_pages;
    k->dirty_pages = f.dirty_pages;
    k->anchor_s = f.anchor_s;
    k->work_s = f.work_s;
    k->waits = f.waits;
    k->file_bytes = f.file_bytes;
}

int kfcap_sync(struct kfcap *k, char *err, size_t errlen)
{
    if (!k->pipe.running)
        return 0;
    double t0 = now_s();
    int rc = kfpipe_drain(&k->pipe, err, errlen);
    kfpipe_dropped(&k->pipe, redirty, k);
    if (rc == 0 && k->cad_pending) {
        size_t nd = 0;
        rc = kfpipe_wait_named(&k->pipe, &nd, err, errlen);
        if (rc == 0)
            cadence_after(k, k->last_step, k->cad_have_prev, k->cad_prev, nd);
        k->cad_pending = 0;
    }
    take_figures(k);
    k->capture_s += now_s() - t0;
    return rc;
}

void kfcap_disk(struct kfcap *k, uint64_t *known, uint64_t *unsure)
{
    struct kfpipe_figs f;
    kfpipe_figures(&k->pipe, &f);
    *known = f.store_bytes + f.file_bytes;
    *unsure = f.unsure;
}

/* Stop the worker (cancel: drop what is in flight) and close the file. */
static int stop_pipe(struct kfcap *k, int cancel)
{
    int failed = kfpipe_stop(&k->pipe, cancel, redirty, k);
    k->cad_pending = 0;
    take_figures(k);
    int rc = k->writing ? kf_close(&k->w) : 0;
    if (failed < 0 && !cancel)
        rc = -1; /* the last captures were dropped: no silent loss */
    k->writing = 0;
    return rc;
}

void kfcap_stop(struct kfcap *k)
{
    (void)stop_pipe(k, 1);
}

void kfcap_abort(struct kfcap *k)
{
    (void)stop_pipe(k, 1);
}

/* Copy the capture's pages into the pipe, batch by batch (kfpipe.h
 * invariant 1: the batches the synchronous capture stored). 0 or -1. */
static int hand_over(struct kfcap *k, size_t ndirty, char *err, size_t errlen)
{
    for (size_t first = 0; first < ndirty; first += KFPIPE_BATCH) {
        size_t n = ndirty - first < KFPIPE_BATCH ? ndirty - first : KFPIPE_BATCH;
        uint8_t *dst = kfpipe_batch(&k->pipe); /* waits while the budget is used up */
        for (size_t i = 0; i < n; i++)
            memcpy(dst + i * 4096, k->vm->ram + k->pfns[first + i] * 4096, 4096);
        if (kfpipe_push(&k->pipe, n, err, errlen) < 0)
            return -1;
    }
    return kfpipe_end(&k->pipe, err, errlen);
}

int kfcap_put(struct kfcap *k, uint64_t step, const void *state, uint32_t len, char *err,
              size_t errlen)
{
    RW_ASSERT(k->writing && k->pipe.running);
    double t0 = now_s();
    if (kvm_collect_dirty(k->vm) < 0)
        return fail(err, errlen, "KVM_GET_DIRTY_LOG: %s", strerror(errno));
    uint64_t *dirty = k->vm->dirty;
    size_t ndirty = 0;
    for (uint64_t pfn = 0; pfn < k->npfn; pfn++)
        if (dirty[pfn / 64] >> (pfn % 64) & 1)
            k->pfns[ndirty++] = pfn;
    /* a booted run's first keyframe looks in the memo's boot frame */
    int slot = k->have_last ? KFMEMO_LATER : KFMEMO_BOOT;
    int rc = kfpipe_begin(&k->pipe, step, state, len, k->pfns, ndirty, slot, err, errlen);
    if (rc == 0)
        rc = hand_over(k, ndirty, err, errlen);
    if (rc < 0) { /* on failure the pages stay dirty (and those of captures dropped) */
        kfpipe_dropped(&k->pipe, redirty, k);
        return -1;
    }
    /* the pages are copied: from here on cur[] is the pipe's (invariant 6) */
    memset(dirty, 0, (k->npfn + 63) / 64 * sizeof(uint64_t));
    RW_ASSERT(!k->have_last || k->last_step < step); /* keyframe steps increase */
    int have_prev = k->have_last;
    uint64_t prev = k->last_step;
    size_t nd = 0;
    if (!k->threaded || kfmemo_wants(&k->memo, slot, ndirty)) {
        /* the names now, the vCPU still stopped: the memo's frame is this
         * RAM with those names (kfmemo.c invariant 2) */
        if (kfpipe_wait_named(&k->pipe, &nd, err, errlen) < 0) {
            kfpipe_dropped(&k->pipe, redirty, k);
            return -1;
        }
        kfmemo_after(&k->memo, slot, ndirty, step, k->cur, k->vm->ram);
    }
    if (k->threaded && !k->fixed) { /* the shift when kfcap_due needs it */
        k->cad_pending = 1;
        k->cad_have_prev = have_prev;
        k->cad_prev = prev;
        k->have_last = 1;
        k->last_step = step;
    } else {
        cadence_after(k, step, have_prev, prev, nd);
    }
    if (!k->threaded)
        take_figures(k);
    k->capture_s += now_s() - t0;
    return 0;
}

int kfcap_take(struct kfcap *k, struct platform *p, char *err, size_t errlen)
{
    struct snap s; /* ~9 KiB on the stack, not static: the engine is reentrant */
    double t0 = now_s();
    if (snap_capture(p, &s, k->holes, err, errlen) < 0)
        return -1;
    k->capture_s += now_s() - t0;
    return kfcap_put(k, p->step, &s, sizeof(s), err, errlen);
}

int kfcap_restore(struct kfcap *k, struct platform *p, const struct kf_chain *c, size_t link,
                  size_t idx, char *err, size_t errlen)
{
    (void)kfcap_sync(k, NULL, 0); /* invariant 6: cur[] is the pipe's until joined */
    double t0 = now_s();
    hash256 *map = calloc(k->npfn, sizeof(*map));
    if (!map)
        return fail(err, errlen, "out of memory");
    int rc = kf_chain_map(c, link, idx, map, k->npfn, err, errlen);
    double t_map = now_s(), t_get = 0;
    uint64_t got = 0, copied = 0;
    if (rc == 0 && kvm_collect_dirty(k->vm) < 0)
        rc = fail(err, errlen, "KVM_GET_DIRTY_LOG: %s", strerror(errno));
    struct kvm_vm *vm = k->vm;
    for (uint64_t pfn = 0; pfn < k->npfn && rc == 0; pfn++) {
        kfpipe_normalize(&map[pfn]);
        int dirty = !k->keep_dirty && (vm->dirty[pfn / 64] >> (pfn % 64) & 1);
        if (!dirty && !memcmp(&map[pfn], &k->cur[pfn], sizeof(hash256)))
            continue;
        uint8_t *dst = vm->ram + pfn * 4096;
        if (kfpipe_is_absent(&map[pfn])) {
            memset(dst, 0, 4096);
        } else if (k->src && k->src->npfn == k->npfn &&
                   !memcmp(&map[pfn], &k->src->map[pfn], sizeof(hash256)) &&
                   (!k->src->sums ||
                    kfcache_sum(k->src->pages + pfn * 4096) == k->src->sums[pfn])) {
            /* invariant 4: the materialized page of that name (kfcache.c 1) */
            memcpy(dst, k->src->pages + pfn * 4096, 4096);
            copied++;
            vm->written[pfn / 64] |= 1ull << (pfn % 64);
        } else if ((got++, t_get -= now_s(), store_load(k->store, &map[pfn], dst) < 0)) {
            char hex[65];
            hash_hex(&map[pfn], hex);
            rc = fail(err, errlen, "page %s of the keyframe is %s in the store", hex,
                      errno == ENOENT ? "missing" : "corrupt");
            break;
        } else {
            t_get += now_s();
            vm->written[pfn / 64] |= 1ull << (pfn % 64);
        }
        k->cur[pfn] = map[pfn];
        k->restored_pages++;
    }
    for (uint64_t pfn = 0; pfn < k->npfn && rc == 0; pfn++) /* invariants 1 and 3 */
        RW_ASSERT(!memcmp(&map[pfn], &k->cur[pfn], sizeof(hash256)));
    free(map);
    if (rc < 0)
        return -1;
    double t_pages = now_s();
    k->last_from_store = got;
    k->last_copied = copied;
    memset(vm->dirty, 0, (k->npfn + 63) / 64 * sizeof(uint64_t));
    void *state = NULL;
    uint32_t len = 0;
    struct kf_file *f = (struct kf_file *)&c->link[link].file;
    if (kf_read_state(f, idx, &state, &len) < 0)
        return fail(err, errlen, "cannot read keyframe %zu of run %s", idx, c->link[link].run);
    if (snap_check(state, len, err, errlen) < 0)
        rc = -1;
    else if (((const struct snap *)state)->plat.step != f->e[idx].step)
        rc = fail(err, errlen, "keyframe %zu of run %s is corrupt (its state is of step %llu)", idx,
                  c->link[link].run, (unsigned long long)((const struct snap *)state)->plat.step);
    else
        rc = snap_restore(p, state, k->holes, err, errlen);
    free(state);
    if (rc == 0) { /* invariant 5: the cadence the capture of this keyframe left */
        int have_prev = 0;
        uint64_t prev = 0;
        if (idx > 0) {
            have_prev = 1, prev = f->e[idx - 1].step;
        } else {
            for (size_t l = link; l-- > 0 && !have_prev;)
                if (c->link[l].count)
                    have_prev = 1, prev = c->link[l].file.e[c->link[l].count - 1].step;
        }
        if (k->unseeded) /* the test hole: as if the run had booted here */
            have_prev = 0, prev = 0;
        cadence_after(k, f->e[idx].step, have_prev, prev, f->e[idx].npages);
    }
    k->restore_s += now_s() - t0;
    if (getenv("REWIND_TIMING")) /* a developer's measurement (ctx.c timing) */
        fprintf(
            stderr,
            "rewind: timing: restore    %.3f s: map %.3f s, pages %.3f s (%llu from the store in "
            "%.3f s, %llu copied), state %.3f s\n",
            now_s() - t0, t_map - t0, t_pages - t_map, (unsigned long long)got, t_get,
            (unsigned long long)copied, now_s() - t_pages);
    return rc;
}

int kfcap_ram_hash(struct kfcap *k, unsigned char out[32])
{
    (void)kfcap_sync(k, NULL, 0); /* invariant 6 */
    if (kvm_collect_dirty(k->vm) < 0)
        return -1;
    hash_ctx *h = hash_new();
    if (!h)
        return -1;
    for (uint64_t pfn = 0; pfn < k->npfn; pfn++) {
        hash256 ph = k->cur[pfn];
        if (k->vm->dirty[pfn / 64] >> (pfn % 64) & 1) {
            hash_buf(k->vm->ram + pfn * 4096, 4096, &ph);
            kfpipe_normalize(&ph);
        }
        if (!kfpipe_is_absent(&ph))
            kvm_ram_hash_add(h, pfn, &ph);
    }
    hash256 r;
    hash_final(h, &r);
    memcpy(out, r.b, 32);
    return 0;
}

long kfcap_audit(struct kfcap *k, FILE *out)
{
    (void)kfcap_sync(k, NULL, 0); /* invariant 6 */
    if (kvm_collect_dirty(k->vm) < 0)
        return -1;
    long stale = 0;
    for (uint64_t pfn = 0; pfn < k->npfn; pfn++) {
        if (k->vm->dirty[pfn / 64] >> (pfn % 64) & 1)
            continue;
        hash256 ph;
        hash_buf(k->vm->ram + pfn * 4096, 4096, &ph);
        kfpipe_normalize(&ph);
        if (!memcmp(&ph, &k->cur[pfn], sizeof(ph))) /* a zero page: both all zero */
            continue;
        if (stale++ < 16 && out)
            fprintf(out, "rewind: audit: page 0x%llx changed but is not dirty\n",
                    (unsigned long long)pfn);
    }
    return stale;
}

void kfcap_begin_run(struct kfcap *k)
{
    RW_ASSERT(!k->writing && !k->pipe.running);
    memset(&k->w, 0, sizeof(k->w));
    k->taken = k->delta_pages = k->file_bytes = k->restored_pages = k->dirty_pages = 0;
    k->waits = 0;
    k->capture_s = k->restore_s = k->anchor_s = k->work_s = 0;
    k->cad_pending = 0;
    k->have_last = 0, k->shift = 0, k->last_step = 0;
}

int kfcap_end_run(struct kfcap *k)
{
    RW_FAILPOINT("kfcap.close");
    return stop_pipe(k, 0); /* the join: every capture stored and appended */
}

void kfcap_free(struct kfcap *k)
{
    kfpipe_stop(&k->pipe, 1, NULL, NULL); /* a no-op after kfcap_end_run */
    kfmemo_close(&k->memo);
    ZSTD_freeCCtx(k->zcctx);
    k->zcctx = NULL;
    free(k->cur);
    free(k->pfns);
    k->cur = NULL;
    k->pfns = NULL;
}

int kfcap_finish(struct kfcap *k)
{
    int rc = kfcap_end_run(k);
    kfcap_free(k);
    return rc;
}

int kfmat_build(struct kfmat *m, const char *home, const char *run, uint64_t step, uint64_t npfn,
                char *err, size_t errlen)
{
    memset(m, 0, sizeof(*m));
    m->fd = -1;
    struct kf_chain ch;
    size_t link, idx;
    if (kf_chain_load(home, run, &ch, err, errlen) < 0)
        return -1;
    int rc = -1;
    struct store *s = NULL;
    char sp[4200];
    if (kf_chain_find(&ch, step, &link, &idx) < 0) {
        fail(err, errlen, "run %s has no keyframe at or before step %llu", run,
             (unsigned long long)step);
        goto out;
    }
    m->step = ch.link[link].file.e[idx].step;
    m->npfn = npfn;
    m->bytes = npfn * 4096;
    m->map = calloc(npfn ? npfn : 1, sizeof(*m->map));
    if (!m->map) {
        fail(err, errlen, "out of memory");
        goto out;
    }
    if (kf_chain_map(&ch, link, idx, m->map, npfn, err, errlen) < 0)
        goto out;
    m->fd = memfd_create("rewind-keyframe", MFD_CLOEXEC);
    if (m->fd < 0 || ftruncate(m->fd, (off_t)m->bytes) < 0) {
        fail(err, errlen, "cannot make the shared keyframe image: %s", strerror(errno));
        goto out;
    }
    uint8_t *pg = mmap(NULL, m->bytes, PROT_READ | PROT_WRITE, MAP_SHARED, m->fd, 0);
    if (pg == MAP_FAILED) {
        fail(err, errlen, "cannot map the shared keyframe image: %s", strerror(errno));
        goto out;
    }
    m->pages = pg;
    if (home_path(sp, sizeof(sp), home, HOME_STORE, NULL, NULL) < 0 ||
        store_open(sp, &s, err, errlen) < 0)
        goto out;
    for (uint64_t pfn = 0; pfn < npfn; pfn++) {
        kfpipe_normalize(&m->map[pfn]);
        if (kfpipe_is_absent(&m->map[pfn]))
            continue;
        if (store_load(s, &m->map[pfn], pg + pfn * 4096) < 0) { /* checked once, here */
            char hex[65];
            hash_hex(&m->map[pfn], hex);
            fail(err, errlen, "page %s of the keyframe is %s in the store", hex,
                 errno == ENOENT ? "missing" : "corrupt");
            goto out;
        }
        m->npages++;
    }
    /* invariant 4: from now on nobody writes it */
    if (mprotect(pg, m->bytes, PROT_READ) < 0) {
        fail(err, errlen, "mprotect: %s", strerror(errno));
        goto out;
    }
    rc = 0;
out:
    store_close(s);
    kf_chain_free(&ch);
    if (rc < 0)
        kfmat_free(m);
    return rc;
}

void kfmat_free(struct kfmat *m)
{
    if (m->file) {
        kfcache_unmap(m);
        return;
    }
    if (m->pages)
        munmap(m->pages, m->bytes);
    if (m->fd >= 0)
        close(m->fd);
    free(m->map);
    memset(m, 0, sizeof(*m));
    m->fd = -1;
}
