/*
 * snapshot: see snapshot.h for what is captured and the invariants.
 *
 * MSRs: the set is every MSR KVM lists (KVM_GET_MSR_INDEX_LIST) that this
 * vCPU can read, learned once per process, so the capture follows what the
 * host's KVM actually keeps instead of a hand-written list that can miss
 * one. Restore sets them in one KVM_SET_MSRS and names the first it refuses.
 * The list is learned under msr_lock and never changes afterwards, so any
 * thread may capture (the engine is reentrant: docs/architecture.md).
 */
#include "vmm/snapshot.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "util/check.h"
#include "util/fail.h"

#define fail util_fail

static uint32_t msr_idx[SNAP_MSR_MAX];
static uint32_t msr_n;
static int msr_known;
static pthread_mutex_t msr_lock = PTHREAD_MUTEX_INITIALIZER;

static int learn_msrs_locked(struct kvm_vm *vm, char *err, size_t errlen)
{
    if (msr_known)
        return 0;
    struct kvm_msr_list probe = {.nmsrs = 0};
    ioctl(vm->kvm_fd, KVM_GET_MSR_INDEX_LIST, &probe); /* E2BIG, sets nmsrs */
    struct kvm_msr_list *l = calloc(1, sizeof(*l) + (probe.nmsrs + 1) * sizeof(uint32_t));
    if (!l)
        return fail(err, errlen, "out of memory");
    l->nmsrs = probe.nmsrs;
    if (ioctl(vm->kvm_fd, KVM_GET_MSR_INDEX_LIST, l) < 0) {
        free(l);
        return fail(err, errlen, "KVM_GET_MSR_INDEX_LIST: %s", strerror(errno));
    }
    struct {
        struct kvm_msrs h;
        struct kvm_msr_entry e;
    } one;
    for (uint32_t i = 0; i < l->nmsrs && msr_n < SNAP_MSR_MAX; i++) {
        memset(&one, 0, sizeof(one));
        one.h.nmsrs = 1;
        one.e.index = l->indices[i];
        if (ioctl(vm->vcpu_fd, KVM_GET_MSRS, &one) == 1)
            msr_idx[msr_n++] = l->indices[i];
    }
    free(l);
    msr_known = 1;
    return 0;
}

/* The MSR list, learned once (msr_n, msr_idx are read only after this
 * returned 0: the lock orders the first writer before every reader). */
static int learn_msrs(struct kvm_vm *vm, char *err, size_t errlen)
{
    pthread_mutex_lock(&msr_lock);
    int rc = learn_msrs_locked(vm, err, errlen);
    pthread_mutex_unlock(&msr_lock);
    return rc;
}

int snap_complete_io(struct kvm_vm *vm)
{
    vm->run->immediate_exit = 1;
    int r = ioctl(vm->vcpu_fd, KVM_RUN, 0);
    int e = errno;
    vm->run->immediate_exit = 0;
    if (r < 0 && e != EINTR) {
        errno = e;
        return -1;
    }
    return 0;
}

/* One vCPU ioctl of capture or restore; on failure return its name and
 * errno as the error line. */
#define VCPU_IOCTL(req, arg, name)                                                                 \
    do {                                                                                           \
        if (ioctl(vm->vcpu_fd, req, arg) < 0)                                                      \
            return fail(err, errlen, "%s: %s", name, strerror(errno));                             \
    } while (0)

/* The argument of KVM_GET_MSRS / KVM_SET_MSRS for up to SNAP_MSR_MAX MSRs. */
struct msr_buf {
    struct kvm_msrs h;
    struct kvm_msr_entry e[SNAP_MSR_MAX];
};

int snap_capture(struct platform *p, struct snap *s, unsigned holes, char *err, size_t errlen)
{
    struct kvm_vm *vm = p->vm;
    if (learn_msrs(vm, err, errlen) < 0)
        return -1;
    if (!(holes & SNAP_HOLE_NO_IO_COMPLETION) && snap_complete_io(vm) < 0)
        return fail(err, errlen, "completing the port instruction: %s", strerror(errno));
    RW_ASSERT(msr_n <= SNAP_MSR_MAX);
    memset(s, 0, sizeof(*s));
    s->version = SNAP_VERSION;
    s->size = sizeof(*s);
    s->plat.step = p->step;
    s->plat.now_ns = p->now_ns;
    s->plat.deadline_ns = p->deadline_ns;
    s->plat.shared_gpa = p->shared_gpa;
    s->plat.timer_armed = (uint32_t)p->timer_armed;
    s->plat.irq_wanted = (uint32_t)p->irq_wanted;
    VCPU_IOCTL(KVM_GET_REGS, &s->regs, "KVM_GET_REGS");
    VCPU_IOCTL(KVM_GET_SREGS, &s->sregs, "KVM_GET_SREGS");
    VCPU_IOCTL(KVM_GET_XSAVE, &s->xsave, "KVM_GET_XSAVE");
    VCPU_IOCTL(KVM_GET_XCRS, &s->xcrs, "KVM_GET_XCRS");
    VCPU_IOCTL(KVM_GET_LAPIC, &s->lapic, "KVM_GET_LAPIC");
    VCPU_IOCTL(KVM_GET_VCPU_EVENTS, &s->events, "KVM_GET_VCPU_EVENTS");
    VCPU_IOCTL(KVM_GET_DEBUGREGS, &s->dregs, "KVM_GET_DEBUGREGS");
    VCPU_IOCTL(KVM_GET_MP_STATE, &s->mp, "KVM_GET_MP_STATE");
    struct msr_buf m;
    memset(&m, 0, sizeof(m));
    m.h.nmsrs = msr_n;
    for (uint32_t i = 0; i < msr_n; i++)
        m.e[i].index = msr_idx[i];
    int got = ioctl(vm->vcpu_fd, KVM_GET_MSRS, &m);
    if (got != (int)msr_n)
        return fail(err, errlen, "KVM_GET_MSRS read %d of %u MSRs", got, msr_n);
    s->nmsrs = msr_n;
    memcpy(s->msrs, m.e, msr_n * sizeof(m.e[0]));
    return 0;
}

int snap_restore(struct platform *p, const struct snap *s, unsigned holes, char *err, size_t errlen)
{
    struct kvm_vm *vm = p->vm;
    if (snap_check(s, sizeof(*s), err, errlen) < 0)
        return -1;
    if (snap_complete_io(vm) < 0)
        return fail(err, errlen, "completing the pending port instruction: %s", strerror(errno));
    if (!(holes & SNAP_HOLE_NO_TLB_FLUSH)) {
        struct kvm_sregs t = s->sregs;
        t.cr4 ^= 1ull << 7; /* CR4.PGE: KVM resets the MMU and flushes the TLB */
        VCPU_IOCTL(KVM_SET_SREGS, &t, "KVM_SET_SREGS (flush)");
    }
    VCPU_IOCTL(KVM_SET_SREGS, &s->sregs, "KVM_SET_SREGS");
    struct msr_buf m;
    memset(&m, 0, sizeof(m));
    if (s->nmsrs > SNAP_MSR_MAX)
        return fail(err, errlen, "snapshot has %u MSRs (corrupt)", s->nmsrs);
    m.h.nmsrs = s->nmsrs;
    memcpy(m.e, s->msrs, s->nmsrs * sizeof(m.e[0]));
    int put = ioctl(vm->vcpu_fd, KVM_SET_MSRS, &m);
    if (put != (int)s->nmsrs)
        return fail(err, errlen, "KVM_SET_MSRS refused MSR 0x%x (%d of %u set)",
                    put >= 0 && put < (int)s->nmsrs ? s->msrs[put].index : 0, put, s->nmsrs);
    VCPU_IOCTL(KVM_SET_REGS, &s->regs, "KVM_SET_REGS");
    VCPU_IOCTL(KVM_SET_XSAVE, &s->xsave, "KVM_SET_XSAVE");
    VCPU_IOCTL(KVM_SET_XCRS, &s->xcrs, "KVM_SET_XCRS");
    VCPU_IOCTL(KVM_SET_DEBUGREGS, &s->dregs, "KVM_SET_DEBUGREGS");
    VCPU_IOCTL(KVM_SET_LAPIC, &s->lapic, "KVM_SET_LAPIC");
    /* Again after the LAPIC: KVM drops a TSC-deadline write while the LVT
     * timer is not in deadline mode. */
    if (ioctl(vm->vcpu_fd, KVM_SET_MSRS, &m) != (int)s->nmsrs)
        return fail(err, errlen, "KVM_SET_MSRS (after the LAPIC) failed");
    VCPU_IOCTL(KVM_SET_MP_STATE, &s->mp, "KVM_SET_MP_STATE");
    struct kvm_vcpu_events ev = s->events;
    ev.flags = KVM_VCPUEVENT_VALID_NMI_PENDING | KVM_VCPUEVENT_VALID_SHADOW;
    VCPU_IOCTL(KVM_SET_VCPU_EVENTS, &ev, "KVM_SET_VCPU_EVENTS");
    p->step = s->plat.step;
    p->now_ns = s->plat.now_ns;
    p->deadline_ns = s->plat.deadline_ns;
    p->shared_gpa = s->plat.shared_gpa;
    p->timer_armed = (int)s->plat.timer_armed;
    p->irq_wanted = (int)s->plat.irq_wanted;
    p->outcome = PLATFORM_RUNNING;
    p->job_status = 0;
    p->message[0] = 0;
    if (p->shared_gpa && !kvm_gpa(vm, p->shared_gpa, sizeof(struct rewind_shared)))
        return fail(err, errlen, "snapshot's shared page 0x%llx is outside RAM",
                    (unsigned long long)p->shared_gpa);
    return 0;
}

/* One buffer as lines of 32 bytes: "name offset hex". */
static void dump_hex(FILE *f, const char *name, const void *buf, size_t n)
{
    const uint8_t *b = buf;
    for (size_t o = 0; o < n; o += 32) {
        fprintf(f, "%s %04zx ", name, o);
        for (size_t i = o; i < n && i < o + 32; i++)
            fprintf(f, "%02x", b[i]);
        fputc('\n', f);
    }
}

int snap_dump(struct platform *p, FILE *f, char *err, size_t errlen)
{
    struct snap s; /* not static: the engine is reentrant */
    if (snap_capture(p, &s, SNAP_HOLE_NO_IO_COMPLETION, err, errlen) < 0)
        return -1;
    struct kvm_vm *vm = p->vm;
    dump_hex(f, "plat", &s.plat, sizeof(s.plat));
    dump_hex(f, "regs", &s.regs, sizeof(s.regs));
    dump_hex(f, "sregs", &s.sregs, sizeof(s.sregs));
    dump_hex(f, "xsave", &s.xsave, sizeof(s.xsave));
    dump_hex(f, "xcrs", &s.xcrs, sizeof(s.xcrs));
    dump_hex(f, "lapic", &s.lapic, sizeof(s.lapic));
    dump_hex(f, "events", &s.events, sizeof(s.events));
    dump_hex(f, "dregs", &s.dregs, sizeof(s.dregs));
    dump_hex(f, "mp", &s.mp, sizeof(s.mp));
    for (uint32_t i = 0; i < s.nmsrs; i++)
        fprintf(f, "msr %08x %016llx\n", s.msrs[i].index, (unsigned long long)s.msrs[i].data);
    struct kvm_clock_data clk;
    memset(&clk, 0, sizeof(clk));
    if (ioctl(vm->vm_fd, KVM_GET_CLOCK, &clk) == 0)
        fprintf(f, "kvmclock flags %x\n", clk.flags); /* the clock itself is host time */
    long khz = ioctl(vm->vcpu_fd, KVM_GET_TSC_KHZ, 0);
    fprintf(f, "tsc_khz %ld\n", khz);
    struct kvm_run *r = vm->run;
    fprintf(f,
            "run request_interrupt_window %u immediate_exit %u exit_reason %u "
            "ready_for_interrupt_injection %u if_flag %u flags %x cr8 %llx apic_base %llx\n",
            r->request_interrupt_window, r->immediate_exit, r->exit_reason,
            r->ready_for_interrupt_injection, r->if_flag, r->flags, (unsigned long long)r->cr8,
            (unsigned long long)r->apic_base);
    fprintf(f, "platform step %llu now %llu quantum %llu epoch %llu seed %llu schedule %llu\n",
            (unsigned long long)p->step, (unsigned long long)p->now_ns,
            (unsigned long long)p->quantum_ns, (unsigned long long)p->epoch_ns,
            (unsigned long long)p->seed, (unsigned long long)p->schedule);
    fprintf(f,
            "platform holes %llx timer %d deadline %llu shared %llx irq_wanted %d outcome %d "
            "status %llu refused %llu perturbed %llu\n",
            (unsigned long long)p->test_holes, p->timer_armed, (unsigned long long)p->deadline_ns,
            (unsigned long long)p->shared_gpa, p->irq_wanted, (int)p->outcome,
            (unsigned long long)p->job_status, (unsigned long long)p->refused,
            (unsigned long long)p->perturbed);
    dump_hex(f, "sched", &p->sched, sizeof(p->sched));
    return 0;
}

int snap_check(const void *blob, size_t len, char *err, size_t errlen)
{
    const struct snap *s = blob;
    if (len != sizeof(*s) || s->version != SNAP_VERSION || s->size != sizeof(*s))
        return fail(err, errlen, "keyframe state has another format (version %u, %zu bytes)",
                    len >= 8 ? s->version : 0, len);
    if (s->nmsrs > SNAP_MSR_MAX)
        return fail(err, errlen, "keyframe state is corrupt (%u MSRs)", s->nmsrs);
    return 0;
}
