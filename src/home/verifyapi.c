/*
 * verifyapi: rw_verify (include/rewind.h), the full check that a restore
 * leaves out. A keyframe restore trusts the content checksum of the pages
 * this store compressed (store_load, src/store/codec.c invariant 3); this
 * re-hashes every stored page with SHA-256 and checks that every page each
 * run's keyframes name is in the store.
 *
 * Invariants:
 *  1. Nothing is changed: the store is opened read-only in effect (no put)
 *     and run directories are only read.
 *  2. A page counts as bad only if no stored copy of it re-hashes to its
 *     name; a run's page counts as missing only if the store has no entry
 *     for it (store_has; the zero page is always present).
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "util/apierr.h"
#include "home/homelock.h"
#include "util/homepath.h"
#include "rewind.h"
#include "store/store.h"
#include "trace/keyframe.h"
#include "util/hash.h"

struct run_pages {
    struct store *s;
    struct rw_verify_report *r;
    const char *run;
};

static void on_page(void *ctx, const hash256 *h)
{
    struct run_pages *rp = ctx;
    rp->r->named++;
    if (store_has(rp->s, h)) /* invariant 2 */
        return;
    if (!rp->r->missing) {
        snprintf(rp->r->missing_run, sizeof(rp->r->missing_run), "%s", rp->run);
        hash_hex(h, rp->r->first_missing);
    }
    rp->r->missing++;
}

static int walk_runs(const char *home, struct store *s, struct rw_verify_report *r)
{
    char runs[4200], kp[4200];
    if (home_path(runs, sizeof(runs), home, HOME_RUNS, NULL, NULL) < 0)
        return -1;
    DIR *d = opendir(runs);
    if (!d)
        return errno == ENOENT ? 0 : -1;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') /* ., .., staging and import directories */
            continue;
        if (home_path(kp, sizeof(kp), home, HOME_RUNS, e->d_name, "keyframes") < 0)
            continue;
        struct stat st;
        if (stat(kp, &st) < 0)
            continue;
        r->runs++;
        struct run_pages rp = {.s = s, .r = r, .run = e->d_name};
        if (kf_each_page(kp, on_page, &rp) < 0)
            r->unreadable_runs++;
    }
    closedir(d);
    return 0;
}

int rw_verify(rw_home *h, struct rw_verify_report *r, struct rw_error *err)
{
    memset(r, 0, sizeof(*r));
    const char *home = rw_home_path(h);
    char dir[4200], why[512];
    struct stat st;
    if (home_path(dir, sizeof(dir), home, HOME_STORE, NULL, NULL) < 0 || stat(dir, &st) < 0) {
        r->no_store = 1;
        return 0;
    }
    /* shared, as any reader: gc (exclusive) does not move pages under us */
    int lock = homelock_take(home, 0, 1, why, sizeof(why));
    if (lock < 0)
        return apierr_set(err, RW_EINTERNAL, "%s", why);
    struct store *s;
    int rc = -1;
    if (store_open(dir, &s, why, sizeof(why)) < 0) {
        apierr_set(err, RW_EINTERNAL, "cannot open the page store: %s", why);
        goto out;
    }
    struct store_verify_stats vs;
    if (store_verify(s, &vs) < 0) {
        apierr_set(err, RW_EINTERNAL, "cannot read the page store: %s", strerror(errno));
    } else if (walk_runs(home, s, r) < 0) {
        apierr_set(err, RW_EINTERNAL, "cannot read the runs of %s: %s", home, strerror(errno));
    } else {
        r->pages = vs.pages;
        r->summed = vs.summed;
        r->bad = vs.bad;
        if (vs.bad)
            hash_hex(&vs.first_bad, r->first_bad);
        rc = 0;
    }
    store_close(s);
out:
    homelock_release(lock);
    return rc;
}
