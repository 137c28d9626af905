/*
 * rungc: `rewind gc` as a library: delete the pages and root images no run
 * needs any more.
 *
 * Live set: every page hash named by the keyframes file of every directory
 * under runs/ (complete runs, and staging directories of runs killed
 * mid-way: their keyframes are read up to the torn tail) and every image
 * named by a run's manifest ("spec"."image") or spec.json ("image"). It is
 * computed under the home lock held exclusive (see homelock.h), so no run,
 * import or export is in flight; then dead pages go by store_gc (crash-safe)
 * and dead images/<hex>.erofs by unlink. Anything doubtful keeps: a
 * keyframes file that cannot be read stops the gc before it deletes a thing;
 * a manifest or spec that cannot be parsed keeps every image.
 *
 * Also removed: abandoned import staging directories runs/.import.<pid>/
 * (every importer holds the lock, so under it they are leftovers of a crash)
 * and stray temporary files in images/ ("*.tmp.*", ".tmp-*") older than an
 * hour. A dry run takes the lock shared (it deletes nothing, and need not
 * wait for runs) and reports what a gc would remove now.
 */
#ifndef REWIND_HOME_RUNGC_H
#define REWIND_HOME_RUNGC_H

#include <stddef.h>
#include <stdint.h>

#define RUNGC_MAX_NAMES 64 /* dead image names kept for the report */

struct rungc_stats {
    uint64_t runs;            /* run directories read (killed runs included) */
    uint64_t killed_runs;     /* of which staging directories of unfinished runs */
    uint64_t live_pages;      /* stored pages some run needs */
    uint64_t dead_pages;      /* stored pages removed (dry run: would be) */
    uint64_t corrupt_pages;   /* live pages found corrupt while copied (lost anyway) */
    uint64_t bytes_before;    /* page store pack bytes before */
    uint64_t bytes_after;     /* and after (dry run: estimated) */
    int no_store;             /* there is no page store (nothing to collect) */
    uint64_t live_images;     /* images/<hex>.erofs some run names */
    uint64_t dead_images;     /* images removed (dry run: would be) */
    uint64_t dead_image_bytes;
    char dead_image_names[RUNGC_MAX_NAMES][65]; /* the first RUNGC_MAX_NAMES of them */
    int images_kept;          /* a run's spec was unreadable: no image removed */
    char unreadable_run[256]; /* that run's directory name */
    uint64_t temp_files;      /* stray temp files removed (dry run: would be) */
    uint64_t temp_bytes;
    uint64_t imports;         /* abandoned import directories removed */
};

/* Collect garbage in home. wait: if runs are in flight, print one line and
 * wait for them (else fail). dry_run: change nothing, report. Returns 0 with
 * *st filled, or -1 with one line in err (then nothing was deleted, unless
 * err says otherwise). */
int rungc_run(const char *home, int dry_run, int wait, struct rungc_stats *st, char *err,
              size_t errlen);

#endif
