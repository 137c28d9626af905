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
 *  6. Off the step path (src/run/kfpipe.h): a capture's step-path part is
 *     the machine state, the dirty log and a copy of the dirty pages into
 *     the pipe's fixed budget; naming, compressing, storing and appending
 *     happen on the pipe's worker while the guest runs on. Everything that
 *     reads what a capture produces joins it first (kfcap_sync): cur[]
 *     (kfcap_ram_hash, kfcap_audit, kfcap_restore: they join themselves),
 *     the cadence (kfcap_due joins only at a step where some shift would
 *     take a keyframe, so it answers what the synchronous capture would),
 *     the memo's frame (a capture that would write one waits for its names
 *     while the vCPU is still stopped), the disk cap (ctx.c: the known
 *     bytes plus a bound of what is in flight; the exact count is joined
 *     for only when that bound would pass the cap), the end of the run
 *     (run_settle joins before it syncs the store and closes the file; the
 *     file is published after that) and every error or abort path
 *     (kfcap_end_run / kfcap_abort stop the worker; an abort drops the
 *     captures not yet stored whole, so no record is appended after it).
 *     With REWIND_KF_SYNC=1 the same pipe runs on the caller's thread: the
 *     store and the keyframes file are byte for byte the same either way
 *     (tests/engine/kfpipe_test.c).
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
#include "run/kfpipe.h"

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
    struct kf_writer w; /* the worker's while the pipe runs (kfpipe.h) */
    int writing;
    struct kfpipe pipe; /* invariant 6 */
    int threaded;       /* 0: REWIND_KF_SYNC=1, the pipe on the caller's thread */
    unsigned budget;    /* the pipe's batches (1 MiB each): REWIND_KF_BUDGET_MB */
    uint64_t *pfns;     /* npfn: the dirty pages of a capture */
    /* the cadence of the last capture while its names are not known yet */
    int cad_pending, cad_have_prev;
    uint64_t cad_prev;
    unsigned holes;   /* SNAP_HOLE_* (tests) */
    uint64_t kill_at; /* tests: die in the middle of writing keyframe number kill_at (1-based) */
    int keep_dirty;   /* tests: restore ignores the dirty log (breaks invariant 3 on purpose) */
    /* the cadence (invariant 5): the last keyframe taken or restored */
    int have_last; /* 0: none yet (a booted run before its first keyframe) */
    uint64_t last_step;
    unsigned shift; /* the cadence is every >> shift steps */
    int unseeded;   /* tests: a restore does not set the cadence (breaks invariant 5) */
    int fixed;      /* REWIND_KF_CADENCE=fixed: shift 0 always (bench/cadence.sh's anchor) */
    /* page names a capture need not compute (kfmemo.c) */
    struct kfmemo memo;
    /* statistics */
    uint64_t taken, delta_pages, file_bytes;
    double capture_s, restore_s;
    uint64_t restored_pages;
    uint64_t last_from_store, last_copied; /* the last restore's pages, by source */
    /* REWIND_TIMING: the anchor of a capture, hashing and compressing the
     * same dirty pages alone (on the worker, not counted in capture_s);
     * capture_s is the step path's share (copy, and any wait for the
     * worker), work_s the worker's */
    int timed;
    uint64_t dirty_pages, waits;
    double anchor_s, work_s;
    void *zcctx;
};

/* Set k up for vm with the page store s. 0 or -1 + err. */
int kfcap_init(struct kfcap *k, struct kvm_vm *vm, struct store *s, char *err, size_t errlen);
/* Start writing keyframes to path (parent: run name or NULL). 0 or -1 + err. */
int kfcap_open(struct kfcap *k, const char *path, const char *parent, uint64_t parent_upto,
               char *err, size_t errlen);
/* Take one keyframe now (at a step, vCPU stopped): its pages are copied
 * and handed to the pipe (invariant 6). 0 or -1 + err (this capture or an
 * earlier one in flight failed: keyframes should stop, kfcap_stop). */
int kfcap_take(struct kfcap *k, struct platform *p, char *err, size_t errlen);
/* kfcap_take's part after snap_capture: the keyframe at step with the
 * machine state (len bytes) and the pages the dirty log names (tests drive
 * it with a made-up state). 0 or -1 + err. */
int kfcap_put(struct kfcap *k, uint64_t step, const void *state, uint32_t len, char *err,
              size_t errlen);
/* Join: wait until every capture taken is stored and its record appended,
 * and take the pipe's figures. 0, or -1 + err if a capture failed (its
 * record and those after it are not appended; their pages are marked
 * dirty again: invariant 1 holds). */
int kfcap_sync(struct kfcap *k, char *err, size_t errlen);
/* Keyframes stop (a capture failed): the pipe's work is dropped, the file
 * closed (its records whole), writing 0. */
void kfcap_stop(struct kfcap *k);
/* The disk the keyframe side holds for sure (store bytes this handle wrote
 * and the keyframes file) and at most how much more the captures in flight
 * may add (ctx.c's disk cap). */
void kfcap_disk(struct kfcap *k, uint64_t *known, uint64_t *unsure);
/* Restore keyframe (link, idx) of chain c into k's VM and p. 0 or -1 + err. */
int kfcap_restore(struct kfcap *k, struct platform *p, const struct kf_chain *c, size_t link,
                  size_t idx, char *err, size_t errlen);
#define KFCAP_SHIFT_MAX 4
/* The shift after a keyframe at step whose predecessor in the chain is at
 * prev (have_prev 0: none) and whose record names npages (invariant 5). */
unsigned kfcap_shift(uint64_t step, int have_prev, uint64_t prev, uint64_t npages);
/* Take a keyframe at step? Every `every >> shift` steps (at least 1). May
 * join the last capture's names (invariant 6); if that capture failed the
 * answer is 1, so that kfcap_take reports why. */
int kfcap_due(struct kfcap *k, uint64_t every, uint64_t step);

/* kvm_ram_hash of k's VM, hashing only the pages written since the last
 * capture or restore (the others' hashes are in cur[]). 0 or -1. */
int kfcap_ram_hash(struct kfcap *k, unsigned char out[32]);

/* A developer's check (REWIND_AUDIT_DIRTY): pages whose bytes differ from
 * cur[] though the dirty log does not name them, each printed to out (at
 * most 16). The count, or -1. */
long kfcap_audit(struct kfcap *k, FILE *out);

/* A new run on the same machine: zero the statistics (cur[] stays). */
void kfcap_begin_run(struct kfcap *k);
/* Join (drain the pipe, stop its worker) and close this run's file
 * (fsync). 0 or -1 (the file could not be written). */
int kfcap_end_run(struct kfcap *k);
/* The run is given up: stop the worker, dropping captures not stored whole
 * (no record after them), close the file. */
void kfcap_abort(struct kfcap *k);
/* Free what kfcap_init allocated. */
void kfcap_free(struct kfcap *k);
/* kfcap_end_run, then kfcap_free. 0 or -1 (the file could not be written). */
int kfcap_finish(struct kfcap *k);

#endif
