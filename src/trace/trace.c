/*
 * trace: see trace.h.
 *
 * Invariants:
 *  1. Entries are written whole by one fwrite each; the header is written
 *     before any entry.
 *  2. The reader accepts an entry only if its length is within bounds, all
 *     its bytes are present and its crc matches; the first entry that fails
 *     ends the read with torn = 1.
 */
#include "trace/trace.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "util/bytes.h"
#include "util/check.h"
#include "util/crc.h"

int trace_open_write(struct trace_writer *w, const char *path)
{
    memset(w, 0, sizeof(*w));
    w->f = fopen(path, "wbe");
    if (!w->f)
        return -1;
    uint8_t h[16] = {0};
    memcpy(h, TRACE_MAGIC, 8);
    bytes_put_u32(h + 8, TRACE_VERSION);
    bytes_put_u32(h + 12, 16);
    if (fwrite(h, 1, 16, w->f) != 16) {
        fclose(w->f);
        w->f = NULL;
        return -1;
    }
    return 0;
}

void trace_append(struct trace_writer *w, uint64_t step, const struct rewind_record *r)
{
    if (!w->f || w->failed)
        return;
    uint8_t buf[16 + REWIND_RECORD_MAX + 8];
    uint32_t len = r->len;
    if (len < sizeof(*r) || len > REWIND_RECORD_MAX) {
        w->failed = 1;
        return;
    }
    bytes_put_u64(buf, step);
    memcpy(buf + 16, r, len);
    uint32_t crc = crc_32(crc_32(0, buf, 8), r, len);
    bytes_put_u32(buf + 8, crc);
    bytes_put_u32(buf + 12, 0);
    size_t total = 16 + len;
    size_t padded = (total + 7) & ~(size_t)7;
    RW_ASSERT(padded % 8 == 0 && padded <= sizeof(buf)); /* invariant 1: whole entries */
    memset(buf + total, 0, padded - total);
    if (fwrite(buf, 1, padded, w->f) != padded)
        w->failed = 1;
    else
        w->count++;
}

void trace_flush(struct trace_writer *w)
{
    if (w->f && fflush(w->f) != 0)
        w->failed = 1;
}

int trace_close(struct trace_writer *w)
{
    if (!w->f)
        return -1;
    int rc = (fflush(w->f) == 0 && fsync(fileno(w->f)) == 0 && !w->failed) ? 0 : -1;
    if (fclose(w->f) != 0)
        rc = -1;
    w->f = NULL;
    return rc;
}

int trace_open_read(struct trace_reader *r, const char *path)
{
    memset(r, 0, sizeof(*r));
    r->f = fopen(path, "rbe");
    if (!r->f)
        return -1;
    uint8_t h[16];
    if (fread(h, 1, 16, r->f) != 16 || memcmp(h, TRACE_MAGIC, 8) != 0 ||
        bytes_get_u32(h + 8) != TRACE_VERSION || bytes_get_u32(h + 12) != 16) {
        fclose(r->f);
        r->f = NULL;
        return -2;
    }
    return 0;
}

int trace_next(struct trace_reader *r, struct trace_entry *e)
{
    if (!r->f || r->torn)
        return 0;
    uint8_t head[16];
    size_t n = fread(head, 1, 16, r->f);
    if (n == 0)
        return 0;
    if (n != 16)
        goto torn;
    if (fread(r->buf, 1, sizeof(struct rewind_record), r->f) != sizeof(struct rewind_record))
        goto torn;
    struct rewind_record rec;
    memcpy(&rec, r->buf, sizeof(rec));
    if (rec.len < sizeof(rec) || rec.len > REWIND_RECORD_MAX)
        goto torn;
    size_t rest = rec.len - sizeof(rec);
    size_t pad = ((16 + (size_t)rec.len + 7) & ~(size_t)7) - 16 - rec.len;
    if (fread(r->buf + sizeof(rec), 1, rest + pad, r->f) != rest + pad)
        goto torn;
    uint32_t crc = crc_32(crc_32(0, head, 8), r->buf, rec.len);
    if (crc != bytes_get_u32(head + 8))
        goto torn;
    RW_ASSERT(rec.len >= sizeof(rec) && rec.len <= REWIND_RECORD_MAX); /* invariant 2 */
    e->step = bytes_get_u64(head);
    e->rec = rec;
    e->payload = r->buf + sizeof(rec);
    e->payload_len = (uint32_t)rest;
    r->count++;
    return 1;
torn:
    r->torn = 1;
    return 0;
}

void trace_close_read(struct trace_reader *r)
{
    if (r->f)
        fclose(r->f);
    r->f = NULL;
}
