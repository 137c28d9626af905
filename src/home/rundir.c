/*
 * rundir: see rundir.h.
 *
 * Invariants:
 *  1. runs/<id>/ only ever appears by rename() of a complete staging
 *     directory, so a reader never sees a half-written complete run.
 *  2. The staging name starts with '.', so listings can tell incomplete runs
 *     from complete ones.
 *  3. Every path is built by home_path from the home and a checked name.
 *  4. Replacing a stored run is one renameat2(RENAME_EXCHANGE): a crash at
 *     any point leaves runs/<id> as the old or the new run, never neither.
 *  5. A published run is durable: its directory is fsynced before the
 *     rename and runs/ after it.
 */
#include "home/rundir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/homepath.h"
#include "util/io.h"
#include "util/check.h"
#include "util/failpoint.h"

int rundir_write_file(const char *path, const char *text)
{
    char tmp[4200];
    snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid());
    FILE *f = fopen(tmp, "we");
    if (!f)
        return -1;
    int ok = fputs(text, f) >= 0;
    ok = (fflush(f) == 0) && ok;
    RW_FAILPOINT("rundir.write_file.fsync");
    ok = (fsync(fileno(f)) == 0) && ok;
    ok = (fclose(f) == 0) && ok;
    RW_FAILPOINT("rundir.write_file.rename");
    if (!ok || rename(tmp, path) < 0) {
        unlink(tmp);
        return -1;
    }
    return 0;
}

int rundir_remove_tree(const char *path)
{
    DIR *d = opendir(path);
    if (!d)
        return errno == ENOENT ? 0 : -1;
    struct dirent *e;
    int rc = 0;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        char p[4400];
        snprintf(p, sizeof(p), "%s/%s", path, e->d_name);
        struct stat st;
        if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode))
            rc |= rundir_remove_tree(p);
        else if (unlink(p) < 0)
            rc = -1;
    }
    closedir(d);
    if (rmdir(path) < 0)
        rc = -1;
    return rc;
}

/* Test hook: with REWIND_RUNDIR_CRASH=1 in the environment the process
 * _exit(99)s in the middle of publishing a run that replaces a stored one.
 * Tests use it to check invariant 4; nothing else sets it. */
static void crash_point(void)
{
    const char *t = getenv("REWIND_RUNDIR_CRASH");
    if (t && atoi(t) == 1)
        _exit(99);
}

/* runs/<stage_name>/<file> of d's home. */
static int stage_path(const struct rundir *d, const char *file, char *out, size_t n)
{
    return home_path(out, n, d->home, HOME_RUNS, d->stage_name, file);
}

int rundir_begin(struct rundir *d, const char *home, const char *id, const char *spec_json,
                 char *err, size_t errlen)
{
    memset(d, 0, sizeof(*d));
    char runs[4096], path[4200];
    snprintf(d->home, sizeof(d->home), "%s", home);
    char prefix[80];
    snprintf(prefix, sizeof(prefix), ".%.64s", id);
    if (home_stage_name(d->stage_name, sizeof(d->stage_name), prefix) < 0 ||
        home_path(runs, sizeof(runs), home, HOME_RUNS, NULL, NULL) < 0 ||
        home_path(d->staging, sizeof(d->staging), home, HOME_RUNS, d->stage_name, NULL) < 0 ||
        home_path(d->final, sizeof(d->final), home, HOME_RUNS, id, NULL) < 0) {
        snprintf(err, errlen, "bad run directory name '%s' under %s", id, home);
        return -1;
    }
    RW_ASSERT(d->stage_name[0] == '.'); /* invariant 2 */
    if (io_mkdir_p(runs) < 0) {
        snprintf(err, errlen, "cannot create %s: %s", runs, strerror(errno));
        return -1;
    }
    /* homepath.h inv. 3: made, never removed first (another process's) */
    if (mkdir(d->staging, 0755) < 0) {
        snprintf(err, errlen, "cannot create %s: %s", d->staging, strerror(errno));
        return -1;
    }
    d->open = 1;
    char manifest[256];
    snprintf(manifest, sizeof(manifest), "{\"id\":\"%s\",\"state\":\"running\"}\n", id);
    int ok = stage_path(d, "spec.json", path, sizeof(path)) == 0 &&
             rundir_write_file(path, spec_json) == 0;
    ok = ok && stage_path(d, "manifest.json", path, sizeof(path)) == 0 &&
         rundir_write_file(path, manifest) == 0;
    ok = ok && stage_path(d, "trace", path, sizeof(path)) == 0 &&
         trace_open_write(&d->trace, path) == 0;
    if (!ok) {
        snprintf(err, errlen, "cannot write the run directory %s: %s", d->staging, strerror(errno));
        rundir_abort(d);
        return -1;
    }
    return 0;
}

int rundir_finish_as(struct rundir *d, const char *name, const char *manifest_json, char *err,
                     size_t errlen)
{
    if (home_path(d->final, sizeof(d->final), d->home, HOME_RUNS, name, NULL) < 0) {
        snprintf(err, errlen, "bad run name '%s'", name);
        return -1;
    }
    return rundir_finish(d, manifest_json, err, errlen);
}

/* Publish without RENAME_EXCHANGE (a file system without it): move the old
 * run aside, then the new one in. A crash between the two renames leaves
 * the old run at runs/<stage>.old, which listings hide. 0, or -1 with err. */
static int publish_fallback(struct rundir *d, char *err, size_t errlen)
{
    char old[4200], old_name[sizeof(d->stage_name) + 8];
    snprintf(old_name, sizeof(old_name), "%s.old", d->stage_name);
    if (home_path(old, sizeof(old), d->home, HOME_RUNS, old_name, NULL) < 0) {
        snprintf(err, errlen, "run directory name too long under %s", d->home);
        return -1;
    }
    int had_old = rename(d->final, old) == 0;
    if (rename(d->staging, d->final) < 0) {
        snprintf(err, errlen, "cannot publish %s: %s", d->final, strerror(errno));
        if (had_old)
            rename(old, d->final);
        return -1;
    }
    if (had_old)
        rundir_remove_tree(old);
    return 0;
}

int rundir_finish(struct rundir *d, const char *manifest_json, char *err, size_t errlen)
{
    char path[4200];
    RW_ASSERT(d->open && d->stage_name[0] == '.'); /* invariant 1: only a staged run is published */
    RW_FAILPOINT("rundir.publish.trace_close");
    if (trace_close(&d->trace) < 0) {
        snprintf(err, errlen, "cannot write the trace in %s", d->staging);
        return -1;
    }
    /* a fork's first own entries are its parent's: refer to them too
     * (trace.h); on failure the trace stays as written */
    if (stage_path(d, "trace", path, sizeof(path)) == 0)
        trace_compact(path);
    if (stage_path(d, "manifest.json", path, sizeof(path)) < 0 ||
        rundir_write_file(path, manifest_json) < 0) {
        snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
        return -1;
    }
    char runs[4096];
    if (home_path(runs, sizeof(runs), d->home, HOME_RUNS, NULL, NULL) < 0) {
        snprintf(err, errlen, "bad home %s", d->home);
        return -1;
    }
    /* Invariant 5: the run's entries are durable before it is published. */
    RW_FAILPOINT("rundir.publish.fsync_staging");
    if (io_fsync_dir(d->staging) < 0) {
        snprintf(err, errlen, "cannot sync %s: %s", d->staging, strerror(errno));
        return -1;
    }
    /* Invariant 4: a stored run of the same name is swapped atomically with
     * the new one; the old one then sits at the staging name until removed. */
    RW_FAILPOINT("rundir.publish.rename");
    int swapped = 0;
    if (renameat2(AT_FDCWD, d->staging, AT_FDCWD, d->final, RENAME_EXCHANGE) == 0) {
        swapped = 1;
    } else if (errno == ENOENT) { /* no stored run of that name */
        if (rename(d->staging, d->final) < 0) {
            snprintf(err, errlen, "cannot publish %s: %s", d->final, strerror(errno));
            return -1;
        }
    } else if (publish_fallback(d, err, errlen) < 0) {
        return -1;
    }
    crash_point();
    RW_FAILPOINT("rundir.publish.fsync_runs");
    if (io_fsync_dir(runs) < 0) {
        snprintf(err, errlen, "cannot sync %s: %s", runs, strerror(errno));
        return -1;
    }
    if (swapped) { /* the old run, hidden from listings (".old") while it goes */
        char old[4200], old_name[sizeof(d->stage_name) + 8];
        snprintf(old_name, sizeof(old_name), "%s.old", d->stage_name);
        RW_FAILPOINT("rundir.publish.remove_old");
        if (home_path(old, sizeof(old), d->home, HOME_RUNS, old_name, NULL) == 0 &&
            rename(d->staging, old) == 0)
            rundir_remove_tree(old);
        else
            rundir_remove_tree(d->staging);
    }
    d->open = 0;
    return 0;
}

void rundir_abort(struct rundir *d)
{
    if (d->trace.f)
        trace_close(&d->trace);
    if (d->open)
        rundir_remove_tree(d->staging);
    d->open = 0;
}
