/*
 * unwind: see unwind.h. One Dwfl per thread: the executable reported as
 * a module (and the vDSO, from a memory file of its bytes), a state attached whose only thread is
 * the one asked for, its initial registers from the saved pt_regs in DWARF numbering.
 *
 * Invariants:
 *  1. Memory reaches libdwfl only through the caller's read function (the
 *     guest's page tables): a bad pointer in the guest stops the unwind, it
 *     never reads the host.
 *  2. At most max frames are reported: a looping stack ends the walk.
 */
#include "guestos/unwind.h"

#include <elfutils/libdwfl.h>
#include <stdio.h>
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

/* The vDSO as a module: libdwfl reads it from a memory file (the fd is
 * consumed on success). Without it the unwind stops at the vDSO's frame. */
static void report_image(Dwfl *dwfl, const struct gos_image *im)
{
    if (!im || !im->len)
        return;
    int fd = memfd_create("vdso", MFD_CLOEXEC);
    if (fd < 0)
        return;
    if (write(fd, im->bytes, im->len) != (ssize_t)im->len ||
        !dwfl_report_elf(dwfl, "[vdso]", "[vdso]", fd, im->bias, false))
        close(fd);
}

int gos_unwind(const char *exe, uint64_t bias, const struct gos_image *vdso, gos_read_fn read,
               void *ctx, const struct gos_regs *r, struct gos_frame *out, size_t max, size_t *n,
               char *why, size_t wn)
{
    static char *debuginfo_path;
    static const Dwfl_Callbacks cbs = {
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
    if (mod)
        report_image(u.dwfl, vdso);
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
