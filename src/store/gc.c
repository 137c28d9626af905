/*
 * gc: delete the pages nobody needs without ever losing one somebody does
 * (page store; the store-wide invariants are in store.c).
 *
 * Phases, all under the store's lock; [what a crash there leaves]:
 *   1 plan    reload the index, ask is_live once per stored name, sort the
 *             packs on disk into keep (only live bytes), rewrite (live and
 *             dead bytes) and delete (no live page)   [nothing changed]
 *   2 copy    verify each live page of a rewrite pack and append its stored
 *             form, unchanged, to new packs numbered above every pack on disk
 *             or named                                [orphan packs: dead bytes]
 *   3 sync    fsync the new packs and packs/          [same]
 *   4 index   write index.tmp naming every live page, fsync it
 *                                                     [a stray index.tmp]
 *   5 rename  make the generation odd, rename index.tmp over index, fsync
 *             <dir> (the commit point), make the generation even
 *                                                     [old packs are orphans]
 *   6 unlink  delete the rewrite and delete packs, fsync packs/
 *                                                     [fewer orphans]
 *   7 reload  this handle reads the new index; others notice it by inode
 * The next gc deletes orphans (packs with no live page) and index.tmp.
 *
 * Invariants:
 *  1. Nothing any reader uses changes before the rename in phase 5.
 *  2. The new index names only bytes that are fsynced and were verified
 *     (copied pages) or bytes the old index named in a pack left unchanged.
 *  3. A pack is unlinked only after a durable index that names none of its
 *     bytes is in place.
 *  4. Stored forms are copied, not recompressed: a page keeps its bytes.
 *  5. A live page with a good copy anywhere in the index keeps a good copy:
 *     a bad first entry does not make gc drop the good one with its pack.
 *
 * Test hook: with REWIND_STORE_GC_CRASH=N in the environment the process
 * _exit(99)s at point N: 1 half way through copying, 2 after phase 3, 3 after
 * phase 4, 4 after phase 5, 5 after the first unlink. Tests use it to check
 * the crash column above; nothing else sets it.
 */
#include "store/store_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/check.h"
#include "util/fail.h"
#include "util/io.h"
#include "util/failpoint.h"

enum { GC_KEEP, GC_REWRITE, GC_DELETE };

struct gc {
    struct store *s;
    struct store_gc_stats st;
    struct store_pack_file *files; /* packs on disk, sorted by number */
    size_t nfiles;
    uint64_t *live_bytes; /* per file */
    int *action;          /* per file */
    uint8_t *live;        /* per table slot */
    struct gc_copy *copy; /* pages to copy, ncopy of them */
    size_t ncopy;
    struct store_entry *ents; /* the next index */
    size_t nents;
    int crash_at;
    char *err;
    size_t errlen;
};

/* Report through the caller's err buffer; returns -1. */
#define gc_fail(g, ...) util_fail((g)->err, (g)->errlen, __VA_ARGS__)

static void crash_point(const struct gc *g, int n)
{
    if (g->crash_at == n)
        _exit(99);
}

/* Index in g->files of pack num, or -1. */
static long file_of(const struct gc *g, uint32_t num)
{
    size_t lo = 0, hi = g->nfiles;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (g->files[mid].num == num)
            return (long)mid;
        if (g->files[mid].num < num)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

/* A page to copy, sorted by where it is so each old pack is read once,
 * front to back. */
struct gc_copy {
    uint32_t pack, off;
    size_t slot;
};

static int cmp_copy(const void *a, const void *b)
{
    const struct gc_copy *x = a, *y = b;
    if (x->pack != y->pack)
        return x->pack < y->pack ? -1 : 1;
    return x->off < y->off ? -1 : x->off > y->off;
}

struct dup_scan {
    struct store_table *t;
    uint8_t *dup; /* per table slot */
};

static int on_dup(void *ctx, const struct store_entry *e)
{
    struct dup_scan *d = ctx;
    struct store_slot *sl = store_table_find(d->t, &e->h);
    if (sl && (sl->pack != e->pack || sl->off != e->off))
        d->dup[sl - d->t->slots] = 1;
    return 0;
}

/* The table names only a page's first good-looking entry. For a live page
 * with other entries, verify that copy now and switch to a good one if it is
 * bad, so the good copy is kept or copied and not dropped with its pack
 * (invariant 5). Pages with one entry are verified by copy_live. */
static int adopt_good_copies(struct gc *g)
{
    struct store *s = g->s;
    struct store_table *t = &s->table;
    struct dup_scan d = {.t = t, .dup = calloc(t->cap, 1)};
    struct store_index_scan sc;
    if (!d.dup)
        return gc_fail(g, "out of memory");
    if (store_index_read(&s->ix, STORE_INDEX_HEADER, on_dup, &d, &sc) < 0) {
        free(d.dup);
        return gc_fail(g, "reading %s: %s", s->index_path, strerror(errno));
    }
    uint8_t page[STORE_PAGE_SIZE];
    for (size_t i = 0; i < t->cap; i++)
        if (d.dup[i] && g->live[i] && store_read_slot(s, &t->slots[i], page) < 0)
            store_read_other_copy(s, &t->slots[i], page); /* none good: copy_live counts it */
    free(d.dup);
    return 0;
}

/* Phase 1: ask is_live and sort the packs. */
static int plan(struct gc *g, int (*is_live)(void *, const hash256 *), void *ctx)
{
    struct store *s = g->s;
    struct store_table *t = &s->table;
    if (store_pack_list(&s->packs, &g->files, &g->nfiles) < 0)
        return gc_fail(g, "listing %s: %s", s->packs.dir, strerror(errno));
    g->live = calloc(t->cap, 1);
    g->live_bytes = calloc(g->nfiles + 1, sizeof(*g->live_bytes));
    g->action = calloc(g->nfiles + 1, sizeof(*g->action));
    g->copy = calloc(t->n + 1, sizeof(*g->copy));
    g->ents = calloc(t->n + 1, sizeof(*g->ents));
    if (!g->live || !g->live_bytes || !g->action || !g->copy || !g->ents)
        return gc_fail(g, "out of memory");
    for (size_t i = 0; i < t->cap; i++) {
        const struct store_slot *sl = &t->slots[i];
        if (sl->len == 0)
            continue;
        int r = is_live(ctx, &sl->h);
        if (r < 0)
            return gc_fail(g, "the liveness callback failed; nothing was changed");
        g->live[i] = r > 0;
        if (r == 0)
            g->st.dead_pages++;
    }
    if (adopt_good_copies(g) < 0)
        return -1;
    for (size_t i = 0; i < t->cap; i++) {
        if (!g->live[i])
            continue;
        const struct store_slot *sl = &t->slots[i];
        long f = file_of(g, sl->pack);
        if (f < 0) {
            g->live[i] = 0;
            g->st.corrupt_pages++; /* its pack vanished since the reload */
        } else {
            g->st.live_pages++;
            g->live_bytes[f] += sl->len;
        }
    }
    for (size_t f = 0; f < g->nfiles; f++) {
        uint64_t size = g->files[f].size;
        uint64_t data = size > STORE_PACK_HEADER ? size - STORE_PACK_HEADER : 0;
        g->st.bytes_before += size;
        if (g->live_bytes[f] == 0) {
            g->action[f] = GC_DELETE;
            g->st.packs_deleted++;
        } else if (g->live_bytes[f] == data) {
            g->action[f] = GC_KEEP;
            g->st.packs_kept++;
            g->st.bytes_after += size;
        } else {
            g->action[f] = GC_REWRITE;
            g->st.packs_rewritten++;
        }
    }
    uint64_t copied_bytes = 0;
    for (size_t i = 0; i < t->cap; i++) {
        if (!g->live[i])
            continue;
        const struct store_slot *sl = &t->slots[i];
        if (g->action[file_of(g, sl->pack)] == GC_REWRITE) {
            g->copy[g->ncopy++] = (struct gc_copy){.pack = sl->pack, .off = sl->off, .slot = i};
            copied_bytes += sl->len;
        } else {
            g->ents[g->nents++] = (struct store_entry){
                .h = sl->h, .pack = sl->pack, .off = sl->off, .len = sl->len, .flags = sl->flags};
        }
    }
    g->st.copied_pages = g->ncopy;
    if (copied_bytes) /* the estimate for a dry run; phase 2 recounts */
        g->st.bytes_after += copied_bytes + STORE_PACK_HEADER * (1 + copied_bytes / s->packs.limit);
    qsort(g->copy, g->ncopy, sizeof(*g->copy), cmp_copy);
    return 0;
}

/* Phases 2 and 3: copy the live pages of rewrite packs into new packs. */
static int copy_live(struct gc *g)
{
    struct store *s = g->s;
    uint32_t num = s->packs.maxref;
    if (g->nfiles && g->files[g->nfiles - 1].num > num)
        num = g->files[g->nfiles - 1].num;
    int fd = -1;
    uint64_t size = 0;
    uint8_t page[STORE_PAGE_SIZE];
    g->st.copied_pages = 0;
    for (size_t k = 0; k < g->ncopy; k++) {
        const struct store_slot *sl = &s->table.slots[g->copy[k].slot];
        if (k == g->ncopy / 2)
            crash_point(g, 1);
        if (store_read_slot(s, sl, page) < 0) {
            /* adopt_good_copies switched to a good copy wherever one was */
            g->st.corrupt_pages++; /* unreadable already: nothing to save */
            g->st.live_pages--;
            continue;
        }
        if (fd < 0 || size + sl->len > s->packs.limit) {
            if (fd >= 0 && (fsync(fd) < 0 || close(fd) < 0))
                return gc_fail(g, "writing pack %06u: %s", num, strerror(errno));
            if (store_pack_create(&s->packs, ++num, &fd) < 0)
                return gc_fail(g, "creating pack %06u: %s", num, strerror(errno));
            size = STORE_PACK_HEADER;
        }
        /* s->rbuf still holds the stored form store_read_slot verified. */
        RW_FAILPOINT("store.gc.copy");
        if (io_pwrite_all(fd, s->rbuf, sl->len, (off_t)size) < 0) {
            int e = errno;
            close(fd);
            return gc_fail(g, "writing pack %06u: %s", num, strerror(e));
        }
        g->ents[g->nents++] = (struct store_entry){
            .h = sl->h, .pack = num, .off = (uint32_t)size, .len = sl->len, .flags = sl->flags};
        size += sl->len;
        g->st.copied_pages++;
    }
    RW_FAILPOINT("store.gc.fsync_packs");
    if (fd >= 0 && (fsync(fd) < 0 || close(fd) < 0))
        return gc_fail(g, "writing pack %06u: %s", num, strerror(errno));
    if (io_fsync_dir(s->packs.dir) < 0)
        return gc_fail(g, "fsync %s: %s", s->packs.dir, strerror(errno));
    crash_point(g, 2);
    return 0;
}

/* Phases 4 and 5: write the next index and put it in force. */
static int commit_index(struct gc *g, const char *tmp)
{
    struct store *s = g->s;
    RW_FAILPOINT("store.gc.write_index");
    if (store_index_write_file(tmp, g->ents, g->nents) < 0)
        return gc_fail(g, "writing %s: %s", tmp, strerror(errno));
    crash_point(g, 3);
    store_gen_bump(s, 1);
    RW_FAILPOINT("store.gc.rename_index");
    if (rename(tmp, s->index_path) < 0)
        return gc_fail(g, "renaming %s: %s", tmp, strerror(errno));
    if (io_fsync_dir(s->dir) < 0)
        return gc_fail(g, "fsync %s: %s", s->dir, strerror(errno));
    store_gen_bump(s, 0);
    crash_point(g, 4);
    return 0;
}

/* Phase 6: delete the packs the new index no longer names. */
static int unlink_packs(struct gc *g)
{
    struct store *s = g->s;
    int first = 1;
    for (size_t f = 0; f < g->nfiles; f++) {
        if (g->action[f] == GC_KEEP)
            continue;
        char path[4096];
        store_pack_path(&s->packs, g->files[f].num, path, sizeof(path));
        RW_FAILPOINT("store.gc.unlink_pack");
        if (unlink(path) < 0 && errno != ENOENT)
            return gc_fail(g, "deleting %s: %s", path, strerror(errno));
        if (first)
            crash_point(g, 5);
        first = 0;
    }
    if (io_fsync_dir(s->packs.dir) < 0)
        return gc_fail(g, "fsync %s: %s", s->packs.dir, strerror(errno));
    return 0;
}

static int run(struct gc *g, int (*is_live)(void *, const hash256 *), void *ctx, int dry_run)
{
    struct store *s = g->s;
    RW_ASSERT(s->locked > 0); /* every phase runs under the store's lock */
    if (store_reload(s) < 0)
        return gc_fail(g, "reading %s: %s", s->index_path, strerror(errno));
    if (plan(g, is_live, ctx) < 0)
        return -1;
    if (dry_run)
        return 0;
    size_t n = strlen(s->index_path) + 8;
    char *tmp = malloc(n);
    if (!tmp)
        return gc_fail(g, "out of memory");
    snprintf(tmp, n, "%s.tmp", s->index_path);
    unlink(tmp); /* left by a gc that crashed in phase 4 */
    int rc = 0;
    if (g->st.packs_rewritten + g->st.packs_deleted > 0)
        rc = copy_live(g) < 0 || commit_index(g, tmp) < 0 || unlink_packs(g) < 0 ? -1 : 0;
    if (rc < 0)
        unlink(tmp);
    free(tmp);
    /* Phase 7, also after a failure: the table may name packs now gone. */
    if (store_reload(s) < 0 && rc == 0)
        return gc_fail(g, "reading %s: %s", s->index_path, strerror(errno));
    if (rc == 0) {
        struct store_pack_file *files;
        size_t nfiles;
        if (store_pack_list(&s->packs, &files, &nfiles) == 0) {
            g->st.bytes_after = 0;
            for (size_t f = 0; f < nfiles; f++)
                g->st.bytes_after += files[f].size;
            free(files);
        }
    }
    return rc;
}

int store_gc(struct store *s, int (*is_live)(void *ctx, const hash256 *h), void *ctx, int dry_run,
             struct store_gc_stats *st, char *err, size_t errlen)
{
    struct gc g = {.s = s, .err = err, .errlen = errlen};
    const char *t = getenv("REWIND_STORE_GC_CRASH");
    g.crash_at = t ? atoi(t) : 0;
    int rc;
    if (store_lock(s) < 0) {
        rc = gc_fail(&g, "locking the store: %s", strerror(errno));
    } else {
        rc = run(&g, is_live, ctx, dry_run);
        store_unlock(s);
    }
    if (st)
        *st = g.st;
    free(g.files);
    free(g.live_bytes);
    free(g.action);
    free(g.live);
    free(g.copy);
    free(g.ents);
    return rc;
}
