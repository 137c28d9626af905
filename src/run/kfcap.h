/*
 * kfcap: taking keyframes of a running VM and restoring one into a VM.
 *
 * A keyframe is the snapshot (src/vmm/snapshot.h) plus the pages that
 * changed since the previous keyframe: KVM's dirty log (and the monitor's
 * own writes, kvm_gpa_w) say which pages were written; each is named by
 * hash and put in the page store, and only those whose hash differs from
 * the last one kept for that page enter the record.
 *
 * Invariants:
 *  1. cur[pfn] is the hash of page pfn as of the last capture or restore
 *     (all-zero bytes for the zero page); a page not in vm->dirty still has
 *     that content.
 *  2. A keyframe record is appended only after all its pages are in the
 *     store, so a reader never meets a record whose pages are missing.
 *  3. Restore rewrites exactly the pages whose content may differ from the
 *     target (dirty since the last capture, or a different hash) and then
 *     clears the dirty set: in-place restores cost what changed.
 *  4. A materialized keyframe (struct kfmat) holds, for every page of one
 *     keyframe, the bytes store_get returned for its name (verified once,
 *     when it was built) and is read-only after that: a restore may copy a
 *     page from it instead of the store only when the names are equal.
 *  5. The cadence (kfcap_every) after a keyframe is a function of that
 *     keyframe's record and its predecessor's in the chain only (their steps
 *     and the number of pages the record names), never of wall time: a
 *     capture and a restore of the same keyframe leave the same cadence, so
 *     a replay or fork from a keyframe takes its next keyframes where the run
 *     from boot did. The rule: a stretch of s steps whose keyframe named n
 *     changed pages cost about s + n step-units (a changed page costs about
 *     what a step costs to replay: bench/RESULTS.md, "Adaptive cadence");
 *     the next keyframes come every `every >> shift` steps (at multiples of
 *     it), shift = floor(log2((s + n) / s)), at most KFCAP_SHIFT_MAX: a
 *     stretch that changed pages as fast as it ran steps halves the next
 *     stretch, so a stretch costs about `every` step-units to replay.
 */
#ifndef REWIND_RUN_KFCAP_H
#define REWIND_RUN_KFCAP_H

#include <stddef.h>
#include <stdint.h>

#include "store/store.h"
#include "vmm/platform.h"
#include "vmm/snapshot.h"
#include "trace/keyframe.h"
#include "run/kfmemo.h"

/* One keyframe's RAM, materialized once into a shared memfd mapping that
 * forked workers inherit read-only (invariant 4). */
struct kfmat {
    int fd;
    uint8_t *pages; /* npfn pages (zero where map[pfn] is absent) */
    hash256 *map;   /* the keyframe's page names, all-zero bytes for the zero page */
    uint64_t npfn, bytes, npages, step;
    /* a file of kfcache.c mapped whole (pages, map and sums point into it),
     * or NULL (built by kfmat_build) */
    uint8_t *file;
    uint64_t file_bytes;
    const uint64_t *sums; /* kfcache_sum of each page, checked before a copy; or NULL */
};

/* Materialize run's keyframe at or before step for a RAM of npfn pages.
 * 0 or -1 + err. */
int kfmat_build(struct kfmat *m, const char *home, const char *run, uint64_t step, uint64_t npfn,
                char *err, size_t errlen);
void kfmat_free(struct kfmat *m);

struct kfcap {
    const struct kfmat *src; /* or NULL: pages to copy instead of reading the store */
    struct kvm_vm *vm;
    struct store *store;
    hash256 *cur;
    uint64_t npfn;
    struct kf_writer w;
    int writing;
    uint8_t *batch;   /* KFCAP_BATCH pages */
    unsigned holes;   /* SNAP_HOLE_* (tests) */
    uint64_t kill_at; /* tests: die in the middle of writing keyframe number kill_at (1-based) */
    int keep_dirty;   /* tests: restore ignores the dirty log (breaks invariant 3 on purpose) */
    /* the cadence (invariant 5): the last keyframe taken or restored */
    int have_last; /* 0: none yet (a booted run before its first keyframe) */
    uint64_t last_step;
    unsigned shift; /* the cadence is every >> shift steps */
    int unseeded;   /* tests: a restore does not set the cadence (breaks invariant 5) */
    int fixed;      /* REWIND_KF_CADENCE=fixed: shift 0 always (bench/cadence.sh's anchor) */
    /* page names a capture need not compute (kfmemo.c); the frame the
     * current capture looks in and its counts */
    struct kfmemo memo;
    int memo_slot;
    uint64_t memo_tries;
    /* statistics */
    uint64_t taken, delta_pages, file_bytes;
    double capture_s, restore_s;
    uint64_t restored_pages;
    uint64_t last_from_store, last_copied; /* the last restore's pages, by source */
    /* REWIND_TIMING: the anchor of a capture, hashing and compressing the
     * same dirty pages alone (not counted in capture_s) */
    int timed;
    uint64_t dirty_pages;
    double anchor_s;
    void *zcctx;
};

/* Set k up for vm with the page store s. 0 or -1 + err. */
int kfcap_init(struct kfcap *k, struct kvm_vm *vm, struct store *s, char *err, size_t errlen);
/* Start writing keyframes to path (parent: run name or NULL). 0 or -1 + err. */
int kfcap_open(struct kfcap *k, const char *path, const char *parent, uint64_t parent_upto,
               char *err, size_t errlen);
/* Take one keyframe now (at a step, vCPU stopped). 0 or -1 + err. */
int kfcap_take(struct kfcap *k, struct platform *p, char *err, size_t errlen);
/* Restore keyframe (link, idx) of chain c into k's VM and p. 0 or -1 + err. */
int kfcap_restore(struct kfcap *k, struct platform *p, const struct kf_chain *c, size_t link,
                  size_t idx, char *err, size_t errlen);
#define KFCAP_SHIFT_MAX 4
/* The shift after a keyframe at step whose predecessor in the chain is at
 * prev (have_prev 0: none) and whose record names npages (invariant 5). */
unsigned kfcap_shift(uint64_t step, int have_prev, uint64_t prev, uint64_t npages);
/* Take a keyframe at step? Every `every >> shift` steps (at least 1). */
int kfcap_due(const struct kfcap *k, uint64_t every, uint64_t step);

/* kvm_ram_hash of k's VM, hashing only the pages written since the last
 * capture or restore (the others' hashes are in cur[]). 0 or -1. */
int kfcap_ram_hash(struct kfcap *k, unsigned char out[32]);

/* A developer's check (REWIND_AUDIT_DIRTY): pages whose bytes differ from
 * cur[] though the dirty log does not name them, each printed to out (at
 * most 16). The count, or -1. */
long kfcap_audit(struct kfcap *k, FILE *out);

/* A new run on the same machine: zero the statistics (cur[] stays). */
void kfcap_begin_run(struct kfcap *k);
/* Close this run's file (fsync). 0 or -1 (the file could not be written). */
int kfcap_end_run(struct kfcap *k);
/* Free what kfcap_init allocated. */
void kfcap_free(struct kfcap *k);
/* kfcap_end_run, then kfcap_free. 0 or -1 (the file could not be written). */
int kfcap_finish(struct kfcap *k);

#endif
