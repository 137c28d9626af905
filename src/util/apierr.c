/* apierr: see apierr.h. */
#include "util/apierr.h"

#include <stdarg.h>
#include <stdio.h>

int apierr_set(struct rw_error *err, int code, const char *fmt, ...)
{
    if (!err)
        return -1;
    va_list ap;
    va_start(ap, fmt);
    err->code = code;
    vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
    va_end(ap);
    return -1;
}
