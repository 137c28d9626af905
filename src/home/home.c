/*
 * home: the public handle of a $REWIND_HOME (rw_home in include/rewind.h)
 * and run references. A handle holds the home's absolute path; the runs,
 * images and store below it are found through home/paths.h.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "home/paths.h"
#include "home/runref.h"
#include "rewind.h"
#include "util/check.h"

struct rw_home {
    char path[PATH_MAX];
};

static int err_set(struct rw_error *err, int code, const char *msg, const char *arg)
{
    if (err) {
        err->code = code;
        snprintf(err->msg, sizeof(err->msg), "%s%s%s", msg, arg ? ": " : "", arg ? arg : "");
    }
    return -1;
}

static int mkdir_p(char *path)
{
    for (char *s = path + 1; *s; s++) {
        if (*s != '/')
            continue;
        *s = 0;
        int r = mkdir(path, 0755);
        *s = '/';
        if (r < 0 && errno != EEXIST)
            return -1;
    }
    return mkdir(path, 0755) < 0 && errno != EEXIST ? -1 : 0;
}

int rw_home_open(const char *path, rw_home **out, struct rw_error *err)
{
    char buf[PATH_MAX];
    const char *h = path && *path ? path : getenv("REWIND_HOME");
    if (!h || !*h) {
        const char *u = getenv("HOME");
        if (snprintf(buf, sizeof(buf), "%s/.local/share/rewind", u && *u ? u : "/tmp") >=
            (int)sizeof(buf))
            return err_set(err, RW_EUSAGE, "$HOME is too long", NULL);
        h = buf;
    }
    rw_home *r = calloc(1, sizeof(*r));
    if (!r)
        return err_set(err, RW_EINTERNAL, "out of memory", NULL);
    if (snprintf(r->path, sizeof(r->path), "%s", h) >= (int)sizeof(r->path) ||
        mkdir_p(r->path) < 0) {
        free(r);
        return err_set(err, RW_EINTERNAL, "cannot create the home", strerror(errno));
    }
    char real[PATH_MAX];
    if (realpath(r->path, real))
        snprintf(r->path, sizeof(r->path), "%s", real);
    *out = r;
    return 0;
}

void rw_home_close(rw_home *h)
{
    free(h);
}

const char *rw_home_path(const rw_home *h)
{
    RW_ASSERT(h);
    return h->path;
}

int rw_resolve(rw_home *h, const char *ref, char id[RW_ID_MAX], struct rw_error *err)
{
    char dir[PATH_MAX], msg[512];
    if (runref_resolve(h->path, ref, dir, sizeof(dir), msg, sizeof(msg)) < 0)
        return err_set(err, RW_EUSAGE, msg, NULL);
    const char *base = strrchr(dir, '/');
    base = base ? base + 1 : dir;
    size_t n = strlen(base);
    if (n >= RW_ID_MAX)
        return err_set(err, RW_EINTERNAL, "run directory name too long", base);
    memcpy(id, base, n + 1);
    return 0;
}
