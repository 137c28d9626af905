/*
 * engine_via: the registry of engines (engine.h): `--via NAME` to the
 * engine's operations, and the calls every caller makes through them.
 * Apart from engine.c's shared parts, which the engines themselves use, so
 * that no engine file and engine.c need each other.
 */
#include <stdlib.h>
#include <string.h>

#include "explore/engine.h"
#include "util/check.h"
#include "util/fail.h"

#define fail util_fail

static const struct eng_ops *find(const char *via)
{
    if (!via || !strcmp(via, "local"))
        return &eng_local_ops;
    if (!strcmp(via, "slurm"))
        return &eng_slurm_ops;
    return NULL;
}

int eng_preflight(const char *via, char *err, size_t errlen)
{
    const struct eng_ops *ops = find(via);
    if (!ops)
        return fail(err, errlen, "--via takes local or slurm: %s", via);
    return ops->preflight ? ops->preflight(err, errlen) : 0;
}

struct eng *eng_open(const char *via, const struct eng_plan *p, char *err, size_t errlen)
{
    const struct eng_ops *ops = find(via);
    if (!ops) {
        fail(err, errlen, "--via takes local or slurm: %s", via ? via : "");
        return NULL;
    }
    RW_ASSERT(p->first >= 1 && p->first <= p->last);
    struct eng *e = calloc(1, sizeof(*e));
    if (!e) {
        fail(err, errlen, "out of memory");
        return NULL;
    }
    e->ops = ops;
    e->plan = *p;
    if (ops->start(e, err, errlen) < 0) {
        ops->close(e);
        free(e);
        return NULL;
    }
    return e;
}

int eng_next(struct eng *e, struct eng_outcome *out, volatile sig_atomic_t *abort, char *err,
             size_t errlen)
{
    memset(out, 0, sizeof(*out));
    int rc = e->ops->next(e, out, abort, err, errlen);
    if (rc < 0)
        e->ops->cancel(e);
    RW_ASSERT(rc != 1 || (out->schedule >= e->plan.first && out->schedule <= e->plan.last));
    return rc;
}

void eng_cancel(struct eng *e)
{
    if (e)
        e->ops->cancel(e);
}

void eng_close(struct eng *e)
{
    if (!e)
        return;
    e->ops->cancel(e); /* invariant 4 */
    e->ops->close(e);
    free(e);
}
