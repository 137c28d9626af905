/* memlayout_test.c - guest RAM beyond 3 GiB (src/vmm/kvm.c): the part above
 * the PCI hole is at 4 GiB, kvm_gpa maps both parts into the one mapping,
 * nothing straddles the hole, the image moves above RAM, written pages are
 * counted by their place in the mapping. No /dev/kvm needed. */
#include "unit.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "vmm/kvm.h"

#define GIB (1ull << 30)

int main(void)
{
    struct kvm_vm vm;
    kvm_init(&vm);
    vm.ram_size = 512ull << 20;
    vm.ram = (uint8_t *)0x10000000; /* never dereferenced */
    CHECK(kvm_ram_low(&vm) == vm.ram_size, "512 MiB: all low");
    CHECK(kvm_image_gpa(&vm) == KVM_IMAGE_GPA, "512 MiB: image at 4 GiB as before");
    CHECK(kvm_gpa(&vm, KVM_HIGH_GPA, 1) == NULL, "512 MiB: nothing at 4 GiB");

    vm.ram_size = 3 * GIB;
    CHECK(kvm_image_gpa(&vm) == KVM_IMAGE_GPA, "3 GiB: image at 4 GiB as before");
    CHECK(kvm_gpa(&vm, 3 * GIB - 1, 1) == vm.ram + 3 * GIB - 1, "3 GiB: last byte");

    vm.ram_size = 8 * GIB;
    uint8_t *ram = mmap(NULL, vm.ram_size, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    CHECK(ram != MAP_FAILED, "map 8 GiB (not touched)");
    if (ram == MAP_FAILED)
        return unit_done();
    vm.ram = ram;
    size_t words = (vm.ram_size / 4096 + 63) / 64;
    vm.written = calloc(words, 8);
    vm.dirty = calloc(words, 8);
    CHECK(kvm_ram_low(&vm) == 3 * GIB, "8 GiB: 3 GiB low");
    CHECK(kvm_gpa(&vm, 0, 3 * GIB) == ram, "low part whole");
    CHECK(kvm_gpa(&vm, 3 * GIB, 1) == NULL, "the hole is not RAM");
    CHECK(kvm_gpa(&vm, 3 * GIB - 1, 2) == NULL, "nothing straddles the hole's start");
    CHECK(kvm_gpa(&vm, KVM_HIGH_GPA, 1) == ram + 3 * GIB, "4 GiB is the 4th GiB of the mapping");
    CHECK(kvm_gpa(&vm, KVM_HIGH_GPA, 5 * GIB) == ram + 3 * GIB, "high part whole");
    CHECK(kvm_gpa(&vm, KVM_HIGH_GPA + 5 * GIB - 1, 1) == ram + 8 * GIB - 1, "last byte");
    CHECK(kvm_gpa(&vm, KVM_HIGH_GPA + 5 * GIB, 1) == NULL, "one past RAM");
    CHECK(kvm_gpa(&vm, KVM_HIGH_GPA + 5 * GIB - 1, 2) == NULL, "straddles the end");
    CHECK(kvm_gpa(&vm, UINT64_MAX - 7, 16) == NULL, "wraps");
    CHECK(kvm_image_gpa(&vm) == 9 * GIB, "image above RAM (4 + 5 GiB), on a GiB");
    CHECK(kvm_image_gpa(&vm) >= KVM_HIGH_GPA + 5 * GIB, "image does not overlap RAM");
    uint8_t *p = kvm_gpa_w(&vm, KVM_HIGH_GPA + 4096, 8);
    CHECK(p == ram + 3 * GIB + 4096, "write above the hole");
    uint64_t pg = (3 * GIB + 4096) / 4096;
    CHECK((vm.dirty[pg / 64] >> (pg % 64)) & 1, "dirty by place in the mapping");
    CHECK((vm.written[pg / 64] >> (pg % 64)) & 1, "written by place in the mapping");
    munmap(ram, vm.ram_size);
    free(vm.written);
    free(vm.dirty);
    return unit_done();
}
