/*
 * check: RW_ASSERT(cond), the assertion of a numbered invariant. It stays
 * on in every build of rewind (unit tests, system tests, release), as rr
 * and SQLite keep theirs: an invariant that is written but not checked is a
 * comment that can go stale. A failed assertion names the file, line and
 * condition on stderr and aborts: it is a bug in rewind, never something
 * a guest or a file on disk can cause (those are checked and reported as
 * errors, never asserted).
 */
#ifndef REWIND_UTIL_CHECK_H
#define REWIND_UTIL_CHECK_H

/* RW_ASSERT and rw_check_failed are in include/rewind_check.h, so the
 * front ends, which see include/ only, assert the same way. */
#include "rewind_check.h"

#endif
