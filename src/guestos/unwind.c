/*
 * unwind: see unwind.h. One Dwfl per thread: the executable reported as
 * a module, the process's vDSO (the kernel's code mapped into every
 * process, at the auxiliary vector's AT_SYSINFO_EHDR) as a second one, a
 * state attached whose only thread is the one asked for, its initial
 * registers from the saved pt_regs in DWARF numbering. The vDSO is a copy
 * read out of the process's memory into a memfd, reported at its load
 * address, so that the CFI of its .eh_frame unwinds a thread stopped in
 * it (clock_gettime at a step that reads the clock) into its callers.
 *
 * Invariants:
 *  1. Memory reaches libdwfl only through the caller's read function (the
 *     guest's page tables): a bad pointer in the guest stops the unwind, it
 *     never reads the host.
 *  2. At most max frames are reported: a looping stack ends the walk.
 *  3. The vDSO reaches libdwfl only as a copy of at most GOS_VDSO_MAX bytes
 *     read through the read function, whose ELF header is an x86-64 ET_DYN
 *     one and whose program and section header tables and PT_LOAD file
 *     ranges all lie inside the copy (gos_vdso_image checks each offset;
 *     asserted on the copy). The guest is untrusted: an image that fails a
 *     check, or cannot be read, is left out and the unwind goes on with the
 *     executable alone; it is never an error of gos_unwind.
 *  4. A frame in the vDSO has the file "[vdso]" and line 0 (no line
 *     information); its function is the vDSO's symbol.
 */
#include "guestos/unwind.h"

#include <elf.h>
#include <elfutils/libdwfl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "util/check.h"

struct uw {
    gos_read_fn read;
    void *ctx;
    const struct gos_regs *r;
    int given; /* the one thread was handed out */
    struct gos_frame *out;
    size_t max, n;
    Dwfl *dwfl;
    Dwfl_Module *vdso; /* NULL: none reported */
};

static pid_t next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
    (void)dwfl;
    struct uw *u = arg;
    if (u->given)
        return 0;
    u->given = 1;
    *thread_argp = u;
    return 1;
}

static bool memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
    (void)dwfl;
    struct uw *u = arg;
    uint64_t v;
    if (u->read(u->ctx, addr, &v, 8) != 8) /* invariant 1 */
        return false;
    *result = v;
    return true;
}

static bool set_initial_registers(Dwfl_Thread *thread, void *thread_arg)
{
    const struct gos_regs *r = ((struct uw *)thread_arg)->r;
    /* x86-64 DWARF numbers 0..16: rax rdx rcx rbx rsi rdi rbp rsp r8..r15 rip. */
    Dwarf_Word regs[17] = {r->rax, r->rdx, r->rcx, r->rbx, r->rsi, r->rdi, r->rbp, r->rsp, r->r8,
                           r->r9,  r->r10, r->r11, r->r12, r->r13, r->r14, r->r15, r->rip};
    return dwfl_thread_state_registers(thread, 0, 17, regs);
}

static const Dwfl_Thread_Callbacks thread_cbs = {
    .next_thread = next_thread,
    .memory_read = memory_read,
    .set_initial_registers = set_initial_registers,
};

static int on_frame(Dwfl_Frame *state, void *arg)
{
    struct uw *u = arg;
    Dwarf_Addr pc;
    bool activation;
    if (u->n >= u->max || !dwfl_frame_pc(state, &pc, &activation)) /* invariant 2 */
        return DWARF_CB_ABORT;
    if (!activation && pc > 0)
        pc--; /* a return address: the call is the byte before */
    struct gos_frame *f = &u->out[u->n++];
    memset(f, 0, sizeof(*f));
    f->pc = pc;
    Dwfl_Module *mod = dwfl_addrmodule(u->dwfl, pc);
    if (mod) {
        GElf_Off off = 0;
        GElf_Sym sym;
        const char *name = dwfl_module_addrinfo(mod, pc, &off, &sym, NULL, NULL, NULL);
        if (name) {
            snprintf(f->func, sizeof(f->func), "%s", name);
            f->func_off = off;
        }
        if (mod == u->vdso) { /* invariant 4 */
            snprintf(f->file, sizeof(f->file), "[vdso]");
            return DWARF_CB_OK;
        }
        Dwfl_Line *line = dwfl_module_getsrc(mod, pc);
        int lno = 0;
        const char *file = line ? dwfl_lineinfo(line, NULL, &lno, NULL, NULL, NULL) : NULL;
        if (file) {
            snprintf(f->file, sizeof(f->file), "%s", file);
            f->line = lno;
        }
    }
    return DWARF_CB_OK;
}

static int read_exact(gos_read_fn read, void *ctx, uint64_t addr, void *buf, size_t n)
{
    return read(ctx, addr, buf, n) == n ? 0 : -1;
}

/* end = max(end, off + n) if off + n is within GOS_VDSO_MAX; -1 if not. */
static int within(uint64_t off, uint64_t n, uint64_t *end)
{
    if (off > GOS_VDSO_MAX || n > GOS_VDSO_MAX - off)
        return -1;
    if (off + n > *end)
        *end = off + n;
    return 0;
}

size_t gos_vdso_image(gos_read_fn read, void *ctx, uint64_t base, uint8_t *img)
{
    Elf64_Ehdr eh;
    if (!base || read_exact(read, ctx, base, &eh, sizeof(eh)) < 0)
        return 0;
    if (memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
        eh.e_ident[EI_DATA] != ELFDATA2LSB || eh.e_type != ET_DYN || eh.e_machine != EM_X86_64 ||
        eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum == 0 || eh.e_phnum >= PN_XNUM ||
        (eh.e_shnum && eh.e_shentsize != sizeof(Elf64_Shdr)) || eh.e_shnum >= SHN_LORESERVE ||
        (eh.e_shnum && eh.e_shstrndx >= eh.e_shnum))
        return 0;
    uint64_t end = sizeof(eh);
    if (within(eh.e_phoff, (uint64_t)eh.e_phnum * sizeof(Elf64_Phdr), &end) < 0 ||
        within(eh.e_shoff, (uint64_t)eh.e_shnum * sizeof(Elf64_Shdr), &end) < 0)
        return 0;
    /* The header tables lie within GOS_VDSO_MAX: read them into the copy. */
    if (read_exact(read, ctx, base, img, end) < 0)
        return 0;
    int loads = 0;
    for (size_t i = 0; i < eh.e_phnum; i++) {
        Elf64_Phdr ph;
        memcpy(&ph, img + eh.e_phoff + i * sizeof(ph), sizeof(ph));
        if (ph.p_type == PT_LOAD) {
            if (!loads++ && ph.p_offset != 0)
                return 0; /* the first PT_LOAD maps the header at base */
            if (ph.p_filesz > ph.p_memsz || within(ph.p_offset, ph.p_filesz, &end) < 0)
                return 0;
        }
    }
    for (size_t i = 0; i < eh.e_shnum; i++) {
        Elf64_Shdr sh;
        memcpy(&sh, img + eh.e_shoff + i * sizeof(sh), sizeof(sh));
        if (sh.sh_type != SHT_NOBITS && within(sh.sh_offset, sh.sh_size, &end) < 0)
            return 0;
    }
    if (!loads || read_exact(read, ctx, base, img, end) < 0)
        return 0;
    RW_ASSERT(end <= GOS_VDSO_MAX); /* invariant 3 */
    return (size_t)end;
}

/* Report the vDSO at base as a module of u->dwfl (u->vdso), or nothing. */
static void report_vdso(struct uw *u, uint64_t base)
{
    uint8_t *img = malloc(GOS_VDSO_MAX);
    size_t n = img ? gos_vdso_image(u->read, u->ctx, base, img) : 0; /* invariant 3 */
    int fd = n ? memfd_create("rewind-vdso", MFD_CLOEXEC) : -1;
    if (fd >= 0 && write(fd, img, n) == (ssize_t)n) {
        /* The first PT_LOAD (file offset 0) is at base: the bias is base
         * minus its p_vaddr. libdwfl owns fd if it takes the module. */
        u->vdso = dwfl_report_elf(u->dwfl, "[vdso]", "[vdso]", fd, base, false);
        if (u->vdso)
            fd = -1;
    }
    if (fd >= 0)
        close(fd);
    free(img);
}

int gos_unwind(const char *exe, uint64_t bias, uint64_t vdso, gos_read_fn read, void *ctx,
               const struct gos_regs *r, struct gos_frame *out, size_t max, size_t *n, char *why,
               size_t wn)
{
    char *debuginfo_path = NULL; /* this call's: the engine is reentrant */
    const Dwfl_Callbacks cbs = {
        /* outlives u.dwfl: ended below */
        .find_elf = dwfl_build_id_find_elf,
        .find_debuginfo = dwfl_standard_find_debuginfo,
        .debuginfo_path = &debuginfo_path,
    };
    *n = 0;
    struct uw u = {.read = read, .ctx = ctx, .r = r, .out = out, .max = max};
    u.dwfl = dwfl_begin(&cbs);
    if (!u.dwfl) {
        snprintf(why, wn, "libdwfl: %s", dwfl_errmsg(-1));
        return -1;
    }
    dwfl_report_begin(u.dwfl);
    Dwfl_Module *mod = dwfl_report_elf(u.dwfl, "exe", exe, -1, bias, false);
    if (mod && vdso)
        report_vdso(&u, vdso);
    dwfl_report_end(u.dwfl, NULL, NULL);
    if (!mod || !dwfl_attach_state(u.dwfl, NULL, 1, &thread_cbs, &u)) {
        snprintf(why, wn, "cannot read the executable %s: %s", exe, dwfl_errmsg(-1));
        dwfl_end(u.dwfl);
        return -1;
    }
    dwfl_getthread_frames(u.dwfl, 1, on_frame, &u); /* an error ends the walk: keep frames */
    RW_ASSERT(u.n <= max);
    *n = u.n;
    dwfl_end(u.dwfl);
    return 0;
}
