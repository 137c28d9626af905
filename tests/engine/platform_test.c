/*
 * platform_test: the port handlers of src/vmm/platform.c driven by made-up
 * port I/O exits over a fake VM: guest RAM is a calloc'd buffer, there is no
 * /dev/kvm, and the vector goes to a fake LAPIC through the kvm_vm seam
 * send_vector (it can refuse, as a masked LAPIC does). Each case checks the
 * outcome (a guest error ends the run with a clear message and leaves the
 * monitor's state sane), the step count and virtual time.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "unit.h"
#include "vmm/kvm.h"
#include "vmm/platform.h"
#include "vmm/vcpu.h"

#define RAM (1u << 20)
#define QUANTUM 1000
#define EPOCH 1700000000000000000ull
#define SEED 42
#define SHARED_GPA 0x2000u
#define REC_GPA 0x8000u

struct fake {
    struct kvm_vm vm; /* first: the seam gets a struct kvm_vm * */
    int sent;         /* vectors the fake LAPIC was offered */
    int refuse;       /* 1: refuse them (masked), as KVM_SIGNAL_MSI returning 0 */
    uint8_t vector;
};

static int fake_send(struct kvm_vm *vm, uint8_t vector)
{
    struct fake *f = (struct fake *)vm;
    f->sent++;
    f->vector = vector;
    return f->refuse ? 0 : 1;
}

static void fake_open(struct fake *f)
{
    memset(f, 0, sizeof(*f));
    kvm_init(&f->vm);
    f->vm.ram = calloc(1, RAM);
    f->vm.ram_size = RAM;
    f->vm.written = calloc(RAM / 4096 / 64 + 1, sizeof(uint64_t));
    f->vm.dirty = calloc(RAM / 4096 / 64 + 1, sizeof(uint64_t));
    f->vm.send_vector = fake_send;
    if (!f->vm.ram || !f->vm.written || !f->vm.dirty)
        abort();
}

static void fake_close(struct fake *f)
{
    free(f->vm.ram);
    free(f->vm.written);
    free(f->vm.dirty);
}

/* What the record callback saw. */
struct seen {
    int n;
    uint64_t step;
    uint16_t kind;
    uint64_t aux;
    size_t len;
    uint8_t payload[REWIND_RECORD_MAX];
};

static void on_record(void *ctx, uint64_t step, const struct rewind_record *r,
                      const uint8_t *payload, size_t len)
{
    struct seen *s = ctx;
    s->n++;
    s->step = step;
    s->kind = r->kind;
    s->aux = r->aux;
    s->len = len;
    memcpy(s->payload, payload, len);
}

/* Undefined behaviour the monitor shows on guest input (a misaligned
 * record header) must fail this test, not scroll by. */
const char *__ubsan_default_options(void);
const char *__ubsan_default_options(void)
{
    return "halt_on_error=1:print_stacktrace=1";
}

static struct fake F;
static struct platform P;
static struct seen S;

static void boot(void)
{
    fake_close(&F);
    fake_open(&F);
    platform_init(&P, &F.vm, QUANTUM, EPOCH, SEED);
    P.on_record = on_record;
    P.record_ctx = &S;
    memset(&S, 0, sizeof(S));
}

static struct rewind_shared *sh(void)
{
    return (struct rewind_shared *)(F.vm.ram + SHARED_GPA);
}

/* Register the shared page as the guest does; 1 if that worked. */
static int register_shared(void)
{
    sh()->magic = REWIND_SHARED_MAGIC;
    platform_port_out(&P, REWIND_PORT_SHARED, SHARED_GPA);
    return P.outcome == PLATFORM_RUNNING && P.shared_gpa == SHARED_GPA;
}

/* Write a record header (+ payload) at gpa in guest RAM. */
static void put_record(uint32_t gpa, uint32_t len, uint16_t kind, const char *payload)
{
    struct rewind_record r = {.len = len, .kind = kind, .pid = 7, .tid = 7, .aux = 1};
    memcpy(F.vm.ram + gpa, &r, sizeof(r));
    if (payload)
        memcpy(F.vm.ram + gpa + sizeof(r), payload, strlen(payload));
}

/* The run ended as a guest error whose message contains want, and the step
 * and clock still moved exactly once for the faulting access. */
static void expect_guest_error(const char *want, uint64_t step, const char *what)
{
    CHECK(P.outcome == PLATFORM_GUEST_ERROR, what);
    CHECK(strstr(P.message, want) != NULL, what);
    CHECK(P.step == step, what);
    CHECK(P.now_ns == step * QUANTUM, what);
}

static void test_ports(void)
{
    CHECK(platform_owns_port(REWIND_PORT_BASE), "first port is ours");
    CHECK(platform_owns_port(REWIND_PORT_SHARED), "shared port is ours");
    CHECK(platform_owns_port(REWIND_PORT_BASE + REWIND_PORT_COUNT * 4 - 1), "last byte is ours");
    CHECK(!platform_owns_port(REWIND_PORT_BASE + REWIND_PORT_COUNT * 4), "past the block");
    CHECK(!platform_owns_port(REWIND_PORT_BASE - 1), "below the block");
    CHECK(!platform_owns_port(0x3f8), "the serial port is not ours");
}

static void test_gpa(void)
{
    boot();
    CHECK(kvm_gpa(&F.vm, 0, RAM) == F.vm.ram, "all of RAM");
    CHECK(kvm_gpa(&F.vm, RAM - 1, 1) == F.vm.ram + RAM - 1, "last byte");
    CHECK(kvm_gpa(&F.vm, RAM, 1) == NULL, "one past RAM");
    CHECK(kvm_gpa(&F.vm, RAM - 1, 2) == NULL, "straddles the end");
    CHECK(kvm_gpa(&F.vm, UINT64_MAX - 7, 16) == NULL, "gpa + len wraps");
    CHECK(kvm_gpa(&F.vm, 16, UINT64_MAX) == NULL, "len wraps");
    CHECK(kvm_gpa(&F.vm, UINT64_MAX, 0) == NULL, "far past RAM, empty");
    CHECK(kvm_gpa_w(&F.vm, 4095, 2) != NULL, "write across a page boundary");
    CHECK((F.vm.written[0] & 3) == 3 && (F.vm.dirty[0] & 3) == 3, "both pages marked written");
    CHECK((F.vm.written[0] & ~3ull) == 0, "no other page marked");
}

static void test_clock(void)
{
    boot();
    for (int i = 1; i <= 5; i++) {
        platform_port_out(&P, REWIND_PORT_CLOCK, 0);
        CHECK(P.step == (uint64_t)i && P.now_ns == (uint64_t)i * QUANTUM, "a step per access");
    }
    platform_port_out(&P, REWIND_PORT_YIELD, 123);
    CHECK(P.step == 6 && P.now_ns == 6 * QUANTUM, "yield is a step too");
    CHECK(P.outcome == PLATFORM_RUNNING, "still running");
    CHECK(F.sent == 0, "no vector without a shared page");
    CHECK(S.n == 0, "no record");
}

static void test_shared(void)
{
    boot();
    sh()->pending = 99;
    CHECK(register_shared(), "registered");
    CHECK(sh()->epoch_ns == EPOCH && sh()->seed == SEED, "epoch and seed handed over");
    CHECK(sh()->pending == 0, "pending cleared");
    CHECK(sh()->now_ns == P.now_ns && P.now_ns == QUANTUM, "now_ns published (invariant 2)");
    CHECK(F.vm.written[SHARED_GPA / 4096 / 64] >> (SHARED_GPA / 4096 % 64) & 1,
          "the monitor's writes to the shared page are logged");
    platform_port_out(&P, REWIND_PORT_CLOCK, 0);
    CHECK(sh()->now_ns == 2 * QUANTUM, "now_ns follows every step");
    platform_port_out(&P, REWIND_PORT_SHARED, SHARED_GPA);
    expect_guest_error("registered twice", 3, "second registration");

    struct {
        uint32_t gpa;
        const char *want, *what;
    } bad[] = {
        {0, "is invalid", "shared page at 0"},
        {SHARED_GPA + 8, "is invalid", "unaligned shared page"},
        {RAM, "is invalid", "shared page past RAM"},
        {0xfffff000u, "is invalid", "shared page far past RAM"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        boot();
        platform_port_out(&P, REWIND_PORT_SHARED, bad[i].gpa);
        expect_guest_error(bad[i].want, 1, bad[i].what);
        CHECK(P.shared_gpa == 0, bad[i].what);
    }
    boot();
    platform_port_out(&P, REWIND_PORT_SHARED, SHARED_GPA); /* no magic */
    expect_guest_error("no rewind magic", 1, "shared page without magic");
}

static void test_record(void)
{
    boot();
    CHECK(register_shared(), "registered");
    put_record(REC_GPA, sizeof(struct rewind_record) + 5, REWIND_REC_OUTPUT, "hello");
    platform_port_out(&P, REWIND_PORT_RECORD, REC_GPA);
    CHECK(P.outcome == PLATFORM_RUNNING, "a valid record keeps the run going");
    CHECK(S.n == 1 && S.step == 2, "handed up once, at its step");
    CHECK(S.kind == REWIND_REC_OUTPUT && S.aux == 1, "kind and aux");
    CHECK(S.len == 5 && memcmp(S.payload, "hello", 5) == 0, "payload");
    CHECK(P.step == 2 && P.now_ns == 2 * QUANTUM, "one step");

    /* A record of exactly REWIND_RECORD_MAX ending at the last byte of RAM. */
    uint32_t gpa = RAM - REWIND_RECORD_MAX;
    put_record(gpa, REWIND_RECORD_MAX, REWIND_REC_MARK, NULL);
    platform_port_out(&P, REWIND_PORT_RECORD, gpa);
    CHECK(P.outcome == PLATFORM_RUNNING && S.n == 2, "largest record at the end of RAM");
    CHECK(S.len == REWIND_RECORD_MAX - sizeof(struct rewind_record), "its payload length");

    struct {
        uint32_t gpa, len;
        uint16_t kind;
        const char *want, *what;
    } bad[] = {
        {RAM, 0, 0, "outside guest RAM", "record past RAM"},
        {RAM - 4, 0, 0, "outside guest RAM", "record header straddling the end of RAM"},
        {0xfffffff0u, 0, 0, "outside guest RAM", "record far past RAM"},
        {REC_GPA, 4, REWIND_REC_OUTPUT, "bad length 4", "record shorter than its header"},
        {REC_GPA, REWIND_RECORD_MAX + 1, REWIND_REC_OUTPUT, "bad length", "record too long"},
        {RAM - 64, 128, REWIND_REC_OUTPUT, "runs past guest RAM", "record running past RAM"},
        {REC_GPA, 40, 0, "unknown kind 0", "record kind 0"},
        {REC_GPA, 40, REWIND_REC_KIND_MAX + 1, "unknown kind", "record kind past the last"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        boot();
        CHECK(register_shared(), "registered");
        if (bad[i].len)
            put_record(bad[i].gpa, bad[i].len, bad[i].kind, NULL);
        int sent = F.sent;
        platform_port_out(&P, REWIND_PORT_RECORD, bad[i].gpa);
        expect_guest_error(bad[i].want, 2, bad[i].what);
        CHECK(S.n == 0, bad[i].what);
        CHECK(F.sent == sent, "no vector once the run is over");
    }
}

static void test_unknown_port(void)
{
    boot();
    platform_port_out(&P, REWIND_PORT_BASE + REWIND_PORT_COUNT * 4 - 4 + 1, 0);
    expect_guest_error("unassigned platform port", 1, "a port inside the block but unassigned");
    boot();
    platform_port_out(&P, REWIND_PORT_BASE + 0x1c, 0);
    expect_guest_error("unassigned platform port 0xe1c", 1, "the port after the last");
}

static void test_timer(void)
{
    boot();
    sh()->timer_ns = 1;
    platform_port_out(&P, REWIND_PORT_TIMER, 0);
    expect_guest_error("before the shared page", 1, "timer armed without a shared page");

    boot();
    CHECK(register_shared(), "registered"); /* step 1 */
    sh()->timer_ns = 3 * QUANTUM;
    platform_port_out(&P, REWIND_PORT_TIMER, 0); /* step 2: deadline 5 quanta */
    CHECK(P.timer_armed && P.deadline_ns == 5 * QUANTUM, "armed from now");
    CHECK(F.sent == 0 && sh()->pending == 0, "not yet fired");
    platform_port_out(&P, REWIND_PORT_CLOCK, 0);
    platform_port_out(&P, REWIND_PORT_CLOCK, 0);
    CHECK(F.sent == 0 && P.step == 4, "not before its deadline");
    platform_port_out(&P, REWIND_PORT_CLOCK, 0);
    CHECK(P.step == 5 && P.now_ns == 5 * QUANTUM, "step 5");
    CHECK(sh()->pending == REWIND_PENDING_TIMER, "fired at the deadline's step");
    CHECK(F.sent == 1 && F.vector == REWIND_VECTOR && !P.irq_wanted, "vector taken");
    CHECK(!P.timer_armed, "one-shot");
    platform_port_out(&P, REWIND_PORT_CLOCK, 0);
    CHECK(F.sent == 1, "not again");

    /* Disarm. */
    sh()->pending = 0;
    sh()->timer_ns = QUANTUM;
    platform_port_out(&P, REWIND_PORT_TIMER, 0);
    sh()->timer_ns = 0;
    platform_port_out(&P, REWIND_PORT_TIMER, 0);
    platform_port_out(&P, REWIND_PORT_CLOCK, 0);
    CHECK(!P.timer_armed && F.sent == 1 && sh()->pending == 0, "disarmed timer never fires");

    /* A huge relative deadline saturates instead of wrapping. */
    sh()->timer_ns = UINT64_MAX;
    platform_port_out(&P, REWIND_PORT_TIMER, 0);
    CHECK(P.timer_armed && P.deadline_ns == UINT64_MAX, "deadline saturates");
    CHECK(P.outcome == PLATFORM_RUNNING, "still running");
}

static void test_idle(void)
{
    boot();
    CHECK(register_shared(), "registered");
    platform_port_out(&P, REWIND_PORT_IDLE, 0);
    CHECK(P.outcome == PLATFORM_STALLED, "idle with no timer stalls");
    CHECK(strstr(P.message, "no timer armed") != NULL, "says why");
    CHECK(P.step == 2 && P.now_ns == 2 * QUANTUM, "no time jump");

    boot();
    CHECK(register_shared(), "registered"); /* step 1 */
    sh()->timer_ns = 1000000;
    platform_port_out(&P, REWIND_PORT_TIMER, 0); /* step 2, deadline 2 quanta + 1 ms */
    platform_port_out(&P, REWIND_PORT_IDLE, 0);  /* step 3: jump */
    CHECK(P.outcome == PLATFORM_RUNNING, "idle with a timer runs on");
    CHECK(P.step == 3, "idle is one step");
    CHECK(P.now_ns == 2 * QUANTUM + 1000000, "time jumps to the deadline");
    CHECK(sh()->now_ns == P.now_ns, "and the guest sees it");
    CHECK(sh()->pending == REWIND_PENDING_TIMER && F.sent == 1, "the timer fires at once");

    /* An owed interrupt: idle does not jump. */
    sh()->timer_ns = 1000000;
    platform_port_out(&P, REWIND_PORT_TIMER, 0); /* step 4; pending still set */
    uint64_t before = P.now_ns;
    platform_port_out(&P, REWIND_PORT_IDLE, 0);
    CHECK(P.now_ns == before + QUANTUM, "no jump while an interrupt is pending");
    CHECK(P.timer_armed, "timer still armed");
}

static void test_lapic_refuses(void)
{
    boot();
    CHECK(register_shared(), "registered");
    sh()->timer_ns = QUANTUM;
    F.refuse = 1;
    platform_port_out(&P, REWIND_PORT_TIMER, 0);
    platform_port_out(&P, REWIND_PORT_CLOCK, 0); /* step 3: fires, refused */
    CHECK(F.sent == 1 && P.irq_wanted, "refused vector stays owed (invariant 3)");
    platform_port_out(&P, REWIND_PORT_CLOCK, 0);
    CHECK(F.sent == 2 && P.irq_wanted, "retried at the next step");
    F.refuse = 0;
    platform_port_out(&P, REWIND_PORT_CLOCK, 0);
    CHECK(F.sent == 3 && !P.irq_wanted, "taken at a later step");
    platform_port_out(&P, REWIND_PORT_CLOCK, 0);
    CHECK(F.sent == 3, "not sent again");
    CHECK(P.step == 6 && P.now_ns == 6 * QUANTUM, "steps and time");
}

static void test_stop(void)
{
    boot();
    platform_port_out(&P, REWIND_PORT_STOP, REWIND_STOP_POWEROFF);
    CHECK(P.outcome == PLATFORM_STOPPED && strstr(P.message, "before it ran the job"),
          "poweroff before the shared page");

    struct {
        uint32_t why;
        uint64_t status;
        enum platform_outcome out;
        const char *what;
    } cases[] = {
        {REWIND_STOP_POWEROFF, 0x100, PLATFORM_EXITED, "exit status 1"},
        {REWIND_STOP_POWEROFF, REWIND_JOB_NOT_FOUND, PLATFORM_NOT_FOUND, "not found"},
        {REWIND_STOP_POWEROFF, REWIND_JOB_NOT_EXECUTABLE, PLATFORM_NOT_EXEC, "not executable"},
        {REWIND_STOP_POWEROFF, REWIND_JOB_INIT_FAILED, PLATFORM_INIT_FAILED, "init failed"},
        {REWIND_STOP_PANIC, 0, PLATFORM_PANIC, "panic"},
        {REWIND_STOP_REBOOT, 0, PLATFORM_STOPPED, "reboot"},
        {REWIND_STOP_HALT, 0, PLATFORM_STOPPED, "halt"},
        {9, 0, PLATFORM_GUEST_ERROR, "unknown stop code"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        boot();
        CHECK(register_shared(), "registered");
        sh()->job_status = cases[i].status;
        platform_port_out(&P, REWIND_PORT_STOP, cases[i].why);
        CHECK(P.outcome == cases[i].out, cases[i].what);
        CHECK(P.step == 2 && P.now_ns == 2 * QUANTUM, cases[i].what);
    }
    CHECK(strstr(P.message, "unknown stop code 9") != NULL, "names the code");
}

static void test_input_inspect(void)
{
    boot();
    CHECK(platform_inspect(&P, "cat", 4) < 0, "inspect needs the shared page");
    CHECK(platform_input(&P, "x", 1) == 0, "input needs the shared page");
    CHECK(register_shared(), "registered");
    CHECK(platform_inspect(&P, "cat", 0) < 0, "empty request");
    CHECK(platform_inspect(&P, "cat", REWIND_SHARED_REQ_MAX + 1) < 0, "request too long");
    CHECK(platform_inspect(&P,
                           "cat\0"
                           "0\0/etc/hostname",
                           20) == 0,
          "inspect");
    CHECK(sh()->req_len == 20 && memcmp(sh()->req, "cat", 4) == 0, "request copied");
    CHECK((sh()->pending & REWIND_PENDING_INSPECT) && F.sent == 1, "vector sent at once");
    CHECK(P.step == 1, "inspection is not a step");

    CHECK(platform_input(&P, "abc", 3) == 3, "input taken");
    CHECK(sh()->input_len == 3 && (sh()->pending & REWIND_PENDING_INPUT), "input handed over");
    CHECK(platform_input(&P, "d", 1) == 0, "busy until the guest reads it");
    sh()->input_len = 0;
    static char big[REWIND_SHARED_INPUT_MAX + 10];
    CHECK(platform_input(&P, big, sizeof(big)) == REWIND_SHARED_INPUT_MAX, "input capped");
    CHECK(F.sent == 1, "input waits for the end of the step");
    platform_port_out(&P, REWIND_PORT_CLOCK, 0);
    CHECK(F.sent == 2 && !P.irq_wanted, "delivered at the step");
}

static void test_host_exit(void)
{
    boot();
    CHECK(register_shared(), "registered");
    sh()->timer_ns = QUANTUM * 10;
    platform_port_out(&P, REWIND_PORT_TIMER, 0);
    platform_host_exit(&P);
    CHECK(P.step == 2 && P.now_ns == 2 * QUANTUM && F.sent == 0, "a host exit is not a step");
    P.test_holes = PLATFORM_HOLE_TIMER_AT_HOST_EXIT;
    platform_host_exit(&P);
    CHECK(P.step == 2 && F.sent == 1 && P.now_ns == 12 * QUANTUM, "the hole fires the timer");
}

/* Context switches: the ring in the shared page is drained at the start of
 * the next step into one SCHED record at that step, before the step's own
 * record; a breach (count above the ring, a tid above the limit) is
 * refused; the guest may not send a SCHED record itself. */
static void test_switches(void)
{
    boot();
    CHECK(register_shared(), "registered");
    platform_port_out(&P, REWIND_PORT_CLOCK, 0);
    CHECK(S.n == 0, "no switch, no record");
    sh()->sw[0] = (struct rewind_switch){5, 6};
    sh()->sw[1] = (struct rewind_switch){6, 0};
    sh()->sw_count = 2;
    sh()->sw_lost = 1;
    put_record(REC_GPA, sizeof(struct rewind_record) + 2, REWIND_REC_OUTPUT, "hi");
    platform_port_out(&P, REWIND_PORT_RECORD, REC_GPA);
    CHECK(P.outcome == PLATFORM_RUNNING && S.n == 2, "the sched record, then the step's own");
    CHECK(S.kind == REWIND_REC_OUTPUT && S.step == 3, "the step's own record last");
    CHECK(sh()->sw_count == 0 && sh()->sw_lost == 0, "the ring is emptied");
    boot();
    CHECK(register_shared(), "registered");
    sh()->sw[0] = (struct rewind_switch){5, 6};
    sh()->sw_count = 1;
    platform_port_out(&P, REWIND_PORT_CLOCK, 0);
    CHECK(S.n == 1 && S.kind == REWIND_REC_SCHED && S.step == 2 && S.len == 8 && S.aux == 0,
          "a clock step with one switch: one sched record at that step");
    CHECK(!memcmp(S.payload, &sh()->sw[0], 8), "its entry");

    boot();
    CHECK(register_shared(), "registered");
    sh()->sw_count = REWIND_SW_MAX + 1;
    platform_port_out(&P, REWIND_PORT_CLOCK, 0);
    expect_guest_error("ring holds 65 entries", 2, "an overflowing count ends the run");
    CHECK(P.refused == 1 && S.n == 0, "refused once, nothing in the trace");

    boot();
    CHECK(register_shared(), "registered");
    sh()->sw[0] = (struct rewind_switch){REWIND_TID_MAX + 1, 1};
    sh()->sw_count = 1;
    put_record(REC_GPA, sizeof(struct rewind_record) + 2, REWIND_REC_OUTPUT, "hi");
    platform_port_out(&P, REWIND_PORT_RECORD, REC_GPA);
    expect_guest_error("names thread 4194305", 2, "a bad tid ends the run");
    CHECK(S.n == 0, "nor the step's own record reaches the trace");

    boot();
    CHECK(register_shared(), "registered");
    put_record(REC_GPA, sizeof(struct rewind_record) + 8, REWIND_REC_SCHED, "\1\0\0\0\2\0\0\0");
    platform_port_out(&P, REWIND_PORT_RECORD, REC_GPA);
    expect_guest_error("only the monitor writes", 2, "a forged sched record is refused");
    CHECK(S.n == 0, "and not handed up");
}

/* Every breach is counted once; without the hole the first one ends the
 * run, with PLATFORM_HOLE_REFUSE_GO_ON the run goes on and the monitor's
 * state is untouched by what it refused (platform.c invariant 5). */
static void test_refuse_count(void)
{
    boot();
    CHECK(register_shared(), "registered");
    platform_port_out(&P, REWIND_PORT_RECORD, RAM + 4096);
    expect_guest_error("outside guest RAM", 2, "a bad record ends the run");
    CHECK(P.refused == 1, "and is counted once");

    boot();
    P.test_holes = PLATFORM_HOLE_REFUSE_GO_ON;
    CHECK(register_shared(), "registered");
    uint32_t fake_gpa = 0x20000; /* a page with the magic: the shared page "moved" */
    struct rewind_shared *fake = (struct rewind_shared *)(F.vm.ram + fake_gpa);
    fake->magic = REWIND_SHARED_MAGIC;
    put_record(REC_GPA, 40, REWIND_REC_KIND_MAX + 7, NULL);
    put_record(REC_GPA + 512, REWIND_RECORD_MAX + 3, REWIND_REC_MARK, NULL);
    put_record(RAM - 100, 200, REWIND_REC_MARK, NULL);
    /* misaligned on purpose: the header is read from any address */
    put_record(REC_GPA + 1024 + 3, sizeof(struct rewind_record) + 2, REWIND_REC_MARK, "ok");
    const struct {
        uint16_t port;
        uint32_t value;
        const char *want;
    } bad[] = {
        {REWIND_PORT_RECORD, RAM, "outside guest RAM"},
        {REWIND_PORT_RECORD, RAM - 3, "outside guest RAM"},
        {REWIND_PORT_RECORD, REC_GPA, "unknown kind"},
        {REWIND_PORT_RECORD, REC_GPA + 512, "bad length"},
        {REWIND_PORT_RECORD, RAM - 100, "runs past guest RAM"},
        {REWIND_PORT_BASE + 5, 0, "unassigned platform port"},
        {REWIND_PORT_STOP, 77, "unknown stop code 77"},
        {REWIND_PORT_SHARED, fake_gpa, "registered twice"},
        {REWIND_PORT_SHARED, 0xdead0000u, "registered twice"},
    };
    uint64_t n = 0, step = P.step;
    for (int round = 0; round < 100; round++)
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
            platform_port_out(&P, bad[i].port, bad[i].value);
            n++;
            CHECK(P.outcome == PLATFORM_RUNNING, bad[i].want);
            CHECK(strstr(P.message, bad[i].want) != NULL, bad[i].want);
            CHECK(P.refused == n, "counted once each");
            /* a good record between the bad ones still arrives */
            platform_port_out(&P, REWIND_PORT_RECORD, REC_GPA + 1024 + 3);
        }
    CHECK(P.step == step + 2 * n && P.now_ns == P.step * QUANTUM, "each access one step");
    CHECK(S.n == (int)n && S.len == 2 && memcmp(S.payload, "ok", 2) == 0,
          "every good record handed up, no bad one");
    CHECK(P.shared_gpa == SHARED_GPA, "the shared page did not move");
    CHECK(fake->epoch_ns == 0 && fake->seed == 0 && fake->now_ns == 0,
          "the monitor never wrote to the page it refused");
    CHECK(sh()->now_ns == P.now_ns, "the real shared page still follows the clock");

    /* The access-size breach vcpu.c refuses goes through the same count. */
    platform_refuse(&P, "platform port 0x%x needs a single 32-bit OUT", REWIND_PORT_BASE);
    CHECK(P.refused == n + 1 && P.outcome == PLATFORM_RUNNING, "vcpu's refusal counted");
}

/* Random port writes over random guest RAM, with the refusal hole open: the
 * monitor never crashes (ASan/UBSan watch), every access is one step, and
 * every record port write is either handed up or refused. */
static void test_refuse_fuzz(void)
{
    boot();
    P.test_holes = PLATFORM_HOLE_REFUSE_GO_ON;
    CHECK(register_shared(), "registered");
    uint64_t x = 0x1234567887654321ull, recs = 0;
    for (uint32_t i = 0; i < RAM / 8; i++) { /* RAM full of noise, shared page aside */
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        if (i * 8 / 4096 != SHARED_GPA / 4096)
            memcpy(F.vm.ram + i * 8, &x, 8);
    }
    uint64_t step0 = P.step, refused0 = P.refused;
    const int n = 200000;
    for (int i = 0; i < n; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        uint16_t port = (uint16_t)(REWIND_PORT_BASE + (x & 0x1f));
        uint32_t v = (uint32_t)(x >> 32);
        if ((x >> 8 & 3) == 0) /* a plausible record: a header in RAM */
            v %= RAM;
        if ((x >> 8 & 7) == 1) { /* a well-formed one */
            v = (uint32_t)(x >> 20) % (RAM - REWIND_RECORD_MAX - 4096) & ~7u;
            if (v / 4096 == SHARED_GPA / 4096)
                v += 8192;
            put_record(v, sizeof(struct rewind_record) + (uint32_t)(x >> 40) % 64,
                       (uint16_t)(1 + (x >> 50) % REWIND_REC_KIND_MAX), NULL);
        }
        if (port == REWIND_PORT_IDLE || port == REWIND_PORT_TIMER)
            port = REWIND_PORT_CLOCK; /* keep time and the timer out of it */
        if (port == REWIND_PORT_STOP && v < 4)
            v = 4; /* a real stop would end the run */
        if (port == REWIND_PORT_RECORD)
            recs++;
        platform_port_out(&P, port, v);
        if (P.outcome != PLATFORM_RUNNING)
            break;
    }
    CHECK(P.outcome == PLATFORM_RUNNING, "still running after the flood");
    CHECK(P.step == step0 + (uint64_t)n, "one step per access");
    CHECK(P.refused > refused0 && (uint64_t)S.n > 0, "some refused, some records accepted");
    CHECK(P.shared_gpa == SHARED_GPA && sh()->now_ns == P.now_ns, "shared page intact");
    (void)recs;
}

/* The exits that are not steps, from a made-up struct kvm_run: the fake VM
 * has no vCPU, so the register dump says so, and nothing hangs or crashes. */
static void test_exits(void)
{
    static union {
        struct kvm_run run;
        uint8_t page[8192];
    } r;
    boot();
    F.vm.run = &r.run;
    F.vm.vcpu_fd = -1;
    CHECK(register_shared(), "registered");
    uint64_t step = P.step;
    struct kvm_run *run = &r.run;

    memset(&r, 0, sizeof(r));
    run->exit_reason = KVM_EXIT_MMIO;
    run->mmio.phys_addr = 0x300000000ull;
    run->mmio.len = 4;
    run->mmio.is_write = 0;
    CHECK(vcpu_handle_exit(&P) == 0, "MMIO read is not a step");
    CHECK(run->mmio.data[0] == 0xff && run->mmio.data[7] == 0xff, "MMIO reads all ones");
    run->mmio.is_write = 1;
    memset(run->mmio.data, 0x11, 8);
    CHECK(vcpu_handle_exit(&P) == 0 && run->mmio.data[0] == 0x11, "MMIO write dropped");

    memset(&r, 0, sizeof(r));
    run->exit_reason = KVM_EXIT_IO;
    run->io.direction = KVM_EXIT_IO_IN;
    run->io.size = 4;
    run->io.count = 3;
    run->io.port = 0x80;
    run->io.data_offset = 4096;
    CHECK(vcpu_handle_exit(&P) == 0, "IN from no device is not a step");
    CHECK(r.page[4096] == 0xff && r.page[4096 + 11] == 0xff && r.page[4096 + 12] == 0,
          "IN reads all ones, exactly size * count bytes");
    run->io.port = REWIND_PORT_CLOCK;
    run->io.count = 1;
    memset(r.page + 4096, 0, 16);
    CHECK(vcpu_handle_exit(&P) == 0, "IN from a platform port is not a step");
    expect_guest_error("needs a single 32-bit OUT (got IN of 1 x 4", step, "IN on a platform port");
    CHECK(P.refused == 1 && r.page[4096] == 0xff, "refused, reads all ones");

    boot();
    F.vm.run = &r.run;
    F.vm.vcpu_fd = -1;
    memset(&r, 0, sizeof(r));
    run->exit_reason = KVM_EXIT_IO;
    run->io.direction = KVM_EXIT_IO_OUT;
    run->io.size = 4;
    run->io.count = 2;
    run->io.port = REWIND_PORT_RECORD;
    run->io.data_offset = 4096;
    CHECK(vcpu_handle_exit(&P) == 0, "a string OUT is not a step");
    expect_guest_error("got OUT of 2 x 4", 0, "string OUT on a platform port");
    boot();
    F.vm.run = &r.run;
    run->io.count = 1;
    run->io.size = 1;
    CHECK(vcpu_handle_exit(&P) == 0, "a byte OUT is not a step");
    expect_guest_error("got OUT of 1 x 1", 0, "byte OUT on a platform port");

    const struct {
        uint32_t reason;
        const char *want;
    } fatal[] = {
        {KVM_EXIT_HLT, "executed HLT"},
        {KVM_EXIT_SHUTDOWN, "triple-faulted"},
        {KVM_EXIT_FAIL_ENTRY, "KVM entry failed (reason 0x"},
        {KVM_EXIT_INTERNAL_ERROR, "KVM internal error (suberror 1)"},
        {KVM_EXIT_DEBUG, "unexpected KVM exit 4"},
        {KVM_EXIT_EXCEPTION, "unexpected KVM exit 1"},
        {KVM_EXIT_SYSTEM_EVENT, "unexpected KVM exit 24"},
        {12345, "unexpected KVM exit 12345"},
    };
    for (size_t i = 0; i < sizeof(fatal) / sizeof(fatal[0]); i++) {
        boot();
        F.vm.run = &r.run;
        F.vm.vcpu_fd = -1;
        memset(&r, 0, sizeof(r));
        run->exit_reason = fatal[i].reason;
        run->internal.suberror = 1;
        CHECK(vcpu_handle_exit(&P) == 0, fatal[i].want);
        expect_guest_error(fatal[i].want, 0, fatal[i].want);
        CHECK(strstr(P.message, "registers unavailable") != NULL, "register dump tried");
        CHECK(P.refused == 0, "a fatal exit is not a refused write");
    }

    boot();
    F.vm.run = &r.run;
    memset(&r, 0, sizeof(r));
    run->exit_reason = KVM_EXIT_INTR;
    CHECK(vcpu_handle_exit(&P) == 0 && P.outcome == PLATFORM_RUNNING && P.step == 0,
          "a host-caused exit is nothing");
    F.vm.run = NULL;
}

int main(void)
{
    fake_open(&F);
    test_ports();
    test_gpa();
    test_clock();
    test_shared();
    test_record();
    test_unknown_port();
    test_timer();
    test_idle();
    test_lapic_refuses();
    test_stop();
    test_input_inspect();
    test_host_exit();
    test_switches();
    test_refuse_count();
    test_refuse_fuzz();
    test_exits();
    fake_close(&F);
    return unit_done();
}
