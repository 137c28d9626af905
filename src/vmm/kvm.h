/*
 * kvm: the KVM file descriptors and guest memory of one virtual machine.
 * Guest RAM is one anonymous mapping (MAP_NORESERVE, never touched by the
 * monitor up front: untouched guest memory costs the host nothing). Up to
 * 3 GiB it sits at guest-physical 0 (below the PCI hole) and the root image
 * is a read-only memslot at 4 GiB; RAM beyond 3 GiB continues at 4 GiB
 * (a second memslot) and the image moves to the next GiB boundary above it.
 * Every guest address the monitor follows goes through kvm_gpa(), which
 * checks bounds and maps the guest-physical address to its place in the
 * one mapping; page numbers in the dirty bitmaps and keyframes are places
 * in that mapping (offset / 4096), not guest-physical frame numbers.
 */
#ifndef REWIND_VMM_KVM_H
#define REWIND_VMM_KVM_H

#include <linux/kvm.h>
#include <stddef.h>
#include <stdint.h>

#define KVM_LOW_MAX (3ull << 30)   /* RAM below the PCI hole */
#define KVM_HIGH_GPA (4ull << 30)  /* RAM beyond KVM_LOW_MAX continues here */
#define KVM_RAM_MAX (256ull << 30) /* well inside the CPU model's 40 physical bits */
#define KVM_IMAGE_GPA (4ull << 30) /* root image (legacy pmem) when RAM <= KVM_LOW_MAX */
#define KVM_HIGH_SLOT 2            /* slot 0: RAM (low part), 1: image, 2: RAM above 4 GiB */
#define KVM_NOTICE_SLOT 3          /* the debugger's notice page */

struct kvm_vm {
    int kvm_fd, vm_fd, vcpu_fd;
    struct kvm_run *run;
    size_t run_size;
    uint8_t *ram;
    uint64_t ram_size;
    uint64_t *written;   /* bitmap: pages the guest or the monitor ever wrote */
    uint64_t *dirty;     /* bitmap: pages written since the keyframe code last cleared it */
    uint8_t *image;      /* read-only mapping of the root image, or NULL */
    uint64_t image_size; /* rounded up to a page */
    /* The debugger's notice page (guest/include/rewind_abi.h): one page the
     * guest reads at REWIND_NOTICE_GPA (memslot KVM_NOTICE_SLOT, read-only
     * to it), outside RAM, so in no keyframe, dirty log or RAM hash. Its
     * first word is nonzero only while a debugger resumes the machine. */
    volatile uint32_t *notice;
    /* Test seam: if set, kvm_send_vector calls it instead of KVM_SIGNAL_MSI
     * (tests/engine/platform_test.c drives the platform over a fake VM with
     * no /dev/kvm). NULL in every real VM. */
    int (*send_vector)(struct kvm_vm *vm, uint8_t vector);
    /* Test seam: if set, vcpu_run calls it instead of ioctl(KVM_RUN): it
     * leaves an exit in vm->run and returns 0, or -1 with errno as KVM_RUN
     * does (tests/engine/vcpu_test.c scripts the exits). NULL in every real VM. */
    int (*enter)(struct kvm_vm *vm);
    /* Test seam: if set, kvm_collect_dirty calls it instead of
     * KVM_GET_DIRTY_LOG: it ORs into bitmap (one bit per page of all of RAM)
     * the pages the guest wrote since its last call, and returns 0 or -1
     * (tests/engine/ctx_test.c: a fake guest's writes, src/run/seam.h).
     * NULL in every real VM. */
    int (*dirty_log)(struct kvm_vm *vm, uint64_t *bitmap);
};

/* Make vm empty and closable: no fds (-1), no mappings, no seam. */
void kvm_init(struct kvm_vm *vm);

/* kvm_init vm, open /dev/kvm, check its API version and create a VM (no RAM,
 * no vCPU). Returns 0, or -1 with one line in err; kvm_close vm either way. */
int kvm_create_vm(struct kvm_vm *vm, char *err, size_t errlen);

/* Map size bytes (whole pages) of anonymous RAM into vm->ram and give it to
 * the guest at guest-physical 0 as memslot 0 with flags
 * (KVM_MEM_LOG_DIRTY_PAGES or 0). Returns 0 or -1 with one line in err. */
int kvm_map_ram(struct kvm_vm *vm, uint64_t size, uint32_t flags, char *err, size_t errlen);

/* Set memslot slot to size bytes at host, seen by the guest at gpa.
 * Returns the ioctl's result (0, or -1 with errno). */
int kvm_set_region(struct kvm_vm *vm, uint32_t slot, uint32_t flags, uint64_t gpa, uint64_t size,
                   void *host);

/* Create the one vCPU and map its kvm_run area. Returns 0 or -1 + err. */
int kvm_create_vcpu(struct kvm_vm *vm, char *err, size_t errlen);

/* The CPUID leaves KVM supports on this host (KVM_GET_SUPPORTED_CPUID, the
 * buffer grown until they fit), malloc'd; NULL with errno. */
struct kvm_cpuid2 *kvm_supported_cpuid(int kvm_fd);

/* rewind's VM: open /dev/kvm, create a VM with a split irqchip and one vCPU, and map
 * ram_size bytes of RAM. Returns 0, or -1 with one line in err. */
int kvm_open(struct kvm_vm *vm, uint64_t ram_size, char *err, size_t errlen);

/* Map the file at path read-only at KVM_IMAGE_GPA. Returns 0 or -1 + err. */
int kvm_map_image(struct kvm_vm *vm, const char *path, char *err, size_t errlen);

/* The debugger's notice word (kvm_vm.notice): on while a debugger resumes
 * the machine, off otherwise. Writes no guest state (the page is no RAM). */
void kvm_notice(struct kvm_vm *vm, int on);

/* Host pointer for guest RAM [gpa, gpa+len), or NULL if any byte is outside
 * RAM (overflow-safe). The only way the monitor reads guest memory. */
void *kvm_gpa(const struct kvm_vm *vm, uint64_t gpa, uint64_t len);

/* Like kvm_gpa(), for a range the monitor is about to write: the pages are
 * marked in vm->written (KVM's dirty log sees only the guest's writes). */
void *kvm_gpa_w(struct kvm_vm *vm, uint64_t gpa, uint64_t len);

/* Fold KVM's dirty log into vm->written and vm->dirty. Returns 0 or -1. */
int kvm_collect_dirty(struct kvm_vm *vm);

/* SHA-256 over (page index, SHA-256 of the page) of every non-zero page of
 * guest RAM, in page order: a pure function of RAM contents, and one that
 * can reuse page hashes already known (kfcap_ram_hash). Returns 0 or -1. */
int kvm_ram_hash(struct kvm_vm *vm, unsigned char out[32]);

/* Feed one page (index, hash) into a RAM hash (ctx is a hash_ctx). */
#include "util/hash.h"
void kvm_ram_hash_add(void *ctx, uint64_t pfn, const hash256 *page_hash);

/* Send the one platform vector as an MSI to APIC 0. Returns 1 if the LAPIC
 * took it, 0 if it could not (retry later), -1 on ioctl failure. */
int kvm_send_vector(struct kvm_vm *vm, uint8_t vector);

/* Print general and segment registers of the vCPU to f. */
void kvm_dump_regs(struct kvm_vm *vm, void *f);

/* Release every resource and kvm_init vm; safe on a partly opened vm. */
void kvm_close(struct kvm_vm *vm);

/* Guest-physical address of the root image for vm's RAM size. */
uint64_t kvm_image_gpa(const struct kvm_vm *vm);

/* Bytes of RAM below the hole (the rest is at KVM_HIGH_GPA). */
uint64_t kvm_ram_low(const struct kvm_vm *vm);

/* Whether this host can give ram_size bytes of guest RAM: MemAvailable
 * (/proc/meminfo) and RLIMIT_AS / RLIMIT_DATA. 0, or -1 with why. */
int kvm_mem_fits(uint64_t ram_size, char *why, size_t n);

#endif
