/*
 * fuzz_keyframes: the keyframes reader (src/trace/keyframe.c): the index
 * kf_open builds, each keyframe's state and page list, the chain through
 * parents and the page map at a keyframe.
 *
 * Input: the bytes of runs/r/keyframes of a scratch home (a parent named in
 * the header resolves to nothing, or to r itself: both must be refused).
 *
 * Invariants:
 *  1. Whatever the bytes, every reader returns with 0 or -1 (no crash, no
 *     sanitizer report), and what it hands back is in bounds.
 */
#include "fuzz.h"
#include "trace/keyframe.h"
#include "util/check.h"

#define NPFN 4096 /* page map size asked for: pages past it must be refused */

static void each(void *ctx, const hash256 *h)
{
    (void)h;
    (*(uint64_t *)ctx)++;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char home[512], p[600];
    fuzz_run_file(home, sizeof(home), "keyframes", data, size, p, sizeof(p));

    struct kf_file k;
    if (kf_open(p, &k) == 0) {
        for (size_t i = 0; i < k.n && i < 64; i++) {
            void *state = NULL;
            uint32_t len = 0;
            if (kf_read_state(&k, i, &state, &len) == 0)
                RW_ASSERT(len == k.e[i].state_len);
            free(state);
            struct kf_page *pages = NULL;
            if (kf_read_pages(&k, i, &pages) == 0 && k.e[i].npages)
                RW_ASSERT(pages != NULL);
            free(pages);
        }
        kf_close_read(&k);
    }
    uint64_t n = 0;
    kf_each_page(p, each, &n);

    static struct kf_chain c;
    static hash256 map[NPFN];
    char err[512];
    if (kf_chain_load(home, "r", &c, err, sizeof(err)) == 0) {
        size_t link, idx;
        if (kf_chain_find(&c, UINT64_MAX, &link, &idx) == 0)
            kf_chain_map(&c, link, idx, map, NPFN, err, sizeof(err));
        kf_chain_free(&c);
    }
    fuzz_clear("home");
    return 0;
}
