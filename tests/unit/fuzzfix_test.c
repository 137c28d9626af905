/*
 * fuzzfix_test: one case per crash the fuzzers (tests/fuzz/) found, each
 * reproducing it through the same entry point with the smallest input, so a
 * regression fails here in `make unit` without running a fuzzer. The crash
 * inputs themselves are also kept in tests/fuzz/corpus/<target>/ and
 * replayed by every fuzz run.
 *
 * UBSan is built in recover mode for the unit tests; this binary asks its
 * runtime to halt at the first report (__ubsan_default_options below), so
 * undefined behaviour fails it instead of printing a line and going on.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "home/rundir.h"
#include "util/io.h"
#include "trace/keyframe.h"
#include "unit.h"
#include "vmm/kvm.h"
#include "vmm/platform.h"

const char *__ubsan_default_options(void);
const char *__ubsan_default_options(void)
{
    return "halt_on_error=1:print_stacktrace=1";
}

#define RAM (1u << 20)

struct seen {
    int n;
    size_t len;
    uint8_t payload[64];
};

static void on_record(void *ctx, uint64_t step, const struct rewind_record *r,
                      const uint8_t *payload, size_t len)
{
    (void)step;
    (void)r;
    struct seen *s = ctx;
    s->n++;
    s->len = len;
    memcpy(s->payload, payload, len < sizeof(s->payload) ? len : sizeof(s->payload));
}

/* fuzz_platform, crash-misaligned-record: the guest names a record at an
 * odd address; do_record read the header's length through a misaligned
 * struct pointer (UBSan: misaligned member access). A well-formed record
 * at an odd address must simply be taken. */
static void misaligned_record(void)
{
    struct kvm_vm vm;
    kvm_init(&vm);
    vm.ram = calloc(1, RAM);
    vm.ram_size = RAM;
    vm.written = calloc(RAM / 4096 / 64 + 1, sizeof(uint64_t));
    vm.dirty = calloc(RAM / 4096 / 64 + 1, sizeof(uint64_t));
    if (!vm.ram || !vm.written || !vm.dirty)
        abort();
    static struct platform p;
    platform_init(&p, &vm, 1000, 0, 1);
    struct seen s = {0};
    p.on_record = on_record;
    p.record_ctx = &s;
    const uint32_t gpa = 0x8001;
    struct rewind_record r = {
        .len = sizeof(r) + 5, .kind = REWIND_REC_OUTPUT, .pid = 1, .tid = 1, .aux = 1};
    memcpy(vm.ram + gpa, &r, sizeof(r));
    memcpy(vm.ram + gpa + sizeof(r), "hello", 5);
    platform_port_out(&p, REWIND_PORT_RECORD, gpa);
    CHECK(p.outcome == PLATFORM_RUNNING, "a record at an odd address is accepted");
    CHECK(s.n == 1 && s.len == 5 && !memcmp(s.payload, "hello", 5),
          "its payload reaches the record callback");
    /* The input the fuzzer found (bytes 02 ff 02: op record, gpa 0x2ff): a
     * zeroed header at an odd address. Refused for its length, not crashed. */
    platform_init(&p, &vm, 1000, 0, 1);
    memset(vm.ram + 0x2ff, 0, sizeof(r));
    platform_port_out(&p, REWIND_PORT_RECORD, 0x2ff);
    CHECK(p.outcome == PLATFORM_GUEST_ERROR && strstr(p.message, "bad length"),
          "a zero-length header at an odd address is a guest error");
    free(vm.ram);
    free(vm.written);
    free(vm.dirty);
}

/* fuzz_keyframes: a keyframe naming a page beyond RAM made kf_chain_map
 * read the page list it had just freed for its error message. */
static void page_beyond_ram(void)
{
    char home[] = "/tmp/fuzzfix.XXXXXX", p[600], err[512];
    CHECK(mkdtemp(home) != NULL, "mkdtemp");
    snprintf(p, sizeof(p), "%s/runs/r", home);
    io_mkdir_p(p);
    snprintf(p, sizeof(p), "%s/runs/r/keyframes", home);
    struct kf_writer w;
    struct kf_page pg = {.pfn = 5000}; /* past the 4096 pages mapped below */
    uint8_t state[16] = {0};
    CHECK(kf_create(&w, p, NULL, 0) == 0 && kf_append(&w, 1, state, sizeof(state), &pg, 1) == 0 &&
              kf_close(&w) == 0,
          "write a keyframe naming page 5000");
    static struct kf_chain c;
    static hash256 map[4096];
    size_t link, idx;
    CHECK(kf_chain_load(home, "r", &c, err, sizeof(err)) == 0 &&
              kf_chain_find(&c, UINT64_MAX, &link, &idx) == 0,
          "load the chain");
    CHECK(kf_chain_map(&c, link, idx, map, 4096, err, sizeof(err)) < 0 &&
              strstr(err, "page 5000 beyond RAM") != NULL,
          err);
    kf_chain_free(&c);
    rundir_remove_tree(home);
}

int main(void)
{
    misaligned_record();
    page_beyond_ram();
    return unit_done();
}
