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

#define RW_ASSERT(cond) ((cond) ? (void)0 : check_failed(__FILE__, __LINE__, __func__, #cond))

_Noreturn void check_failed(const char *file, int line, const char *func, const char *cond);

#endif
