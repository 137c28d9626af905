/*
 * describe_test: a process's end in words (describe_wait_status and the
 * exit event's line), every branch, against wait statuses built by hand as
 * Linux builds them (exit code << 8; signal | 0x80 for a core dump).
 */
#include <stdint.h>
#include <string.h>

#include "rewind.h"
#include "trace/describe.h"
#include "unit.h"

static int says(uint64_t status, const char *want)
{
    char got[64];
    memset(got, 'x', sizeof(got));
    describe_wait_status(status, got, sizeof(got));
    if (strcmp(got, want)) {
        fprintf(stderr, "status %llu: got \"%s\", want \"%s\"\n", (unsigned long long)status, got,
                want);
        return 0;
    }
    return 1;
}

static void test_exits(void)
{
    CHECK(says(0, "exited 0"), "exit(0)");
    CHECK(says(1 << 8, "exited 1"), "exit(1) is status 256");
    CHECK(says(255 << 8, "exited 255"), "exit(255)");
    CHECK(says(124 << 8, "exited 124"), "exit(124)");
}

static void test_signals(void)
{
    CHECK(says(11, "killed by SIGSEGV"), "SIGSEGV without core");
    CHECK(says(11 | 0x80, "killed by SIGSEGV (core)"), "SIGSEGV with core");
    CHECK(says(9, "killed by SIGKILL"), "SIGKILL");
    CHECK(says(6 | 0x80, "killed by SIGABRT (core)"), "SIGABRT with core");
    CHECK(says(1, "killed by SIGHUP"), "first name");
    CHECK(says(31, "killed by SIGSYS"), "last name");
    CHECK(says(16, "killed by SIGSTKFLT"), "x86_64 numbering, not another arch's");
    CHECK(says(10, "killed by SIGUSR1"), "x86_64 SIGUSR1 is 10");
    CHECK(says(77, "killed by signal 77"), "unknown number");
    CHECK(says(77 | 0x80, "killed by signal 77 (core)"), "unknown number with core");
    CHECK(says(32, "killed by signal 32"), "first real-time signal has no name");
}

static void test_odd_statuses(void)
{
    CHECK(says(0x7f | (19 << 8), "stopped by SIGSTOP"), "stopped");
    CHECK(says(0x7f | (99 << 8), "stopped by signal 99"), "stopped by an unknown signal");
    CHECK(says(0x10000, "wait status 65536"), "beyond 16 bits");
    CHECK(describe_signal_name(0) == NULL, "signal 0 has no name");
    CHECK(describe_signal_name(64) == NULL, "signal 64 has no name");
    CHECK(describe_signal_name(11) && !strcmp(describe_signal_name(11), "SIGSEGV"), "SIGSEGV");
}

static void test_truncation_and_api(void)
{
    char small[8];
    describe_wait_status(11 | 0x80, small, sizeof(small));
    CHECK(strlen(small) == sizeof(small) - 1 && !strcmp(small, "killed "), "cut, NUL-terminated");
    char a[64], b[64];
    describe_wait_status(1 << 8, a, sizeof(a));
    rw_wait_status_text(1 << 8, b, sizeof(b));
    CHECK(!strcmp(a, b), "the public name says the same");
}

static void test_exit_event_line(void)
{
    const uint8_t comm[] = "crash";
    struct rw_event ev = {.kind = REWIND_REC_EXIT,
                          .pid = 9,
                          .tid = 9,
                          .aux = 11 | 0x80,
                          .payload = comm,
                          .payload_len = 5};
    char line[256];
    rw_event_describe(&ev, line, sizeof(line));
    CHECK(!strcmp(line, "exit pid 9/9 \"crash\": killed by SIGSEGV (core)"), line);
    ev.aux = 1 << 8;
    ev.tid = 10;
    rw_event_describe(&ev, line, sizeof(line));
    CHECK(!strcmp(line, "exit pid 9/10 \"crash\": exited 1"), line);
    CHECK(strstr(line, "256") == NULL, "the raw status is not shown");
}

int main(void)
{
    test_exits();
    test_signals();
    test_odd_statuses();
    test_truncation_and_api();
    test_exit_event_line();
    return unit_done();
}
