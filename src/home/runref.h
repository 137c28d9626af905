/*
 * runref: turn what a user types to name a run into its directory:
 * a full id (or id~N for a kept divergent run), a unique id prefix, a name
 * given with --name, "@" (the newest run) or "@N" (the N-th newest).
 */
#ifndef REWIND_HOME_RUNREF_H
#define REWIND_HOME_RUNREF_H

#include <stddef.h>

/* Resolve ref under home. Returns 0 with the run directory in dir, or -1
 * with one line in err (no such run, ambiguous prefix, ...). */
int runref_resolve(const char *home, const char *ref, char *dir, size_t dirlen, char *err,
                   size_t errlen);

/* The names of complete runs under home, newest first. Returns the count
 * (names malloc'd in *out, free with runref_free) or -1. */
int runref_list(const char *home, char ***out);
void runref_free(char **names, int n);

#endif
