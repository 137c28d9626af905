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
    fake_close(&F);
    return unit_done();
}
