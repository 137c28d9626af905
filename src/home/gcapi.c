/*
 * gcapi: rw_gc (include/rewind.h), the public face of rungc.h: the same
 * collection, its figures copied into the public struct rw_gc_stats.
 */
#include <stdio.h>
#include <string.h>

#include "util/apierr.h"
#include "home/rungc.h"
#include "rewind.h"

_Static_assert(RW_GC_MAX_NAMES == RUNGC_MAX_NAMES, "one report size for dead image names");

int rw_gc(rw_home *h, int dry_run, int wait, struct rw_gc_stats *st, struct rw_error *err)
{
    struct rungc_stats s;
    char msg[1024];
    memset(st, 0, sizeof(*st));
    if (rungc_run(rw_home_path(h), dry_run, wait, &s, msg, sizeof(msg)) < 0)
        return apierr_set(err, RW_EINTERNAL, "%s", msg);
    *st = (struct rw_gc_stats){
        .runs = s.runs,
        .killed_runs = s.killed_runs,
        .live_pages = s.live_pages,
        .dead_pages = s.dead_pages,
        .corrupt_pages = s.corrupt_pages,
        .bytes_before = s.bytes_before,
        .bytes_after = s.bytes_after,
        .no_store = s.no_store,
        .live_images = s.live_images,
        .dead_images = s.dead_images,
        .dead_image_bytes = s.dead_image_bytes,
        .images_kept = s.images_kept,
        .temp_files = s.temp_files,
        .temp_bytes = s.temp_bytes,
        .imports = s.imports,
    };
    memcpy(st->dead_image_names, s.dead_image_names, sizeof(st->dead_image_names));
    snprintf(st->unreadable_run, sizeof(st->unreadable_run), "%s", s.unreadable_run);
    return 0;
}
