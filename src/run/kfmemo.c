/*
 * kfmemo: page names a keyframe capture need not compute.
 *
 * A capture names every dirty page by its SHA-256 (the page store's name,
 * store.c invariant 1). Runs of one machine dirty the same pages with the
 * same bytes again and again: the kernel, rewind-init and the job's first
 * state are the same in every run of the same inputs, and much of them in
 * every run. In the test host SHA-256 of a page costs 40-80 us under
 * QEMU's software CPU, and a run that does nothing captures about 9,000
 * pages; comparing a page with bytes already named costs a fraction of
 * that (bench/memo.sh, bench/RESULTS.md: 116 -> 78 us per captured page,
 * about 5% of a short run).
 *
 * The memo is two materialized frames (kfcache.c's format) in the user's
 * cache shared by every home (util/usercache.c): frames/boot-<npfn>, a
 * booted run's first keyframe, and frames/later-<npfn>, a later keyframe
 * of some run. A capture compares each dirty page with the page of the
 * same number in the frame; where the bytes are equal it takes the frame's
 * name and the store does not hash the page (store_put_batch_named). The
 * frames are the first of their kind the user's runs captured; delete them
 * to have the next runs write new ones.
 *
 * Invariants:
 *  1. A name is taken only for a page whose bytes equal, byte for byte, the
 *     frame's page of that name, and only if the frame's page still matches
 *     the checksum it was written with (kfcache.c invariant 1): a stale,
 *     torn or damaged memo costs hashing, never a wrong name.
 *  2. A frame is written only where none is (never replaced: a frame of
 *     another load costs hashing, not a write per run), only right after a
 *     capture, from names that are
 *     then the names of every page of RAM (kfcap.c: cur[] after a capture),
 *     by kfcache_write_at (whole or not at all); a reader holds its own
 *     mapping, so replacing a frame under it is safe.
 *  3. The memo changes how names are found, never which: keyframes, run ids
 *     and the store's bytes are those of a capture without it
 *     (REWIND_NO_PAGE_MEMO=1; tests/engine/kfmemo_test.c, t_keyframes).
 */
#include "run/kfmemo.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "run/kfcache.h"
#include "run/kfcap.h"
#include "util/check.h"
#include "util/usercache.h"

#define KFMEMO_MIN_TRIES 64 /* a capture this small says nothing of the memo */

static const char *const slot_name[KFMEMO_SLOTS] = {"boot", "later"};

static void frame_name(char *out, size_t n, int slot, uint64_t npfn)
{
    snprintf(out, n, "%s-%llu", slot_name[slot], (unsigned long long)npfn);
}

static void map_slot(struct kfmemo *m, int slot)
{
    char name[64];
    frame_name(name, sizeof name, slot, m->npfn);
    struct kfmat *f = malloc(sizeof *f);
    if (f && kfcache_open_at(f, m->dir, name, m->npfn) == 0) {
        m->slot[slot] = f;
        return;
    }
    free(f);
}

void kfmemo_open(struct kfmemo *m, uint64_t npfn)
{
    memset(m, 0, sizeof *m);
    m->ready = 1;
    m->dirfd = -1;
    m->npfn = npfn;
    const char *off = getenv("REWIND_NO_PAGE_MEMO");
    if ((off && !strcmp(off, "1")) || npfn == 0)
        return;
    m->dirfd = usercache_open("frames", m->dir, sizeof m->dir);
    if (m->dirfd < 0)
        return;
    for (int s = 0; s < KFMEMO_SLOTS; s++)
        map_slot(m, s);
}

void kfmemo_close(struct kfmemo *m)
{
    if (!m->ready)
        return;
    for (int s = 0; s < KFMEMO_SLOTS; s++) {
        if (m->slot[s]) {
            kfcache_unmap(m->slot[s]);
            free(m->slot[s]);
            m->slot[s] = NULL;
        }
    }
    if (m->dirfd >= 0)
        close(m->dirfd);
    m->dirfd = -1;
    m->ready = 0;
}

size_t kfmemo_names(struct kfmemo *m, int slot, const uint8_t *pages, const uint64_t *pfns,
                    size_t n, hash256 *names, uint8_t *known)
{
    static const hash256 none;
    RW_ASSERT(slot >= 0 && slot < KFMEMO_SLOTS);
    const struct kfmat *f = m->slot[slot];
    size_t named = 0;
    for (size_t i = 0; i < n; i++) {
        known[i] = 0;
        if (!f || f->npfn != m->npfn || pfns[i] >= f->npfn ||
            !memcmp(&f->map[pfns[i]], &none, sizeof none))
            continue;
        const uint8_t *fp = f->pages + pfns[i] * 4096;
        if (memcmp(pages + i * 4096, fp, 4096) != 0)
            continue;
        if (!f->sums || kfcache_sum(fp) != f->sums[pfns[i]]) /* invariant 1 */
            continue;
        names[i] = f->map[pfns[i]];
        known[i] = 1;
        named++;
    }
    m->tries += n;
    m->hits += named;
    return named;
}

int kfmemo_wants(const struct kfmemo *m, int slot, uint64_t tries)
{
    RW_ASSERT(slot >= 0 && slot < KFMEMO_SLOTS);
    /* only a missing frame is written: replacing one whenever a capture
     * found it poor could make every run of a mixed load write its RAM
     * (suspected when make check's system tests ran 1.45x their recorded
     * times, bench/RESULTS.md) */
    return m->dirfd >= 0 && !m->slot[slot] && !m->written[slot] && tries >= KFMEMO_MIN_TRIES;
}

void kfmemo_after(struct kfmemo *m, int slot, uint64_t tries, uint64_t step, const hash256 *names,
                  const uint8_t *ram)
{
    if (!kfmemo_wants(m, slot, tries))
        return;
    m->written[slot] = 1; /* once per process */
    char name[64];
    frame_name(name, sizeof name, slot, m->npfn);
    (void)kfcache_write_at(m->dir, name, step, names, ram, m->npfn); /* invariant 2 */
}
