/*
 * fuzz_trace: the trace reader (src/trace/trace.c) and what reads traces
 * through the Reading API: events, the process tree (src/trace/proctree.c)
 * and the one-line description of every entry (src/trace/describe.c).
 *
 * Input: the bytes of runs/r/trace of a scratch home whose run r has a
 * fixed, complete manifest.
 *
 * Invariants:
 *  1. Whatever the bytes, every reader returns (no crash, no sanitizer
 *     report, no endless loop: each stops at the end of the file).
 *  2. The direct reader and rw_events see the same number of records.
 */
#include "fuzz.h"
#include "rewind.h"
#include "trace/describe.h"
#include "trace/trace.h"
#include "util/check.h"

static int count_event(void *ctx, const struct rw_event *ev)
{
    char line[512];
    rw_event_describe(ev, line, sizeof(line));
    (*(uint64_t *)ctx)++;
    return 0;
}

static int count_proc(void *ctx, const struct rw_proc *p)
{
    (void)p;
    (*(uint64_t *)ctx)++;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char home[512], p[600];
    const char *man =
        "{\"id\":\"r\",\"state\":\"complete\",\"steps\":1000,\"events\":3,"
        "\"spec\":{\"image\":\"00\",\"argv\":[\"/bin/true\"],\"env\":[],\"cwd\":\"/\"}}";
    fuzz_run_file(home, sizeof(home), "manifest.json", man, strlen(man), p, sizeof(p));
    fuzz_run_file(home, sizeof(home), "trace", data, size, p, sizeof(p));

    struct trace_reader r;
    uint64_t direct = 0;
    if (trace_open_read(&r, p) == 0) {
        struct trace_entry e;
        char line[1024];
        while (trace_next(&r, &e) == 1) {
            describe_entry(&e, line, sizeof(line));
            direct++;
        }
        trace_close_read(&r);
    }

    rw_home *h;
    struct rw_error err;
    if (rw_home_open(home, &h, &err) == 0) {
        struct rw_trace_status st;
        uint64_t events = 0, procs = 0;
        struct rw_event_query q = RW_EVENTS_ALL;
        if (rw_events(h, "r", &q, count_event, &events, &st, &err) == 0)
            RW_ASSERT(events == direct);
        rw_ps(h, "r", UINT64_MAX, count_proc, &procs, &st, &err);
        rw_home_close(h);
    }
    fuzz_clear("home");
    return 0;
}
