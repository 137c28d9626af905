/*
 * fail: the one way modules report an error to their caller: a formatted
 * line (no trailing newline) into a caller-supplied buffer, and -1.
 */
#ifndef REWIND_UTIL_FAIL_H
#define REWIND_UTIL_FAIL_H

#include <stdarg.h>
#include <stddef.h>

/* vsnprintf fmt into err (if errlen > 0) and return -1. */
int util_fail(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* util_fail with a va_list, for wrappers that add to the line afterwards. */
int util_vfail(char *err, size_t errlen, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));

#endif
