/*
 * gview: see gview.h.
 */
#include "vmm/gview.h"

#include <string.h>

#include "util/check.h"
#include "vmm/kvm.h"

static int mem_read(void *ctx, uint64_t gpa, void *buf, size_t n)
{
    const struct kvm_vm *vm = ctx;
    const void *p = kvm_gpa(vm, gpa, n); /* invariant 1 */
    if (!p)
        return -1;
    memcpy(buf, p, n);
    return 0;
}

static int mem_write(void *ctx, uint64_t gpa, const void *buf, size_t n)
{
    struct kvm_vm *vm = ctx;
    void *p = kvm_gpa_w(vm, gpa, n); /* invariant 1 */
    if (!p)
        return -1;
    memcpy(p, buf, n);
    return 0;
}

void gview_mem(struct kvm_vm *vm, struct gos_mem *m)
{
    RW_ASSERT(vm && m);
    m->ctx = vm;
    m->read = mem_read;
    m->write = mem_write;
}

void gview_mem_ro(const struct kvm_vm *vm, struct gos_mem *m)
{
    RW_ASSERT(vm && m);
    m->ctx = (void *)vm; /* only mem_read uses it: invariant 2 */
    m->read = mem_read;
    m->write = NULL;
}

int gview_read(const struct kvm_vm *vm, uint64_t cr3, uint64_t gva, void *out, size_t n)
{
    struct gos g;
    memset(&g, 0, sizeof(g));
    gview_mem_ro(vm, &g.mem);
    return gos_vread(&g, cr3, gva, out, n) == n ? 0 : -1;
}
