/* fail: see fail.h. */
#include "util/fail.h"

#include <stdio.h>

int util_vfail(char *err, size_t errlen, const char *fmt, va_list ap)
{
    if (err && errlen)
        vsnprintf(err, errlen, fmt, ap);
    return -1;
}

int util_fail(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    util_vfail(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}
