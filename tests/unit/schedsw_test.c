/*
 * schedsw_test: the context-switch ring (guest/include/rewind_abi.h,
 * "Context switches") as the monitor drains it (sched_drain_switches in
 * src/vmm/sched.c) and as a trace reader takes the SCHED record back
 * (schedrec_parse in src/trace/schedrec.c), both fed untrusted input: an
 * overflowing count, tids above the kernel's limit, malformed records.
 */
#include <stdint.h>
#include <string.h>

#include "trace/describe.h"
#include "trace/schedrec.h"
#include "unit.h"
#include "vmm/sched.h"

static struct rewind_shared SH;
static _Alignas(8) uint8_t REC[REWIND_RECORD_MAX];

static void fill(uint32_t n, uint32_t lost)
{
    SH.sw_count = n;
    SH.sw_lost = lost;
    for (uint32_t i = 0; i < REWIND_SW_MAX; i++)
        SH.sw[i] = (struct rewind_switch){100 + i, 101 + i};
}

static int drain(char *why, size_t n)
{
    return sched_drain_switches(&SH, (struct rewind_record *)REC, why, n);
}

static void test_drain(void)
{
    struct rewind_record *r = (struct rewind_record *)REC;
    const struct rewind_switch *sw = (const struct rewind_switch *)(r + 1);
    char why[160] = "";

    fill(0, 0);
    CHECK(drain(why, sizeof(why)) == 0, "an empty ring makes no record");

    fill(3, 0);
    CHECK(drain(why, sizeof(why)) == 1, "three switches make a record");
    CHECK(r->kind == REWIND_REC_SCHED && r->pid == 0 && r->tid == 0 && r->flags == 0,
          "kind sched, from the monitor (pid 0, tid 0)");
    CHECK(r->len == sizeof(*r) + 3 * sizeof(*sw) && r->aux == 0, "three entries, none lost");
    CHECK(sw[0].prev == 100 && sw[0].next == 101 && sw[2].prev == 102 && sw[2].next == 103,
          "entries in order");
    CHECK(SH.sw_count == 0 && SH.sw_lost == 0, "the ring is emptied");
    CHECK(drain(why, sizeof(why)) == 0, "drained once: nothing at the next step");

    fill(REWIND_SW_MAX, 7);
    CHECK(drain(why, sizeof(why)) == 1, "a full ring");
    CHECK(r->len == sizeof(*r) + REWIND_SW_MAX * sizeof(*sw) && r->aux == 7,
          "all entries, and the lost ones counted in aux");

    fill(0, 2);
    CHECK(drain(why, sizeof(why)) == 1 && r->len == sizeof(*r) && r->aux == 2,
          "only lost switches still make a record: none lost silently");

    fill(REWIND_SW_MAX + 1, 0);
    CHECK(drain(why, sizeof(why)) == -1, "a count above the ring is refused");
    CHECK(strstr(why, "65 entries") != NULL, why);
    CHECK(SH.sw_count == 0 && SH.sw_lost == 0, "refused, and emptied all the same");

    fill(0xffffffffu, 0);
    CHECK(drain(why, sizeof(why)) == -1, "a huge count is refused, nothing read past the ring");

    fill(2, 0);
    SH.sw[1].next = REWIND_TID_MAX + 1;
    CHECK(drain(why, sizeof(why)) == -1, "a tid above the kernel's limit is refused");
    CHECK(strstr(why, "4194305") != NULL, why);

    fill(1, 0);
    SH.sw[0].prev = REWIND_TID_MAX;
    SH.sw[0].next = 0;
    CHECK(drain(why, sizeof(why)) == 1, "the largest tid and idle (0) are fine");
}

/* Parse a record with the header fields given and n entries of the ring. */
static int parse(uint32_t pid, uint16_t flags, uint64_t aux, size_t len, struct rewind_switch *out,
                 uint32_t *n, uint64_t *lost, char *why)
{
    struct rewind_record h = {.len = (uint32_t)(sizeof(h) + len),
                              .kind = REWIND_REC_SCHED,
                              .flags = flags,
                              .pid = pid,
                              .aux = aux};
    static uint8_t payload[REWIND_RECORD_MAX];
    memcpy(payload, SH.sw, sizeof(SH.sw));
    return schedrec_parse(&h, payload, len, out, n, lost, why, 160);
}

static void test_parse(void)
{
    struct rewind_switch out[REWIND_SW_MAX];
    uint32_t n = 0;
    uint64_t lost = 0;
    char why[160];
    fill(0, 0);
    CHECK(parse(0, 0, 0, 16, out, &n, &lost, why) == 0 && n == 2 && lost == 0, "two entries");
    CHECK(out[1].prev == 101 && out[1].next == 102, "second entry");
    CHECK(parse(0, 0, 5, 0, out, &n, &lost, why) == 0 && n == 0 && lost == 5, "only lost");
    CHECK(parse(0, 0, 0, 0, out, &n, &lost, why) == -1, "empty record refused");
    CHECK(parse(3, 0, 0, 8, out, &n, &lost, why) == -1, "a pid: not the monitor's record");
    CHECK(parse(0, 1, 0, 8, out, &n, &lost, why) == -1, "flags set: refused");
    CHECK(parse(0, 0, 0, 12, out, &n, &lost, why) == -1, "a torn entry refused");
    CHECK(parse(0, 0, 0, (REWIND_SW_MAX + 1) * 8, out, &n, &lost, why) == -1,
          "more entries than the ring holds refused");
    SH.sw[3].prev = 0xffffffffu;
    CHECK(parse(0, 0, 0, 32, out, &n, &lost, why) == -1 && strstr(why, "4294967295"),
          "a tid above the limit refused");

    struct rewind_record wrong = {.len = sizeof(wrong) + 8, .kind = REWIND_REC_MARK};
    CHECK(schedrec_parse(&wrong, (const uint8_t *)SH.sw, 8, out, &n, &lost, why, sizeof(why)) == -1,
          "another kind refused");
}

static void test_describe(void)
{
    fill(2, 3);
    char why[160];
    CHECK(drain(why, sizeof(why)) == 1, "drained");
    const struct rewind_record *r = (const struct rewind_record *)REC;
    struct trace_entry e = {
        .step = 9, .rec = *r, .payload = REC + sizeof(*r), .payload_len = r->len - sizeof(*r)};
    char out[200];
    describe_entry(&e, out, sizeof(out));
    CHECK(!strcmp(out, "sched 100->101 101->102 (lost 3)"), out);
    e.rec.pid = 4;
    describe_entry(&e, out, sizeof(out));
    CHECK(strstr(out, "malformed") != NULL, out);
}

int main(void)
{
    test_drain();
    test_parse();
    test_describe();
    return unit_done();
}
