/*
 * archive: one run in one file (`rewind export` / `rewind import`), so a run
 * recorded on one machine can be read, and with --replayable replayed, on
 * another.
 *
 * Format (version 1), little-endian, written and read strictly in order:
 *   header  "RWARCH1\0" | u32 version (1) | u32 flags (bit 0: replayable) |
 *           run name (64 bytes, NUL padded): the run the archive is for
 *   entry   u32 kind | u32 name_len (<= 255) | u64 data_len | name | data
 *     kind 1 FILE   name "<run>/<file>", file one of manifest.json, spec.json,
 *                   trace, states, keyframes, inputs; data: the file's bytes
 *     kind 2 PAGE   name: 64 hex digits (the page's SHA-256); data: 4096 bytes
 *     kind 3 PAGEZ  as PAGE, data: one zstd frame of the 4096 bytes (< 4096)
 *     kind 4 IMAGE  name: 64 hex digits (SHA-256 of the image); data: the
 *                   root image (erofs) bytes
 *     kind 5 END    name empty; data (40 bytes): u64 number of entries before
 *                   it | SHA-256 of every byte before this entry
 *   Nothing may follow END. Runs appear in chain order (a keyframes file's
 *   parent run before the run), the archive's run last.
 *
 * A default archive holds the run's manifest.json, spec.json, trace and
 * states: enough to read it (ls, show, log, ps, events, diff). A replayable
 * one adds the keyframes of the whole chain (parents as runs of their own,
 * with their manifest, spec and trace), every page those keyframes name and
 * the root image of every run in it.
 *
 * Import trusts nothing: every length is bounded before use and nothing is
 * allocated from one; names are checked (run names [A-Za-z0-9_.~-], not
 * starting with '.', at most 63 bytes; only the file names above), each
 * page and image is re-hashed against its name, the END hash and count are
 * checked, a short file is "truncated at byte N", unknown kinds and
 * duplicates are refused. Files are staged in runs/.import.<pid>/, pages in
 * a staging file, images as images/<hex>.erofs.tmp.<pid>; only when all of
 * it checks out (and every page a keyframes file names is in the archive or
 * already stored, every parent run present, every manifest and spec parse,
 * a run directory is its manifest's id and, shaped like an id, its spec's
 * hash, the manifest holds that very spec (the one a replay runs), a shell
 * session's inputs hash to its spec's (runinputs.h), every
 * trace and keyframes file reads whole) are pages put in the store,
 * then images renamed into place, then run directories renamed to
 * runs/<name>, parents first. A run already present with identical files is
 * left as it is; one present with other content makes the import fail.
 * Export and import hold the home lock shared (see homelock.h).
 */
#ifndef REWIND_ARCHIVE_ARCHIVE_H
#define REWIND_ARCHIVE_ARCHIVE_H

#include <stddef.h>
#include <stdint.h>

#define ARCHIVE_MAGIC "RWARCH1"
#define ARCHIVE_VERSION 1
#define ARCHIVE_F_REPLAYABLE 1u
#define ARCHIVE_NAME_MAX 63

struct archive_stats {
    char run[64];       /* the archive's run */
    uint64_t runs;      /* runs in the archive (the run and its parents) */
    uint64_t events;    /* trace entries of the run */
    uint64_t keyframes; /* keyframes of the run's own keyframes file */
    uint64_t pages;     /* pages in the archive */
    uint64_t images;    /* root images in the archive */
    uint64_t bytes;     /* archive size */
    int already;        /* import: the run was already here, identical */
};

/* archive_export's flags: the keyframe chain, its pages and the root
 * images (REPLAYABLE); NO_IMAGE leaves the images out of a replayable
 * archive (import then finds them in its home or refuses). */
#define ARCHIVE_X_REPLAYABLE 1
#define ARCHIVE_X_NO_IMAGE 2
/* Write run directory name (under home/runs) as an archive to out_path ("-":
 * stdout; otherwise a temp file renamed over out_path when complete), with
 * what flags (ARCHIVE_X_*) add. Returns 0 with *st filled, or -1 with one
 * line in err. */
int archive_export(const char *home, const char *name, int flags, const char *out_path,
                   struct archive_stats *st, char *err, size_t errlen);

/* Read the archive at in_path ("-": stdin) into home, verifying all of it
 * first. Returns 0 with *st filled, or -1 with one line in err and nothing
 * added to home. */
int archive_import(const char *home, const char *in_path, struct archive_stats *st, char *err,
                   size_t errlen);

/* 1 if name is acceptable as a run directory name in an archive, else 0. */
int archive_valid_run_name(const char *name);

#endif
