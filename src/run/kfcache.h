/*
 * kfcache: recently restored keyframes kept materialized on disk (design
 * note and invariants in kfcache.c).
 */
#ifndef REWIND_RUN_KFCACHE_H
#define REWIND_RUN_KFCACHE_H

#include <stdint.h>

#include "run/kfcap.h"

/* The checksum of one 4 KiB page kept beside it (never 0). */
uint64_t kfcache_sum(const void *page);
/* Map run's cached keyframe for a RAM of npfn pages into m (a view: pages,
 * map and sums point into the file; free with kfmat_free). 0, or -1 if
 * there is none or it does not fit (invariant 1). */
int kfcache_open(struct kfmat *m, const char *home, const char *run, uint64_t npfn);
/* Unmap what kfcache_open or kfcache_open_at mapped (kfmat_free does too). */
void kfcache_unmap(struct kfmat *m);
/* Keep the keyframe at step of run, whose page names are names[] (all-zero:
 * the zero page) and whose bytes are ram, as run's cached keyframe. 0 or -1. */
int kfcache_write(const char *home, const char *run, uint64_t step, const hash256 *names,
                  const uint8_t *ram, uint64_t npfn);
/* The same in directory dir under name (a run id or [a-z0-9-], at most 64
 * bytes), for files outside a home (the memo of kfmemo.c); write_at keeps
 * every file of dir. */
int kfcache_open_at(struct kfmat *m, const char *dir, const char *name, uint64_t npfn);
int kfcache_write_at(const char *dir, const char *name, uint64_t step, const hash256 *names,
                     const uint8_t *ram, uint64_t npfn);

#endif
