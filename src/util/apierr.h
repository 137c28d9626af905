/*
 * apierr: how the engine's public functions (include/rewind.h) fill a
 * struct rw_error: one formatted line and the exit code a tool should end
 * with. Used by every stage folder that implements part of the API.
 */
#ifndef REWIND_UTIL_APIERR_H
#define REWIND_UTIL_APIERR_H

#include "rewind.h"

/* Format the message into err (if not NULL) with code; returns -1. */
int apierr_set(struct rw_error *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
