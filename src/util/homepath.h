/*
 * homepath: the one place that knows the layout of $REWIND_HOME
 * (docs/formats.md, "The home"):
 *
 *   runs/<run>/            a stored run: spec.json, manifest.json, trace,
 *                          keyframes, states, inputs
 *   runs/.<id>.<pid>.<r>/  a run being written (staging; r: 8 random hex)
 *   runs/.import.<pid>.<r>/ an import being staged
 *   images/<hash>.erofs    root images by content
 *   images/index/<hash>    a root directory's file index (src/image/imgindex.c)
 *   store/                 the page store (src/store)
 *   gc.lock                the home lock (home/homelock.h)
 *
 * Invariants:
 *  1. Every path under a home is built by home_path; no other module
 *     formats "runs/", "images/" or "store" itself.
 *  2. A name or file that would leave its folder (empty, ".", "..", or
 *     holding '/') is refused, so a name read from an untrusted manifest,
 *     spec or archive can never reach outside the home.
 *  3. A staging directory's name is unique beyond the pid (home_stage_name:
 *     8 random hex digits after it) and is made with mkdir, never by
 *     removing what is there: two processes with one pid in two PID
 *     namespaces never share, nor delete, each other's staging (issue 27, 8).
 */
#ifndef REWIND_UTIL_HOMEPATH_H
#define REWIND_UTIL_HOMEPATH_H

#include <stddef.h>

enum home_place {
    HOME_ROOT,     /* the home itself (name, file: NULL) */
    HOME_RUNS,     /* runs/ (name: NULL) or runs/<name> */
    HOME_IMAGES,   /* images/ (name: NULL) or images/<name>.erofs */
    HOME_STORE,    /* store/ (name: NULL) */
    HOME_LOCK,     /* gc.lock */
    HOME_IMGINDEX, /* images/index/ (name: NULL) or images/index/<name>: a root's file index */
    HOME_CHECKS,   /* checks/ (name: NULL) or checks/<name>.json (src/explore/checkrec.h) */
};

/* Build the path of place/name/file under home into out: "runs" + name
 * "abc" + file "trace" gives "<home>/runs/abc/trace". name and file may be
 * NULL. Returns 0, or -1 with errno: EINVAL for an unsafe name or file (see
 * invariant 2), ENAMETOOLONG when it does not fit. */
int home_path(char *out, size_t outlen, const char *home, enum home_place place, const char *name,
              const char *file);

/* 1 if s is one safe path component (invariant 2), else 0. */
int home_safe_name(const char *s);

/* A staging directory name "<prefix>.<pid>.<8 random hex>" into out (n
 * bytes; invariant 3). 0, or -1 if it does not fit. */
int home_stage_name(char *out, size_t n, const char *prefix);

#endif
