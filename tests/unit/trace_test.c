/* trace_test: the trace file round-trips, and a torn or corrupt tail stops
 * the reader at the last whole record without crashing. A trace that refers
 * to its parent's prefix (version 2) reads as the prefix then its own
 * entries, and is refused when the parent is missing, shorter, changed, or
 * named like a path, or when references loop. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "home/rundir.h"
#include "util/io.h"
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

/* Write runs/<run>/trace under dir: with a parent, its first `prefix`
 * entries are referred to, then `own` entries of the run's own (steps from
 * 1000); without, `own` entries "p <i>" at steps 10 + i. */
static void write_run(const char *dir, const char *run, const char *parent, int prefix, int own,
                      const char *tag)
{
    char p[600], text[64];
    uint8_t buf[REWIND_RECORD_MAX];
    snprintf(p, sizeof(p), "%s/runs/%s", dir, run);
    io_mkdir_p(p);
    snprintf(p, sizeof(p), "%s/runs/%s/trace", dir, run);
    struct trace_writer w;
    CHECK(trace_open_write(&w, p) == 0, "open a run's trace");
    if (parent) { /* the prefix as ctx.c sums it: read from the parent */
        struct trace_prefix pre;
        CHECK(trace_prefix_begin(&pre) == 0, "prefix begins");
        char pp[600];
        snprintf(pp, sizeof(pp), "%s/runs/%s/trace", dir, parent);
        struct trace_reader rd;
        struct trace_entry e;
        int n = 0;
        if (trace_open_read(&rd, pp) == 0) {
            while (n < prefix && trace_next(&rd, &e) == 1) {
                trace_prefix_add(&pre, e.step, (struct rewind_record *)rd.buf);
                n++;
            }
            trace_close_read(&rd);
        }
        for (; n < prefix; n++) { /* a parent that is not there: made up */
            make_rec(buf, REWIND_REC_OUTPUT, "x");
            trace_prefix_add(&pre, 1, (struct rewind_record *)buf);
        }
        CHECK(trace_refer(&w, parent, &pre) == 0, "refer to the parent");
    }
    for (int i = 0; i < own; i++) {
        snprintf(text, sizeof(text), "%s %d", tag, i);
        make_rec(buf, REWIND_REC_OUTPUT, text);
        trace_append(&w, (parent ? 1000 : 10) + (uint64_t)i, (struct rewind_record *)buf);
    }
    CHECK(trace_close(&w) == 0, "close a run's trace");
}

static int run_entries(const char *dir, const char *run, int *torn)
{
    char p[600];
    snprintf(p, sizeof(p), "%s/runs/%s/trace", dir, run);
    return count_entries(p, torn);
}

static void test_prefix_reference(void)
{
    char dir[] = "/tmp/trace_ref.XXXXXX", p[600], q[600];
    CHECK(mkdtemp(dir) != NULL, "mkdtemp");
    int torn;
    write_run(dir, "parent", NULL, 0, 10, "p");
    write_run(dir, "child", "parent", 6, 3, "c");
    write_run(dir, "grandchild", "child", 8, 2, "g"); /* 6 of parent's, 2 of child's, 2 own */
    snprintf(p, sizeof(p), "%s/runs/child/trace", dir);
    struct trace_reader rd;
    struct trace_entry e;
    CHECK(trace_open_read(&rd, p) == 0, "a reference opens");
    int n = 0, ok = 1;
    char text[64];
    while (trace_next(&rd, &e)) {
        if (n < 6)
            snprintf(text, sizeof(text), "p %d", n);
        else
            snprintf(text, sizeof(text), "c %d", n - 6);
        ok &= e.step == (n < 6 ? 10 + (uint64_t)n : 1000 + (uint64_t)(n - 6)) &&
              e.payload_len == strlen(text) && !memcmp(e.payload, text, e.payload_len) &&
              !memcmp(rd.buf + sizeof(struct rewind_record), text, e.payload_len);
        n++;
    }
    CHECK(n == 9 && ok && !rd.torn && rd.count == 9, "the prefix, then the run's own entries");
    trace_close_read(&rd);
    CHECK(run_entries(dir, "grandchild", &torn) == 10 && !torn, "a reference to a reference");

    char parent[TRACE_REF_NAME];
    CHECK(trace_parent(p, parent) == 0 && !strcmp(parent, "parent"), "trace_parent names it");

    /* flat: the bytes a trace written whole would have */
    write_run(dir, "whole", NULL, 0, 0, "x");
    snprintf(q, sizeof(q), "%s/runs/whole/trace", dir);
    struct trace_writer w;
    CHECK(trace_open_write(&w, q) == 0, "open whole");
    uint8_t buf[REWIND_RECORD_MAX];
    for (int i = 0; i < 9; i++) {
        snprintf(text, sizeof(text), i < 6 ? "p %d" : "c %d", i < 6 ? i : i - 6);
        make_rec(buf, REWIND_REC_OUTPUT, text);
        trace_append(&w, i < 6 ? 10 + (uint64_t)i : 1000 + (uint64_t)(i - 6),
                     (struct rewind_record *)buf);
    }
    CHECK(trace_close(&w) == 0, "close whole");
    snprintf(q, sizeof(q), "%s/runs/child/flat", dir);
    FILE *f = fopen(q, "wb");
    uint64_t len = 0;
    CHECK(f && trace_write_flat(p, f, &len) == 0, "write flat");
    fclose(f);
    char cmd[1400];
    snprintf(cmd, sizeof(cmd), "cmp -s %s/runs/child/flat %s/runs/whole/trace", dir, dir);
    CHECK(system(cmd) == 0, "the flat trace is byte for byte the whole one");

    /* a changed parent (same length, other bytes) is refused */
    write_run(dir, "parent", NULL, 0, 10, "P");
    CHECK(run_entries(dir, "child", &torn) == -1, "a changed parent is refused");
    /* a shorter one too */
    write_run(dir, "parent", NULL, 0, 5, "p");
    CHECK(run_entries(dir, "child", &torn) == -1, "a parent shorter than the prefix is refused");
    /* the same parent again: readable; then flattened, it outlives it */
    write_run(dir, "parent", NULL, 0, 10, "p");
    CHECK(run_entries(dir, "child", &torn) == 9, "the parent back: readable");
    CHECK(trace_flatten(p) == 0, "flatten");
    snprintf(q, sizeof(q), "%s/runs/parent/trace", dir);
    unlink(q);
    CHECK(run_entries(dir, "child", &torn) == 9 && !torn, "a flattened trace stands alone");
    CHECK(trace_parent(p, parent) == 0 && !parent[0], "and names no parent");
    CHECK(run_entries(dir, "grandchild", &torn) == 10, "its own children still read");

    /* compaction: a fork's first own entries that are its parent's next
     * ones join the prefix; what is read stays the same */
    write_run(dir, "parent", NULL, 0, 10, "p");
    write_run(dir, "fork", "parent", 6, 0, "f");
    snprintf(p, sizeof(p), "%s/runs/fork/trace", dir);
    CHECK(trace_open_write(&w, p) == 0, "reopen the fork");
    {
        struct trace_prefix pre2;
        struct trace_reader pr;
        snprintf(q, sizeof(q), "%s/runs/parent/trace", dir);
        CHECK(trace_prefix_begin(&pre2) == 0 && trace_open_read(&pr, q) == 0, "prefix of 6");
        for (int i = 0; i < 6 && trace_next(&pr, &e) == 1; i++)
            trace_prefix_add(&pre2, e.step, (struct rewind_record *)pr.buf);
        trace_close_read(&pr);
        CHECK(trace_refer(&w, "parent", &pre2) == 0, "refer");
        for (int i = 6; i < 8; i++) { /* the parent's own next two */
            snprintf(text, sizeof(text), "p %d", i);
            make_rec(buf, REWIND_REC_OUTPUT, text);
            trace_append(&w, 10 + (uint64_t)i, (struct rewind_record *)buf);
        }
        make_rec(buf, REWIND_REC_OUTPUT, "f own");
        trace_append(&w, 18, (struct rewind_record *)buf);
        CHECK(trace_close(&w) == 0, "close the fork");
    }
    snprintf(q, sizeof(q), "%s/runs/fork/before", dir);
    f = fopen(q, "wb");
    CHECK(f && trace_write_flat(p, f, &len) == 0, "flat before");
    fclose(f);
    long before_size = 0, after_size = 0;
    f = fopen(p, "rb");
    fseek(f, 0, SEEK_END);
    before_size = ftell(f);
    fclose(f);
    CHECK(trace_compact(p) == 0, "compact");
    f = fopen(p, "rb");
    fseek(f, 0, SEEK_END);
    after_size = ftell(f);
    fclose(f);
    CHECK(after_size < before_size, "compaction keeps fewer entries of its own");
    snprintf(q, sizeof(q), "%s/runs/fork/after", dir);
    f = fopen(q, "wb");
    CHECK(f && trace_write_flat(p, f, &len) == 0, "flat after");
    fclose(f);
    snprintf(cmd, sizeof(cmd), "cmp -s %s/runs/fork/before %s/runs/fork/after", dir, dir);
    CHECK(system(cmd) == 0, "compaction changes nothing that is read");
    CHECK(run_entries(dir, "fork", &torn) == 9 && !torn, "9 entries, 8 of them the parent's");
    CHECK(trace_compact(p) == 0, "compacting again is a no-op");
    snprintf(q, sizeof(q), "%s/runs/parent/trace", dir);
    CHECK(trace_compact(q) == 0, "a trace of its own is left alone");

    /* a missing parent, a path for a name, a loop */
    write_run(dir, "orphan", "gone", 2, 1, "o");
    CHECK(run_entries(dir, "orphan", &torn) == -1, "a missing parent is refused");
    write_run(dir, "loop", "loop", 0, 1, "l");
    CHECK(run_entries(dir, "loop", &torn) == -1, "a trace referring to itself is refused");
    snprintf(q, sizeof(q), "%s/runs/orphan/trace", dir);
    f = fopen(q, "r+b");
    CHECK(f && fseek(f, 16, SEEK_SET) == 0 && fwrite("../../x\0", 1, 8, f) == 8, "forge a name");
    fclose(f);
    CHECK(trace_open_read(&rd, q) == -2, "a parent named like a path is refused");
    struct trace_prefix pre;
    CHECK(trace_open_write(&w, q) == 0 && trace_prefix_begin(&pre) == 0, "reopen");
    CHECK(trace_refer(&w, "../x", &pre) == -1, "no reference to a path is written");
    trace_close(&w);
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    CHECK(system(cmd) == 0, "clean up");
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
    test_prefix_reference();
    return unit_done();
}
