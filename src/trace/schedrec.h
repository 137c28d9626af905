/*
 * schedrec: the REWIND_REC_SCHED record (guest/include/rewind_abi.h,
 * "Context switches") read back from a trace file, which is untrusted: a
 * record is accepted only if it is exactly what the monitor writes.
 */
#ifndef REWIND_TRACE_SCHEDREC_H
#define REWIND_TRACE_SCHEDREC_H

#include <stddef.h>
#include <stdint.h>

#include "../../guest/include/rewind_abi.h"

/* Check a SCHED record (header h, payload of len bytes) and copy its
 * switches into out (REWIND_SW_MAX entries): 0 with *n and *lost set, or
 * -1 with why filled (pid, tid or flags not 0, a length that is not whole
 * entries or more than REWIND_SW_MAX of them, a tid above REWIND_TID_MAX,
 * an empty record that lost nothing). */
int schedrec_parse(const struct rewind_record *h, const uint8_t *payload, size_t len,
                   struct rewind_switch *out, uint32_t *n, uint64_t *lost, char *why,
                   size_t why_len);

#endif
