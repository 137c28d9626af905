/*
 * rundir: a run's directory under $REWIND_HOME/runs/.
 *
 * A run is written into a staging directory runs/.<id>.<pid>/ (spec.json,
 * manifest.json with state "running", the trace) and renamed to runs/<id>/
 * when it ends, replacing an older run of the same spec. A run killed
 * mid-way stays as the staging directory: its manifest says "running", its
 * trace is readable up to the last whole record, and nothing else under
 * $REWIND_HOME is touched.
 */
#ifndef REWIND_HOME_RUNDIR_H
#define REWIND_HOME_RUNDIR_H

#include <stddef.h>

#include "trace/trace.h"

struct rundir {
    char home[4096];
    char stage_name[96]; /* ".<id>.<pid>" under runs/ */
    char staging[4096];
    char final[4096];
    struct trace_writer trace;
    int open;
};

/* Create the staging directory with spec.json, a "running" manifest and an
 * empty trace. Returns 0 or -1 with one line in err. */
int rundir_begin(struct rundir *d, const char *home, const char *id, const char *spec_json,
                 char *err, size_t errlen);

/* Close the trace, write manifest_json and publish the run as runs/<id>.
 * Returns 0 or -1 with one line in err. */
int rundir_finish(struct rundir *d, const char *manifest_json, char *err, size_t errlen);

/* Like rundir_finish, but publish as runs/<name> and leave runs/<id> alone. */
int rundir_finish_as(struct rundir *d, const char *name, const char *manifest_json, char *err,
                     size_t errlen);

/* Remove the staging directory (the run never started). */
void rundir_abort(struct rundir *d);

/* Write path atomically (temp + fsync + rename). Returns 0 or -1. */
int rundir_write_file(const char *path, const char *text);

/* rm -rf of a directory tree we created. Returns 0 or -1. */
int rundir_remove_tree(const char *path);

/* The empty file an import adds to each run it publishes: such a run is
 * never the stored reference of its spec (src/run/ctx.c,
 * check_against_stored; docs/reliability.md, "Imported archives"). */
#define RUNDIR_IMPORTED "imported"

#endif
