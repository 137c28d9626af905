/*
 * store: the page store, a content-addressed directory of 4 KiB pages shared
 * by every run, keyframe and fork ($REWIND_HOME/store). This file holds the
 * design note and the public API; one concern per file beside it:
 *   codec.c  a page to its name (SHA-256) and stored form (zstd -1 or raw)
 *   pack.c   pack files: append-only, rolled at 1 GiB
 *   index.c  the index file: fixed 48-byte entries with a CRC, append-only
 *   table.c  the in-memory hash table the index is loaded into
 *   gc.c     deleting dead pages, crash-safely
 *
 * On disk:
 *   <dir>/lock              flock()ed exclusively to append, trim or gc; its
 *                           first 8 bytes are the gc generation (invariant 8)
 *   <dir>/index             header + entries name -> (pack, offset, length, flags)
 *   <dir>/packs/NNNNNN.pack header + stored pages back to back
 *   <dir>/index.tmp         only while gc writes the next index
 *
 * Name. SHA-256 of the 4096 bytes. Measured per 4 KiB page, one core, CPU
 * time (bench/store.sh, 2026-11-29, results in bench/RESULTS.md): SHA-256
 * from libcrypto (SHA-NI) 1,330-1,400 MB/s with the handle's reused context
 * (1,100 MB/s through hash_buf, which looks the digest up and allocates per
 * call), BLAKE2b-256 from libsodium 805-850 MB/s. So the hash we already use elsewhere is also the
 * fastest cryptographic one here (1.6x BLAKE2b; BLAKE2s from libcrypto: 538)
 * and meets the 1 GB/s goal. A non-cryptographic hash (XXH3, 18 GB/s) would
 * let anyone who hands us pages (imported runs, shared stores) forge a
 * collision and swap one page for another.
 *
 * Cost. A page already present costs its hash only (put 1,200-1,300 MB/s). A
 * new page costs hash + zstd -1 + append; zstd dominates: 160-200 MB/s on
 * 4 KiB pages of C headers (ratio 3.1) on this machine (zstd's own
 * `zstd -b1 -B4096` agrees), so put_batch writes new text pages at 135-160
 * MB/s and random ones (stored raw) at 320-400 MB/s; a single store_put adds
 * ~7 syscalls per page (lock, size checks, two writes), about half the batch
 * speed. get (read, decompress, re-hash) runs at 270-345 MB/s on text.
 *
 * Life of a page (state, and the function that moves it on):
 *
 *   absent --store_put: pack append--> bytes in a pack, unreferenced
 *          --store_put: index append--> indexed: visible to every handle
 *   indexed --store_gc, is_live 0--> left out of the next index --> pack unlinked
 *   indexed --store_gc, is_live 1, pack also holds dead bytes--> copied to a
 *          new pack, named by the next index --> old pack unlinked
 *
 * A crash between the two appends of store_put leaves unreferenced bytes,
 * dead until gc. gc's crash points are listed in gc.c.
 *
 * Invariants:
 *  1. A page is named by the SHA-256 of its 4096 bytes. The zero page is never
 *     stored: store_put returns its well-known name Z (store_zero_hash)
 *     without writing, store_get(Z) fills zeros, store_has(Z) is 1. The
 *     store computes every name itself but those store_put_batch_named's
 *     caller vouches for (bytes it compared with a page of that name).
 *  2. Outside gc, packs and the index only grow, and only under the exclusive
 *     flock on <dir>/lock, pack bytes first, then their index entries. So no
 *     process ever sees an entry before its bytes (one page cache); only an OS
 *     crash can leave an entry pointing past the end of its pack.
 *  3. An index entry is used only if its CRC and fields are good and its
 *     bytes lie within its pack as it is now (index.c 1, pack.c 2); otherwise
 *     it is ignored, never deleted, and a pack one points past is never
 *     appended to again, so it stays ignored.
 *  4. A partial or bad index tail is cut only under the lock, after a locked
 *     read of everything good, and only past the last good entry (index.c 2):
 *     nothing whole is lost, no handle has read past the cut, and appends
 *     always start on an entry boundary.
 *  5. Readers take no lock: a miss (store_get, store_has, and store_put before
 *     it writes) re-reads the entries appended since this handle last read.
 *  6. The first good entry for a name wins. Two processes storing one page at
 *     once may index it twice; the second copy is dead bytes for gc. If the
 *     winning copy fails verification, store_get tries the others and then
 *     marks the name bad in memory, so store_has says 0 and store_put writes
 *     a fresh copy, which wins from then on.
 *  7. Every page store_get returns was decompressed and re-hashed to the name
 *     asked for (store_load: or, for a frame this store wrote with a content
 *     checksum, checked by that checksum, codec.c invariant 3); on failure
 *     the caller's buffer is untouched.
 *  8. The index file is replaced only by gc, by renaming a complete, fsynced
 *     file that names only fsynced packs; packs are deleted only after that
 *     rename is durable, so a crash anywhere leaves every live page readable.
 *     A handle notices a replacement by inode (it holds the old file open, so
 *     the number cannot be reused) each time it takes the lock and on a miss
 *     or a failed read, and reloads before appending or answering. So that a
 *     hit in a stale view is never trusted either, gc makes the generation in
 *     <dir>/lock (mapped by every handle) odd before the rename and even
 *     after it; every put, get and has compares it with its view's (one load,
 *     no syscall) and checks the inode while it differs or is odd. A gc that
 *     crashed between the two leaves it odd: correct, one stat per call, until
 *     the next gc.
 *  9. Pack numbers only grow (appends roll upward; gc writes above every
 *     number on disk or named, with O_EXCL), so no handle writes into a pack
 *     created by a gc it has not seen.
 * 10. A handle is one thread's and one process's: flock locks belong to the
 *     open file, so handles in one process exclude each other, but a handle
 *     inherited across fork() would share its lock with its parent.
 * 11. gc can only keep what is_live names: a page whose name store_put has
 *     returned but which the caller has not yet recorded is dead to gc.
 *     Callers serialise captures with gc (see store.h).
 * 12. store_sync makes durable every page this handle's puts named, also one
 *     another process stored and has not synced yet (a dedup hit): its pack
 *     is fdatasynced with this handle's own (pack.h store_pack_need_sync).
 */
#include "store/store_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/check.h"
#include "util/fail.h"

/* SHA-256 of 4096 zero bytes. */
static const hash256 zero_name = {{0xad, 0x7f, 0xac, 0xb2, 0x58, 0x6f, 0xc6, 0xe9, 0x66, 0xc0, 0x04,
                                   0xd7, 0xd1, 0xd1, 0x6b, 0x02, 0x4f, 0x58, 0x05, 0xff, 0x7c, 0xb4,
                                   0x7c, 0x7a, 0x85, 0xda, 0xbd, 0x8b, 0x48, 0x89, 0x2c, 0xa7}};

void store_zero_hash(hash256 *out)
{
    *out = zero_name;
}

int store_is_zero_hash(const hash256 *h)
{
    return memcmp(h->b, zero_name.b, sizeof(h->b)) == 0;
}

#define fail util_fail

int store_lock(struct store *s)
{
    if (s->locked++ > 0)
        return 0;
    while (flock(s->lockfd, LOCK_EX) < 0) {
        if (errno != EINTR) {
            s->locked--;
            return -1;
        }
    }
    return 0;
}

void store_unlock(struct store *s)
{
    RW_ASSERT(s->locked > 0);
    if (--s->locked == 0)
        flock(s->lockfd, LOCK_UN);
}

#define GEN_FILE_SIZE 4096

/* Map the generation word of the lock file, growing the file to a page
 * first (under the lock, so two openers do not race); returns 0 or -1. */
static int map_gen(struct store *s)
{
    struct stat sb;
    if (fstat(s->lockfd, &sb) < 0)
        return -1;
    if (sb.st_size < GEN_FILE_SIZE) {
        if (store_lock(s) < 0)
            return -1;
        int rc = fstat(s->lockfd, &sb);
        if (rc == 0 && sb.st_size < GEN_FILE_SIZE)
            rc = ftruncate(s->lockfd, GEN_FILE_SIZE);
        store_unlock(s);
        if (rc < 0)
            return -1;
    }
    void *m = mmap(NULL, GEN_FILE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, s->lockfd, 0);
    if (m == MAP_FAILED)
        return -1;
    s->gen_map = m;
    return 0;
}

void store_gen_bump(struct store *s, int odd)
{
    RW_ASSERT(s->locked > 0); /* only gc, under the lock (invariant 8) */
    uint64_t g = __atomic_load_n(s->gen_map, __ATOMIC_ACQUIRE);
    g += (g & 1) == (uint64_t)odd ? 2 : 1;
    __atomic_store_n(s->gen_map, g, __ATOMIC_RELEASE);
}

/* Bring this handle's view up to date if a gc replaced the index since it
 * was read (invariant 8); returns 0 or -1. */
static int check_gen(struct store *s)
{
    uint64_t g = __atomic_load_n(s->gen_map, __ATOMIC_ACQUIRE);
    return g == s->gen && !(g & 1) ? 0 : store_refresh(s);
}

/* Slot for *h unless absent or marked bad (invariant 6). */
static struct store_slot *present(struct store *s, const hash256 *h)
{
    struct store_slot *sl = store_table_find(&s->table, h);
    return sl && !(sl->flags & STORE_SLOT_BAD) ? sl : NULL;
}

/* store_index_read callback: take one good entry into the table (invariants
 * 3 and 6). */
static int on_entry(void *ctx, const struct store_entry *e)
{
    struct store *s = ctx;
    int r = store_pack_note(&s->packs, e);
    if (r <= 0) {
        s->st.ignored += r == 0;
        return r;
    }
    struct store_slot sl = {
        .h = e->h, .pack = e->pack, .off = e->off, .len = e->len, .flags = e->flags};
    struct store_slot *old = store_table_find(&s->table, &e->h);
    if (old) {
        if (old->flags & STORE_SLOT_BAD) {
            s->st.bytes_stored += (uint64_t)e->len - old->len;
            *old = sl;
        }
        return 0;
    }
    if (store_table_add(&s->table, &sl) < 0)
        return -1;
    s->st.pages++;
    s->st.bytes_stored += e->len;
    return 0;
}

/* Read entries from ix.off on; with trim, cut a bad or partial tail under the
 * lock (invariant 4). */
static int load_new(struct store *s, int trim)
{
    struct store_index_scan sc;
    int rc = store_index_read(&s->ix, s->ix.off, on_entry, s, &sc);
    s->ix.off = sc.good_end;
    s->st.ignored += sc.bad;
    if (rc < 0 || !trim || sc.size <= sc.good_end)
        return rc;
    /* A crash, or a writer mid-append: only the lock tells them apart. */
    if (store_lock(s) < 0)
        return -1;
    rc = store_index_read(&s->ix, s->ix.off, on_entry, s, &sc);
    s->ix.off = sc.good_end;
    s->st.ignored += sc.bad;
    RW_ASSERT(s->locked > 0); /* invariant 4 */
    if (rc == 0 && store_index_trim_locked(&s->ix) < 0)
        rc = -1;
    store_unlock(s);
    return rc;
}

int store_reload(struct store *s)
{
    for (int tries = 0;; tries++) {
        store_index_close(&s->ix);
        store_packs_reset(&s->packs);
        store_table_clear(&s->table);
        s->st.pages = s->st.bytes_stored = 0;
        if (store_index_open(&s->ix, s->index_path) < 0)
            return -1;
        int r = store_index_check_header(&s->ix);
        if (r < 0)
            return -1;
        if (r == 1) {
            /* New, or torn while being created: (re)write the header under
             * the lock, unless a gc replaced the file meanwhile. */
            if (store_lock(s) < 0)
                return -1;
            int replaced = store_index_replaced(&s->ix, s->index_path);
            r = replaced ? replaced : store_index_check_header(&s->ix);
            RW_ASSERT(s->locked > 0);
            if (r == 1 && !replaced)
                r = store_index_init_locked(&s->ix);
            store_unlock(s);
            if (r < 0)
                return -1;
            if (replaced && tries < 8)
                continue;
            if (replaced) {
                errno = EAGAIN;
                return -1;
            }
        }
        return load_new(s, 1);
    }
}

int store_refresh(struct store *s)
{
    /* Only gc replaces the index, between an odd and an even generation
     * (invariant 8): an unchanged even generation spares the stat. */
    uint64_t g = __atomic_load_n(s->gen_map, __ATOMIC_ACQUIRE);
    if (g != s->gen || (g & 1)) {
        int r = store_index_replaced(&s->ix, s->index_path);
        if (r < 0)
            return -1;
        s->gen = g;
        if (r)
            return store_reload(s);
    }
    return load_new(s, 0);
}

int store_open(const char *dir, struct store **out, char *err, size_t errlen)
{
    *out = NULL;
    struct store *s = calloc(1, sizeof(*s));
    if (!s)
        return fail(err, errlen, "out of memory");
    s->lockfd = -1;
    s->ix.fd = -1;
    size_t n = strlen(dir) + 16;
    char *lock = malloc(n);
    s->dir = strdup(dir);
    s->index_path = malloc(n);
    s->cbuf = malloc((size_t)STORE_BATCH * STORE_PAGE_SIZE);
    s->rbuf = malloc(STORE_PAGE_SIZE);
    s->pbuf = malloc(STORE_PAGE_SIZE);
    s->ents = calloc(STORE_BATCH, sizeof(*s->ents));
    s->want = calloc(STORE_BATCH, sizeof(*s->want));
    s->lens = calloc(STORE_BATCH, sizeof(*s->lens));
    s->flags = calloc(STORE_BATCH, sizeof(*s->flags));
    if (!lock || !s->dir || !s->index_path || !s->cbuf || !s->rbuf || !s->pbuf || !s->ents ||
        !s->want || !s->lens || !s->flags) {
        free(lock);
        store_close(s);
        return fail(err, errlen, "out of memory");
    }
    snprintf(lock, n, "%s/lock", dir);
    snprintf(s->index_path, n, "%s/index", dir);
    s->zero = zero_name;
    if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
        fail(err, errlen, "cannot create %s: %s", dir, strerror(errno));
        goto bad;
    }
    s->lockfd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (s->lockfd < 0) {
        fail(err, errlen, "cannot open %s: %s", lock, strerror(errno));
        goto bad;
    }
    if (map_gen(s) < 0) {
        fail(err, errlen, "cannot map %s: %s", lock, strerror(errno));
        goto bad;
    }
    s->gen = __atomic_load_n(s->gen_map, __ATOMIC_ACQUIRE);
    if (store_packs_init(&s->packs, dir) < 0) {
        fail(err, errlen, "cannot create %s/packs: %s", dir, strerror(errno));
        goto bad;
    }
    if (store_table_init(&s->table) < 0 || store_codec_init(&s->codec) < 0) {
        fail(err, errlen, "out of memory");
        goto bad;
    }
    if (store_reload(s) < 0) {
        fail(err, errlen, "%s: %s", s->index_path,
             errno == EPROTO ? "not a version-1 page store index" : strerror(errno));
        goto bad;
    }
    free(lock);
    *out = s;
    return 0;
bad:
    free(lock);
    store_close(s);
    return -1;
}

void store_close(struct store *s)
{
    if (!s)
        return;
    store_index_close(&s->ix);
    store_packs_free(&s->packs);
    store_table_free(&s->table);
    store_codec_free(&s->codec);
    if (s->gen_map)
        munmap(s->gen_map, GEN_FILE_SIZE);
    if (s->lockfd >= 0)
        close(s->lockfd);
    free(s->dir);
    free(s->index_path);
    free(s->cbuf);
    free(s->rbuf);
    free(s->pbuf);
    free(s->ents);
    free(s->want);
    free(s->lens);
    free(s->flags);
    free(s);
}

/* 1 if *h is the name of one of the first nw pages chosen for writing. */
static int chosen(const hash256 *out, const size_t *want, size_t nw, const hash256 *h)
{
    for (size_t j = 0; j < nw; j++)
        if (memcmp(out[want[j]].b, h->b, sizeof(h->b)) == 0)
            return 1;
    return 0;
}

/* Store up to STORE_BATCH pages: name and compress them without the lock,
 * then one pack append and one index append under it (invariant 2). */
static int put_chunk(struct store *s, const uint8_t *pages, size_t n, hash256 *out,
                     const uint8_t *known)
{
    size_t nw = 0;
    if (check_gen(s) < 0)
        return -1;
    for (size_t i = 0; i < n; i++) {
        const uint8_t *pg = pages + i * STORE_PAGE_SIZE;
        s->st.puts++;
        if (store_codec_is_zero(pg)) {
            out[i] = zero_name;
            s->st.zero_puts++;
            continue;
        }
        if (known && known[i]) /* store_put_batch_named: the caller's name of these bytes */
            s->st.named_puts++;
        else
            store_codec_hash(&s->codec, pg, &out[i]);
        const struct store_slot *hit = present(s, &out[i]);
        if (hit && store_pack_need_sync(&s->packs, hit->pack) < 0)
            return -1;
        if (hit || chosen(out, s->want, nw, &out[i])) {
            s->st.dedup_hits++;
            continue;
        }
        s->want[nw++] = i;
    }
    if (nw == 0)
        return 0;
    for (size_t k = 0; k < nw; k++)
        s->lens[k] = (uint16_t)store_codec_encode(&s->codec, pages + s->want[k] * STORE_PAGE_SIZE,
                                                  s->cbuf + k * STORE_PAGE_SIZE, &s->flags[k]);
    if (store_lock(s) < 0)
        return -1;
    int rc = -1;
    if (store_refresh(s) < 0)
        goto out;
    /* Drop what others stored meanwhile (a miss in our view is no proof) and
     * pack the rest together; every move is leftward, so memmove is safe. */
    size_t m = 0, total = 0;
    for (size_t k = 0; k < nw; k++) {
        const hash256 *h = &out[s->want[k]];
        const struct store_slot *hit = present(s, h);
        if (hit) {
            if (store_pack_need_sync(&s->packs, hit->pack) < 0)
                goto out;
            s->st.dedup_hits++;
            continue;
        }
        RW_ASSERT(!store_is_zero_hash(h)); /* invariant 1: the zero page is never stored */
        memmove(s->cbuf + total, s->cbuf + k * STORE_PAGE_SIZE, s->lens[k]);
        s->ents[m] = (struct store_entry){
            .h = *h, .off = (uint32_t)total, .len = s->lens[k], .flags = s->flags[k]};
        total += s->lens[k];
        m++;
    }
    if (m == 0) {
        rc = 0;
        goto out;
    }
    RW_ASSERT(s->locked > 0); /* invariant 2: pack bytes, then entries */
    uint32_t num, off;
    if (store_pack_append_locked(&s->packs, s->cbuf, total, &num, &off) < 0)
        goto out;
    for (size_t j = 0; j < m; j++) {
        s->ents[j].pack = num;
        s->ents[j].off += off;
    }
    if (store_index_append_locked(&s->ix, s->ents, m) < 0)
        goto out;
    for (size_t j = 0; j < m; j++)
        if (on_entry(s, &s->ents[j]) < 0)
            goto out;
    s->st.written += m;
    s->st.bytes_written += total;
    rc = 0;
out:
    store_unlock(s);
    return rc;
}

int store_put_batch_named(struct store *s, const void *pages, size_t n, hash256 *names,
                          const uint8_t *known)
{
    const uint8_t *p = pages;
    while (n > 0) {
        size_t k = n < STORE_BATCH ? n : STORE_BATCH;
        if (put_chunk(s, p, k, names, known) < 0)
            return -1;
        p += k * STORE_PAGE_SIZE;
        names += k;
        if (known)
            known += k;
        n -= k;
    }
    return 0;
}

int store_put_batch(struct store *s, const void *pages, size_t n, hash256 *out_hashes)
{
    return store_put_batch_named(s, pages, n, out_hashes, NULL);
}

void store_hash_page(struct store *s, const void *page4k, hash256 *out)
{
    store_codec_hash(&s->codec, page4k, out);
}

int store_put(struct store *s, const void *page4k, hash256 *out_hash)
{
    return put_chunk(s, page4k, 1, out_hash, NULL);
}

static int read_slot(struct store *s, const struct store_slot *sl, void *page, int trust)
{
    if (store_pack_read(&s->packs, sl->pack, sl->off, s->rbuf, sl->len) < 0)
        return -1;
    if (store_codec_decode(&s->codec, s->rbuf, sl->len, sl->flags & (STORE_F_RAW | STORE_F_SUM),
                           &sl->h, s->pbuf, trust) < 0)
        return -1;
    memcpy(page, s->pbuf, STORE_PAGE_SIZE);
    return 0;
}

int store_read_slot(struct store *s, const struct store_slot *sl, void *page)
{
    return read_slot(s, sl, page, 0);
}

int store_read_slot_trusting(struct store *s, const struct store_slot *sl, void *page)
{
    return read_slot(s, sl, page, 1);
}

#define ALT_MAX 8

struct alt_scan {
    const struct store_slot *cur;
    struct store_entry e[ALT_MAX];
    int n;
};

static int on_alt(void *ctx, const struct store_entry *e)
{
    struct alt_scan *a = ctx;
    if (memcmp(e->h.b, a->cur->h.b, sizeof(e->h.b)) != 0 || a->n == ALT_MAX)
        return 0;
    if (e->pack == a->cur->pack && e->off == a->cur->off)
        return 0;
    a->e[a->n++] = *e;
    return 0;
}

/* The winning copy of sl's page failed: look through the whole index for
 * other copies (rare, so a scan) and adopt the first that verifies. */
int store_read_other_copy(struct store *s, struct store_slot *sl, void *page)
{
    struct alt_scan a = {.cur = sl};
    struct store_index_scan sc;
    if (store_index_read(&s->ix, STORE_INDEX_HEADER, on_alt, &a, &sc) < 0)
        return -1;
    for (int i = 0; i < a.n; i++) {
        struct store_slot cand = {.h = a.e[i].h,
                                  .pack = a.e[i].pack,
                                  .off = a.e[i].off,
                                  .len = a.e[i].len,
                                  .flags = a.e[i].flags};
        if (store_pack_note(&s->packs, &a.e[i]) == 1 && store_read_slot(s, &cand, page) == 0) {
            s->st.bytes_stored += (uint64_t)cand.len - sl->len;
            *sl = cand;
            return 0;
        }
    }
    errno = EIO;
    return -1;
}

/* The slot of *h once update (store_refresh or store_reload) has brought
 * this handle's view up to date; NULL with errno (ENOENT if absent). */
static struct store_slot *find_after(struct store *s, const hash256 *h,
                                     int (*update)(struct store *))
{
    if (update(s) < 0)
        return NULL;
    struct store_slot *sl = store_table_find(&s->table, h);
    if (!sl)
        errno = ENOENT;
    return sl;
}

static int get_page(struct store *s, const hash256 *h, void *page4k, int trust)
{
    if (store_is_zero_hash(h)) {
        memset(page4k, 0, STORE_PAGE_SIZE);
        return 0;
    }
    if (check_gen(s) < 0)
        return -1;
    struct store_slot *sl = store_table_find(&s->table, h);
    if (!sl && !(sl = find_after(s, h, store_refresh)))
        return -1;
    if (read_slot(s, sl, page4k, trust) == 0)
        return 0;
    /* A gc may have moved the page and deleted its old pack (invariant 8). */
    if (store_index_replaced(&s->ix, s->index_path) == 1) {
        if (!(sl = find_after(s, h, store_reload)))
            return -1;
        if (read_slot(s, sl, page4k, trust) == 0)
            return 0;
    }
    if (store_read_other_copy(s, sl, page4k) == 0)
        return 0;
    sl->flags |= STORE_SLOT_BAD;
    errno = EIO;
    return -1;
}

int store_get(struct store *s, const hash256 *h, void *page4k)
{
    return get_page(s, h, page4k, 0);
}

int store_load(struct store *s, const hash256 *h, void *page4k)
{
    return get_page(s, h, page4k, 1);
}

int store_verify(struct store *s, struct store_verify_stats *st)
{
    memset(st, 0, sizeof(*st));
    if (store_refresh(s) < 0)
        return -1;
    uint8_t page[STORE_PAGE_SIZE];
    for (size_t i = 0; i < s->table.cap; i++) {
        struct store_slot *sl = &s->table.slots[i];
        if (sl->len == 0)
            continue;
        st->pages++;
        st->summed += (sl->flags & STORE_F_SUM) != 0;
        if (read_slot(s, sl, page, 0) == 0 || store_read_other_copy(s, sl, page) == 0)
            continue;
        if (!st->bad)
            st->first_bad = sl->h;
        st->bad++;
    }
    return 0;
}

int store_has(struct store *s, const hash256 *h)
{
    if (store_is_zero_hash(h))
        return 1;
    if (check_gen(s) < 0)
        return 0;
    if (present(s, h))
        return 1;
    if (store_refresh(s) < 0)
        return 0;
    return present(s, h) != NULL;
}

int store_sync(struct store *s)
{
    if (store_packs_sync(&s->packs) < 0)
        return -1;
    return store_index_sync(&s->ix);
}

void store_stats(struct store *s, struct store_stats *out)
{
    *out = s->st;
}

int store_set_pack_limit(struct store *s, uint64_t bytes)
{
    if (bytes < (64u << 10) || bytes > (2ull << 30)) {
        errno = EINVAL;
        return -1;
    }
    s->packs.limit = bytes;
    return 0;
}
