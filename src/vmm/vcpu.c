/*
 * vcpu: see vcpu.h.
 *
 * Invariants:
 *  1. A step is exactly one well-formed OUT (32 bits, count 1) to a platform
 *     port: handle_exit says whether it passed one to platform_port_out, and
 *     nothing else (other exits, host-caused returns of KVM_RUN) moves
 *     p->step.
 *  2. Every exit that is not a step is answered the same way on every host:
 *     reads of unknown ports and MMIO see all ones, writes are dropped, and
 *     the exits KVM cannot continue from end the run as a guest error.
 *  3. A guest that halts (HLT) with nothing to wake it never hangs the
 *     monitor: KVM keeps such a vCPU inside KVM_RUN (the LAPIC is in the
 *     kernel), so a watchdog thread interrupts a KVM_RUN that has lasted
 *     VCPU_WATCHDOG_MS, and a vCPU found in KVM_MP_STATE_HALTED ends the run
 *     as a guest error. Nothing but a step can wake it (the monitor injects
 *     only at steps), so the outcome and its step do not depend on when the
 *     watchdog looked. The watchdog interrupts only a vCPU that KVM's own
 *     statistics show blocking (halted): a return of KVM_RUN at a moment of
 *     host time is no step, but it is not free either (measured in the test
 *     host: with a running vCPU interrupted every 1 ms, 3 of 5 etcd runs
 *     left other bytes in guest RAM; docs/determinism.md, "Interrupt shadows"). Only on
 *     a kernel without those statistics does it interrupt a running vCPU.
 *  4. vcpu_run is the engine's only KVM_RUN loop (the probe and the
 *     snapshot's one-shot completion make single calls): a debugger attaches
 *     hooks (vcpu.h) instead of running its own. The run's own ends (an
 *     outcome, the spin watch, lim->abort) are checked before any hook, so
 *     invariants 1-3 and the spin watch hold under a debugger; a hook's
 *     verdict takes effect only between two KVM_RUN calls and never changes
 *     p->outcome; the debug hook alone answers KVM_EXIT_DEBUG when set, and
 *     no step happens in it (asserted).
 */

#include "vmm/vcpu.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "util/check.h"

/* Returns 1 if the exit was a step (invariant 1). */
static int handle_io(struct platform *p)
{
    struct kvm_run *run = p->vm->run;
    uint8_t *data = (uint8_t *)run + run->io.data_offset;
    if (platform_owns_port(run->io.port)) {
        if (run->io.direction != KVM_EXIT_IO_OUT || run->io.size != 4 || run->io.count != 1) {
            if (run->io.direction == KVM_EXIT_IO_IN) /* if the run goes on (test hole) */
                memset(data, 0xff, (size_t)run->io.size * run->io.count);
            platform_refuse(
                p, "platform port 0x%x needs a single 32-bit OUT (got %s of %u x %u bytes)",
                run->io.port, run->io.direction == KVM_EXIT_IO_OUT ? "OUT" : "IN",
                (unsigned)run->io.count, (unsigned)run->io.size);
            return 0;
        }
        uint32_t v;
        memcpy(&v, data, 4);
        platform_port_out(p, run->io.port, v);
        return 1;
    }
    /* The debugger's notice (rewind_abi.h): no step, nothing written. */
    if (run->io.port == REWIND_PORT_NOTICE && run->io.direction == KVM_EXIT_IO_OUT) {
        p->notice = 1;
        return 0;
    }
    /* Not ours: no device lives there. Reads see all ones. */
    if (run->io.direction == KVM_EXIT_IO_IN)
        memset(data, 0xff, (size_t)run->io.size * run->io.count);
    return 0;
}

static void handle_mmio(struct platform *p)
{
    struct kvm_run *run = p->vm->run;
    if (!run->mmio.is_write)
        memset(run->mmio.data, 0xff, sizeof(run->mmio.data));
}

static void fatal_exit(struct platform *p, const char *what)
{
    char regs[2048];
    FILE *f = fmemopen(regs, sizeof(regs), "w");
    if (f) {
        kvm_dump_regs(p->vm, f);
        fclose(f);
    } else {
        regs[0] = 0;
    }
    regs[sizeof(regs) - 1] = 0;
    platform_guest_error(p, "%s at step %llu\n%s", what, (unsigned long long)p->step, regs);
}

int vcpu_handle_exit(struct platform *p)
{
    struct kvm_run *run = p->vm->run;
    char what[128];
    switch (run->exit_reason) {
    case KVM_EXIT_IO:
        return handle_io(p);
    case KVM_EXIT_MMIO:
        handle_mmio(p);
        break;
    case KVM_EXIT_INTR:
        platform_host_exit(p);
        break;
    case KVM_EXIT_DEBUG: /* a watchpoint of a debugger: never a step (invariant 1) */
        if (p->dbg_exit) {
            p->dbg_exit(p->dbg_ctx, p);
            break;
        }
        snprintf(what, sizeof(what), "unexpected KVM exit %u", run->exit_reason);
        fatal_exit(p, what);
        break;
    case KVM_EXIT_HLT:
        fatal_exit(p, "the guest executed HLT (not allowed on this platform)");
        break;
    case KVM_EXIT_SHUTDOWN:
        fatal_exit(p, "the guest triple-faulted (KVM_EXIT_SHUTDOWN)");
        break;
    case KVM_EXIT_FAIL_ENTRY:
        snprintf(what, sizeof(what), "KVM entry failed (reason 0x%llx)",
                 (unsigned long long)run->fail_entry.hardware_entry_failure_reason);
        fatal_exit(p, what);
        break;
    case KVM_EXIT_INTERNAL_ERROR:
        snprintf(what, sizeof(what), "KVM internal error (suberror %u)", run->internal.suberror);
        fatal_exit(p, what);
        break;
    default:
        snprintf(what, sizeof(what), "unexpected KVM exit %u", run->exit_reason);
        fatal_exit(p, what);
        break;
    }
    return 0;
}

/* The halt watchdog (invariant 3). */
#define VCPU_WATCHDOG_MS 1000
#define VCPU_WATCHDOG_SIG (SIGRTMAX - 3)

struct watchdog {
    pthread_t thread, target;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int stop, on;
    atomic_int in_run; /* the vCPU thread is in (or entering) KVM_RUN */
    atomic_ulong runs; /* KVM_RUN calls so far */
    long period_ms;
    int stats_fd;      /* KVM_GET_STATS_FD of the vCPU, or -1 */
    off_t blocking_at; /* where in stats_fd the boolean "blocking" is */
    unsigned long kicks;
};

/* KVM's binary statistics of the vCPU: the offset of the "blocking"
 * boolean (the vCPU waits inside KVM_RUN, i.e. it halted). Returns the
 * stats fd, or -1 when the kernel has no such statistic. */
static int stats_open(int vcpu_fd, off_t *at)
{
    int fd = vcpu_fd >= 0 ? ioctl(vcpu_fd, KVM_GET_STATS_FD, NULL) : -1;
    if (fd < 0)
        return -1;
    struct kvm_stats_header h;
    if (pread(fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h) || h.name_size == 0 ||
        h.name_size > 256 || h.num_desc > 4096)
        goto none;
    size_t dsz = sizeof(struct kvm_stats_desc) + h.name_size;
    char buf[sizeof(struct kvm_stats_desc) + 256];
    for (uint32_t i = 0; i < h.num_desc; i++) {
        if (pread(fd, buf, dsz, (off_t)(h.desc_offset + i * dsz)) != (ssize_t)dsz)
            goto none;
        struct kvm_stats_desc d;
        memcpy(&d, buf, sizeof(d));
        const char *name = buf + sizeof(d);
        if (strnlen(name, h.name_size) < h.name_size && !strcmp(name, "blocking") && d.size == 1) {
            *at = (off_t)h.data_offset + d.offset;
            return fd;
        }
    }
none:
    close(fd);
    return -1;
}

/* Is the vCPU blocking (halted) now? 1 when unknown (no statistics). */
static int vcpu_blocking(const struct watchdog *w)
{
    uint64_t v;
    if (w->stats_fd < 0)
        return 1;
    return pread(w->stats_fd, &v, sizeof(v), w->blocking_at) != (ssize_t)sizeof(v) || v != 0;
}

static void watchdog_signal(int sig)
{
    (void)sig;
}

static void *watchdog_main(void *arg)
{
    struct watchdog *w = arg;
    unsigned long seen = (unsigned long)-1;
    pthread_mutex_lock(&w->mu);
    while (!w->stop) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        long ms = w->period_ms;
        ts.tv_nsec += ms % 1000 * 1000000L;
        ts.tv_sec += ms / 1000 + ts.tv_nsec / 1000000000L;
        ts.tv_nsec %= 1000000000L;
        if (pthread_cond_timedwait(&w->cv, &w->mu, &ts) == 0 || w->stop)
            continue;
        /* Still inside the KVM_RUN it was in a period ago: look. */
        unsigned long runs = atomic_load(&w->runs);
        if (atomic_load(&w->in_run) && runs == seen && vcpu_blocking(w)) {
            pthread_kill(w->target, VCPU_WATCHDOG_SIG);
            w->kicks++;
        }
        seen = runs;
    }
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

static void watchdog_start(struct watchdog *w, int vcpu_fd)
{
    w->stop = w->on = 0;
    /* REWIND_TEST_WATCHDOG_ALL: interrupt a running vCPU too, as before the
     * statistics (a developer's way to show what such returns do). */
    w->stats_fd = getenv("REWIND_TEST_WATCHDOG_ALL") ? -1 : stats_open(vcpu_fd, &w->blocking_at);
    const char *ms = getenv("REWIND_TEST_WATCHDOG_MS");
    w->period_ms = ms && atoi(ms) > 0 ? atoi(ms) : VCPU_WATCHDOG_MS;
    atomic_init(&w->in_run, 0);
    atomic_init(&w->runs, 0);
    struct sigaction sa = {.sa_handler = watchdog_signal, .sa_flags = SA_RESTART};
    sigemptyset(&sa.sa_mask);
    if (sigaction(VCPU_WATCHDOG_SIG, &sa, NULL) != 0)
        return;
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, VCPU_WATCHDOG_SIG);
    pthread_sigmask(SIG_UNBLOCK, &set, NULL);
    w->target = pthread_self();
    pthread_mutex_init(&w->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&w->cv, &ca);
    pthread_condattr_destroy(&ca);
    w->on = pthread_create(&w->thread, NULL, watchdog_main, w) == 0;
    if (!w->on) {
        pthread_cond_destroy(&w->cv);
        pthread_mutex_destroy(&w->mu);
    }
}

static void watchdog_stop(struct watchdog *w)
{
    if (!w->on) {
        if (w->stats_fd >= 0)
            close(w->stats_fd);
        return;
    }
    pthread_mutex_lock(&w->mu);
    w->stop = 1;
    pthread_cond_signal(&w->cv);
    pthread_mutex_unlock(&w->mu);
    pthread_join(w->thread, NULL);
    if (getenv("REWIND_TIMING")) /* a developer's measurement */
        fprintf(stderr, "rewind: timing: watchdog %s statistics, %lu interruptions\n",
                w->stats_fd >= 0 ? "with" : "without", w->kicks);
    pthread_cond_destroy(&w->cv);
    pthread_mutex_destroy(&w->mu);
    if (w->stats_fd >= 0)
        close(w->stats_fd);
    w->on = 0;
}

/* After a host-caused return of KVM_RUN: is the vCPU halted for good? */
static int halted(struct platform *p)
{
    struct kvm_mp_state mp;
    return ioctl(p->vm->vcpu_fd, KVM_GET_MP_STATE, &mp) == 0 && mp.mp_state == KVM_MP_STATE_HALTED;
}

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Invariant 4: a hook's verdict, or VCPU_GO when there is no such hook. */
static enum vcpu_verdict hook_enter(const struct vcpu_hooks *h, struct platform *p)
{
    return h && h->enter ? h->enter(h->ctx, p) : VCPU_GO;
}

/* After an exit of KVM_RUN: the debugger's hook for KVM_EXIT_DEBUG, else
 * the platform's answer and then the exited hook (invariants 1 and 4). */
static enum vcpu_verdict after_exit(struct platform *p, const struct vcpu_hooks *h)
{
    uint64_t step = p->step;
    if (h && h->debug && p->vm->run->exit_reason == KVM_EXIT_DEBUG) {
        enum vcpu_verdict v = h->debug(h->ctx, p);
        RW_ASSERT(p->step == step); /* invariant 4: a debug exit is never a step */
        return v;
    }
    int stepped = vcpu_handle_exit(p);
    RW_ASSERT(p->step == step + (uint64_t)stepped); /* invariant 1 */
    return h && h->exited ? h->exited(h->ctx, p, stepped) : VCPU_GO;
}

/* The run's own ends (invariant 4: before any hook): 1 if the loop ends. */
static int run_ends(struct platform *p, const struct vcpu_limits *lim)
{
    if (lim->spin && *lim->spin) {
        p->outcome = PLATFORM_SPIN;
        snprintf(p->message, sizeof(p->message), "no step for the spin limit after step %llu",
                 (unsigned long long)p->step);
        return 1;
    }
    if (lim->abort && *lim->abort) {
        p->outcome = PLATFORM_TIMEOUT;
        snprintf(p->message, sizeof(p->message), "timed out after %llu steps",
                 (unsigned long long)p->step);
        return 1;
    }
    return 0;
}

static int run_once(struct kvm_vm *vm)
{
    return vm->enter ? vm->enter(vm) : ioctl(vm->vcpu_fd, KVM_RUN, 0);
}

static int run_loop(struct platform *p, const struct vcpu_limits *lim, struct watchdog *w)
{
    struct kvm_run *run = p->vm->run;
    struct vcpu_clock *ck = lim->clock;
    uint64_t t_out = ck ? mono_ns() : 0;
    while (p->outcome == PLATFORM_RUNNING) {
        if (run_ends(p, lim))
            return 0;
        enum vcpu_verdict v = hook_enter(lim->hooks, p);
        if (v != VCPU_GO)
            return v == VCPU_STOP ? 0 : -1;
        if (lim->max_steps && p->step >= lim->max_steps)
            return 0;
        atomic_fetch_add(&w->runs, 1);
        atomic_store(&w->in_run, 1);
        uint64_t t_in = ck ? mono_ns() : 0;
        int kr = run_once(p->vm);
        atomic_store(&w->in_run, 0);
        if (ck) {
            uint64_t t = mono_ns();
            ck->monitor_ns += t_in - t_out;
            ck->in_run_ns += t - t_in;
            ck->runs++;
            t_out = t;
        }
        if (kr < 0) {
            if (errno == EINTR || errno == EAGAIN) {
                uint64_t step = p->step;
                run->immediate_exit = 0;
                platform_host_exit(p);
                RW_ASSERT(p->step == step);                      /* invariant 1: not a step */
                if (p->outcome == PLATFORM_RUNNING && halted(p)) /* invariant 3 */
                    fatal_exit(p, "the guest halted (HLT) with nothing to wake it");
                continue;
            }
            snprintf(p->message, sizeof(p->message), "KVM_RUN: %s", strerror(errno));
            return -1;
        }
        v = after_exit(p, lim->hooks);
        if (v != VCPU_GO)
            return v == VCPU_STOP ? 0 : -1;
    }
    return 0;
}

int vcpu_run(struct platform *p, const struct vcpu_limits *lim)
{
    struct watchdog w;
    watchdog_start(&w, p->vm->enter ? -1 : p->vm->vcpu_fd);
    int rc = run_loop(p, lim, &w);
    watchdog_stop(&w);
    return rc;
}
