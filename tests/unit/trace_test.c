/* trace_test: the trace file round-trips, and a torn or corrupt tail stops
 * the reader at the last whole record without crashing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "trace/trace.h"
#include "unit.h"

static void make_rec(uint8_t *buf, uint16_t kind, const char *payload)
{
    struct rewind_record *r = (struct rewind_record *)buf;
    memset(r, 0, sizeof(*r));
    r->kind = kind;
    r->pid = 7;
    r->tid = 8;
    r->aux = 1;
    r->len = (uint32_t)(sizeof(*r) + strlen(payload));
    memcpy(buf + sizeof(*r), payload, strlen(payload));
}

static int count_entries(const char *path, int *torn)
{
    struct trace_reader rd;
    struct trace_entry e;
    if (trace_open_read(&rd, path) != 0)
        return -1;
    int n = 0;
    while (trace_next(&rd, &e))
        n++;
    *torn = rd.torn;
    trace_close_read(&rd);
    return n;
}

int main(void)
{
    char path[] = "/tmp/trace_test.XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0, "mkstemp");
    close(fd);
    struct trace_writer w;
    CHECK(trace_open_write(&w, path) == 0, "open for writing");
    uint8_t buf[REWIND_RECORD_MAX];
    char text[64];
    for (int i = 0; i < 100; i++) {
        snprintf(text, sizeof(text), "line %d%s", i, i % 3 ? "" : " padded");
        make_rec(buf, REWIND_REC_OUTPUT, text);
        trace_append(&w, 10 + (uint64_t)i, (struct rewind_record *)buf);
    }
    CHECK(trace_close(&w) == 0, "close");

    struct trace_reader rd;
    struct trace_entry e;
    CHECK(trace_open_read(&rd, path) == 0, "open for reading");
    int n = 0, ok = 1;
    while (trace_next(&rd, &e)) {
        snprintf(text, sizeof(text), "line %d%s", n, n % 3 ? "" : " padded");
        ok &= e.step == 10 + (uint64_t)n && e.rec.kind == REWIND_REC_OUTPUT &&
              e.payload_len == strlen(text) && !memcmp(e.payload, text, e.payload_len);
        n++;
    }
    CHECK(n == 100 && ok && !rd.torn, "all records read back intact");
    trace_close_read(&rd);

    /* Truncate in the middle of the last entry: 99 whole records remain. */
    FILE *f = fopen(path, "r+");
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fclose(f);
    CHECK(truncate(path, size - 5) == 0, "truncate");
    int torn = 0;
    CHECK(count_entries(path, &torn) == 99 && torn, "torn tail: 99 whole records, torn set");

    /* Flip a byte inside record 50's payload: reading stops before it. */
    f = fopen(path, "r+");
    long off = 16;
    for (int i = 0; i < 50; i++) {
        snprintf(text, sizeof(text), "line %d%s", i, i % 3 ? "" : " padded");
        long len = 16 + (long)sizeof(struct rewind_record) + (long)strlen(text);
        off += (len + 7) & ~7L;
    }
    fseek(f, off + 16 + (long)sizeof(struct rewind_record), SEEK_SET);
    fputc('X', f);
    fclose(f);
    CHECK(count_entries(path, &torn) == 50 && torn, "corrupt record: stops at 50");

    /* A bogus length field does not crash the reader. */
    f = fopen(path, "r+");
    fseek(f, 16 + 16, SEEK_SET);
    uint32_t huge = 0xfffffff0u;
    fwrite(&huge, 4, 1, f);
    fclose(f);
    CHECK(count_entries(path, &torn) == 0 && torn, "bad length: nothing read, torn");

    /* Not a trace at all. */
    f = fopen(path, "w");
    fputs("hello, I am not a trace file", f);
    fclose(f);
    CHECK(trace_open_read(&rd, path) == -2, "bad magic refused");
    unlink(path);
    return unit_done();
}
