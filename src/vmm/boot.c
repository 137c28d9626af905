/*
 * boot: see boot.h.
 *
 * Guest-physical layout (all below 1 MiB is reserved to the platform):
 *   0x00500  GDT (null, null, 64-bit code 0x10, data 0x18)
 *   0x07000  boot_params
 *   0x08000  setup_data: RNG seed
 *   0x09000  PML4, 0x0a000 PDPT, 0x0b000..0x0e000 four PDs (2 MiB pages)
 *   0x20000  command line
 *   kernel   at its ELF p_paddr (16 MiB for x86-64)
 *   initrd   page-aligned, at the top of RAM below 2 GiB
 * Every copy into RAM goes through kvm_gpa(), which checks bounds, so a
 * kernel file whose segments do not fit is refused rather than trusted.
 */

#include "util/fail.h"
#include "vmm/boot.h"

#include <asm/bootparam.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define GDT_GPA 0x500ull
#define ZERO_PAGE_GPA 0x7000ull
#define SETUP_DATA_GPA 0x8000ull
#define PML4_GPA 0x9000ull
#define PDPT_GPA 0xa000ull
#define PD_GPA 0xb000ull
#define CMDLINE_GPA 0x20000ull
#define CMDLINE_MAX 4096
#define INITRD_LIMIT (2ull << 30)

#define E820_RAM 1
#define E820_RESERVED 2
#define E820_PMEM_LEGACY 12

#define fail util_fail

static int load_elf(struct kvm_vm *vm, const char *path, uint64_t *entry, uint64_t *end,
                    char *err, size_t errlen)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return fail(err, errlen, "cannot open kernel %s: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) < 0 || st.st_size < (off_t)sizeof(Elf64_Ehdr)) {
        close(fd);
        return fail(err, errlen, "kernel %s is not an ELF file", path);
    }
    size_t fsize = (size_t)st.st_size;
    uint8_t *f = mmap(NULL, fsize, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (f == MAP_FAILED)
        return fail(err, errlen, "cannot map kernel %s: %s", path, strerror(errno));
    int rc = -1;
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)f;
    if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
        eh->e_machine != EM_X86_64) {
        fail(err, errlen, "kernel %s is not an x86-64 ELF vmlinux", path);
        goto out;
    }
    if (eh->e_phoff > fsize || (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr) > fsize - eh->e_phoff) {
        fail(err, errlen, "kernel %s: program headers out of range", path);
        goto out;
    }
    const Elf64_Phdr *ph = (const Elf64_Phdr *)(f + eh->e_phoff);
    uint64_t hi = 0;
    for (int i = 0; i < eh->e_phnum; i++) {
        if (ph[i].p_type != PT_LOAD)
            continue;
        if (ph[i].p_offset > fsize || ph[i].p_filesz > fsize - ph[i].p_offset ||
            ph[i].p_filesz > ph[i].p_memsz) {
            fail(err, errlen, "kernel %s: segment %d out of file range", path, i);
            goto out;
        }
        uint8_t *dst = kvm_gpa_w(vm, ph[i].p_paddr, ph[i].p_memsz);
        if (!dst) {
            fail(err, errlen, "kernel %s: segment %d does not fit in guest RAM", path, i);
            goto out;
        }
        memcpy(dst, f + ph[i].p_offset, ph[i].p_filesz);
        memset(dst + ph[i].p_filesz, 0, ph[i].p_memsz - ph[i].p_filesz);
        if (ph[i].p_paddr + ph[i].p_memsz > hi)
            hi = ph[i].p_paddr + ph[i].p_memsz;
    }
    if (hi == 0) {
        fail(err, errlen, "kernel %s has no loadable segment", path);
        goto out;
    }
    /* vmlinux's e_entry is the virtual address of startup_64; the 64-bit
     * protocol enters at its physical address. */
    *entry = eh->e_entry >= 0xffffffff80000000ull ? eh->e_entry - 0xffffffff80000000ull
                                                   : eh->e_entry;
    *end = hi;
    rc = 0;
out:
    munmap(f, fsize);
    return rc;
}

static void add_e820(struct boot_params *bp, uint64_t addr, uint64_t size, uint32_t type)
{
    struct boot_e820_entry *e = &bp->e820_table[bp->e820_entries++];
    e->addr = addr;
    e->size = size;
    e->type = type;
}

static void setup_page_tables(struct kvm_vm *vm)
{
    uint64_t *pml4 = kvm_gpa_w(vm, PML4_GPA, 4096);
    uint64_t *pdpt = kvm_gpa_w(vm, PDPT_GPA, 4096);
    memset(pml4, 0, 4096);
    memset(pdpt, 0, 4096);
    pml4[0] = PDPT_GPA | 0x3;
    for (uint64_t g = 0; g < 4; g++) {
        uint64_t *pd = kvm_gpa_w(vm, PD_GPA + g * 4096, 4096);
        pdpt[g] = (PD_GPA + g * 4096) | 0x3;
        for (uint64_t i = 0; i < 512; i++)
            pd[i] = ((g << 30) + (i << 21)) | 0x83; /* present, writable, 2 MiB */
    }
}

static void setup_gdt(struct kvm_vm *vm)
{
    uint64_t *gdt = kvm_gpa_w(vm, GDT_GPA, 32);
    gdt[0] = 0;
    gdt[1] = 0;
    gdt[2] = 0x00af9b000000ffffull; /* 0x10: 64-bit code, present, DPL 0 */
    gdt[3] = 0x00cf93000000ffffull; /* 0x18: data, present, DPL 0 */
}

static void seg(struct kvm_segment *s, uint16_t sel, uint8_t type, int code)
{
    memset(s, 0, sizeof(*s));
    s->selector = sel;
    s->limit = 0xffffffff;
    s->type = type;
    s->present = 1;
    s->s = 1;
    s->g = 1;
    s->l = code ? 1 : 0;
    s->db = code ? 0 : 1;
}

static int setup_vcpu(struct kvm_vm *vm, uint64_t entry, char *err, size_t errlen)
{
    struct kvm_sregs s;
    if (ioctl(vm->vcpu_fd, KVM_GET_SREGS, &s) < 0)
        return fail(err, errlen, "KVM_GET_SREGS: %s", strerror(errno));
    seg(&s.cs, 0x10, 0xb, 1);
    seg(&s.ds, 0x18, 0x3, 0);
    s.es = s.fs = s.gs = s.ss = s.ds;
    s.gdt.base = GDT_GPA;
    s.gdt.limit = 31;
    s.idt.base = 0;
    s.idt.limit = 0;
    s.cr3 = PML4_GPA;
    s.cr4 = 0x20;                      /* PAE */
    s.cr0 = 0x80000033;                /* PG | NE | ET | MP | PE */
    s.efer = 0x500;                    /* LME | LMA */
    if (ioctl(vm->vcpu_fd, KVM_SET_SREGS, &s) < 0)
        return fail(err, errlen, "KVM_SET_SREGS: %s", strerror(errno));
    struct kvm_regs r;
    memset(&r, 0, sizeof(r));
    r.rflags = 2;
    r.rip = entry;
    r.rsi = ZERO_PAGE_GPA;
    r.rsp = 0x6ff0; /* below the zero page, above the GDT */
    if (ioctl(vm->vcpu_fd, KVM_SET_REGS, &r) < 0)
        return fail(err, errlen, "KVM_SET_REGS: %s", strerror(errno));
    struct kvm_fpu fpu;
    memset(&fpu, 0, sizeof(fpu));
    fpu.fcw = 0x37f;
    fpu.mxcsr = 0x1f80;
    if (ioctl(vm->vcpu_fd, KVM_SET_FPU, &fpu) < 0)
        return fail(err, errlen, "KVM_SET_FPU: %s", strerror(errno));
    return 0;
}

int boot_setup(struct kvm_vm *vm, const struct boot_config *cfg, char *err, size_t errlen)
{
    uint64_t entry = 0, kend = 0;
    if (load_elf(vm, cfg->kernel_path, &entry, &kend, err, errlen) < 0)
        return -1;

    size_t clen = strlen(cfg->cmdline);
    if (clen >= CMDLINE_MAX)
        return fail(err, errlen, "kernel command line too long");
    memcpy(kvm_gpa_w(vm, CMDLINE_GPA, clen + 1), cfg->cmdline, clen + 1);

    uint64_t top = vm->ram_size < INITRD_LIMIT ? vm->ram_size : INITRD_LIMIT;
    uint64_t initrd_gpa = (top - cfg->initrd_size) & ~4095ull;
    if (cfg->initrd_size > top || initrd_gpa < kend + (16ull << 20))
        return fail(err, errlen, "initramfs (%zu bytes) does not fit in guest RAM",
                    cfg->initrd_size);
    memcpy(kvm_gpa_w(vm, initrd_gpa, cfg->initrd_size), cfg->initrd, cfg->initrd_size);

    struct setup_data *sd = kvm_gpa_w(vm, SETUP_DATA_GPA, sizeof(*sd) + 32);
    memset(sd, 0, sizeof(*sd));
    sd->type = SETUP_RNG_SEED;
    sd->len = 32;
    memcpy(sd->data, cfg->rng_seed, 32);

    struct boot_params *bp = kvm_gpa_w(vm, ZERO_PAGE_GPA, sizeof(*bp));
    memset(bp, 0, sizeof(*bp));
    bp->hdr.boot_flag = 0xaa55;
    bp->hdr.header = 0x53726448; /* "HdrS" */
    bp->hdr.version = 0x020f;
    bp->hdr.type_of_loader = 0xff;
    bp->hdr.loadflags = LOADED_HIGH;
    bp->hdr.kernel_alignment = 0x1000000;
    bp->hdr.cmd_line_ptr = (uint32_t)CMDLINE_GPA;
    bp->hdr.cmdline_size = CMDLINE_MAX;
    bp->hdr.ramdisk_image = (uint32_t)initrd_gpa;
    bp->hdr.ramdisk_size = (uint32_t)cfg->initrd_size;
    bp->hdr.setup_data = SETUP_DATA_GPA;
    add_e820(bp, 0, 0x9fc00, E820_RAM);
    add_e820(bp, 0x9fc00, 0x100000 - 0x9fc00, E820_RESERVED);
    add_e820(bp, 0x100000, kvm_ram_low(vm) - 0x100000, E820_RAM);
    if (vm->ram_size > kvm_ram_low(vm)) /* the rest of RAM, above the hole (kvm.h) */
        add_e820(bp, KVM_HIGH_GPA, vm->ram_size - kvm_ram_low(vm), E820_RAM);
    if (cfg->with_image && vm->image)
        add_e820(bp, kvm_image_gpa(vm), vm->image_size, E820_PMEM_LEGACY);

    setup_gdt(vm);
    setup_page_tables(vm);
    return setup_vcpu(vm, entry, err, errlen);
}
