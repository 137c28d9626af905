/*
 * kfpipe: see kfpipe.h.
 *
 * One unit of work at a time, in this order of preference: name the oldest
 * batch not yet named, store the oldest named batch, append the oldest
 * capture whose batches are all stored (invariants 1 to 3). The worker
 * thread loops over work_one; the synchronous pipe calls it after each
 * hand-over until nothing is left, so both run the very same steps. Only
 * the one doing the work (the worker, or the synchronous caller) moves
 * bnamed, bstored and jtail; only the owner moves bhead and jhead.
 */
#include "run/kfpipe.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <zstd.h>

#include "util/check.h"
#include "util/fail.h"
#include "util/failpoint.h"

#define PAGE 4096
#define REC_BOUND 64 /* a keyframes record's header, and more (keyframe.h's format) */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void free_job(struct kfpipe_job *j)
{
    free(j->state);
    free(j->pfns);
    free(j->delta);
    memset(j, 0, sizeof(*j));
}

static void *worker(void *arg);

int kfpipe_start(struct kfpipe *q, int threaded, unsigned nslot, char *err, size_t errlen)
{
    RW_ASSERT(!q->running && q->store && q->w && q->cur && q->memo);
    q->threaded = threaded;
    q->nslot = nslot ? nslot : 1;
    q->jhead = q->jtail = q->bhead = q->bnamed = q->bstored = 0;
    q->stop = q->cancel = q->failed = 0;
    q->err[0] = 0;
    memset(&q->figs, 0, sizeof(q->figs));
    memset(q->jobs, 0, sizeof(q->jobs));
    struct store_stats st;
    store_stats(q->store, &st);
    q->figs.store_bytes = st.bytes_written;
    q->figs.file_bytes = q->w->bytes;
    q->pages = malloc((size_t)q->nslot * KFPIPE_BATCH * PAGE);
    q->slot = calloc(q->nslot, sizeof(*q->slot));
    if (!q->pages || !q->slot) {
        free(q->pages);
        free(q->slot);
        q->pages = NULL;
        q->slot = NULL;
        return util_fail(err, errlen, "out of memory for the keyframe pipe");
    }
    pthread_mutex_init(&q->mu, NULL);
    pthread_cond_init(&q->work, NULL);
    pthread_cond_init(&q->done, NULL);
    q->running = 1;
    /* The worker takes no signal: SIGALRM, SIGINT and SIGTERM must reach a
     * thread whose handler's kick (rw_interrupt) ends a KVM_RUN at once,
     * and the vCPU's thread is one; a worker blocks all of them for life
     * (it inherits the mask it is created with). */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    q->thr_started = threaded && pthread_create(&q->thr, NULL, worker, q) == 0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    q->threaded = q->thr_started; /* no thread: the caller does the work (the same steps) */
    return 0;
}

/* All-zero bytes stand for the zero page in cur[] (kfcap.h invariant 1). */
void kfpipe_normalize(hash256 *h)
{
    if (store_is_zero_hash(h))
        memset(h, 0, sizeof(*h));
}

int kfpipe_is_absent(const hash256 *h)
{
    static const hash256 none;
    return !memcmp(h, &none, sizeof(*h));
}

/* Name the batch at b (the memo's names, SHA-256 for the rest) and take its
 * changed pages into its capture's delta and cur[] (invariant 3). */
static void name_batch(struct kfpipe *q, uint64_t b)
{
    struct kfpipe_slot *s = &q->slot[b % q->nslot];
    struct kfpipe_job *j = &q->jobs[s->job];
    const uint8_t *pages = q->pages + (b % q->nslot) * KFPIPE_BATCH * PAGE;
    const uint64_t *pfns = j->pfns + s->first;
    uint8_t known[KFPIPE_BATCH];
    (void)kfmemo_names(q->memo, j->memo_slot, pages, pfns, s->n, s->names, known);
    for (size_t i = 0; i < s->n; i++) {
        if (!known[i])
            store_hash_page(q->store, pages + i * PAGE, &s->names[i]);
        hash256 h = s->names[i];
        kfpipe_normalize(&h);
        if (!memcmp(&h, &q->cur[pfns[i]], sizeof(h)))
            continue;
        q->cur[pfns[i]] = h;
        j->delta[j->nd].pfn = pfns[i];
        if (kfpipe_is_absent(&h))
            store_zero_hash(&h);
        j->delta[j->nd].hash = h;
        j->nd++;
    }
    RW_ASSERT(j->nd <= j->npages);
}

/* Store the named batch at b whole (invariant 1); *anchor_s: REWIND_TIMING's
 * anchor of it. 0 or -1. */
static int store_batch(struct kfpipe *q, uint64_t b, double *anchor_s)
{
    struct kfpipe_slot *s = &q->slot[b % q->nslot];
    const uint8_t *pages = q->pages + (b % q->nslot) * KFPIPE_BATCH * PAGE;
    if (q->slow_us)
        usleep(q->slow_us);
    if (q->timed) { /* the anchor: hash + zstd -1 of the same pages, nothing else */
        uint8_t out[PAGE + 512];
        hash256 h;
        double a = now_s();
        for (size_t i = 0; i < s->n; i++) {
            hash_buf(pages + i * PAGE, PAGE, &h);
            ZSTD_compressCCtx(q->zcctx, out, sizeof(out), pages + i * PAGE, PAGE, 1);
        }
        *anchor_s = now_s() - a;
    }
    uint8_t all[KFPIPE_BATCH]; /* every name is known: name_batch computed them */
    memset(all, 1, sizeof(all));
    RW_FAILPOINT("kfcap.store_put");
    return store_put_batch_named(q->store, pages, s->n, s->names, all);
}

/* Append the record of the capture at jtail, all its pages stored
 * (invariant 2). 0 or -1. */
static int append_job(struct kfpipe *q, struct kfpipe_job *j)
{
    RW_ASSERT(j->stored == j->nbatch && j->named == j->nbatch && j->pushed == j->nbatch);
    if (q->kill_at && q->figs.appended + 1 == q->kill_at && q->w->f) {
        /* Test hook: die with a torn record on disk (half a header). */
        fwrite(j->state, 1, 12, q->w->f);
        fflush(q->w->f);
        kill(getpid(), SIGKILL);
    }
    RW_FAILPOINT("kfcap.append");
    return kf_append(q->w, j->step, j->state, j->state_len, j->delta, (uint32_t)j->nd);
}

/* With the lock: drop every capture in flight (invariant 5). */
static void drop_locked(struct kfpipe *q)
{
    for (uint64_t k = q->jtail; k < q->jhead; k++)
        q->jobs[k % KFPIPE_JOBS].dropped = 1;
    q->jtail = q->jhead;
    q->bnamed = q->bstored = q->bhead;
    pthread_cond_broadcast(&q->done);
}

static void fail_locked(struct kfpipe *q, uint64_t step, const char *what)
{
    if (!q->failed)
        snprintf(q->err, sizeof(q->err), "the keyframe at step %llu: %s: %s",
                 (unsigned long long)step, what, strerror(errno ? errno : EIO));
    q->failed = 1;
    drop_locked(q);
}

/* With the lock held: do one unit of work (the lock is let go while it
 * runs). 1 if there was one, 0 if nothing is left to do now. */
static int work_one(struct kfpipe *q)
{
    if (q->failed || q->cancel) {
        if (q->jtail < q->jhead || q->bstored < q->bhead)
            drop_locked(q);
        return 0;
    }
    double t0 = now_s();
    if (q->bnamed < q->bhead) {
        uint64_t b = q->bnamed;
        pthread_mutex_unlock(&q->mu);
        name_batch(q, b);
        pthread_mutex_lock(&q->mu);
        q->jobs[q->slot[b % q->nslot].job].named++;
        q->bnamed++;
    } else if (q->bstored < q->bnamed) {
        uint64_t b = q->bstored;
        pthread_mutex_unlock(&q->mu);
        double anchor = 0;
        int rc = store_batch(q, b, &anchor);
        int e = errno;
        struct store_stats st;
        store_stats(q->store, &st);
        pthread_mutex_lock(&q->mu);
        q->figs.anchor_s += anchor;
        errno = e;
        if (rc < 0) {
            fail_locked(q, q->jobs[q->slot[b % q->nslot].job].step,
                        "cannot write pages to the store");
            return 1;
        }
        q->jobs[q->slot[b % q->nslot].job].stored++;
        q->bstored++;
        q->figs.store_bytes = st.bytes_written;
    } else {
        struct kfpipe_job *j = &q->jobs[q->jtail % KFPIPE_JOBS];
        if (q->jtail == q->jhead || j->pushed < j->nbatch || j->stored < j->nbatch || !j->ended)
            return 0;
        pthread_mutex_unlock(&q->mu);
        int rc = append_job(q, j);
        int e = errno;
        pthread_mutex_lock(&q->mu);
        errno = e;
        if (rc < 0) {
            fail_locked(q, j->step, "cannot write a keyframe");
            return 1;
        }
        q->figs.appended++;
        q->figs.delta_pages += j->nd;
        q->figs.file_bytes = q->w->bytes;
        q->jtail++;
    }
    q->figs.work_s += now_s() - t0;
    pthread_cond_broadcast(&q->done);
    return 1;
}

static void *worker(void *arg)
{
    struct kfpipe *q = arg;
    pthread_mutex_lock(&q->mu);
    for (;;) {
        if (work_one(q))
            continue;
        if (q->stop)
            break;
        pthread_cond_wait(&q->work, &q->mu);
    }
    pthread_mutex_unlock(&q->mu);
    return NULL;
}

/* With the lock: the caller's share after a hand-over (threaded: wake the
 * worker; synchronous: do everything now). */
static void kick_locked(struct kfpipe *q)
{
    if (q->thr_started)
        pthread_cond_signal(&q->work);
    else
        while (work_one(q))
            ;
}

static int failed_locked(struct kfpipe *q, char *err, size_t errlen)
{
    util_fail(err, errlen, "%s", q->err);
    pthread_mutex_unlock(&q->mu);
    return -1;
}

int kfpipe_begin(struct kfpipe *q, uint64_t step, const void *state, uint32_t len,
                 const uint64_t *pfns, size_t npages, int memo_slot, char *err, size_t errlen)
{
    RW_ASSERT(q->running);
    pthread_mutex_lock(&q->mu);
    while (!q->failed && q->jhead - q->jtail >= KFPIPE_JOBS) {
        q->figs.waits++;
        pthread_cond_wait(&q->done, &q->mu);
    }
    if (q->failed)
        return failed_locked(q, err, errlen);
    struct kfpipe_job *j = &q->jobs[q->jhead % KFPIPE_JOBS];
    pthread_mutex_unlock(&q->mu);
    free_job(j); /* done with: appended (or dropped and listed) */
    j->step = step;
    j->state = malloc(len ? len : 1);
    j->pfns = malloc((npages ? npages : 1) * sizeof(*pfns));
    j->delta = malloc((npages ? npages : 1) * sizeof(*j->delta));
    if (!j->state || !j->pfns || !j->delta) {
        free_job(j);
        return util_fail(err, errlen, "out of memory");
    }
    memcpy(j->state, state, len);
    j->state_len = len;
    if (npages)
        memcpy(j->pfns, pfns, npages * sizeof(*pfns));
    j->npages = npages;
    j->nbatch = (npages + KFPIPE_BATCH - 1) / KFPIPE_BATCH;
    j->memo_slot = memo_slot;
    pthread_mutex_lock(&q->mu);
    q->jhead++;
    q->figs.dirty_pages += npages;
    q->figs.memo_tries += npages;
    pthread_mutex_unlock(&q->mu);
    return 0;
}

uint8_t *kfpipe_batch(struct kfpipe *q)
{
    pthread_mutex_lock(&q->mu);
    while (q->bhead - q->bstored >= q->nslot) { /* invariant 4 */
        q->figs.waits++;
        pthread_cond_wait(&q->done, &q->mu);
    }
    uint64_t b = q->bhead;
    pthread_mutex_unlock(&q->mu);
    return q->pages + (b % q->nslot) * KFPIPE_BATCH * PAGE;
}

int kfpipe_push(struct kfpipe *q, size_t n, char *err, size_t errlen)
{
    pthread_mutex_lock(&q->mu);
    if (q->failed)
        return failed_locked(q, err, errlen);
    RW_ASSERT(q->jhead > q->jtail && q->bhead - q->bstored < q->nslot);
    size_t ji = (q->jhead - 1) % KFPIPE_JOBS;
    struct kfpipe_job *j = &q->jobs[ji];
    struct kfpipe_slot *s = &q->slot[q->bhead % q->nslot];
    RW_ASSERT(j->pushed < j->nbatch && n == (j->npages - j->pushed * KFPIPE_BATCH < KFPIPE_BATCH
                                                 ? j->npages - j->pushed * KFPIPE_BATCH
                                                 : KFPIPE_BATCH));
    s->job = ji;
    s->first = j->pushed * KFPIPE_BATCH;
    s->n = n;
    j->pushed++;
    q->bhead++;
    kick_locked(q);
    if (q->failed)
        return failed_locked(q, err, errlen);
    pthread_mutex_unlock(&q->mu);
    return 0;
}

int kfpipe_end(struct kfpipe *q, char *err, size_t errlen)
{
    pthread_mutex_lock(&q->mu);
    if (q->failed)
        return failed_locked(q, err, errlen);
    struct kfpipe_job *j = &q->jobs[(q->jhead - 1) % KFPIPE_JOBS];
    RW_ASSERT(j->pushed == j->nbatch);
    j->ended = 1;
    kick_locked(q);
    if (q->failed)
        return failed_locked(q, err, errlen);
    pthread_mutex_unlock(&q->mu);
    return 0;
}

int kfpipe_wait_named(struct kfpipe *q, size_t *nd, char *err, size_t errlen)
{
    pthread_mutex_lock(&q->mu);
    while (!q->failed && q->bnamed < q->bhead)
        pthread_cond_wait(&q->done, &q->mu);
    if (q->failed)
        return failed_locked(q, err, errlen);
    RW_ASSERT(q->jhead > 0);
    const struct kfpipe_job *j = &q->jobs[(q->jhead - 1) % KFPIPE_JOBS];
    RW_ASSERT(j->named == j->nbatch); /* invariant 3 */
    *nd = j->nd;
    pthread_mutex_unlock(&q->mu);
    return 0;
}

int kfpipe_drain(struct kfpipe *q, char *err, size_t errlen)
{
    if (!q->running)
        return 0;
    pthread_mutex_lock(&q->mu);
    kick_locked(q);
    while (!q->failed && q->jtail < q->jhead)
        pthread_cond_wait(&q->done, &q->mu);
    if (q->failed)
        return failed_locked(q, err, errlen);
    RW_ASSERT(q->bstored == q->bhead);
    pthread_mutex_unlock(&q->mu);
    return 0;
}

void kfpipe_dropped(struct kfpipe *q, void (*fn)(void *ctx, uint64_t pfn), void *ctx)
{
    if (!q->running)
        return;
    pthread_mutex_lock(&q->mu);
    for (size_t k = 0; k < KFPIPE_JOBS; k++) {
        struct kfpipe_job *j = &q->jobs[k];
        if (!j->dropped)
            continue;
        for (size_t i = 0; i < j->npages; i++)
            fn(ctx, j->pfns[i]);
        j->dropped = 0;
    }
    pthread_mutex_unlock(&q->mu);
}

void kfpipe_figures(struct kfpipe *q, struct kfpipe_figs *out)
{
    if (!q->running) {
        *out = q->figs;
        return;
    }
    pthread_mutex_lock(&q->mu);
    *out = q->figs;
    uint64_t unsure = 0;
    for (uint64_t k = q->jtail; k < q->jhead; k++) {
        const struct kfpipe_job *j = &q->jobs[k % KFPIPE_JOBS];
        size_t stored = j->stored * KFPIPE_BATCH < j->npages ? j->stored * KFPIPE_BATCH : j->npages;
        unsure += (uint64_t)(j->npages - stored) * PAGE; /* a stored page is at most a page */
        unsure += REC_BOUND + j->state_len + 8 + (uint64_t)j->npages * sizeof(struct kf_page);
    }
    out->unsure = unsure;
    pthread_mutex_unlock(&q->mu);
}

int kfpipe_stop(struct kfpipe *q, int cancel, void (*dropped)(void *ctx, uint64_t pfn), void *ctx)
{
    if (!q->running)
        return 0;
    pthread_mutex_lock(&q->mu);
    q->cancel = cancel;
    q->stop = 1;
    kick_locked(q);
    pthread_mutex_unlock(&q->mu);
    if (q->thr_started)
        pthread_join(q->thr, NULL);
    q->thr_started = 0;
    pthread_mutex_lock(&q->mu);
    if (q->jtail < q->jhead || q->bstored < q->bhead) /* a capture never ended */
        drop_locked(q);
    pthread_mutex_unlock(&q->mu);
    RW_ASSERT(q->jtail == q->jhead && q->bstored == q->bhead); /* drained or dropped */
    if (dropped)
        kfpipe_dropped(q, dropped, ctx);
    for (size_t k = 0; k < KFPIPE_JOBS; k++)
        free_job(&q->jobs[k]);
    pthread_mutex_destroy(&q->mu);
    pthread_cond_destroy(&q->work);
    pthread_cond_destroy(&q->done);
    free(q->pages);
    free(q->slot);
    q->pages = NULL;
    q->slot = NULL;
    q->running = 0;
    return q->failed ? -1 : 0;
}
