/* tracehash: see tracehash.h. */
#include "trace/tracehash.h"

#include <stdlib.h>

#include "trace/trace.h"
#include "util/bytes.h"
#include "util/check.h"
#include "util/hash.h"

int tracehash_file(const char *path, const char *alt_runs, char hex[65], uint64_t *events)
{
    *events = 0;
    hex[0] = 0;
    struct trace_reader *r = malloc(sizeof(*r));
    hash_ctx *h = hash_new();
    int rc = !r || !h   ? TRACEHASH_UNREADABLE
             : alt_runs ? trace_open_read_in(r, path, alt_runs)
                        : trace_open_read(r, path);
    if (rc != 0) {
        free(r);
        if (h)
            hash_final(h, &(hash256){{0}});
        return TRACEHASH_UNREADABLE;
    }
    struct trace_entry e;
    while (trace_next(r, &e) == 1) {
        uint8_t le[8];
        bytes_put_u64(le, e.step);
        hash_update(h, le, 8);
        hash_update(h, &e.rec, sizeof(e.rec));
        hash_update(h, e.payload, e.payload_len);
        (*events)++;
    }
    int torn = r->torn;
    trace_close_read(r);
    free(r);
    hash256 d;
    hash_final(h, &d);
    if (torn) /* inv. 1 */
        return TRACEHASH_TORN;
    hash_hex(&d, hex);
    RW_ASSERT(hex[64] == 0);
    return TRACEHASH_OK;
}
