/*
 * check: see check.h.
 */
#include "util/check.h"

#include <stdio.h>
#include <stdlib.h>

void rw_check_failed(const char *file, int line, const char *func, const char *cond)
{
    fprintf(stderr, "rewind: internal error: invariant failed at %s:%d (%s): %s\n", file, line,
            func, cond);
    abort();
}
