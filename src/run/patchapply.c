/*
 * patchapply: see patchapply.h. The guest view it writes through
 * (debug_gos_open, debug_set_regs) is guestview.c's, not the debugger's
 * machine loop (debug.c), so the run context that calls this does not
 * depend on a module that depends on it.
 */
#include "run/patchapply.h"

#include <inttypes.h>
#include <stdlib.h>

#include "guestos/gos.h"
#include "input/patch.h"
#include "run/guestview.h"
#include "util/check.h"
#include "util/fail.h"
#include "vmm/kvm.h"

/* The task of thread id (tgid: the first user thread of process id). */
static const struct gos_task *find(const struct gos_task *t, size_t nt, uint32_t id, int tgid)
{
    for (size_t i = 0; i < nt; i++)
        if ((tgid ? t[i].tgid : t[i].pid) == id && !t[i].kernel_thread)
            return &t[i];
    return NULL;
}

int patch_apply(const struct rw_patch *p, struct kvm_vm *vm, const char *kernel, char *why,
                size_t n)
{
    RW_ASSERT(p->n <= RW_PATCH_OPS_MAX && p->nbytes <= RW_PATCH_BYTES_MAX);
    struct gos g;
    char w[300];
    if (debug_gos_open(&g, vm, kernel, w, sizeof(w)) < 0)
        return util_fail(why, n, "cannot read the guest kernel's tasks: %s", w);
    struct gos_task *t = calloc(GOS_TASKS_MAX, sizeof(*t));
    if (!t)
        return util_fail(why, n, "out of memory");
    int rc = 0;
    for (unsigned i = 0; i < p->n && rc == 0; i++) {
        const struct rw_patch_op *o = &p->op[i];
        size_t nt;
        /* The task list again at each write, as the stub reads it. */
        if (gos_tasks(&g, t, GOS_TASKS_MAX, &nt, w, sizeof(w)) < 0) {
            rc = util_fail(why, n, "write %u: cannot read the guest kernel's tasks: %s", i + 1, w);
            break;
        }
        const struct gos_task *k = find(t, nt, o->id, !o->regs);
        if (!k) {
            rc = util_fail(why, n, "write %u: no %s %u", i + 1, o->regs ? "thread" : "process",
                           o->id);
        } else if (o->regs) {
            struct rw_error err;
            if (debug_set_regs(&g, vm->vcpu_fd, k, &o->r, &err) < 0)
                rc = util_fail(why, n, "write %u: %s", i + 1, err.msg);
        } else if (o->off > p->nbytes || o->len > p->nbytes - o->off ||
                   gos_vwrite(&g, k->pgd, o->addr, p->bytes + o->off, o->len) != o->len) {
            rc = util_fail(why, n,
                           "write %u: %u bytes at 0x%" PRIx64 " of process %u are not mapped",
                           i + 1, o->len, o->addr, o->id);
        }
    }
    free(t);
    return rc;
}
