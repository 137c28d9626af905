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
 *  3. Every file of every run is checked, not only its keyframes: the
 *     manifest parses and names the run's directory, the spec parses, the
 *     trace reads whole and hashes to the manifest's trace_hash
 *     (tracehash.h), the keyframes hold no damage (keyframe.c inv. 3), and
 *     each root image a run names hashes to its name (issue 27, 5); the
 *     spec hashes to the run's id when the directory is shaped like one,
 *     and is the spec the manifest holds (what a replay runs); a fork's
 *     keyframes chain of parents loads; a shell session's inputs read whole
 *     and hash to the spec's inspect.inputs.
 *  4. What could not be checked (an allocation failed) is no verdict:
 *     rw_verify fails rather than report a run as checked or damaged.
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
#include "home/runinputs.h"
#include "trace/tracehash.h"
#include "util/hash.h"
#include <jansson.h>
#include <stdlib.h>
#include <unistd.h>

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

/* One run's check (invariant 3): the first run found damaged is named in
 * the report with every damage found in it, "; " between them. */
struct run_check {
    struct rw_verify_report *r;
    const char *run;
    int damaged;
};

static void damaged(struct run_check *rc, const char *fmt, const char *a)
{
    struct rw_verify_report *r = rc->r;
    if (!rc->damaged++ && !r->damaged_runs++)
        snprintf(r->damaged_run, sizeof(r->damaged_run), "%s", rc->run);
    if (strcmp(r->damaged_run, rc->run))
        return;
    size_t n = strlen(r->damage);
    if (n && n + 2 < sizeof(r->damage))
        n += (size_t)snprintf(r->damage + n, sizeof(r->damage) - n, "; ");
    if (n < sizeof(r->damage))
        snprintf(r->damage + n, sizeof(r->damage) - n, fmt, a);
}

/* Check that the image named hex hashes to its name; images already
 * checked are not read again (seen: their names, one per 65 bytes). -1
 * (ENOMEM) if it could not be checked (invariant 4). */
static int check_image(const char *home, const char *hex, struct run_check *rc, char **seen,
                       size_t *nseen)
{
    struct rw_verify_report *r = rc->r;
    for (size_t i = 0; i < *nseen; i++)
        if (!strcmp(*seen + 65 * i, hex))
            return 0;
    char *ns = realloc(*seen, 65 * (*nseen + 1));
    if (!ns) {
        errno = ENOMEM;
        return -1;
    }
    *seen = ns;
    snprintf(ns + 65 * (*nseen)++, 65, "%s", hex);
    char p[4300];
    if (home_path(p, sizeof(p), home, HOME_IMAGES, hex, NULL) < 0 || access(p, F_OK) != 0)
        return 0; /* gone: a run without its image is not replayable, not damaged */
    r->images_checked++;
    hash256 h;
    char got[65];
    if (hash_file(p, &h) < 0) {
        damaged(rc, "its root image %s cannot be read", hex);
        r->bad_images++;
        return 0;
    }
    hash_hex(&h, got);
    if (strcmp(got, hex)) { /* invariant 3 */
        if (!r->bad_images++)
            snprintf(r->first_bad_image, sizeof(r->first_bad_image), "%s", hex);
        damaged(rc, "its root image %s is damaged (its bytes hash to another name)", hex);
    }
    return 0;
}

/* A shell session's inputs hash to the spec's inspect.inputs (runinputs.h):
 * the id covers them (invariant 3). -1 (ENOMEM) if they could not be
 * checked (invariant 4). */
static int check_inputs(const char *home, const char *name, json_t *spec, struct run_check *rc)
{
    const char *want =
        json_string_value(json_object_get(json_object_get(spec, "inspect"), "inputs"));
    char p[4300], why[200];
    if (!want || !*want || home_path(p, sizeof(p), home, HOME_RUNS, name, "inputs") < 0)
        return 0;
    int r = runinputs_check(p, want, why, sizeof(why));
    if (r > 0)
        damaged(rc, "%s", why);
    return r < 0 ? -1 : 0;
}

/* 1 if name is shaped like a run id: 16 hex digits, maybe "~N" (a run
 * kept beside another of its spec, src/run/ctx.c). */
static int id_shaped(const char *name)
{
    size_t k = name[16] == '~' ? strspn(name + 17, "0123456789") : 0;
    return strspn(name, "0123456789abcdef") == 16 &&
           (!name[16] || (k >= 1 && k <= 9 && !name[17 + k]));
}

/* The spec of run name (invariant 3): it parses, hashes to the run's id
 * (spec_id: the SHA-256 of the canonical JSON spec.json holds), and is the
 * spec the manifest holds (the one a replay runs). */
static int check_spec(const char *home, const char *name, json_t *m, struct run_check *rc)
{
    int ret = 0;
    char p[4300], hex[65];
    json_error_t je;
    json_t *spec = home_path(p, sizeof(p), home, HOME_RUNS, name, "spec.json") == 0
                       ? json_load_file(p, 0, &je)
                       : NULL;
    hash256 h;
    json_t *ms = json_object_get(m, "spec");
    if (!json_is_object(spec))
        damaged(rc, "its spec is damaged (%s)", spec ? "not an object" : je.text);
    else if (id_shaped(name) &&
             (hash_file(p, &h) < 0 || (hash_hex(&h, hex), strncmp(hex, name, 16))))
        damaged(rc, "its spec does not hash to its id%s (a run's id is its spec's hash)", "");
    else if (ms && !json_equal(ms, spec))
        damaged(rc, "its manifest holds another spec than spec.json%s", "");
    if (json_is_object(spec))
        ret = check_inputs(home, name, spec, rc);
    json_decref(spec);
    return ret;
}

/* The files of run name (invariant 3); -1 (ENOMEM) if one could not be
 * checked (invariant 4). */
static int check_run_files(const char *home, const char *name, struct run_check *rcp, char **seen,
                           size_t *nseen)
{
    char p[4300], hex[65];
    json_error_t je;
    struct rw_verify_report *r = rcp->r;
    r->runs_checked++;
    json_t *m = home_path(p, sizeof(p), home, HOME_RUNS, name, "manifest.json") == 0
                    ? json_load_file(p, 0, &je)
                    : NULL;
    const char *id = json_string_value(json_object_get(m, "id"));
    size_t idl = id ? strlen(id) : 0;
    int ret = 0;
    if (!json_is_object(m) || !id) {
        damaged(rcp, "its manifest is damaged (%s)", m ? "no id" : je.text);
    } else if (strncmp(name, id, idl) || (name[idl] && name[idl] != '~')) {
        damaged(rcp, "its manifest names another run (%.64s)", id);
    } else {
        ret = check_spec(home, name, m, rcp);
        const char *want = json_string_value(json_object_get(m, "trace_hash"));
        uint64_t n;
        char runs[4200];
        int tr = home_path(p, sizeof(p), home, HOME_RUNS, name, "trace") == 0 &&
                         home_path(runs, sizeof(runs), home, HOME_RUNS, NULL, NULL) == 0
                     ? tracehash_file(p, runs, hex, &n)
                     : TRACEHASH_UNREADABLE;
        if (tr == TRACEHASH_TORN)
            damaged(rcp, "its trace is damaged or truncated%s", "");
        else if (tr != TRACEHASH_OK)
            damaged(rcp, "its trace cannot be read%s", "");
        else if (want && strcmp(want, hex))
            damaged(rcp, "its trace does not hash to the manifest's trace_hash %.16s", want);
        const char *img = json_string_value(json_object_get(json_object_get(m, "spec"), "image"));
        if (ret == 0 && img && strlen(img) == 64 && strspn(img, "0123456789abcdef") == 64)
            ret = check_image(home, img, rcp, seen, nseen);
    }
    json_decref(m);
    return ret;
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
    char *seen = NULL;
    size_t nseen = 0;
    int oom = 0;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') /* ., .., staging and import directories */
            continue;
        struct run_check rc = {.r = r, .run = e->d_name};
        if ((oom = check_run_files(home, e->d_name, &rc, &seen, &nseen) < 0))
            break;
        if (!s || home_path(kp, sizeof(kp), home, HOME_RUNS, e->d_name, "keyframes") < 0)
            continue;
        struct stat st;
        if (stat(kp, &st) < 0)
            continue;
        r->runs++;
        struct run_pages rp = {.s = s, .r = r, .run = e->d_name};
        errno = 0;
        if (kf_each_page(kp, on_page, &rp) < 0) {
            if ((oom = errno == ENOMEM)) /* invariant 4: not checked is no verdict */
                break;
            r->unreadable_runs++;
            damaged(&rc, "its keyframes are %s",
                    errno == EILSEQ ? "damaged (a bad record before the end)" : "unreadable");
            continue;
        }
        /* a fork's keyframes restore through its parents' (keyframe.h) */
        struct kf_chain ch;
        char why[300];
        if (kf_chain_load(home, e->d_name, &ch, why, sizeof(why)) < 0) {
            if ((oom = errno == ENOMEM))
                break;
            damaged(&rc, "its keyframes' chain of parents cannot be read (%s)", why);
        } else {
            kf_chain_free(&ch);
        }
    }
    free(seen);
    closedir(d);
    errno = oom ? ENOMEM : 0;
    return oom ? -1 : 0;
}

int rw_verify(rw_home *h, struct rw_verify_report *r, struct rw_error *err)
{
    memset(r, 0, sizeof(*r));
    const char *home = rw_home_path(h);
    char dir[4200], why[512];
    struct stat st;
    if (home_path(dir, sizeof(dir), home, HOME_STORE, NULL, NULL) < 0 || stat(dir, &st) < 0) {
        r->no_store = 1; /* the runs' own files are still checked */
        if (walk_runs(home, NULL, r) < 0)
            return apierr_set(err, RW_EINTERNAL, "cannot read the runs of %s: %s", home,
                              strerror(errno));
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
