/*
 * fuzz_platform: the monitor's record parser and port handlers
 * (src/vmm/platform.c) over the fake VM of tests/engine/platform_test.c:
 * guest RAM is a buffer, there is no /dev/kvm, and the vector goes to a fake
 * LAPIC through the kvm_vm seam send_vector. Records the monitor accepts
 * go to a trace file, as the run loop writes them, which is then read back.
 *
 * Input: a program of operations, each one opcode byte and its operands
 * (little-endian), run until the input ends or the run is over:
 *   0 poke:   u32 gpa, u8 n, n bytes  -> copied into RAM at gpa (clipped)
 *   1 out:    u8 port, u32 value      -> platform_port_out(BASE + port)
 *   2 record: u32 gpa, u16 len, u16 kind -> header at gpa, then OUT to RECORD
 *   3 shared: u32 gpa                 -> magic at gpa, OUT to SHARED
 *   4 inspect: u8 n, n bytes          -> platform_inspect
 *   5 input:  u8 n, n bytes           -> platform_input
 *   6 host exit; 7 flip the fake LAPIC between taking and refusing vectors;
 *   8 perturb: u64 schedule, u32 from, u32 until -> one schedule segment
 *
 * Invariants:
 *  1. No input crashes the monitor or trips a sanitizer: every guest
 *     address and length is checked before use.
 *  2. Every OUT is one step (platform.c invariant 1, asserted there).
 *  3. A run that ended on the monitor's side (guest error, stall, panic,
 *     stop) carries a message; job outcomes carry the job's status.
 *  4. Every record handed to on_record is well-formed and the trace written
 *     from them reads back whole, record for record.
 */
#include "fuzz.h"
#include "trace/describe.h"
#include "trace/trace.h"
#include "util/check.h"
#include "vmm/kvm.h"
#include "vmm/platform.h"

#define RAM (1u << 20)

struct fake {
    struct kvm_vm vm; /* first: the seam gets a struct kvm_vm * */
    int refuse;
};

static int fake_send(struct kvm_vm *vm, uint8_t vector)
{
    (void)vector;
    return ((struct fake *)vm)->refuse ? 0 : 1;
}

struct sink {
    struct trace_writer w;
    uint64_t n;
};

static void on_record(void *ctx, uint64_t step, const struct rewind_record *r,
                      const uint8_t *payload, size_t len)
{
    struct sink *s = ctx;
    RW_ASSERT(r->len >= sizeof(*r) && r->len <= REWIND_RECORD_MAX);
    RW_ASSERT(len == r->len - sizeof(*r));
    RW_ASSERT((const uint8_t *)r + sizeof(*r) == payload);
    trace_append(&s->w, step, r);
    s->n++;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct fake f;
    static struct platform p;
    static uint64_t written[RAM / 4096 / 64 + 1], dirty[RAM / 4096 / 64 + 1];
    static uint8_t *ram;
    if (!ram && !(ram = malloc(RAM)))
        abort();
    memset(ram, 0, RAM);
    memset(&f, 0, sizeof(f));
    kvm_init(&f.vm);
    f.vm.ram = ram;
    f.vm.ram_size = RAM;
    memset(written, 0, sizeof(written));
    memset(dirty, 0, sizeof(dirty));
    f.vm.written = written;
    f.vm.dirty = dirty;
    f.vm.send_vector = fake_send;
    platform_init(&p, &f.vm, 1000, 1700000000000000000ull, 42);

    struct sink s = {.n = 0};
    char tp[512];
    fuzz_path(tp, sizeof(tp), "trace");
    if (trace_open_write(&s.w, tp) < 0)
        abort();
    p.on_record = on_record;
    p.record_ctx = &s;

    struct fuzz_in in = {data, size};
    uint8_t buf[256];
    while (in.n && p.outcome == PLATFORM_RUNNING) {
        uint8_t op = (uint8_t)fuzz_take(&in, 1);
        switch (op % 9) {
        case 0: {
            uint32_t gpa = (uint32_t)fuzz_take(&in, 4) % RAM;
            size_t n = (size_t)fuzz_take(&in, 1);
            for (size_t i = 0; i < n; i++) {
                uint8_t b = (uint8_t)fuzz_take(&in, 1);
                if (gpa + i < RAM)
                    ram[gpa + i] = b;
            }
            break;
        }
        case 1: {
            uint16_t port = (uint16_t)(REWIND_PORT_BASE + fuzz_take(&in, 1) % 40);
            platform_port_out(&p, port, (uint32_t)fuzz_take(&in, 4));
            break;
        }
        case 2: {
            uint32_t gpa = (uint32_t)fuzz_take(&in, 4);
            struct rewind_record r = {.len = (uint32_t)fuzz_take(&in, 2),
                                      .kind = (uint16_t)fuzz_take(&in, 2),
                                      .pid = 7,
                                      .tid = 7,
                                      .aux = 1};
            if (gpa % RAM + sizeof(r) <= RAM)
                memcpy(ram + gpa % RAM, &r, sizeof(r));
            platform_port_out(&p, REWIND_PORT_RECORD, gpa);
            break;
        }
        case 3: {
            uint32_t gpa = (uint32_t)fuzz_take(&in, 4);
            __typeof__(((struct rewind_shared *)0)->magic) magic = REWIND_SHARED_MAGIC;
            if (gpa % RAM + sizeof(struct rewind_shared) <= RAM)
                memcpy(ram + gpa % RAM + offsetof(struct rewind_shared, magic), &magic,
                       sizeof(magic));
            platform_port_out(&p, REWIND_PORT_SHARED, gpa);
            break;
        }
        case 4:
        case 5: {
            size_t n = (size_t)fuzz_take(&in, 1);
            for (size_t i = 0; i < n; i++)
                buf[i] = (uint8_t)fuzz_take(&in, 1);
            if (op % 9 == 4)
                platform_inspect(&p, buf, n);
            else
                platform_input(&p, buf, n);
            break;
        }
        case 6:
            platform_host_exit(&p);
            break;
        case 7:
            f.refuse = !f.refuse;
            break;
        case 8:
            if (p.sched.n < SCHED_MAX_SEGMENTS) {
                struct sched_segment *g = &p.sched.seg[p.sched.n++];
                g->schedule = fuzz_take(&in, 8);
                g->from = fuzz_take(&in, 4);
                g->until = g->from + fuzz_take(&in, 4);
                g->origin = g->from;
                g->horizon = g->until - g->from;
                /* a narrowing probe's span around its window, sometimes
                 * (src/input/sched.h invariant 3: bursts with no action) */
                uint64_t wide = fuzz_take(&in, 2);
                g->span_from = g->from - (wide % (g->from + 1));
                g->span_until = (wide & 1) ? UINT64_MAX : g->until;
            }
            break;
        }
    }
    if (p.outcome == PLATFORM_GUEST_ERROR || p.outcome == PLATFORM_STALLED ||
        p.outcome == PLATFORM_PANIC || p.outcome == PLATFORM_STOPPED)
        RW_ASSERT(p.message[0] != '\0');

    RW_ASSERT(trace_close(&s.w) == 0);
    struct trace_reader r;
    RW_ASSERT(trace_open_read(&r, tp) == 0);
    struct trace_entry e;
    char line[1024];
    uint64_t n = 0;
    while (trace_next(&r, &e) == 1) {
        describe_entry(&e, line, sizeof(line));
        n++;
    }
    RW_ASSERT(!r.torn && n == s.n);
    trace_close_read(&r);
    fuzz_clear("trace");
    return 0;
}
