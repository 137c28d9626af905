/*
 * runref: see runref.h. "Newest" is by the manifest's "created" time, then
 * by name, so the order is stable. A "created" more than a day in the
 * future (a hand-made manifest's; import refuses it) counts as the oldest,
 * so no run can stay "@" by claiming a far-off date. A reference is tried as a directory name or id
 * first (a killed run's staging directory ".<id>.<pid>" too), then as a name (every name a run was
 * given: home/runnames.h), then as a prefix: no manifest can make an id resolve to another run.
 */
#include "home/runref.h"

#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <time.h>

#include "util/homepath.h"
#include "home/runnames.h"

struct ent {
    char *name; /* directory name under runs/ */
    char *id;   /* run id (for a staging dir ".<id>.<pid>": the id part) */
    int incomplete;
    long long created;
    json_t *names; /* every --name given (runnames_of) */
};

static int by_newest(const void *a, const void *b)
{
    const struct ent *x = a, *y = b;
    if (x->created != y->created)
        return x->created < y->created ? 1 : -1;
    return strcmp(y->name, x->name);
}

static int load(const char *home, struct ent **out)
{
    char runs[PATH_MAX];
    if (home_path(runs, sizeof(runs), home, HOME_RUNS, NULL, NULL) < 0)
        return -1;
    DIR *d = opendir(runs);
    if (!d)
        return errno == ENOENT ? 0 : -1;
    struct ent *v = NULL;
    int n = 0, cap = 0;
    struct dirent *e;
    long long now = (long long)time(NULL);
    while ((e = readdir(d))) {
        int incomplete = e->d_name[0] == '.';
        if (incomplete &&
            (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") || strstr(e->d_name, ".old")))
            continue;
        char mp[PATH_MAX];
        json_error_t je;
        json_t *m = home_path(mp, sizeof(mp), home, HOME_RUNS, e->d_name, "manifest.json") < 0
                        ? NULL
                        : json_load_file(mp, 0, &je); /* NULL if corrupt: still listed */
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            struct ent *nv = realloc(v, (size_t)cap * sizeof(*v));
            if (!nv) {
                json_decref(m);
                break;
            }
            v = nv;
        }
        v[n].name = strdup(e->d_name);
        v[n].id = strdup(e->d_name + incomplete);
        if (incomplete && strchr(v[n].id, '.'))
            *strchr(v[n].id, '.') = 0;
        v[n].incomplete = incomplete;
        v[n].created = (long long)json_integer_value(json_object_get(m, "created"));
        if (v[n].created > now + 86400 || v[n].created < 0)
            v[n].created = 0; /* no run comes from the future */
        v[n].names = m ? runnames_of(m) : NULL;
        n++;
        json_decref(m);
    }
    closedir(d);
    qsort(v, (size_t)n, sizeof(*v), by_newest);
    *out = v;
    return n;
}

static void unload(struct ent *v, int n)
{
    for (int i = 0; i < n; i++) {
        free(v[i].name);
        free(v[i].id);
        json_decref(v[i].names);
    }
    free(v);
}

int runref_list(const char *home, char ***out)
{
    struct ent *v = NULL;
    int n = load(home, &v);
    if (n < 0)
        return -1;
    char **names = calloc((size_t)n + 1, sizeof(char *));
    int k = 0;
    for (int i = 0; names && i < n; i++)
        if (!v[i].incomplete)
            names[k++] = strdup(v[i].name);
    unload(v, n);
    if (!names)
        return -1;
    *out = names;
    return k;
}

void runref_free(char **names, int n)
{
    for (int i = 0; i < n; i++)
        free(names[i]);
    free(names);
}

int runref_resolve(const char *home, const char *ref, char *dir, size_t dirlen, char *err,
                   size_t errlen)
{
    struct ent *v = NULL;
    int n = load(home, &v);
    if (n < 0) {
        snprintf(err, errlen, "cannot read %s/runs: %s", home, strerror(errno));
        return -1;
    }
    int pick = -1, matches = 0;
    if (ref[0] == '@') {
        char *end;
        long k = ref[1] ? strtol(ref + 1, &end, 10) : 1;
        if (ref[1] && (*end || k < 1)) {
            snprintf(err, errlen, "bad run reference '%s' (use @ or @N, N >= 1)", ref);
            unload(v, n);
            return -1;
        }
        for (int i = 0; i < n && pick < 0; i++)
            if (!v[i].incomplete && --k == 0)
                pick = i, matches = 1;
    } else {
        /* A directory name or id first (complete runs, then runs killed
         * mid-way: by id, or by their directory ".<id>.<pid>", the only way
         * to name one beside a complete run of its id), then a name given
         * to a run, newest first. */
        for (int pass = 0; pass < 3 && pick < 0; pass++)
            for (int i = 0; i < n; i++)
                if ((pass == 0 && !v[i].incomplete && !strcmp(v[i].name, ref)) ||
                    (pass == 1 && v[i].incomplete &&
                     (!strcmp(v[i].id, ref) || !strcmp(v[i].name, ref))) ||
                    (pass == 2 && !v[i].incomplete && runnames_in(v[i].names, ref))) {
                    pick = i;
                    matches = 1;
                    break;
                }
        if (pick < 0 && strlen(ref) >= 4)
            for (int i = 0; i < n; i++)
                if (!strncmp(v[i].id, ref, strlen(ref)) && !strchr(v[i].name, '~') &&
                    !v[i].incomplete) {
                    if (matches++ == 0)
                        pick = i;
                }
    }
    int rc = 0;
    if (matches == 0) {
        snprintf(err, errlen, "no run matches '%s' (see rewind ls)", ref);
        rc = -1;
    } else if (matches > 1) {
        snprintf(err, errlen, "'%s' matches %d runs: give more of the id", ref, matches);
        rc = -1;
    } else if (home_path(dir, dirlen, home, HOME_RUNS, v[pick].name, NULL) < 0) {
        snprintf(err, errlen, "run directory name too long: %s", v[pick].name);
        rc = -1;
    }
    unload(v, n);
    return rc;
}
