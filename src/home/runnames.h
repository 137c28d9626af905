/*
 * runnames: the names a run answers to (docs/reliability.md, "Names").
 * A --name is an alias a user chose: every name ever given to a run keeps
 * resolving, even when a later run of the same spec (the same id) replaces
 * the stored one with another name or none. The manifest holds them:
 *
 *   "names": ["a", "b"]   every name given, oldest first, each once
 *   "name":  "b"          the newest (what older readers show)
 *
 * A manifest with only "name" (written before names existed) has that one.
 *
 * Invariants:
 *  1. A run's names only grow when it is replaced by a run of its spec.
 *  2. A valid name is never shaped like a run id (16 hex digits, maybe
 *     "~N"), so a name can never stand for another run's id; and resolution
 *     tries ids before names (runref.c) whatever the manifests say.
 */
#ifndef REWIND_HOME_RUNNAMES_H
#define REWIND_HOME_RUNNAMES_H

#include <jansson.h>

#define RUNNAMES_MAX 64  /* names kept per run (the oldest go first) */
#define RUNNAMES_LEN 200 /* bytes of one name at most */

/* 1 if s can be a name: 1..RUNNAMES_LEN bytes, no '/', no control
 * character, not starting with '@' or '.', not shaped like a run id. */
int runnames_valid(const char *s);
/* 1 if s is shaped like a run directory name: 16 hex digits, maybe "~N". */
int runnames_id_shaped(const char *s);
/* The names of manifest m as a new array ("names", else "name"); invalid
 * entries are left out. Never NULL unless out of memory. */
json_t *runnames_of(json_t *m);
/* The names for a run about to be published as runs/<dir>: those of the
 * run stored there now (if any), then name (if not NULL and not among
 * them), at most RUNNAMES_MAX (invariant 1). A new array, or NULL if there
 * is none. */
json_t *runnames_merged(const char *home, const char *dir, const char *name);
/* 1 if s is in the array a of names (as runnames_of gives). */
int runnames_in(json_t *a, const char *s);
/* 1 if ref is one of m's names. */
int runnames_has(json_t *m, const char *ref);

#endif
