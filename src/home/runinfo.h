/*
 * runinfo: a stored run's manifest and spec read into the public struct
 * rw_run_info (include/rewind.h), for `show`, `ls` and the fork tree.
 *
 * Invariants:
 *  1. The run's directory name comes from runs/ or from runref_resolve and
 *     is checked with home_safe_name before any path is built from it.
 *  2. A missing field leaves its member zero or empty: a manifest from an
 *     older rewind still loads.
 *  3. A count (steps, events, keyframes, keyframe_every) is in
 *     0..RUNINFO_COUNT_MAX: a manifest's negative or huge value reads as 0,
 *     so no reader's "count + 1" or "span / n" wraps (issue 27, 1).
 */
#ifndef REWIND_HOME_RUNINFO_H
#define REWIND_HOME_RUNINFO_H

#include "rewind.h"

/* The largest count a manifest may state (inv. 3). */
#define RUNINFO_COUNT_MAX (UINT64_C(1) << 62)

/* Load runs/<dir>/manifest.json of home into *info (raw texts too when
 * raw). ref is the reference named in an error. Returns 0, or -1 with err
 * (RW_EINTERNAL: unreadable or corrupt manifest). */
int runinfo_load(const char *home, const char *dir, const char *ref, int raw,
                 struct rw_run_info *info, struct rw_error *err);

/* Resolve ref under home to its directory name (dirname, RW_ID_MAX
 * bytes). Returns 0, or -1 with err (RW_EUSAGE). */
int runinfo_resolve(const char *home, const char *ref, char dirname[RW_ID_MAX],
                    struct rw_error *err);

#endif
