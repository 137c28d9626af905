/*
 * vcpu_test: the one machine loop (vcpu_run, src/vmm/vcpu.c) driven without
 * /dev/kvm: the kvm_vm seam `enter` plays a script of exits in place of
 * KVM_RUN (a step, an exit that is not one, a debug exit, a host-caused
 * return, a failure), over guest RAM that is a calloc'd buffer. Each case
 * checks how the loop answers the hooks' verdicts (struct vcpu_hooks):
 * where it stops, what it returns, which exits reached which hook, and that
 * the run's own ends (an outcome, the spin watch, the abort flag) come
 * before any hook (vcpu.c invariant 4).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "unit.h"
#include "vmm/kvm.h"
#include "vmm/platform.h"
#include "vmm/vcpu.h"

#define RAM (1u << 20)

/* What the fake KVM_RUN does, one entry per call. */
enum ev {
    EV_STEP,   /* a 32-bit OUT to the clock port: a step */
    EV_IO,     /* an IN from a port with no device: not a step */
    EV_DEBUG,  /* KVM_EXIT_DEBUG */
    EV_INTR,   /* a host-caused return (EINTR) */
    EV_BROKEN, /* KVM_RUN fails (EIO) */
    EV_HLT,    /* KVM_EXIT_HLT: the platform ends the run as a guest error */
};

static struct kvm_vm VM;
static struct platform P;
static union {
    struct kvm_run run;
    uint8_t page[8192];
} R;
static const enum ev *script;
static int nscript, played;

static int fake_enter(struct kvm_vm *vm)
{
    struct kvm_run *run = vm->run;
    if (played >= nscript) { /* the script ran out: a loop that should have stopped */
        errno = EIO;
        return -1;
    }
    enum ev e = script[played++];
    memset(&R, 0, sizeof(R));
    run->io.data_offset = 4096;
    switch (e) {
    case EV_STEP:
        run->exit_reason = KVM_EXIT_IO;
        run->io.direction = KVM_EXIT_IO_OUT;
        run->io.size = 4;
        run->io.count = 1;
        run->io.port = REWIND_PORT_CLOCK;
        return 0;
    case EV_IO:
        run->exit_reason = KVM_EXIT_IO;
        run->io.direction = KVM_EXIT_IO_IN;
        run->io.size = 1;
        run->io.count = 1;
        run->io.port = 0x80;
        return 0;
    case EV_DEBUG:
        run->exit_reason = KVM_EXIT_DEBUG;
        return 0;
    case EV_HLT:
        run->exit_reason = KVM_EXIT_HLT;
        return 0;
    case EV_INTR:
        errno = EINTR;
        return -1;
    case EV_BROKEN:
        break;
    }
    errno = EIO;
    return -1;
}

/* The hooks' record and their programmed verdicts (0: never). */
struct rec {
    int enters, debugs, exits, steps_seen;
    int stop_enter_at, stop_debug_at, fail_exit_at, stop_step_at;
};

static enum vcpu_verdict on_enter(void *ctx, struct platform *p)
{
    (void)p;
    struct rec *r = ctx;
    return ++r->enters == r->stop_enter_at ? VCPU_STOP : VCPU_GO;
}

static enum vcpu_verdict on_debug(void *ctx, struct platform *p)
{
    (void)p;
    struct rec *r = ctx;
    return ++r->debugs == r->stop_debug_at ? VCPU_STOP : VCPU_GO;
}

static enum vcpu_verdict on_exited(void *ctx, struct platform *p, int stepped)
{
    struct rec *r = ctx;
    r->steps_seen += stepped;
    if (++r->exits == r->fail_exit_at)
        return VCPU_FAIL;
    return stepped && p->step == (uint64_t)r->stop_step_at ? VCPU_STOP : VCPU_GO;
}

static void boot(const enum ev *s, int n)
{
    free(VM.ram);
    kvm_init(&VM);
    VM.ram = calloc(1, RAM);
    VM.ram_size = RAM;
    if (!VM.ram)
        abort();
    VM.run = &R.run;
    VM.enter = fake_enter;
    platform_init(&P, &VM, 1000, 1700000000000000000ull, 42);
    script = s;
    nscript = n;
    played = 0;
}

#define N(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* Without hooks: steps count, other exits and host returns do not, and
 * the loop stops at max_steps before another KVM_RUN. */
static void test_plain(void)
{
    static const enum ev s[] = {EV_STEP, EV_IO, EV_INTR, EV_STEP, EV_STEP, EV_STEP};
    boot(s, N(s));
    struct vcpu_limits lim = {.max_steps = 3};
    CHECK(vcpu_run(&P, &lim) == 0, "stopped at max_steps");
    CHECK(P.step == 3 && played == 5, "three steps in five exits, no entry after");
    CHECK(P.outcome == PLATFORM_RUNNING, "the run goes on");
}

/* A debug exit goes to the debug hook alone (never a step, never the
 * platform: no guest error), and its STOP ends the loop at once. */
static void test_debug_stop(void)
{
    static const enum ev s[] = {EV_STEP, EV_DEBUG, EV_IO, EV_DEBUG, EV_STEP};
    boot(s, N(s));
    struct rec r = {.stop_debug_at = 2};
    struct vcpu_hooks h = {.ctx = &r, .enter = on_enter, .debug = on_debug, .exited = on_exited};
    struct vcpu_limits lim = {.hooks = &h};
    CHECK(vcpu_run(&P, &lim) == 0, "a STOP returns 0");
    CHECK(played == 4 && r.debugs == 2, "stopped at the second debug exit");
    CHECK(P.step == 1 && P.outcome == PLATFORM_RUNNING, "debug exits are no steps, run goes on");
    CHECK(r.exits == 2 && r.steps_seen == 1, "exited saw the step and the IN, not the debug exits");
    CHECK(r.enters == 4, "enter before each KVM_RUN");
    /* Resumed: the loop goes on from where it stopped. */
    r.stop_debug_at = 0;
    lim.max_steps = 2;
    CHECK(vcpu_run(&P, &lim) == 0 && P.step == 2 && played == 5, "resumed to max_steps");
}

/* With hooks but no debug hook, a debug exit is the platform's: without
 * its own dbg_exit that ends the run as a guest error. */
static void test_debug_unhooked(void)
{
    static const enum ev s[] = {EV_DEBUG, EV_STEP};
    boot(s, N(s));
    struct rec r = {0};
    struct vcpu_hooks h = {.ctx = &r, .exited = on_exited};
    struct vcpu_limits lim = {.hooks = &h};
    CHECK(vcpu_run(&P, &lim) == 0, "the run ended");
    CHECK(P.outcome == PLATFORM_GUEST_ERROR && strstr(P.message, "unexpected KVM exit 4"),
          "a debug exit nobody debugs is a guest error");
    CHECK(r.exits == 1 && r.steps_seen == 0 && played == 1, "exited saw it, nothing ran after");
}

/* The run's own ends come before the enter hook: the spin watch and the
 * abort flag end the run (its outcome) and no hook is asked. */
static void test_own_ends_first(void)
{
    static const enum ev s[] = {EV_STEP};
    struct rec r = {0};
    struct vcpu_hooks h = {.ctx = &r, .enter = on_enter, .debug = on_debug, .exited = on_exited};
    volatile sig_atomic_t spin = 1, abort_flag = 1;
    boot(s, N(s));
    struct vcpu_limits lim = {.hooks = &h, .spin = &spin, .abort = &abort_flag};
    CHECK(vcpu_run(&P, &lim) == 0 && P.outcome == PLATFORM_SPIN, "the spin watch ends it");
    CHECK(strstr(P.message, "no step for the spin limit after step 0") != NULL, "spin message");
    CHECK(r.enters == 0 && played == 0, "no hook, no KVM_RUN");
    boot(s, N(s));
    spin = 0;
    CHECK(vcpu_run(&P, &lim) == 0 && P.outcome == PLATFORM_TIMEOUT, "the abort flag ends it");
    CHECK(r.enters == 0 && played == 0, "no hook, no KVM_RUN");
    /* A run that ended in a hooked exit (HLT: a guest error) is not entered again. */
    static const enum ev h1[] = {EV_HLT, EV_STEP};
    boot(h1, N(h1));
    abort_flag = 0;
    CHECK(vcpu_run(&P, &lim) == 0 && P.outcome == PLATFORM_GUEST_ERROR, "HLT ends the run");
    CHECK(r.exits == 1 && played == 1 && r.enters == 1, "exited saw it; no entry after");
}

/* The enter hook runs before the max_steps check (a debugger's interrupt
 * wins over its until_step) and its STOP comes before any KVM_RUN. */
static void test_enter_stop(void)
{
    static const enum ev s[] = {EV_STEP, EV_STEP};
    boot(s, N(s));
    struct rec r = {.stop_enter_at = 2};
    struct vcpu_hooks h = {.ctx = &r, .enter = on_enter};
    struct vcpu_limits lim = {.hooks = &h};
    CHECK(vcpu_run(&P, &lim) == 0 && played == 1 && P.step == 1, "stopped before the 2nd entry");
    r.enters = 0;
    r.stop_enter_at = 0;
    lim.max_steps = 1;
    CHECK(vcpu_run(&P, &lim) == 0 && r.enters == 1 && played == 1, "asked, then max_steps");
}

/* A FAIL returns -1 and leaves the run's outcome and message alone; a
 * failing KVM_RUN returns -1 with its message; EINTR is no exit for hooks. */
static void test_fail(void)
{
    static const enum ev s[] = {EV_INTR, EV_IO, EV_STEP, EV_STEP};
    boot(s, N(s));
    struct rec r = {.fail_exit_at = 2};
    struct vcpu_hooks h = {.ctx = &r, .enter = on_enter, .exited = on_exited};
    struct vcpu_limits lim = {.hooks = &h};
    CHECK(vcpu_run(&P, &lim) == -1, "FAIL returns -1");
    CHECK(played == 3 && P.step == 1 && r.exits == 2, "failed at the second exit (the step)");
    CHECK(P.outcome == PLATFORM_RUNNING && P.message[0] == 0, "outcome and message untouched");
    static const enum ev b[] = {EV_BROKEN};
    boot(b, N(b));
    r = (struct rec){0};
    CHECK(vcpu_run(&P, &lim) == -1 && strstr(P.message, "KVM_RUN: ") != NULL, "KVM_RUN failed");
}

/* The exited hook's STOP at a step: the loop returns with that step done. */
static void test_stop_at_step(void)
{
    static const enum ev s[] = {EV_STEP, EV_IO, EV_STEP, EV_STEP};
    boot(s, N(s));
    struct rec r = {.stop_step_at = 2};
    struct vcpu_hooks h = {.ctx = &r, .exited = on_exited};
    struct vcpu_limits lim = {.hooks = &h};
    CHECK(vcpu_run(&P, &lim) == 0 && P.step == 2 && played == 3, "stopped after step 2");
}

int main(void)
{
    test_plain();
    test_debug_stop();
    test_debug_unhooked();
    test_own_ends_first();
    test_enter_stop();
    test_fail();
    test_stop_at_step();
    free(VM.ram);
    return unit_done();
}
