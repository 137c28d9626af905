/*
 * kfalloc_test: issue 27, finding 4's second half: "a failed allocation
 * while reading [a keyframes file] does the same" (gc deleted the pages of
 * the keyframes it could not index). The engine's malloc and realloc are
 * wrapped (-Wl,--wrap, the Makefile's line for this test): with fail_at
 * set to N, the N-th call from now returns NULL, once. For every N up to
 * the number of calls a whole gc (and a whole verify) makes:
 *  - gc either fails or frees nothing: every page the run's keyframes
 *    name, its image and its directory are still there;
 *  - verify either fails, or says the run is damaged or unreadable, or
 *    gives the very report it gives with no failure: a failed allocation
 *    never makes a run look checked when it was not.
 * (No production code changes for this: the seam is the linker's.)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "home/rungc.h"
#include "rewind.h"
#include "runfix.h"
#include "trace/tracehash.h"
#include "unit.h"

void *__real_malloc(size_t n);
void *__real_realloc(void *p, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_realloc(void *p, size_t n);

static long fail_at; /* 0: never; N: the N-th call from now fails */
static long calls;   /* calls since armed */
static int failed;   /* the armed failure happened */

static int fail_now(void)
{
    if (!fail_at)
        return 0;
    if (++calls != fail_at)
        return 0;
    failed = 1;
    return 1;
}

void *__wrap_malloc(size_t n)
{
    return fail_now() ? NULL : __real_malloc(n);
}

void *__wrap_realloc(void *p, size_t n)
{
    return fail_now() ? NULL : __real_realloc(p, n);
}

static void arm(long n)
{
    calls = 0;
    failed = 0;
    fail_at = n;
}

static char top[64];
static hash256 pages[6];
static char img[65], id[17];

/* a home with one run (its id its spec's hash): an image, 6 pages in 3
 * keyframes, the manifest's trace_hash that of its trace */
static const char *make_home(void)
{
    static char h[128];
    snprintf(h, sizeof(h), "%s/home", top);
    return fix_traced_home(h, img, id, pages) == 0 ? h : NULL;
}

static int all_kept(const char *home)
{
    char p[4500];
    int ok = 1;
    for (int i = 0; i < 6; i++)
        ok &= fix_page_readable(home, &pages[i]);
    snprintf(p, sizeof(p), "%s/images/%s.erofs", home, img);
    ok &= access(p, F_OK) == 0;
    snprintf(p, sizeof(p), "%s/runs/%s/keyframes", home, id);
    return ok && access(p, F_OK) == 0;
}

static int verify(const char *home, struct rw_verify_report *r)
{
    struct rw_error err;
    rw_home *h = NULL;
    memset(r, 0, sizeof(*r));
    int rc = rw_home_open(home, &h, &err) < 0 ? -1 : rw_verify(h, r, &err);
    rw_home_close(h);
    return rc;
}

static int same_report(const struct rw_verify_report *a, const struct rw_verify_report *b)
{
    return a->pages == b->pages && a->summed == b->summed && a->bad == b->bad &&
           a->runs == b->runs && a->named == b->named && a->missing == b->missing &&
           a->unreadable_runs == b->unreadable_runs && a->runs_checked == b->runs_checked &&
           a->damaged_runs == b->damaged_runs && a->images_checked == b->images_checked &&
           a->bad_images == b->bad_images;
}

static void test_gc(const char *home)
{
    struct rungc_stats st;
    char err[512];
    arm(1000000000L); /* count only */
    int rc = rungc_run(home, 0, 0, &st, err, sizeof(err));
    long total = calls;
    arm(0);
    CHECK(rc == 0 && st.dead_pages == 0 && all_kept(home), "a whole gc keeps everything");
    CHECK(total > 5, "gc allocates");
    long refused = 0, kept = 0;
    for (long n = 1; n <= total; n++) {
        arm(n);
        rc = rungc_run(home, 0, 0, &st, err, sizeof(err));
        int hit = failed;
        arm(0);
        refused += rc < 0;
        int ok = all_kept(home);
        kept += ok;
        if (!ok)
            fprintf(stderr, "  allocation %ld of %ld failed (%s), gc returned %d: pages lost\n", n,
                    total, hit ? "hit" : "not reached", rc);
        if (!ok)
            break;
    }
    fprintf(stderr, "  gc: %ld allocations, each failed once: %ld refused, nothing lost in %ld\n",
            total, refused, kept);
    CHECK(kept == total, "gc frees nothing whichever allocation fails");
    CHECK(refused > 0, "and refuses when it cannot read what it must keep");
}

static void test_verify(const char *home)
{
    struct rw_verify_report whole, r;
    arm(1000000000L);
    int rc = verify(home, &whole);
    long total = calls;
    arm(0);
    CHECK(rc == 0 && whole.damaged_runs == 0 && whole.runs_checked == 1 && whole.runs == 1 &&
              whole.named == 6 && whole.images_checked == 1 && !whole.missing,
          "a whole home verifies");
    long lied = 0, told = 0;
    for (long n = 1; n <= total; n++) {
        arm(n);
        rc = verify(home, &r);
        arm(0);
        if (rc < 0 || r.damaged_runs || r.unreadable_runs)
            told++;
        else if (!same_report(&r, &whole)) {
            lied++;
            fprintf(stderr,
                    "  allocation %ld of %ld failed: verify says fine with named %llu runs %llu "
                    "images %llu\n",
                    n, total, (unsigned long long)r.named, (unsigned long long)r.runs,
                    (unsigned long long)r.images_checked);
        }
    }
    fprintf(stderr, "  verify: %ld allocations, each failed once: %ld reported, %ld hidden\n",
            total, told, lied);
    CHECK(lied == 0, "verify never reports a run it could not check as checked");
    CHECK(told > 0, "and says so when an allocation fails");
}

int main(void)
{
    (void)fix_snapshot;
    snprintf(top, sizeof(top), "/tmp/kfalloc_test.%d", (int)getpid());
    rundir_remove_tree(top);
    const char *home = make_home();
    CHECK(home != NULL, "fixture home");
    if (home) {
        test_gc(home);
        test_verify(home);
    }
    rundir_remove_tree(top);
    return unit_done();
}
