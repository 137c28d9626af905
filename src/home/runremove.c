/*
 * runremove: `rewind remove` as a library (rw_remove in include/rewind.h).
 *
 * A run whose keyframes other runs build on (forks, shell sessions: their
 * keyframes file names it as its parent) is kept unless forced, because
 * removing it would cut their chains. A forced removal first gives every
 * run whose trace refers to its prefix (trace.h, version 2) a whole trace
 * of its own. Pages and images it alone used stay until rw_gc.
 *
 * Invariants:
 *  1. All references are resolved, and without force every run's children
 *     checked, before the first directory is removed: a typo removes
 *     nothing.
 *  2. Only directories under runs/ built by home_path are removed.
 *  3. A run is renamed out of sight before any file of it is removed
 *     (remove_one): no listing ever shows a half-removed run (issue 27, 9).
 *  4. rw_remove holds the home lock (shared) throughout.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "util/apierr.h"
#include "util/homepath.h"
#include "home/homelock.h"
#include "home/rundir.h"
#include "util/io.h"
#include "home/runinfo.h"
#include "home/runref.h"
#include "rewind.h"
#include "trace/keyframe.h"
#include "trace/trace.h"
#include "util/check.h"

/* Does run `run` build on run `name`: its keyframes or its trace (a prefix
 * reference, trace.h) name it as their parent? */
static int builds_on(const char *home, const char *run, const char *name)
{
    char path[PATH_MAX], parent[TRACE_REF_NAME];
    struct kf_file k;
    int on = 0;
    if (home_path(path, sizeof(path), home, HOME_RUNS, run, "keyframes") == 0 &&
        kf_open(path, &k) == 0) {
        on = !strcmp(k.parent, name);
        kf_close_read(&k);
    }
    if (!on && home_path(path, sizeof(path), home, HOME_RUNS, run, "trace") == 0 &&
        trace_parent(path, parent) == 0)
        on = !strcmp(parent, name);
    return on;
}

/* The runs not being removed whose trace refers to run `name` get a trace
 * of their own (a forced removal must not cut their history). 0 or -1. */
static int flatten_children(const char *home, const char *name, char (*gone)[RW_ID_MAX], int ngone)
{
    char **names = NULL;
    int count = runref_list(home, &names), rc = 0;
    for (int i = 0; i < count && rc == 0; i++) {
        int removed = 0;
        for (int j = 0; j < ngone; j++)
            removed |= !strcmp(gone[j], names[i]);
        char path[PATH_MAX], parent[TRACE_REF_NAME];
        if (!removed && home_path(path, sizeof(path), home, HOME_RUNS, names[i], "trace") == 0 &&
            trace_parent(path, parent) == 0 && !strcmp(parent, name))
            rc = trace_flatten(path);
    }
    if (count >= 0)
        runref_free(names, count);
    return rc;
}

/* How many runs not being removed build on `name` (their keyframes or
 * their trace name it as their parent); the first of them in `child`. */
static int children(const char *home, const char *name, char (*gone)[RW_ID_MAX], int ngone,
                    char child[RW_ID_MAX])
{
    char **names = NULL;
    int count = runref_list(home, &names), found = 0;
    for (int i = 0; i < count; i++) {
        int removed = 0;
        for (int j = 0; j < ngone; j++)
            removed |= !strcmp(gone[j], names[i]);
        if (!removed && builds_on(home, names[i], name) && !found++)
            snprintf(child, RW_ID_MAX, "%s", names[i]);
    }
    if (count >= 0)
        runref_free(names, count);
    return found;
}

/* Invariant 3: runs/<id> is renamed out of the listings' sight first
 * (".<id>.<pid>.<r>.old", as a replaced run goes: rundir.c), runs/ synced,
 * then the tree removed; a kill half-way leaves a hidden directory that
 * the next gc removes, never a run listed as complete with files missing. */
static int remove_one(const char *home, const char *id, const char *path)
{
    char prefix[RW_ID_MAX + 2], stage[128], old[PATH_MAX], runs[PATH_MAX];
    snprintf(prefix, sizeof(prefix), ".%.*s", RW_ID_MAX - 1, id[0] == '.' ? id + 1 : id);
    if (home_stage_name(stage, sizeof(stage) - 4, prefix) < 0)
        return -1;
    strcat(stage, ".old");
    if (home_path(old, sizeof(old), home, HOME_RUNS, stage, NULL) < 0 ||
        home_path(runs, sizeof(runs), home, HOME_RUNS, NULL, NULL) < 0)
        return -1;
    if (renameat2(AT_FDCWD, path, AT_FDCWD, old, RENAME_NOREPLACE) < 0 &&
        ((errno != EINVAL && errno != ENOSYS) || rename(path, old) < 0))
        return -1;
    io_fsync_dir(runs);
    return rundir_remove_tree(old);
}

static int remove_locked(rw_home *h, const char *const *refs, int n, int force,
                         void (*fn)(void *ctx, const char *id, const char *path, int removed),
                         void *ctx, struct rw_error *err);

int rw_remove(rw_home *h, const char *const *refs, int n, int force,
              void (*fn)(void *ctx, const char *id, const char *path, int removed), void *ctx,
              struct rw_error *err)
{
    /* invariant 4: shared, as runs and imports take it; gc (exclusive) never
     * reads a run while it is half removed */
    char why[512];
    int lock = homelock_take(rw_home_path(h), 0, 1, why, sizeof(why));
    if (lock < 0)
        return apierr_set(err, RW_EINTERNAL, "%s", why);
    int rc = remove_locked(h, refs, n, force, fn, ctx, err);
    homelock_release(lock);
    return rc;
}

static int remove_locked(rw_home *h, const char *const *refs, int n, int force,
                         void (*fn)(void *ctx, const char *id, const char *path, int removed),
                         void *ctx, struct rw_error *err)
{
    const char *home = rw_home_path(h);
    char ids[RW_REMOVE_MAX][RW_ID_MAX];
    if (n < 1 || n > RW_REMOVE_MAX)
        return apierr_set(err, RW_EUSAGE, "remove 1 to %d runs at a time", RW_REMOVE_MAX);
    for (int i = 0; i < n; i++) {
        struct rw_error why;
        if (runinfo_resolve(home, refs[i], ids[i], &why) < 0)
            return apierr_set(err, RW_EUSAGE, "%.900s (nothing removed)", why.msg);
    }
    for (int i = 0; i < n && !force; i++) {
        char child[RW_ID_MAX];
        int k = children(home, ids[i], ids, n, child);
        if (k)
            return apierr_set(err, RW_EUSAGE,
                              "run %s has %d fork%s starting from its keyframes (%s%s); remove "
                              "them too, or use --force (nothing removed)",
                              refs[i], k, k > 1 ? "s" : "", child, k > 1 ? ", ..." : "");
    }
    for (int i = 0; i < n; i++)
        if (flatten_children(home, ids[i], ids, n) < 0)
            return apierr_set(err, RW_EINTERNAL,
                              "cannot give the forks of run %s a trace of their own (nothing "
                              "removed)",
                              refs[i]);
    int rc = 0;
    for (int i = 0; i < n; i++) {
        char path[PATH_MAX];
        int ok = home_path(path, sizeof(path), home, HOME_RUNS, ids[i], NULL) == 0;
        RW_ASSERT(ok); /* invariant 2: the name passed home_safe_name in runinfo_resolve */
        ok = remove_one(home, ids[i], path) == 0;
        rc |= !ok;
        if (fn)
            fn(ctx, ids[i], path, ok);
    }
    return rc;
}
