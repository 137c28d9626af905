/*
 * boot: put a Linux guest in RAM and the vCPU at its 64-bit entry, following
 * the Linux x86 64-bit boot protocol (Documentation/x86/boot.rst): the
 * uncompressed vmlinux ELF is loaded at its physical addresses, boot_params
 * (the "zero page") carries the e820 map, the command line, the initramfs and
 * a setup_data RNG seed, and the vCPU starts in long mode with an identity
 * map of the first 4 GiB.
 */
#ifndef REWIND_VMM_BOOT_H
#define REWIND_VMM_BOOT_H

#include <stddef.h>
#include <stdint.h>

#include "vmm/kvm.h"

struct boot_config {
    const char *kernel_path; /* vmlinux ELF */
    const char *cmdline;
    const void *initrd;      /* cpio archive, copied into guest RAM */
    size_t initrd_size;
    uint8_t rng_seed[32];    /* handed over as SETUP_RNG_SEED */
    int with_image;          /* describe vm->image as legacy pmem in e820 */
};

/* Load the kernel and boot data into vm's RAM and set the vCPU registers.
 * Returns 0 or -1 with one line in err. */
int boot_setup(struct kvm_vm *vm, const struct boot_config *cfg, char *err, size_t errlen);

#endif
