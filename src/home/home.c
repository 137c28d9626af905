/*
 * home: the public handle of a $REWIND_HOME (rw_home in include/rewind.h).
 * A handle holds the home's absolute path; the runs, images and store below
 * it are found through util/homepath.h. Run references (rw_resolve) are
 * runinfo.c's, which uses this handle: the one direction between them.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "util/apierr.h"
#include "util/homepath.h"
#include "rewind.h"
#include "util/check.h"
#include "util/io.h"

struct rw_home {
    char path[PATH_MAX];
};

int rw_home_open(const char *path, rw_home **out, struct rw_error *err)
{
    char buf[PATH_MAX];
    const char *h = path && *path ? path : getenv("REWIND_HOME");
    if (!h || !*h) {
        const char *u = getenv("HOME");
        if (snprintf(buf, sizeof(buf), "%s/.local/share/rewind", u && *u ? u : "/tmp") >=
            (int)sizeof(buf))
            return apierr_set(err, RW_EUSAGE, "$HOME is too long");
        h = buf;
    }
    rw_home *r = calloc(1, sizeof(*r));
    if (!r)
        return apierr_set(err, RW_EINTERNAL, "out of memory");
    if (snprintf(r->path, sizeof(r->path), "%s", h) >= (int)sizeof(r->path) ||
        io_mkdir_p(r->path) < 0) {
        int e = errno;
        free(r);
        return apierr_set(err, RW_EINTERNAL, "cannot create the home: %s", strerror(e));
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
