/* kfmemo: page names a capture need not compute (design note and
 * invariants in kfmemo.c). */
#ifndef REWIND_RUN_KFMEMO_H
#define REWIND_RUN_KFMEMO_H

#include <stddef.h>
#include <stdint.h>

#include "util/hash.h"

struct kfmat;

/* The memo's two frames: a booted run's first keyframe (before step 1) and
 * any later one. */
enum { KFMEMO_BOOT, KFMEMO_LATER, KFMEMO_SLOTS };

struct kfmemo {
    int ready;                        /* kfmemo_open ran (kfmemo_close does nothing otherwise) */
    int dirfd;                        /* the user cache's "frames" directory, or -1: no memo */
    char dir[32];                     /* /proc/self/fd/<dirfd> */
    uint64_t npfn;                    /* the RAM's pages */
    struct kfmat *slot[KFMEMO_SLOTS]; /* each mapped, or NULL */
    int written[KFMEMO_SLOTS];        /* this process replaced that frame (once at most) */
    uint64_t tries, hits;             /* pages looked up, pages named, all captures */
};

/* Open the memo of a RAM of npfn pages; never fails: without a usable user
 * cache, or with REWIND_NO_PAGE_MEMO=1, m names nothing. */
void kfmemo_open(struct kfmemo *m, uint64_t npfn);
void kfmemo_close(struct kfmemo *m);

/* For each of the n pages at pages (page i is RAM page pfns[i]): if frame
 * slot holds that page with the same bytes, set names[i] to its name and
 * known[i] to 1, else known[i] to 0. Returns how many were named. */
size_t kfmemo_names(struct kfmemo *m, int slot, const uint8_t *pages, const uint64_t *pfns,
                    size_t n, hash256 *names, uint8_t *known);

/* Would kfmemo_after write a frame for a capture of tries pages into slot?
 * (A threaded capture then waits for its names while the vCPU is stopped,
 * so that the frame's bytes are the RAM those names are of: kfcap.h
 * invariant 6.) */
int kfmemo_wants(const struct kfmemo *m, int slot, uint64_t tries);
/* After a capture into frame slot that looked up tries pages, when names[] (all-zero: the zero
 * page) are the names of every page of ram: keep ram as that frame if there was none (at most once
 * per process and frame). */
void kfmemo_after(struct kfmemo *m, int slot, uint64_t tries, uint64_t step, const hash256 *names,
                  const uint8_t *ram);

#endif
