/*
 * spec_time: rw_parse_time (include/rewind.h), the public face of
 * spec_parse_epoch, so `ls --since` and `run --epoch` read times alike.
 */
#include "rewind.h"
#include "input/spec.h"

int rw_parse_time(const char *s, int64_t *out)
{
    return spec_parse_epoch(s, out);
}
