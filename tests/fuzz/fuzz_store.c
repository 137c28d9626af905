/*
 * fuzz_store: the page store's index and packs (src/store/): loading an
 * index (torn tails, bad checksums, fields out of range), reading pages
 * back through it (short or corrupt packs), appending after a damaged
 * tail, and gc over it.
 *
 * Input: a 2-byte little-endian length L, then L bytes of store/index, then
 * the rest as store/packs/000001.pack.
 *
 * Invariants:
 *  1. Whatever the bytes, every call returns 0 or -1 (no crash, no
 *     sanitizer report).
 *  2. A page store_get hands back hashes to its name (the store re-hashes
 *     what it decodes; here it is checked again from outside).
 *  3. A page put after opening reads back, whatever was there before.
 */
#include "fuzz.h"
#include "store/index.h"
#include "store/store.h"
#include "util/check.h"

#define MAX_NAMES 64

struct names {
    hash256 h[MAX_NAMES];
    size_t n;
};

static int collect(void *ctx, const struct store_entry *e)
{
    struct names *nm = ctx;
    if (nm->n < MAX_NAMES)
        nm->h[nm->n++] = e->h;
    return 0;
}

static int live_odd(void *ctx, const hash256 *h)
{
    (void)ctx;
    return h->b[0] & 1;
}

static void get_all(struct store *s, const struct names *nm)
{
    static uint8_t page[STORE_PAGE_SIZE];
    for (size_t i = 0; i < nm->n; i++) {
        store_has(s, &nm->h[i]);
        if (store_get(s, &nm->h[i], page) == 0) {
            hash256 got;
            hash_buf(page, sizeof(page), &got);
            RW_ASSERT(!memcmp(&got, &nm->h[i], sizeof(got)));
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fuzz_in in = {data, size};
    size_t ilen = (size_t)fuzz_take(&in, 2);
    if (ilen > in.n)
        ilen = in.n;
    char dir[512], p[700];
    fuzz_path(dir, sizeof(dir), "store");
    snprintf(p, sizeof(p), "%s/packs", dir);
    io_mkdir_p(p);
    snprintf(p, sizeof(p), "%s/index", dir);
    fuzz_write(p, in.p, ilen);
    snprintf(p, sizeof(p), "%s/packs/000001.pack", dir);
    fuzz_write(p, in.p + ilen, in.n - ilen);

    /* The names the index holds, read as the store reads them. */
    struct names nm = {.n = 0};
    struct store_index ix;
    snprintf(p, sizeof(p), "%s/index", dir);
    if (store_index_open(&ix, p) == 0) {
        struct store_index_scan sc;
        if (store_index_check_header(&ix) == 0)
            store_index_read(&ix, ix.off, collect, &nm, &sc);
        store_index_close(&ix);
    }

    struct store *s;
    char err[512];
    if (store_open(dir, &s, err, sizeof(err)) == 0) {
        get_all(s, &nm);
        static uint8_t page[STORE_PAGE_SIZE], back[STORE_PAGE_SIZE];
        memset(page, 0x5a, sizeof(page));
        memcpy(page, data, size < sizeof(page) ? size : sizeof(page));
        hash256 h;
        if (store_put(s, page, &h) == 0 && store_sync(s) == 0) {
            RW_ASSERT(store_get(s, &h, back) == 0);
            RW_ASSERT(!memcmp(page, back, sizeof(page)));
        }
        struct store_stats st;
        store_stats(s, &st);
        struct store_gc_stats gs;
        store_gc(s, live_odd, NULL, 0, &gs, err, sizeof(err));
        get_all(s, &nm);
        store_close(s);
    }
    fuzz_clear("store");
    return 0;
}
