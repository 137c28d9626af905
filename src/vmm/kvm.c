/*
 * kvm: VM and vCPU creation, memory slots, MSI injection.
 *
 * Why a split irqchip: the guest needs a LAPIC to take the one platform
 * vector, but must never see KVM's PIT, PIC or IOAPIC (each a source of
 * host-timed events). With KVM_CAP_SPLIT_IRQCHIP only the LAPIC lives in the
 * kernel, and the monitor reaches it only through KVM_SIGNAL_MSI from the
 * vCPU thread while the vCPU is stopped at a step.
 *
 * Creating the VM, its RAM and vCPU and closing it all are in kvmdev.c,
 * shared with the probe VM (probe.c).
 *
 * Invariants:
 *  1. Every guest address the monitor follows is bounds-checked (overflow
 *     safe) by kvm_gpa; every range the monitor writes goes through
 *     kvm_gpa_w, which marks its pages in written and dirty, because KVM's
 *     dirty log sees only the guest's own writes.
 *  2. written is a superset of dirty: both take every page the dirty log
 *     or kvm_gpa_w reports; only the keyframe code clears dirty.
 */

#include "vmm/kvm.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/bytes.h"
#include "util/check.h"
#include "util/fail.h"
#include "util/hash.h"
#include "vmm/cpuid.h"

#include "../../guest/include/rewind_abi.h"

#define fail util_fail

int kvm_open(struct kvm_vm *vm, uint64_t ram_size, char *err, size_t errlen)
{
    kvm_init(vm);
    if (ram_size < (64ull << 20) || ram_size > KVM_RAM_MAX || ram_size % 4096)
        return fail(err, errlen, "memory size must be between 64 and %llu MiB", KVM_RAM_MAX >> 20);
    if (kvm_create_vm(vm, err, errlen) < 0)
        return -1;
    if (ioctl(vm->vm_fd, KVM_SET_TSS_ADDR, 0xfffbd000ul) < 0)
        return fail(err, errlen, "KVM_SET_TSS_ADDR: %s", strerror(errno));
    struct kvm_enable_cap cap = {.cap = KVM_CAP_SPLIT_IRQCHIP, .args = {24}};
    if (ioctl(vm->vm_fd, KVM_ENABLE_CAP, &cap) < 0)
        return fail(err, errlen, "KVM split irqchip unsupported: %s", strerror(errno));

    if (kvm_map_ram(vm, ram_size, KVM_MEM_LOG_DIRTY_PAGES, err, errlen) < 0)
        return -1;
    madvise(vm->ram, ram_size, MADV_MERGEABLE);
    vm->written = calloc((ram_size / 4096 + 63) / 64, sizeof(uint64_t));
    vm->dirty = calloc((ram_size / 4096 + 63) / 64, sizeof(uint64_t));
    if (!vm->written || !vm->dirty)
        return fail(err, errlen, "out of memory");
    void *np = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (np == MAP_FAILED)
        return fail(err, errlen, "cannot map the notice page: %s", strerror(errno));
    vm->notice = np;
    if (kvm_set_region(vm, KVM_NOTICE_SLOT, KVM_MEM_READONLY, REWIND_NOTICE_GPA, 4096, np) < 0)
        return fail(err, errlen, "read-only memslot for the notice page: %s", strerror(errno));
    if (kvm_create_vcpu(vm, err, errlen) < 0)
        return -1;
    if (cpuid_setup(vm->kvm_fd, vm->vcpu_fd, err, errlen) < 0)
        return -1;
    return 0;
}

int kvm_map_image(struct kvm_vm *vm, const char *path, char *err, size_t errlen)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return fail(err, errlen, "cannot open image %s: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) < 0 || st.st_size <= 0) {
        close(fd);
        return fail(err, errlen, "image %s is empty or unreadable", path);
    }
    uint64_t size = ((uint64_t)st.st_size + 4095) & ~4095ull;
    void *p = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (p == MAP_FAILED)
        return fail(err, errlen, "cannot map image %s: %s", path, strerror(errno));
    vm->image = p;
    vm->image_size = size;
    if (kvm_set_region(vm, 1, KVM_MEM_READONLY, kvm_image_gpa(vm), size, p) < 0)
        return fail(err, errlen, "read-only memslot for the image: %s", strerror(errno));
    return 0;
}

void kvm_notice(struct kvm_vm *vm, int on)
{
    if (vm->notice)
        *vm->notice = on ? 1 : 0;
}

uint64_t kvm_ram_low(const struct kvm_vm *vm)
{
    return vm->ram_size < KVM_LOW_MAX ? vm->ram_size : KVM_LOW_MAX;
}

uint64_t kvm_image_gpa(const struct kvm_vm *vm)
{
    if (vm->ram_size <= KVM_LOW_MAX)
        return KVM_IMAGE_GPA; /* as always: ids of runs with up to 3 GiB unchanged */
    uint64_t end = KVM_HIGH_GPA + (vm->ram_size - KVM_LOW_MAX);
    return (end + (1ull << 30) - 1) & ~((1ull << 30) - 1);
}

/* The offset in vm->ram of [gpa, gpa + len), or UINT64_MAX if it is not all RAM
 * of one part (invariant 1). */
static uint64_t ram_offset(const struct kvm_vm *vm, uint64_t gpa, uint64_t len)
{
    uint64_t low = kvm_ram_low(vm);
    if (gpa <= low && len <= low - gpa)
        return gpa;
    uint64_t high = vm->ram_size - low;
    if (gpa >= KVM_HIGH_GPA && gpa - KVM_HIGH_GPA <= high && len <= high - (gpa - KVM_HIGH_GPA))
        return low + (gpa - KVM_HIGH_GPA);
    return UINT64_MAX;
}

void *kvm_gpa(const struct kvm_vm *vm, uint64_t gpa, uint64_t len)
{
    uint64_t off = ram_offset(vm, gpa, len);
    return off == UINT64_MAX ? NULL : vm->ram + off;
}

void *kvm_gpa_w(struct kvm_vm *vm, uint64_t gpa, uint64_t len)
{
    uint8_t *p = kvm_gpa(vm, gpa, len);
    if (!p || !len)
        return p;
    RW_ASSERT(vm->written && vm->dirty);    /* invariant 1 */
    uint64_t off = (uint64_t)(p - vm->ram); /* pages are places in the mapping (kvm.h) */
    for (uint64_t pg = off / 4096; pg <= (off + len - 1) / 4096; pg++) {
        vm->written[pg / 64] |= 1ull << (pg % 64);
        vm->dirty[pg / 64] |= 1ull << (pg % 64);
    }
    return p;
}

int kvm_collect_dirty(struct kvm_vm *vm)
{
    size_t words = (vm->ram_size / 4096 + 63) / 64;
    uint64_t *log = calloc(words, sizeof(uint64_t));
    if (!log)
        return -1;
    struct kvm_dirty_log d = {.slot = 0, .dirty_bitmap = log};
    int rc = vm->dirty_log ? vm->dirty_log(vm, log) : ioctl(vm->vm_fd, KVM_GET_DIRTY_LOG, &d);
    uint64_t low = kvm_ram_low(vm);
    if (rc == 0 && !vm->dirty_log && vm->ram_size > low) {
        /* RAM above 4 GiB: its bits follow the low part's (KVM_LOW_MAX is a
         * multiple of 64 pages, so they start on a word). */
        RW_ASSERT(low % (4096 * 64) == 0);
        struct kvm_dirty_log h = {.slot = KVM_HIGH_SLOT, .dirty_bitmap = log + low / 4096 / 64};
        rc = ioctl(vm->vm_fd, KVM_GET_DIRTY_LOG, &h);
    }
    if (rc == 0)
        for (size_t i = 0; i < words; i++) {
            vm->written[i] |= log[i];
            vm->dirty[i] |= log[i];
            RW_ASSERT(!(vm->dirty[i] & ~vm->written[i])); /* invariant 2 */
        }
    free(log);
    return rc < 0 ? -1 : 0;
}

static int page_is_zero(const uint8_t *p)
{
    static const uint8_t zero[4096];
    return memcmp(p, zero, 4096) == 0;
}

int kvm_ram_hash(struct kvm_vm *vm, unsigned char out[32])
{
    if (kvm_collect_dirty(vm) < 0)
        return -1;
    hash_ctx *h = hash_new();
    if (!h)
        return -1;
    uint64_t pages = vm->ram_size / 4096;
    for (uint64_t pg = 0; pg < pages; pg++) {
        if (!(vm->written[pg / 64] >> (pg % 64) & 1))
            continue;
        const uint8_t *p = vm->ram + pg * 4096;
        if (page_is_zero(p))
            continue;
        hash256 ph;
        hash_buf(p, 4096, &ph);
        kvm_ram_hash_add(h, pg, &ph);
    }
    hash256 r;
    hash_final(h, &r);
    memcpy(out, r.b, 32);
    return 0;
}

void kvm_ram_hash_add(void *ctx, uint64_t pfn, const hash256 *page_hash)
{
    uint8_t le[8];
    bytes_put_u64(le, pfn);
    hash_update(ctx, le, 8);
    hash_update(ctx, page_hash->b, 32);
}

int kvm_send_vector(struct kvm_vm *vm, uint8_t vector)
{
    if (vm->send_vector)
        return vm->send_vector(vm, vector);
    struct kvm_msi msi = {.address_lo = 0xfee00000u, .data = vector};
    int r = ioctl(vm->vm_fd, KVM_SIGNAL_MSI, &msi);
    if (r < 0)
        return -1;
    return r > 0 ? 1 : 0;
}

static void dump_seg(FILE *f, const char *n, const struct kvm_segment *s)
{
    fprintf(f, "  %-3s sel=%04x base=%016llx limit=%08x type=%x dpl=%u l=%u\n", n, s->selector,
            (unsigned long long)s->base, s->limit, s->type, s->dpl, s->l);
}

void kvm_dump_regs(struct kvm_vm *vm, void *out)
{
    FILE *f = out;
    struct kvm_regs r;
    struct kvm_sregs s;
    if (ioctl(vm->vcpu_fd, KVM_GET_REGS, &r) < 0 || ioctl(vm->vcpu_fd, KVM_GET_SREGS, &s) < 0) {
        fprintf(f, "  (registers unavailable: %s)\n", strerror(errno));
        return;
    }
    fprintf(f, "  rip=%016llx rsp=%016llx rflags=%08llx\n", r.rip, r.rsp, r.rflags);
    fprintf(f, "  rax=%016llx rbx=%016llx rcx=%016llx rdx=%016llx\n", r.rax, r.rbx, r.rcx, r.rdx);
    fprintf(f, "  rsi=%016llx rdi=%016llx rbp=%016llx r8 =%016llx\n", r.rsi, r.rdi, r.rbp, r.r8);
    fprintf(f, "  cr0=%016llx cr2=%016llx cr3=%016llx cr4=%016llx efer=%llx\n", s.cr0, s.cr2, s.cr3,
            s.cr4, s.efer);
    dump_seg(f, "cs", &s.cs);
    dump_seg(f, "ss", &s.ss);
}

int kvm_mem_fits(uint64_t ram_size, char *why, size_t n)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
        ram_size > (uint64_t)rl.rlim_cur)
        return fail(why, n, "the address-space limit (ulimit -v) is %llu MiB",
                    (unsigned long long)(rl.rlim_cur >> 20));
    if (getrlimit(RLIMIT_DATA, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
        ram_size > (uint64_t)rl.rlim_cur)
        return fail(why, n, "the data-size limit (ulimit -d) is %llu MiB",
                    (unsigned long long)(rl.rlim_cur >> 20));
    FILE *f = fopen("/proc/meminfo", "re");
    if (!f)
        return 0; /* cannot tell: let the mapping decide */
    char line[256];
    unsigned long long kib = 0;
    int found = 0;
    while (!found && fgets(line, sizeof(line), f))
        found = sscanf(line, "MemAvailable: %llu kB", &kib) == 1;
    fclose(f);
    if (found && ram_size > (uint64_t)kib * 1024)
        return fail(why, n, "this host has %llu MiB available (MemAvailable)", kib >> 10);
    return 0;
}
