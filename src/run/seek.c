/*
 * seek: a machine paused at a step of a stored run, for front ends that
 * look at state (a debugger stub, a timeline): the run's keyframe at or
 * before the step restored into a fresh VM and run forward to the step.
 * Nothing is kept: the context is a throwaway whose staging directory is
 * removed when the machine is closed.
 *
 * Invariants:
 *  1. A machine returned by rw_seek is paused exactly at the step asked
 *     for, with the run still going (not ended before it).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "run/machine.h"
#include "util/check.h"

int rw_seek(rw_home *h, const char *ref, uint64_t step, rw_machine **out, struct rw_error *err)
{
    static const struct rw_observer none;
    struct rw_options op;
    rw_options_init(&op);
    *out = NULL;
    rw_machine *m = calloc(1, sizeof(*m));
    if (!m) {
        err->code = RW_EINTERNAL;
        snprintf(err->msg, sizeof(err->msg), "out of memory");
        return -1;
    }
    if (run_stored_at(h, ref, step, 0, &op, &m->st, err) < 0) {
        free(m);
        return -1;
    }
    m->st.o.no_keyframes = 1;
    m->st.o.quiet = 1;
    m->st.o.obs = &none;
    int rc = run_prepare(&m->c, &m->st.o, NULL, RUN_KEEP_NOTHING, 1, &m->res, &m->err);
    if (rc == 0)
        rc = run_restore(&m->c, m->st.name, step, 0);
    if (rc == 0)
        rc = run_loop(&m->c, step);
    if (rc == 0 && (m->c.p->outcome != PLATFORM_RUNNING || m->c.p->step != step)) {
        m->c.phase = PH_LOOP;
        snprintf(m->err.msg, sizeof(m->err.msg), "the run ended at step %llu, before step %llu",
                 (unsigned long long)m->c.p->step, (unsigned long long)step);
        rc = -1;
    }
    if (rc < 0) {
        run_close(&m->c, -1);
        *err = m->err;
        run_stored_free(&m->st);
        free(m);
        return -1;
    }
    m->step = m->c.p->step;
    RW_ASSERT(m->step == step); /* invariant 1 */
    *out = m;
    return 0;
}

uint64_t rw_machine_step(const rw_machine *m)
{
    return m->c.p->step; /* where it stands now: rw_machine_resume moves it */
}

int rw_machine_regs(rw_machine *m, struct rw_regs *r, struct rw_error *err)
{
    struct kvm_regs k;
    if (ioctl(m->c.vm.vcpu_fd, KVM_GET_REGS, &k) < 0) {
        err->code = RW_EINTERNAL;
        snprintf(err->msg, sizeof(err->msg), "cannot read the vCPU's registers");
        return -1;
    }
    *r = (struct rw_regs){
        .rax = k.rax,
        .rbx = k.rbx,
        .rcx = k.rcx,
        .rdx = k.rdx,
        .rsi = k.rsi,
        .rdi = k.rdi,
        .rsp = k.rsp,
        .rbp = k.rbp,
        .r8 = k.r8,
        .r9 = k.r9,
        .r10 = k.r10,
        .r11 = k.r11,
        .r12 = k.r12,
        .r13 = k.r13,
        .r14 = k.r14,
        .r15 = k.r15,
        .rip = k.rip,
        .rflags = k.rflags,
    };
    return 0;
}

void rw_machine_close(rw_machine *m)
{
    if (!m)
        return;
    debug_free(m);
    struct rw_error scratch;
    m->c.err = &scratch;
    run_close(&m->c, -1); /* -1: remove the throwaway's staging directory */
    run_stored_free(&m->st);
    free(m);
}
