/*
 * auxv: a process's auxiliary vector (AT_ENTRY, AT_PHDR, ...) as its kernel
 * saved it at exec, for gdb's qXfer:auxv:read (a position-independent
 * program is placed by it). docs/debugging.md.
 *
 * The guest kernel has no debug information, so the place of saved_auxv in
 * mm_struct is found in the process's own mm_struct: Linux 6.1 keeps
 * arg_start, arg_end, env_start, env_end and then saved_auxv[] in a row,
 * and the vector's shape is distinctive (type/value pairs of known types
 * ending in AT_NULL, with AT_PAGESZ = 4096, AT_PHDR and AT_ENTRY).
 *
 * Invariants:
 *  1. The vector returned passes gos_auxv_find's checks: every type is a
 *     known AT_ type, AT_NULL ends it within GOS_AUXV_WORDS words, AT_PAGESZ
 *     is 4096 and AT_PHDR and AT_ENTRY are user addresses; the four words
 *     before it are ordered user addresses (the argument and environment
 *     strings). Anything else is "not found", never a guess; the first
 *     fit after mm->pgd is the process's own.
 *  2. The mm_struct is read through gos_kread alone (bounds checked), over
 *     a bounded window after mm->pgd.
 */
#include "guestos/gos.h"

#include <string.h>

#include "util/check.h"

#define AT_NULL 0
#define AT_PHDR 3
#define AT_PAGESZ 6
#define AT_ENTRY 9
#define AT_MAX_TYPE 51 /* AT_MINSIGSTKSZ in Linux 6.1 */
#define USER_TOP (1ull << 47)
#define MM_WINDOW 1024 /* bytes of mm_struct after mm->pgd searched */

static int user_addr(uint64_t v)
{
    return v != 0 && v < USER_TOP;
}

/* Does a vector start at w[i]? Its length in words (the AT_NULL pair
 * included), or 0. */
static size_t vector_at(const uint64_t *w, size_t n, size_t i)
{
    if (i < 4)
        return 0;
    const uint64_t *a = w + i - 4; /* arg_start, arg_end, env_start, env_end */
    if (!user_addr(a[0]) || a[0] > a[1] || a[1] > a[2] || a[2] > a[3] || !user_addr(a[3]) ||
        a[3] - a[0] > (64ull << 20))
        return 0;
    int pagesz = 0, phdr = 0, entry = 0;
    for (size_t k = i; k + 1 < n && k - i < GOS_AUXV_WORDS; k += 2) {
        uint64_t type = w[k], val = w[k + 1];
        if (type == AT_NULL)
            return pagesz && phdr && entry ? k + 2 - i : 0;
        if (type > AT_MAX_TYPE)
            return 0;
        if (type == AT_PAGESZ)
            pagesz = val == 4096;
        if (type == AT_PHDR)
            phdr = user_addr(val);
        if (type == AT_ENTRY)
            entry = user_addr(val);
    }
    return 0;
}

int gos_auxv_find(const uint64_t *w, size_t n, size_t *start, size_t *len)
{
    /* The first fit: the window may run past this mm_struct into the next
     * object of its slab, never before it. */
    for (size_t i = 4; i < n; i++) {
        size_t l = vector_at(w, n, i);
        if (l) {
            *start = i;
            *len = l;
            return 0;
        }
    }
    return -1;
}

int gos_auxv(const struct gos *g, const struct gos_task *t, uint64_t *out, size_t max,
             size_t *count)
{
    if (t->kernel_thread || !t->mm)
        return -1;
    uint64_t w[MM_WINDOW / 8]; /* 1 KiB on the stack: no static buffer (reentrant) */
    uint64_t base = t->mm + g->lay.mm_pgd;
    if (gos_kread(g, base, w, sizeof(w)) < 0) /* invariant 2 */
        return -1;
    size_t start, len;
    if (gos_auxv_find(w, MM_WINDOW / 8, &start, &len) < 0 || len > max)
        return -1;
    RW_ASSERT(start + len <= MM_WINDOW / 8);
    memcpy(out, w + start, len * 8);
    *count = len;
    return 0;
}
