/*
 * schedrec: see schedrec.h.
 *
 * Invariants:
 *  1. Nothing of a record is used before every field is checked: the
 *     header's fixed fields, then the length, then each tid.
 *  2. At most REWIND_SW_MAX entries are ever written to out.
 */
#include "trace/schedrec.h"

#include <stdio.h>
#include <string.h>

#include "util/bytes.h"
#include "util/check.h"

int schedrec_parse(const struct rewind_record *h, const uint8_t *payload, size_t len,
                   struct rewind_switch *out, uint32_t *n, uint64_t *lost, char *why,
                   size_t why_len)
{
    const size_t esz = sizeof(struct rewind_switch);
    if (h->kind != REWIND_REC_SCHED || h->pid || h->tid || h->flags) {
        snprintf(why, why_len, "sched record with kind %u, pid %u, tid %u, flags %u", h->kind,
                 h->pid, h->tid, h->flags);
        return -1;
    }
    if (len % esz || len / esz > REWIND_SW_MAX) {
        snprintf(why, why_len, "sched record of %zu payload bytes (whole entries, at most %u)", len,
                 (unsigned)REWIND_SW_MAX);
        return -1;
    }
    uint32_t k = (uint32_t)(len / esz);
    if (k == 0 && h->aux == 0) {
        snprintf(why, why_len, "empty sched record");
        return -1;
    }
    for (uint32_t i = 0; i < k; i++) {
        uint32_t prev = bytes_get_u32(payload + i * esz);
        uint32_t next = bytes_get_u32(payload + i * esz + 4);
        if (prev > REWIND_TID_MAX || next > REWIND_TID_MAX) {
            snprintf(why, why_len, "sched record entry %u names thread %u (above %u)", i,
                     prev > REWIND_TID_MAX ? prev : next, (unsigned)REWIND_TID_MAX);
            return -1;
        }
        RW_ASSERT(i < REWIND_SW_MAX); /* invariant 2 */
        out[i].prev = prev;
        out[i].next = next;
    }
    *n = k;
    *lost = h->aux;
    return 0;
}
