/*
 * kfpipe: a keyframe capture's pages from the copy to the store, on a
 * worker thread (src/run/kfcap.c hands them over; docs/architecture.md,
 * "Trace and keyframes").
 *
 * A capture (struct kfcap's kfcap_take) stops the vCPU, copies the dirty
 * pages into batches of this pipe and lets the guest run on; the pipe names
 * each page (the memo, src/run/kfmemo.c, or SHA-256), works out which pages
 * changed since the last keyframe (cur[]), stores the new ones (zstd,
 * store_put_batch_named) and appends the keyframe's record once all its
 * pages are stored. Threaded, one worker thread does this while the guest
 * runs; synchronous (REWIND_KF_SYNC=1, or kfpipe_start's threaded 0), the
 * caller's thread does each step as it hands a batch over: the same code in
 * the same order, so the two leave the same store and the same keyframes
 * file (tests/engine/kfpipe_test.c compares them byte for byte).
 *
 * Memory is a fixed budget of batches (KFPIPE_BATCH pages each, 1 MiB):
 * when every batch is taken, kfpipe_batch waits for the worker to store
 * one. At most KFPIPE_JOBS captures are in flight; kfpipe_begin waits too.
 *
 * Who may touch what: between kfpipe_start and kfpipe_stop the worker owns
 * the store handle, the keyframes writer, cur[] and the memo's counters;
 * the owner's thread touches them only after kfpipe_drain (or kfpipe_stop)
 * returned. The owner reads the figures (struct kfpipe_figs) under the
 * pipe's lock (kfpipe_figures).
 *
 * Invariants:
 *  1. Batches are named, stored and their captures' records appended in the
 *     order they were handed over, each batch given to the store whole as
 *     one store_put_batch_named call: the store's packs and index and the
 *     keyframes file are those of the synchronous capture.
 *  2. A record is appended only after every page it names is in the store
 *     (kfcap.h invariant 2), on the worker too: a process killed at any
 *     point leaves a keyframes file whose whole records name stored pages.
 *  3. Naming runs ahead of storing (a batch is named as soon as it is handed
 *     over; compression waits), so a capture's record, its changed pages'
 *     count and cur[] are known well before its pages are stored:
 *     kfpipe_wait_named waits for the hashes only.
 *  4. The pipe never holds more than nslot batches of pages: kfpipe_batch
 *     waits while all are in use, and a batch is free again only once
 *     stored (or dropped).
 *  5. After a failure (or kfpipe_stop's cancel) no later record is
 *     appended: the captures still in flight are dropped whole, their pages
 *     listed to the owner (kfpipe_dropped) so it can mark them dirty again
 *     (kfcap.h invariant 1: cur[] of a dropped page may be stale).
 */
#ifndef REWIND_RUN_KFPIPE_H
#define REWIND_RUN_KFPIPE_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "run/kfmemo.h"
#include "store/store.h"
#include "trace/keyframe.h"
#include "util/hash.h"

#define KFPIPE_BATCH 256 /* pages per batch: one store_put_batch_named call (STORE_BATCH) */
#define KFPIPE_JOBS 16   /* captures in flight at most */
#define KFPIPE_BUDGET_MIB 64

/* One capture in flight. */
struct kfpipe_job {
    uint64_t step;
    void *state;
    uint32_t state_len;
    uint64_t *pfns; /* the capture's dirty pages, in order */
    size_t npages;  /* of pfns */
    struct kf_page *delta;
    size_t nd;                    /* of delta: pages whose name changed */
    size_t nbatch, named, stored; /* batches: all, named, stored */
    size_t pushed;                /* batches handed over */
    int ended;                    /* kfpipe_end: no more batches */
    int memo_slot;
    int dropped; /* after a failure or a cancel: never appended */
};

struct kfpipe_slot {
    size_t job;   /* index into jobs */
    size_t first; /* of the job's pfns */
    size_t n;     /* pages */
    hash256 names[KFPIPE_BATCH];
};

/* What the worker did, read under the lock. */
struct kfpipe_figs {
    uint64_t appended;       /* records appended */
    uint64_t delta_pages;    /* pages those records name */
    uint64_t dirty_pages;    /* pages handed over */
    uint64_t store_bytes;    /* the store handle's bytes_written after the last batch stored */
    uint64_t file_bytes;     /* the keyframes file's bytes after the last record */
    uint64_t unsure;         /* at most this many bytes more to come from captures in flight */
    uint64_t memo_tries;     /* pages looked up in the memo */
    double anchor_s, work_s; /* REWIND_TIMING's anchor; the worker's time */
    uint64_t waits;          /* times kfpipe_batch or kfpipe_begin waited for room */
};

struct kfpipe {
    /* set by the owner before kfpipe_start */
    struct store *store;
    struct kfmemo *memo;
    struct kf_writer *w;
    hash256 *cur;
    uint64_t npfn;
    int timed;        /* REWIND_TIMING: the anchor per batch */
    void *zcctx;      /* its ZSTD_CCtx */
    uint64_t kill_at; /* tests: die in the middle of writing record number kill_at */
    unsigned slow_us; /* tests: the worker sleeps this long before storing a batch */
    /* the pipe */
    int threaded, running, thr_started;
    unsigned nslot;
    uint8_t *pages; /* nslot * KFPIPE_BATCH pages */
    struct kfpipe_slot *slot;
    struct kfpipe_job jobs[KFPIPE_JOBS];
    uint64_t jhead, jtail;           /* captures begun; captures done (appended or dropped) */
    uint64_t bhead, bnamed, bstored; /* batches handed over, named, stored (or dropped) */
    int stop, cancel, failed;
    char err[512];
    struct kfpipe_figs figs;
    pthread_mutex_t mu;
    pthread_cond_t work, done;
    pthread_t thr;
};

/* Start the pipe (the fields above it set): threaded or not, with a budget
 * of nslot batches (at least 1). 0 or -1 + err. */
int kfpipe_start(struct kfpipe *q, int threaded, unsigned nslot, char *err, size_t errlen);
/* Begin a capture at step with its machine state (copied) and npages dirty
 * pages (pfns copied); waits while KFPIPE_JOBS are in flight. 0, or -1 + err
 * (out of memory, or the pipe failed: err says why). */
int kfpipe_begin(struct kfpipe *q, uint64_t step, const void *state, uint32_t len,
                 const uint64_t *pfns, size_t npages, int memo_slot, char *err, size_t errlen);
/* Room for the current capture's next batch of n pages (n <= KFPIPE_BATCH):
 * the caller copies pfns[first..first+n) of the capture there, then calls
 * kfpipe_push. Waits while the budget is used up (invariant 4). */
uint8_t *kfpipe_batch(struct kfpipe *q);
/* Hand the batch over (synchronous: named and stored now). 0 or -1 + err. */
int kfpipe_push(struct kfpipe *q, size_t n, char *err, size_t errlen);
/* The capture's pages are all handed over (synchronous: its record is
 * appended now). 0 or -1 + err. */
int kfpipe_end(struct kfpipe *q, char *err, size_t errlen);
/* Wait until every capture begun is named (invariant 3): *nd is the number
 * of pages the last one's record names. 0, or -1 + err if the pipe failed. */
int kfpipe_wait_named(struct kfpipe *q, size_t *nd, char *err, size_t errlen);
/* Wait until every capture begun is stored and appended, or dropped after a
 * failure. 0, or -1 + err if the pipe failed (now or before). */
int kfpipe_drain(struct kfpipe *q, char *err, size_t errlen);
/* Call fn for every page of every dropped capture, then forget them. */
void kfpipe_dropped(struct kfpipe *q, void (*fn)(void *ctx, uint64_t pfn), void *ctx);
/* All-zero bytes stand for the zero page in cur[] and in maps (kfcap.h
 * invariant 1): h becomes them if it names the zero page. */
void kfpipe_normalize(hash256 *h);
/* h is all zero: no page, or the zero page. */
int kfpipe_is_absent(const hash256 *h);
/* A copy of the figures. */
void kfpipe_figures(struct kfpipe *q, struct kfpipe_figs *out);
/* Stop the worker: with cancel, drop what is not stored yet (records whole
 * or absent); otherwise drain first. Then dropped (may be NULL) is called
 * as by kfpipe_dropped, and the pipe's memory freed. Safe on a pipe never
 * started. 0, or -1 if the pipe failed (now or before): what it dropped is
 * lost, and the caller must say so. */
int kfpipe_stop(struct kfpipe *q, int cancel, void (*dropped)(void *ctx, uint64_t pfn), void *ctx);

#endif
