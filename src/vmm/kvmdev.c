/*
 * kvmdev: the part of the kvm module that any VM on /dev/kvm needs, shared
 * by rewind's VM (kvm.c) and the throw-away probe VM (probe.c, which is also
 * built alone into build/tools/kvm-probe, so this file depends on nothing but
 * util/fail.c): open /dev/kvm, create the VM, map its RAM, create the vCPU,
 * and release all of it.
 *
 * Invariants:
 *  1. A struct kvm_vm is always closable: fds are -1 or open, mappings NULL
 *     or mapped, from kvm_init (which kvm_create_vm and kvm_close end or
 *     start with) on, whatever step failed.
 *  2. RAM is one mapping at guest-physical 0 whose size is a whole number
 *     of pages (kvm_gpa_w and the dirty bitmaps count in pages).
 */
#include "vmm/kvm.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "util/check.h"
#include "util/fail.h"

void kvm_init(struct kvm_vm *vm)
{
    memset(vm, 0, sizeof(*vm));
    vm->kvm_fd = vm->vm_fd = vm->vcpu_fd = -1;
}

int kvm_create_vm(struct kvm_vm *vm, char *err, size_t errlen)
{
    kvm_init(vm);
    vm->kvm_fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);
    if (vm->kvm_fd < 0) {
        if (errno == ENOENT)
            return util_fail(err, errlen, "/dev/kvm does not exist: this machine has no KVM");
        if (errno == EACCES || errno == EPERM)
            return util_fail(err, errlen,
                             "permission denied opening /dev/kvm: join its group once, as root "
                             "(sudo usermod -aG kvm $USER), then log in again");
        return util_fail(err, errlen, "cannot open /dev/kvm: %s", strerror(errno));
    }
    int version = ioctl(vm->kvm_fd, KVM_GET_API_VERSION, 0);
    if (version != KVM_API_VERSION)
        return util_fail(err, errlen, "unsupported KVM API version %d (want %d)", version,
                         KVM_API_VERSION);
    vm->vm_fd = ioctl(vm->kvm_fd, KVM_CREATE_VM, 0);
    if (vm->vm_fd < 0)
        return util_fail(err, errlen, "KVM_CREATE_VM: %s", strerror(errno));
    return 0;
}

int kvm_set_region(struct kvm_vm *vm, uint32_t slot, uint32_t flags, uint64_t gpa, uint64_t size,
                   void *host)
{
    struct kvm_userspace_memory_region r = {
        .slot = slot,
        .flags = flags,
        .guest_phys_addr = gpa,
        .memory_size = size,
        .userspace_addr = (uint64_t)(uintptr_t)host,
    };
    return ioctl(vm->vm_fd, KVM_SET_USER_MEMORY_REGION, &r);
}

int kvm_map_ram(struct kvm_vm *vm, uint64_t size, uint32_t flags, char *err, size_t errlen)
{
    RW_ASSERT(!vm->ram && size > 0 && size % 4096 == 0); /* invariant 2 */
    vm->ram = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
    if (vm->ram == MAP_FAILED) {
        vm->ram = NULL;
        return util_fail(err, errlen, "cannot map %llu MiB of guest RAM: %s",
                         (unsigned long long)(size >> 20), strerror(errno));
    }
    vm->ram_size = size;
    uint64_t low = size < KVM_LOW_MAX ? size : KVM_LOW_MAX;
    if (kvm_set_region(vm, 0, flags, 0, low, vm->ram) < 0)
        return util_fail(err, errlen, "KVM_SET_USER_MEMORY_REGION: %s", strerror(errno));
    if (size > low &&
        kvm_set_region(vm, KVM_HIGH_SLOT, flags, KVM_HIGH_GPA, size - low, vm->ram + low) < 0)
        return util_fail(err, errlen, "KVM_SET_USER_MEMORY_REGION (RAM above 4 GiB): %s",
                         strerror(errno));
    return 0;
}

int kvm_create_vcpu(struct kvm_vm *vm, char *err, size_t errlen)
{
    vm->vcpu_fd = ioctl(vm->vm_fd, KVM_CREATE_VCPU, 0);
    if (vm->vcpu_fd < 0)
        return util_fail(err, errlen, "KVM_CREATE_VCPU: %s", strerror(errno));
    int sz = ioctl(vm->kvm_fd, KVM_GET_VCPU_MMAP_SIZE, 0);
    if (sz < (int)sizeof(struct kvm_run))
        return util_fail(err, errlen, "KVM_GET_VCPU_MMAP_SIZE: %s", strerror(errno));
    vm->run = mmap(NULL, (size_t)sz, PROT_READ | PROT_WRITE, MAP_SHARED, vm->vcpu_fd, 0);
    if (vm->run == MAP_FAILED) {
        vm->run = NULL;
        return util_fail(err, errlen, "mmap kvm_run: %s", strerror(errno));
    }
    vm->run_size = (size_t)sz;
    return 0;
}

struct kvm_cpuid2 *kvm_supported_cpuid(int kvm_fd)
{
    for (uint32_t n = 256;; n *= 2) {
        struct kvm_cpuid2 *c = calloc(1, sizeof(*c) + n * sizeof(c->entries[0]));
        if (!c) {
            errno = ENOMEM;
            return NULL;
        }
        c->nent = n;
        if (ioctl(kvm_fd, KVM_GET_SUPPORTED_CPUID, c) == 0)
            return c;
        int e = errno;
        free(c);
        errno = e;
        if (e != E2BIG || n >= 4096)
            return NULL;
    }
}

void kvm_close(struct kvm_vm *vm)
{
    if (vm->run)
        munmap(vm->run, vm->run_size);
    if (vm->ram)
        munmap(vm->ram, vm->ram_size);
    free(vm->written);
    free(vm->dirty);
    if (vm->image)
        munmap(vm->image, vm->image_size);
    if (vm->notice)
        munmap((void *)vm->notice, 4096);
    if (vm->vcpu_fd >= 0)
        close(vm->vcpu_fd);
    if (vm->vm_fd >= 0)
        close(vm->vm_fd);
    if (vm->kvm_fd >= 0)
        close(vm->kvm_fd);
    kvm_init(vm);
}
