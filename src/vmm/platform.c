/*
 * platform: see platform.h.
 *
 * Invariants:
 *  1. Every call of platform_port_out() is exactly one step: step += 1 and
 *     now_ns += quantum_ns before anything else happens.
 *  2. shared->now_ns equals now_ns whenever the vCPU runs.
 *  3. The vector is injected only here, i.e. only at a step; if the LAPIC
 *     refuses it (masked, software-disabled), irq_wanted keeps it owed and it
 *     is retried at the next step, which is again a function of the steps.
 *  4. Every guest address is resolved through kvm_gpa(); a record is copied
 *     out of guest memory before it is parsed.
 *  5. Every breach of the contract at a port goes through platform_refuse():
 *     it is counted once in p->refused, nothing of it reaches the trace or
 *     the monitor's state, and it ends the run unless the test hole
 *     PLATFORM_HOLE_REFUSE_GO_ON is open.
 */

#include "vmm/platform.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "util/check.h"
#include "util/fail.h"

void platform_init(struct platform *p, struct kvm_vm *vm, uint64_t quantum_ns, uint64_t epoch_ns,
                   uint64_t seed)
{
    memset(p, 0, sizeof(*p));
    p->vm = vm;
    p->quantum_ns = quantum_ns;
    p->epoch_ns = epoch_ns;
    p->seed = seed;
}

int platform_owns_port(uint16_t port)
{
    return port >= REWIND_PORT_BASE && port < REWIND_PORT_BASE + REWIND_PORT_COUNT * 4;
}

void platform_guest_error(struct platform *p, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    util_vfail(p->message, sizeof(p->message), fmt, ap);
    va_end(ap);
    p->outcome = PLATFORM_GUEST_ERROR;
}

void platform_refuse(struct platform *p, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    util_vfail(p->message, sizeof(p->message), fmt, ap);
    va_end(ap);
    p->refused++;
    if (!(p->test_holes & PLATFORM_HOLE_REFUSE_GO_ON))
        p->outcome = PLATFORM_GUEST_ERROR;
}

static struct rewind_shared *shared(struct platform *p)
{
    if (!p->shared_gpa)
        return NULL;
    return kvm_gpa_w(p->vm, p->shared_gpa, sizeof(struct rewind_shared));
}

static void do_record(struct platform *p, uint32_t gpa)
{
    uint8_t *buf = p->rec_buf;
    /* The guest may put a record at any address: read the header by
     * memcpy, never through a pointer that may be misaligned. */
    struct rewind_record hdr;
    const struct rewind_record *h = &hdr;
    const void *hp = kvm_gpa(p->vm, gpa, sizeof(hdr));
    if (!hp) {
        platform_refuse(p, "record at 0x%x is outside guest RAM (%llu MiB)", gpa,
                        (unsigned long long)(p->vm->ram_size >> 20));
        return;
    }
    memcpy(&hdr, hp, sizeof(hdr));
    uint32_t len = h->len;
    if (len < sizeof(*h) || len > REWIND_RECORD_MAX) {
        platform_refuse(p, "record at 0x%x has bad length %u (not %zu..%u)", gpa, len, sizeof(*h),
                        (unsigned)REWIND_RECORD_MAX);
        return;
    }
    const void *src = kvm_gpa(p->vm, gpa, len);
    if (!src) {
        platform_refuse(p, "record at 0x%x length %u runs past guest RAM (%llu MiB)", gpa, len,
                        (unsigned long long)(p->vm->ram_size >> 20));
        return;
    }
    memcpy(buf, src, len);
    const struct rewind_record *r = (const struct rewind_record *)buf;
    if (r->len != len || r->kind < 1 || r->kind > REWIND_REC_KIND_MAX) {
        platform_refuse(p, "record at 0x%x length %u has unknown kind %u", gpa, len, r->kind);
        return;
    }
    if (r->kind == REWIND_REC_SCHED) { /* only the monitor makes these (drain_switches) */
        platform_refuse(p, "record at 0x%x has kind %u, which only the monitor writes", gpa,
                        r->kind);
        return;
    }
    p->step_access = r->kind == REWIND_REC_ACCESS;
    if (p->on_record)
        p->on_record(p->record_ctx, p->step, r, buf + sizeof(*r), len - sizeof(*r));
}

static void do_shared(struct platform *p, uint32_t gpa)
{
    if (p->shared_gpa) {
        platform_refuse(p, "shared page registered twice (at 0x%llx, again at 0x%x)",
                        (unsigned long long)p->shared_gpa, gpa);
        return;
    }
    const struct rewind_shared *cand = kvm_gpa(p->vm, gpa, sizeof(struct rewind_shared));
    if (gpa == 0 || (gpa & 4095) || !cand) {
        platform_refuse(p, "shared page address 0x%x is invalid", gpa);
        return;
    }
    if (cand->magic != REWIND_SHARED_MAGIC) {
        platform_refuse(p, "shared page at 0x%x has no rewind magic (ABI mismatch?)", gpa);
        return;
    }
    p->shared_gpa = gpa;
    struct rewind_shared *sh = shared(p);
    sh->epoch_ns = p->epoch_ns;
    sh->seed = p->seed;
    sh->schedule = p->schedule;
    sh->test_holes = p->test_holes & PLATFORM_HOLE_GUEST_MASK;
    sh->pending = 0;
}

static void do_timer(struct platform *p)
{
    struct rewind_shared *sh = shared(p);
    if (!sh) {
        platform_refuse(p, "timer armed before the shared page was registered");
        return;
    }
    uint64_t t = sh->timer_ns;
    if (t == 0) {
        p->timer_armed = 0;
        return;
    }
    p->timer_armed = 1;
    p->deadline_ns = t > UINT64_MAX - p->now_ns ? UINT64_MAX : p->now_ns + t;
}

static void do_idle(struct platform *p)
{
    struct rewind_shared *sh = shared(p);
    if (p->irq_wanted || (sh && sh->pending))
        return; /* an interrupt is already owed: deliver it, no time jump */
    if (p->on_idle && p->on_idle(p->record_ctx, p))
        return;
    if (!p->timer_armed) {
        p->outcome = PLATFORM_STALLED;
        snprintf(p->message, sizeof(p->message),
                 "stalled: the guest went idle with no timer armed");
        return;
    }
    if (p->deadline_ns > p->now_ns)
        p->now_ns = p->deadline_ns;
}

static void do_stop(struct platform *p, uint32_t why)
{
    struct rewind_shared *sh = shared(p);
    switch (why) {
    case REWIND_STOP_POWEROFF:
        if (!sh) {
            p->outcome = PLATFORM_STOPPED;
            snprintf(p->message, sizeof(p->message), "guest powered off before it ran the job");
            return;
        }
        p->job_status = sh->job_status;
        if (p->job_status <= 0xffff)
            p->outcome = PLATFORM_EXITED;
        else if (p->job_status == REWIND_JOB_NOT_FOUND)
            p->outcome = PLATFORM_NOT_FOUND;
        else if (p->job_status == REWIND_JOB_NOT_EXECUTABLE)
            p->outcome = PLATFORM_NOT_EXEC;
        else
            p->outcome = PLATFORM_INIT_FAILED;
        return;
    case REWIND_STOP_PANIC:
        p->outcome = PLATFORM_PANIC;
        snprintf(p->message, sizeof(p->message), "the guest kernel panicked");
        return;
    case REWIND_STOP_REBOOT:
    case REWIND_STOP_HALT:
        p->outcome = PLATFORM_STOPPED;
        snprintf(p->message, sizeof(p->message), "the guest %s without a job status",
                 why == REWIND_STOP_REBOOT ? "rebooted" : "halted");
        return;
    case REWIND_STOP_WAITING: /* docs/determinism.md, "A guest that waits" */
        p->outcome = PLATFORM_STALLED;
        snprintf(p->message, sizeof(p->message),
                 "stalled: no process ran for a day of virtual time, every one waits "
                 "(a deadlock?)");
        return;
    default:
        platform_refuse(p, "unknown stop code %u", why);
    }
}

static void fire_and_inject(struct platform *p)
{
    struct rewind_shared *sh = shared(p);
    if (!sh)
        return;
    if (p->timer_armed && p->now_ns >= p->deadline_ns) {
        p->timer_armed = 0;
        sh->pending |= REWIND_PENDING_TIMER;
        p->irq_wanted = 1;
    }
    sh->now_ns = p->now_ns;
    if (p->irq_wanted) {
        int r = kvm_send_vector(p->vm, REWIND_VECTOR);
        if (r == 1)
            p->irq_wanted = 0;
        else if (r < 0)
            platform_guest_error(p, "KVM_SIGNAL_MSI failed");
    }
}

int platform_inspect(struct platform *p, const void *req, size_t len)
{
    struct rewind_shared *sh = shared(p);
    if (!sh || len == 0 || len > REWIND_SHARED_REQ_MAX)
        return -1;
    memcpy(sh->req, req, len);
    sh->req_len = (uint32_t)len;
    sh->pending |= REWIND_PENDING_INSPECT;
    p->irq_wanted = 1;
    fire_and_inject(p);
    return 0;
}

size_t platform_input(struct platform *p, const void *buf, size_t len)
{
    struct rewind_shared *sh = shared(p);
    if (!sh || sh->input_len != 0 || len == 0)
        return 0;
    if (len > REWIND_SHARED_INPUT_MAX)
        len = REWIND_SHARED_INPUT_MAX;
    memcpy(sh->input, buf, len);
    sh->input_len = (uint32_t)len;
    sh->pending |= REWIND_PENDING_INPUT;
    p->irq_wanted = 1;
    return len;
}

/* Hand a fault to the guest kernel at this step (rewind_abi.h, "Faults"). */
static void hand_fault(struct platform *p, const struct fault_decision *f)
{
    struct rewind_shared *sh = shared(p);
    /* One fault at a time: the guest has not taken the last one yet (its
     * interrupts are off), so this one is dropped, never overwrites it.
     * Guest state decides, so a replay drops the same one. */
    if (!sh || (sh->pending & REWIND_PENDING_FAULT))
        return;
    sh->fault_kind = (uint32_t)f->kind;
    sh->fault_node = f->node;
    sh->fault_ns = f->ns;
    sh->fault_arg = f->arg;
    sh->fault_pad = 0;
    sh->pending |= REWIND_PENDING_FAULT;
    p->irq_wanted = 1;
    p->faulted++;
}

/* The fault the schedule puts at this step, if any (faults.h, invariant 1;
 * docs/faults.md F1 and F2, whose twins are the two holes here). */
static void fault_at_step(struct platform *p)
{
    struct fault_decision f = faults_decide(&p->sched, p->step);
    if (f.kind == FAULT_NONE)
        return;
    if (p->test_holes & PLATFORM_HOLE_FAULT_HOST_TIME) { /* F1's twin */
        struct timespec t;
        clock_gettime(CLOCK_MONOTONIC, &t);
        uint64_t r = (uint64_t)t.tv_nsec * 0x9e3779b97f4a7c15ull;
        f.node = 1 + (uint32_t)((r >> 40) % p->sched.fault_nodes);
        if (f.kind == FAULT_PAUSE)
            f.ns = FAULT_PAUSE_MIN_NS << ((r >> 20) % 8);
    }
    if (p->test_holes & PLATFORM_HOLE_FAULT_AT_HOST_EXIT) { /* F2's twin */
        p->fault_owed = f;
        return;
    }
    hand_fault(p, &f);
}

void platform_host_exit(struct platform *p)
{
    if (p->fault_owed.kind != FAULT_NONE) { /* only with the hole FAULT_AT_HOST_EXIT */
        hand_fault(p, &p->fault_owed);
        p->fault_owed.kind = FAULT_NONE;
        fire_and_inject(p);
    }
    if (!(p->test_holes & PLATFORM_HOLE_TIMER_AT_HOST_EXIT))
        return;
    /* The hole: deliver the timer at a moment chosen by host timing. */
    if (p->timer_armed) {
        p->now_ns = p->deadline_ns > p->now_ns ? p->deadline_ns : p->now_ns;
        fire_and_inject(p);
    }
}

/* The context switches the guest made since the last step, as one SCHED
 * record at this step (sched.h, invariants 3-5). 0, or -1 if refused. */
static int drain_switches(struct platform *p)
{
    struct rewind_shared *sh = shared(p);
    if (!sh)
        return 0;
    struct rewind_record *rec = (struct rewind_record *)p->rec_buf;
    char why[160];
    int r = sched_drain_switches(sh, rec, why, sizeof(why));
    if (r < 0) {
        platform_refuse(p, "%s", why);
        return -1;
    }
    if (r > 0 && p->on_record)
        p->on_record(p->record_ctx, p->step, rec, p->rec_buf + sizeof(*rec),
                     rec->len - sizeof(*rec));
    return 0;
}

/* Schedule perturbation (sched.h): a pure function of the spec and the step. */
static void perturb(struct platform *p, uint16_t port)
{
    struct sched_decision d = sched_decide(&p->sched, p->step, p->step_access);
    struct rewind_shared *sh = shared(p);
    if (!sh)
        return;
    fault_at_step(p);
    sh->mem_burst = d.burst; /* every step of a run with windows: 0 outside them */
    if (d.action == SCHED_NONE)
        return;
    switch (d.action) {
    case SCHED_PREEMPT:
        sh->pending |= REWIND_PENDING_PREEMPT;
        p->irq_wanted = 1;
        break;
    case SCHED_STALL:
        sh->stall_ns = d.ns;
        sh->pending |= REWIND_PENDING_STALL | REWIND_PENDING_PREEMPT;
        p->irq_wanted = 1;
        break;
    case SCHED_YIELD:
        sh->pending |= REWIND_PENDING_YIELD;
        p->irq_wanted = 1;
        break;
    case SCHED_TIMER_SLACK:
        if (port != REWIND_PORT_TIMER || !p->timer_armed)
            return;
        p->deadline_ns = p->deadline_ns > UINT64_MAX - d.ns ? UINT64_MAX : p->deadline_ns + d.ns;
        break;
    default:
        return;
    }
    p->perturbed++;
}

void platform_port_out(struct platform *p, uint16_t port, uint32_t value)
{
    uint64_t step = ++p->step;
    p->now_ns += p->quantum_ns;
    p->step_access = 0;
    if (drain_switches(p) < 0)
        port = 0; /* refused: the step does nothing else (the default case below) */
    switch (port) {
    case REWIND_PORT_RECORD:
        do_record(p, value);
        break;
    case REWIND_PORT_CLOCK:
    case REWIND_PORT_YIELD:
        break;
    case REWIND_PORT_TIMER:
        do_timer(p);
        break;
    case REWIND_PORT_IDLE:
        do_idle(p);
        break;
    case REWIND_PORT_STOP:
        do_stop(p, value);
        break;
    case REWIND_PORT_SHARED:
        do_shared(p, value);
        break;
    case 0:
        break; /* the context-switch ring was refused above */
    default:
        platform_refuse(p, "access to unassigned platform port 0x%x", port);
        break;
    }
    if (p->outcome == PLATFORM_RUNNING && p->sched.n)
        perturb(p, port);
    if (p->outcome == PLATFORM_RUNNING)
        fire_and_inject(p);
    RW_ASSERT(p->step == step); /* invariant 1: one port access, one step */
    if (p->on_step)
        p->on_step(p->record_ctx, p);
    if (p->dbg_step)
        p->dbg_step(p->dbg_ctx, p);
}
