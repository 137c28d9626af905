/*
 * cpuid: see cpuid.h. Each hidden bit is named in hide_table so that the
 * model is auditable in one place; leaves that describe time or power
 * (thermal 6, PMU 0xA, 0x80000007) are zeroed whole.
 */

#include "cpuid.h"

#include <errno.h>
#include <linux/kvm.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "../../guest/include/rewind_abi.h"

enum reg { EAX, EBX, ECX, EDX };

struct hide {
    uint32_t leaf, index;
    enum reg reg;
    int bit;
    const char *name;
};

static const struct hide hide_table[] = {
    {1, 0, EDX, 4, "tsc"},
    {1, 0, ECX, 3, "monitor"},
    {1, 0, ECX, 5, "vmx"},
    {1, 0, ECX, 21, "x2apic"},
    {1, 0, ECX, 24, "tsc-deadline"},
    {1, 0, ECX, 30, "rdrand"},
    {7, 0, EBX, 1, "tsc-adjust"},
    {7, 0, EBX, 18, "rdseed"},
    {7, 0, ECX, 5, "waitpkg"},
    {7, 0, ECX, 22, "rdpid"},
    {0x80000001, 0, EDX, 27, "rdtscp"},
    {0x80000001, 0, ECX, 2, "svm"},
    {0x80000001, 0, ECX, 23, "perfctr-core"},
    {0x80000001, 0, ECX, 28, "perfctr-llc"},
};

static uint32_t *reg_of(struct kvm_cpuid_entry2 *e, enum reg r)
{
    switch (r) {
    case EAX:
        return &e->eax;
    case EBX:
        return &e->ebx;
    case ECX:
        return &e->ecx;
    default:
        return &e->edx;
    }
}

static int zeroed_leaf(uint32_t f)
{
    return f == 6 || f == 0xa || f == 0x80000007;
}

static void apply(struct kvm_cpuid2 *c)
{
    for (uint32_t i = 0; i < c->nent; i++) {
        struct kvm_cpuid_entry2 *e = &c->entries[i];
        if (zeroed_leaf(e->function)) {
            e->eax = e->ebx = e->ecx = e->edx = 0;
            continue;
        }
        for (size_t h = 0; h < sizeof(hide_table) / sizeof(hide_table[0]); h++) {
            const struct hide *x = &hide_table[h];
            if (x->leaf == e->function && x->index == e->index)
                *reg_of(e, x->reg) &= ~(1u << x->bit);
        }
        if (e->function == 1) {
            e->ecx |= 1u << 31;           /* hypervisor present */
            e->ebx &= 0x00ffffffu;        /* initial APIC id 0 */
        }
    }
}

/* Drop KVM's 0x4000xxxx leaves and add ours at 0x40000000. */
static void set_signature(struct kvm_cpuid2 *c)
{
    uint32_t out = 0;
    for (uint32_t i = 0; i < c->nent; i++) {
        uint32_t f = c->entries[i].function;
        if (f >= 0x40000000u && f < 0x50000000u)
            continue;
        c->entries[out++] = c->entries[i];
    }
    struct kvm_cpuid_entry2 *e = &c->entries[out++];
    memset(e, 0, sizeof(*e));
    e->function = REWIND_CPUID_BASE;
    e->eax = REWIND_CPUID_BASE;
    e->ebx = REWIND_CPUID_SIG_EBX;
    e->ecx = REWIND_CPUID_SIG_ECX;
    e->edx = REWIND_CPUID_SIG_EDX;
    c->nent = out;
}

int cpuid_setup(int kvm_fd, int vcpu_fd, char *err, size_t errlen)
{
    const uint32_t max = 256;
    struct kvm_cpuid2 *c = calloc(1, sizeof(*c) + (max + 1) * sizeof(c->entries[0]));
    if (!c) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    c->nent = max;
    if (ioctl(kvm_fd, KVM_GET_SUPPORTED_CPUID, c) < 0) {
        snprintf(err, errlen, "KVM_GET_SUPPORTED_CPUID: %s", strerror(errno));
        free(c);
        return -1;
    }
    apply(c);
    set_signature(c);
    int r = ioctl(vcpu_fd, KVM_SET_CPUID2, c);
    if (r < 0)
        snprintf(err, errlen, "KVM_SET_CPUID2: %s", strerror(errno));
    free(c);
    return r < 0 ? -1 : 0;
}
