/*
 * snapshot: see snapshot.h for what is captured and the invariants.
 *
 * MSRs: the set is every MSR KVM lists (KVM_GET_MSR_INDEX_LIST) that this
 * vCPU can read, learned once per process, so the capture follows what the
 * host's KVM actually keeps instead of a hand-written list that can miss
 * one. Restore sets them in one KVM_SET_MSRS and names the first it refuses.
 */
#include "vmm/snapshot.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "util/check.h"
#include "util/fail.h"

#define fail util_fail

static uint32_t msr_idx[SNAP_MSR_MAX];
static uint32_t msr_n;
static int msr_known;

static int learn_msrs(struct kvm_vm *vm, char *err, size_t errlen)
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
