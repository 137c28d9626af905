/*
 * runlist: the listings of include/rewind.h: every run (rw_runs_list, for
 * `ls`) and the family tree of forks under one run (rw_forks, for
 * `ls --forks-of`).
 *
 * Invariants:
 *  1. Complete runs come newest first (runref_list's order); runs killed
 *     mid-way (staging directories ".<id>.<pid>") follow, only in an
 *     unfiltered listing, in directory order.
 *  2. The fork tree is walked at most RUNLIST_MAX_DEPTH generations deep, so
 *     a parent cycle in hand-edited manifests cannot recurse forever.
 */
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/apierr.h"
#include "util/homepath.h"
#include "home/runinfo.h"
#include "home/runref.h"
#include "rewind.h"
#include "util/check.h"

#define RUNLIST_MAX_DEPTH 64

/* 1 if name is one of the run's names (each ends in '\n' in in->names). */
static int named(const struct rw_run_info *in, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = in->names; *p;) {
        const char *nl = strchr(p, '\n');
        if (!nl)
            break;
        if ((size_t)(nl - p) == n && !memcmp(p, name, n))
            return 1;
        p = nl + 1;
    }
    return in->has_name && !strcmp(in->name, name);
}

static int matches(const struct rw_run_info *in, const struct rw_run_filter *f)
{
    if (f->name && !named(in, f->name))
        return 0;
    if (f->status && (!in->outcome[0] || strcmp(in->outcome, f->status)))
        return 0;
    if (f->since && in->created < f->since)
        return 0;
    return 1;
}

/* Runs killed mid-way: runs/.<id>.<pid> (not the ".old" of a replacement). */
static int list_incomplete(const char *home, rw_run_fn fn, void *ctx)
{
    char runs[PATH_MAX];
    if (home_path(runs, sizeof(runs), home, HOME_RUNS, NULL, NULL) < 0)
        return 0;
    DIR *d = opendir(runs);
    struct dirent *e;
    int stop = 0;
    while (!stop && d && (e = readdir(d))) {
        if (e->d_name[0] != '.' || !home_safe_name(e->d_name) || strstr(e->d_name, ".old"))
            continue;
        struct rw_run_info in;
        memset(&in, 0, sizeof(in));
        snprintf(in.id, sizeof(in.id), "%.63s", e->d_name + 1);
        char *dot = strchr(in.id, '.');
        if (dot)
            *dot = 0;
        snprintf(in.dir, sizeof(in.dir), "%s", e->d_name);
        if (home_path(in.path, sizeof(in.path), home, HOME_RUNS, e->d_name, NULL) < 0)
            continue;
        snprintf(in.outcome, sizeof(in.outcome), "incomplete");
        in.incomplete = 1;
        stop = fn(ctx, &in, NULL);
    }
    if (d)
        closedir(d);
    return stop;
}

int rw_runs_list(rw_home *h, const struct rw_run_filter *f, rw_run_fn fn, void *ctx,
                 struct rw_error *err)
{
    static const struct rw_run_filter all;
    const char *home = rw_home_path(h);
    f = f ? f : &all;
    char **names = NULL;
    int count = runref_list(home, &names);
    if (count < 0)
        return apierr_set(err, RW_EINTERNAL, "cannot read %s/runs", home);
    int stop = 0;
    for (int i = 0; i < count && !stop; i++) {
        struct rw_run_info in;
        struct rw_error why;
        if (runinfo_load(home, names[i], names[i], 0, &in, &why) < 0)
            stop = fn(ctx, NULL, &why);
        else if (matches(&in, f))
            stop = fn(ctx, &in, NULL);
    }
    runref_free(names, count);
    if (!stop && !f->name && !f->status && !f->since)
        list_incomplete(home, fn, ctx);
    return 0;
}

struct tree {
    struct rw_run_info *v;
    int n;
    rw_run_fn fn;
    void *ctx;
    int forks, stop;
};

static void walk(struct tree *t, const char *root, int generation)
{
    RW_ASSERT(generation <= RUNLIST_MAX_DEPTH);
    for (int i = 0; i < t->n && !t->stop; i++) {
        if (strcmp(t->v[i].parent, root))
            continue;
        t->v[i].generation = generation;
        t->forks++;
        t->stop = t->fn(t->ctx, &t->v[i], NULL);
        if (generation < RUNLIST_MAX_DEPTH)
            walk(t, t->v[i].id, generation + 1);
    }
}

int rw_forks(rw_home *h, const char *ref, char root[RW_ID_MAX], rw_run_fn fn, void *ctx,
             struct rw_error *err)
{
    const char *home = rw_home_path(h);
    struct rw_run_info in;
    if (runinfo_resolve(home, ref, root, err) < 0 || runinfo_load(home, root, ref, 0, &in, err) < 0)
        return -1;
    char **names = NULL;
    int count = runref_list(home, &names);
    if (count < 0)
        return apierr_set(err, RW_EINTERNAL, "cannot read %s/runs", home);
    struct tree t = {.v = calloc((size_t)count + 1, sizeof(*t.v)), .fn = fn, .ctx = ctx};
    for (int i = 0; t.v && i < count && !t.stop; i++) {
        struct rw_error why;
        if (runinfo_load(home, names[i], names[i], 0, &t.v[t.n], &why) < 0)
            t.stop = fn(ctx, NULL, &why);
        else
            t.n++;
    }
    if (t.v && !t.stop)
        walk(&t, root, 1);
    free(t.v);
    runref_free(names, count);
    return t.forks;
}
