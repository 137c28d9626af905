/*
 * cpuid: a fixed CPU model (x86-64-v3 per vendor), the same on every host of
 * a vendor, so a run recorded on one machine sees the same CPUID on another.
 *
 * The table below is the whole model: every leaf the guest sees, with every
 * feature bit named. Nothing is copied from the host except the vendor
 * string. A host that lacks a feature bit the model sets (as reported by
 * KVM_GET_SUPPORTED_CPUID) is refused, with the missing bits named. Hidden on
 * purpose (docs/determinism.md rules 3, 6): TSC, TSC-deadline, RDTSCP, invariant TSC,
 * RDRAND, RDSEED, RDPID, the PMU (leaf 0xA), thermal/power (leaf 6), MONITOR,
 * x2APIC, and KVM's paravirtual leaves (0x40000000 carries our signature).
 * XCR0 is limited to x87 | SSE | AVX.
 */
#include "vmm/cpuid.h"

#include <errno.h>
#include <linux/kvm.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "../../guest/include/rewind_abi.h"
#include "vmm/kvm.h"

enum reg { EAX, EBX, ECX, EDX };

struct feature {
    uint32_t leaf, index;
    enum reg reg;
    int bit;
    const char *name;
};

/* Feature bits the model sets; each must be supported by KVM on this host. */
static const struct feature model_features[] = {
    {1, 0, EDX, 0, "fpu"},       {1, 0, EDX, 2, "de"},
    {1, 0, EDX, 3, "pse"},       {1, 0, EDX, 5, "msr"},      {1, 0, EDX, 6, "pae"},
    {1, 0, EDX, 8, "cx8"},       {1, 0, EDX, 9, "apic"},     {1, 0, EDX, 11, "sep"},
    {1, 0, EDX, 13, "pge"},      {1, 0, EDX, 15, "cmov"},    {1, 0, EDX, 16, "pat"},
    {1, 0, EDX, 17, "pse36"},    {1, 0, EDX, 19, "clflush"}, {1, 0, EDX, 23, "mmx"},
    {1, 0, EDX, 24, "fxsr"},     {1, 0, EDX, 25, "sse"},     {1, 0, EDX, 26, "sse2"},
    {1, 0, ECX, 0, "sse3"},      {1, 0, ECX, 1, "pclmulqdq"}, {1, 0, ECX, 9, "ssse3"},
    {1, 0, ECX, 12, "fma"},      {1, 0, ECX, 13, "cx16"},    {1, 0, ECX, 19, "sse4.1"},
    {1, 0, ECX, 20, "sse4.2"},   {1, 0, ECX, 22, "movbe"},   {1, 0, ECX, 23, "popcnt"},
    {1, 0, ECX, 25, "aes"},      {1, 0, ECX, 26, "xsave"},   {1, 0, ECX, 28, "avx"},
    {1, 0, ECX, 29, "f16c"},     {7, 0, EBX, 0, "fsgsbase"}, {7, 0, EBX, 3, "bmi1"},
    {7, 0, EBX, 5, "avx2"},      {7, 0, EBX, 7, "smep"},     {7, 0, EBX, 8, "bmi2"},
    {7, 0, EBX, 19, "adx"},     {7, 0, EBX, 20, "smap"},
    {7, 0, EBX, 23, "clflushopt"}, {0xd, 1, EAX, 0, "xsaveopt"},
    {0x80000001, 0, ECX, 0, "lahf_lm"}, {0x80000001, 0, ECX, 5, "abm"},
    {0x80000001, 0, EDX, 11, "syscall"},
    {0x80000001, 0, EDX, 20, "nx"}, {0x80000001, 0, EDX, 29, "lm"},
};
#define NFEATURES (sizeof(model_features) / sizeof(model_features[0]))

#define MODEL_MAX_BASIC 0xd
#define MODEL_MAX_EXT 0x80000008u
#define MODEL_PHYS_BITS 40
#define MODEL_VIRT_BITS 48
#define MODEL_XCR0 0x7u /* x87 | SSE | AVX */

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

static struct kvm_cpuid_entry2 *find(struct kvm_cpuid2 *c, uint32_t leaf, uint32_t index)
{
    for (uint32_t i = 0; i < c->nent; i++)
        if (c->entries[i].function == leaf && c->entries[i].index == index)
            return &c->entries[i];
    return NULL;
}

static struct kvm_cpuid_entry2 *add(struct kvm_cpuid2 *m, uint32_t leaf, uint32_t index,
                                    int indexed)
{
    struct kvm_cpuid_entry2 *e = &m->entries[m->nent++];
    memset(e, 0, sizeof(*e));
    e->function = leaf;
    e->index = index;
    e->flags = indexed ? KVM_CPUID_FLAG_SIGNIFCANT_INDEX : 0;
    return e;
}

static void put_str(uint32_t *regs[], const char *s, size_t n)
{
    for (size_t i = 0; i < n / 4; i++) {
        uint32_t v = 0;
        memcpy(&v, s + 4 * i, 4);
        *regs[i] = v;
    }
}

/* Check every model bit against the host; name the missing ones in err. */
static int check_host(struct kvm_cpuid2 *host, char *err, size_t errlen)
{
    char missing[512] = "";
    size_t used = 0;
    for (size_t i = 0; i < NFEATURES; i++) {
        const struct feature *f = &model_features[i];
        struct kvm_cpuid_entry2 *e = find(host, f->leaf, f->index);
        if (e && (*reg_of(e, f->reg) >> f->bit & 1))
            continue;
        used += (size_t)snprintf(missing + used, sizeof(missing) - used, "%s%s", used ? " " : "",
                                 f->name);
        if (used >= sizeof(missing))
            break;
    }
    struct kvm_cpuid_entry2 *w = find(host, 0x80000008u, 0);
    if (w && (w->eax & 0xff) < MODEL_PHYS_BITS)
        snprintf(missing + used, sizeof(missing) - used, "%sphys-bits>=%d", used ? " " : "",
                 MODEL_PHYS_BITS);
    if (!missing[0])
        return 0;
    snprintf(err, errlen, "this host's CPU lacks features of the rewind CPU model: %s", missing);
    return -1;
}

static void build_model(struct kvm_cpuid2 *m, const uint32_t vendor[3], int amd)
{
    struct kvm_cpuid_entry2 *e = add(m, 0, 0, 0);
    e->eax = MODEL_MAX_BASIC;
    e->ebx = vendor[0];
    e->edx = vendor[1];
    e->ecx = vendor[2];
    e = add(m, 1, 0, 0);
    e->eax = amd ? 0x00830f10u : 0x000506e3u; /* fixed family/model/stepping */
    e->ebx = 0x00010800u;                       /* clflush 64 B, 1 logical CPU, APIC id 0 */
    e->ecx = 1u << 31;                          /* hypervisor present */
    add(m, 7, 0, 1);
    e = add(m, 0xd, 0, 1);
    e->eax = MODEL_XCR0;
    e->ebx = e->ecx = 576 + 256; /* legacy area + header + AVX */
    add(m, 0xd, 1, 1);
    e = add(m, 0xd, 2, 1);
    e->eax = 256;
    e->ebx = 576;
    e = add(m, 0x80000000u, 0, 0);
    e->eax = MODEL_MAX_EXT;
    e->ebx = vendor[0];
    e->edx = vendor[1];
    e->ecx = vendor[2];
    add(m, 0x80000001u, 0, 0);
    static const char brand[48] = "rewind virtual CPU (x86-64-v3)";
    uint32_t *regs[12];
    for (int i = 0; i < 3; i++) {
        e = add(m, 0x80000002u + (uint32_t)i, 0, 0);
        regs[4 * i] = &e->eax;
        regs[4 * i + 1] = &e->ebx;
        regs[4 * i + 2] = &e->ecx;
        regs[4 * i + 3] = &e->edx;
    }
    put_str(regs, brand, sizeof(brand));
    e = add(m, 0x80000005u, 0, 0); /* L1: 32 KiB 8-way, 64 B lines (d and i) */
    e->ecx = e->edx = (32u << 24) | (8u << 16) | (1u << 8) | 64u;
    e = add(m, 0x80000006u, 0, 0); /* L2: 512 KiB 8-way, 64 B lines */
    e->ecx = (512u << 16) | (0x6u << 12) | (1u << 8) | 64u;
    e = add(m, 0x80000008u, 0, 0);
    e->eax = MODEL_PHYS_BITS | (MODEL_VIRT_BITS << 8);
    for (size_t i = 0; i < NFEATURES; i++) {
        const struct feature *f = &model_features[i];
        struct kvm_cpuid_entry2 *t = find(m, f->leaf, f->index);
        *reg_of(t, f->reg) |= 1u << f->bit;
    }
    e = add(m, REWIND_CPUID_BASE, 0, 0);
    e->eax = REWIND_CPUID_BASE;
    e->ebx = REWIND_CPUID_SIG_EBX;
    e->ecx = REWIND_CPUID_SIG_ECX;
    e->edx = REWIND_CPUID_SIG_EDX;
}

int cpuid_model_name(int kvm_fd, char *out, size_t n)
{
    struct kvm_cpuid2 *c = kvm_supported_cpuid(kvm_fd);
    if (!c)
        return -1;
    struct kvm_cpuid_entry2 *v = find(c, 0, 0);
    char vendor[13] = {0};
    if (v) {
        memcpy(vendor, &v->ebx, 4);
        memcpy(vendor + 4, &v->edx, 4);
        memcpy(vendor + 8, &v->ecx, 4);
    }
    snprintf(out, n, "x86-64-v3/%s/1", vendor);
    free(c);
    return 0;
}

int cpuid_setup(int kvm_fd, int vcpu_fd, char *err, size_t errlen)
{
    struct kvm_cpuid2 *host = kvm_supported_cpuid(kvm_fd);
    struct kvm_cpuid2 *m = calloc(1, sizeof(*m) + 64 * sizeof(m->entries[0]));
    int rc = -1;
    if (!host) {
        snprintf(err, errlen, "KVM_GET_SUPPORTED_CPUID: %s", strerror(errno));
        goto out;
    }
    if (!m) {
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    struct kvm_cpuid_entry2 *v = find(host, 0, 0);
    if (!v) {
        snprintf(err, errlen, "KVM reports no CPUID leaf 0");
        goto out;
    }
    uint32_t vendor[3] = {v->ebx, v->edx, v->ecx};
    int amd = !memcmp(&v->ebx, "Auth", 4) || !memcmp(&v->ebx, "Hygo", 4);
    if (check_host(host, err, errlen) < 0)
        goto out;
    build_model(m, vendor, amd);
    if (ioctl(vcpu_fd, KVM_SET_CPUID2, m) < 0) {
        snprintf(err, errlen, "KVM_SET_CPUID2: %s", strerror(errno));
        goto out;
    }
    rc = 0;
out:
    free(host);
    free(m);
    return rc;
}
