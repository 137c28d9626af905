/*
 * archive_api: rw_export and rw_import (include/rewind.h), the public face
 * of archive.h: the same export and import, their figures copied into the
 * public struct rw_archive_stats.
 */
#include <stdio.h>
#include <string.h>

#include "archive/archive.h"
#include "util/apierr.h"
#include "util/homepath.h"
#include "rewind.h"

static void copy_stats(const struct archive_stats *a, struct rw_archive_stats *st)
{
    snprintf(st->run, sizeof(st->run), "%s", a->run);
    st->runs = a->runs;
    st->events = a->events;
    st->keyframes = a->keyframes;
    st->pages = a->pages;
    st->images = a->images;
    st->bytes = a->bytes;
    st->already = a->already;
}

int rw_export(rw_home *h, const char *id, int flags, const char *out, struct rw_archive_stats *st,
              struct rw_error *err)
{
    struct archive_stats a;
    char msg[1024];
    memset(st, 0, sizeof(*st));
    if (!home_safe_name(id))
        return apierr_set(err, RW_EUSAGE, "bad run name '%s'", id);
    if ((flags & ~(RW_EXPORT_REPLAYABLE | RW_EXPORT_NO_IMAGE)) ||
        (flags & (RW_EXPORT_REPLAYABLE | RW_EXPORT_NO_IMAGE)) == RW_EXPORT_NO_IMAGE)
        return apierr_set(
            err, RW_EUSAGE,
            "bad export flags %#x (RW_EXPORT_NO_IMAGE goes with RW_EXPORT_REPLAYABLE)",
            (unsigned)flags);
    if (archive_export(rw_home_path(h), id,
                       ((flags & RW_EXPORT_REPLAYABLE) ? ARCHIVE_X_REPLAYABLE : 0) |
                           ((flags & RW_EXPORT_NO_IMAGE) ? ARCHIVE_X_NO_IMAGE : 0),
                       out, &a, msg, sizeof(msg)) < 0)
        return apierr_set(err, RW_EINTERNAL, "%s", msg);
    copy_stats(&a, st);
    return 0;
}

int rw_import(rw_home *h, const char *in, struct rw_archive_stats *st, struct rw_error *err)
{
    struct archive_stats a;
    char msg[1024];
    memset(st, 0, sizeof(*st));
    if (archive_import(rw_home_path(h), in, &a, msg, sizeof(msg)) < 0)
        return apierr_set(err, RW_EINTERNAL, "%s", msg);
    copy_stats(&a, st);
    return 0;
}
