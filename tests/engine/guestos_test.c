/*
 * guestos_test: src/guestos over made-up guest memory laid out as the
 * guest kernel lays it out (init_task, init_mm, a task list, a thread
 * group, kernel stacks with pt_regs, page tables): offsets found, tasks
 * listed, registers read, process memory read and written through its
 * page table; hostile memory (a task list that never closes, pointers
 * outside RAM) gives errors, never a read outside the buffer (ASan).
 */
#include <elf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>

#include "guestos/gos.h"
#include "guestos/unwind.h"
#include "unit.h"
#include "util/bytes.h"

#define RAM (16u << 20)
#define KMAP 0xffffffff80000000ull
static uint8_t *ram;

static int rd(void *ctx, uint64_t gpa, void *buf, size_t n)
{
    (void)ctx;
    if (gpa > RAM || n > RAM - gpa)
        return -1;
    memcpy(buf, ram + gpa, n);
    return 0;
}

static int wr(void *ctx, uint64_t gpa, const void *buf, size_t n)
{
    (void)ctx;
    if (gpa > RAM || n > RAM - gpa)
        return -1;
    memcpy(ram + gpa, buf, n);
    return 0;
}

static void put(uint64_t pa, uint64_t v)
{
    bytes_put_u64(ram + pa, v);
}
static uint64_t va(uint64_t pa)
{
    return KMAP + pa;
}

/* The layout (Linux 6.1's order; gos finds these). */
enum {
    O_STATE = 24,
    O_STACK = 32,
    O_TASKS = 200,
    O_MM = 216,
    O_PID = 304,
    O_RP = 312,
    O_GL = 360,
    O_TG = 472,
    O_COMM = 600,
    O_SP = 2000,
    MM_PGD = 80,
};

#define PGD_K 0x100000ull
#define INIT_TASK 0x200000ull
#define INIT_MM 0x210000ull
#define INIT_STACK 0x220000ull
#define CURRENT 0x230000ull
#define T_A 0x300000ull  /* pid 1 "init" */
#define T_B 0x310000ull  /* pid 5 "prog", leader */
#define T_B2 0x320000ull /* pid 6, thread of 5, on the CPU */
#define MM_B 0x330000ull
#define PGD_B 0x340000ull /* and its tables after it */
#define USER_PAGE 0x380000ull

static void task(uint64_t t, uint32_t pid, uint32_t tgid, const char *comm, uint64_t stack,
                 uint64_t mm, uint64_t leader)
{
    put(t + O_STACK, va(stack));
    bytes_put_u32(ram + t + O_STATE, 1);
    bytes_put_u32(ram + t + O_PID, pid);
    bytes_put_u32(ram + t + O_PID + 4, tgid);
    put(t + O_RP, va(INIT_TASK));
    put(t + O_RP + 8, va(INIT_TASK));
    put(t + O_GL, va(leader));
    put(t + O_MM, mm ? va(mm) : 0);
    put(t + O_MM + 8, mm ? va(mm) : va(INIT_MM));
    put(t + O_TG, va(t + O_TG)); /* an empty thread ring */
    put(t + O_TG + 8, va(t + O_TG));
    memcpy(ram + t + O_COMM, comm, strlen(comm) + 1);
    /* saved kernel sp and a frame returning into kernel text */
    if (stack) {
        put(t + O_SP, va(stack + 0x3e00));
        put(stack + 0x3e00 + 48, KMAP + 0x1234);
    }
}

static void link_ring(const uint64_t *t, size_t n, size_t off)
{
    for (size_t i = 0; i < n; i++) {
        put(t[i] + off, va(t[(i + 1) % n] + off));
        put(t[i] + off + 8, va(t[(i + n - 1) % n] + off));
    }
}

static void build(void)
{
    memset(ram, 0, RAM);
    /* kernel page table: PML4[511] -> PDPT, PDPT[510] -> PD, 8 x 2 MiB at 0 */
    put(PGD_K + 511 * 8, (PGD_K + 0x1000) | 3);
    put(PGD_K + 0x1000 + 510 * 8, (PGD_K + 0x2000) | 3);
    for (uint64_t i = 0; i < 8; i++)
        put(PGD_K + 0x2000 + i * 8, (i << 21) | 0x83);
    task(INIT_TASK, 0, 0, "swapper", INIT_STACK, 0, INIT_TASK);
    bytes_put_u32(ram + INIT_TASK + O_STATE, 0);
    put(INIT_TASK + O_MM + 8, va(MM_B)); /* lazy: borrows the last task's mm */
    put(INIT_TASK + O_GL, va(INIT_TASK));
    put(INIT_MM + MM_PGD, va(PGD_K));
    task(T_A, 1, 1, "init", 0x400000, MM_B, T_A);
    task(T_B, 5, 5, "prog", 0x410000, MM_B, T_B);
    task(T_B2, 6, 5, "prog", 0x420000, MM_B, T_B);
    bytes_put_u32(ram + T_B2 + O_STATE, 0);
    uint64_t list[] = {INIT_TASK, T_A, T_B};
    link_ring(list, 3, O_TASKS);
    uint64_t grp[] = {T_B, T_B2};
    link_ring(grp, 2, O_TG);
    put(CURRENT, va(T_B2));
    /* process page table: user VA 0x400000.. -> USER_PAGE (two 4K pages), and
     * the kernel half shared */
    put(MM_B + MM_PGD, va(PGD_B));
    put(PGD_B + 511 * 8, (PGD_K + 0x1000) | 3);
    put(PGD_B + 0, (PGD_B + 0x1000) | 7);
    put(PGD_B + 0x1000, (PGD_B + 0x2000) | 7);
    put(PGD_B + 0x2000 + 2 * 8, (PGD_B + 0x3000) | 7);
    put(PGD_B + 0x3000 + 0, USER_PAGE | 7);
    put(PGD_B + 0x3000 + 8, (USER_PAGE + 0x1000) | 5); /* read-only */
    memcpy(ram + USER_PAGE + 0xffc, "hello, guest", 13);
    /* pt_regs of pid 5 at the top of its stack: user mode, rip 0x401000 */
    uint64_t pr = 0x410000 + 16384 - 168;
    put(pr + 16 * 8, 0x401000);   /* rip */
    put(pr + 17 * 8, 0x33);       /* cs */
    put(pr + 19 * 8, 0x7ffff000); /* rsp */
    put(pr + 10 * 8, 42);         /* rax */
}

static struct gos_syms syms(void)
{
    return (struct gos_syms){.init_task = va(INIT_TASK),
                             .current_task = va(CURRENT),
                             .init_mm = va(INIT_MM),
                             .init_stack = va(INIT_STACK),
                             .init_top_pgt = va(PGD_K)};
}

/* Linux clears init_task's active_mm when the CPU leaves idle for a user
 * task: the layout is still found from the task list, but a NULL active_mm
 * with a list of init_task alone is not taken for it. */
static void test_null_active_mm(void)
{
    build();
    put(INIT_TASK + O_MM + 8, 0);
    struct gos g;
    struct gos_mem mem = {.read = rd, .write = wr};
    struct gos_syms s = syms();
    char why[300] = "";
    CHECK(gos_open(&g, &mem, &s, why, sizeof(why)) == 0, why);
    CHECK(g.lay.mm == O_MM && g.lay.tasks == O_TASKS, "offsets with a NULL active_mm");
    uint64_t alone[] = {INIT_TASK};
    link_ring(alone, 1, O_TASKS);
    CHECK(gos_open(&g, &mem, &s, why, sizeof(why)) < 0, "a NULL active_mm and no other task");
}

static void test_layout_and_tasks(void)
{
    build();
    struct gos g;
    struct gos_mem mem = {.read = rd, .write = wr};
    struct gos_syms s = syms();
    char why[300] = "";
    CHECK(gos_open(&g, &mem, &s, why, sizeof(why)) == 0, why);
    CHECK(g.lay.comm == O_COMM && g.lay.pid == O_PID && g.lay.stack == O_STACK, "offsets");
    CHECK(g.lay.state == O_STATE && g.lay.mm == O_MM && g.lay.tasks == O_TASKS, "offsets 2");
    CHECK(g.lay.thread_group == O_TG && g.lay.mm_pgd == MM_PGD, "offsets 3");
    struct gos_task t[8];
    size_t n = 0;
    CHECK(gos_tasks(&g, t, 8, &n, why, sizeof(why)) == 0, why);
    CHECK(n == 4, "four tasks");
    CHECK(t[0].pid == 0 && !strcmp(t[0].comm, "swapper") && t[0].kernel_thread, "swapper");
    CHECK(t[1].pid == 1 && !strcmp(t[1].comm, "init"), "init");
    CHECK(t[2].pid == 5 && t[2].tgid == 5 && !t[2].current && t[2].state == 1, "leader");
    CHECK(t[3].pid == 6 && t[3].tgid == 5 && t[3].current && t[3].state == 0, "thread");
    CHECK(t[2].pgd == PGD_B, "pgd physical");
    CHECK(g.lay.thread_sp == O_SP, "thread.sp found");
    CHECK(t[2].kernel_sp == va(0x410000 + 0x3e00), "kernel sp");
    /* a smaller buffer: the count says how many there are */
    CHECK(gos_tasks(&g, t, 2, &n, why, sizeof(why)) == 0 && n == 2, "bounded by max");
    CHECK(gos_tasks(&g, t, 8, &n, why, sizeof(why)) == 0, why);

    struct gos_regs r;
    CHECK(gos_user_regs(&g, &t[2], &r) == 0, "pt_regs");
    CHECK(r.rip == 0x401000 && r.rsp == 0x7ffff000 && r.rax == 42 && r.cs == 0x33, "regs");
    CHECK(gos_user_regs(&g, &t[0], &r) < 0, "a kernel thread has none");
    CHECK(gos_user_regs(&g, &t[2], &r) == 0, "again");
    r.rax = 7;
    CHECK(gos_set_user_regs(&g, &t[2], &r) == 0, "set regs");
    CHECK(gos_user_regs(&g, &t[2], &r) == 0 && r.rax == 7, "regs written");

    char buf[32] = {0};
    CHECK(gos_vread(&g, t[2].pgd, 0x400ffc, buf, 13) == 13, "read across pages");
    CHECK(!strcmp(buf, "hello, guest"), "bytes");
    CHECK(gos_vread(&g, t[2].pgd, 0x401ff8, buf, 16) == 8, "short at an unmapped page");
    CHECK(gos_vread(&g, t[2].pgd, 0x800000, buf, 4) == 0, "unmapped");
    CHECK(gos_vread(&g, t[2].pgd, 0x8000000000000000ull, buf, 4) == 0, "non-canonical");
    CHECK(gos_vwrite(&g, t[2].pgd, 0x401000, "\xcc", 1) == 1, "write to read-only text");
    CHECK(ram[USER_PAGE + 0x1000] == 0xcc, "written");
    uint64_t pa;
    int w = 1;
    CHECK(gos_translate(&g, t[2].pgd, 0x401000, &pa, &w) == 0 && !w, "read-only mapping");
    CHECK(gos_translate(&g, t[2].pgd, 0x400000, &pa, &w) == 0 && w && pa == USER_PAGE, "rw");

    /* gos.c invariant 5: a page taken back (protnone, its frame inverted)
     * is read and written; a swap entry (not present, no PROTNONE) is not;
     * an inverted frame outside RAM is an error, never a read outside it */
    put(PGD_B + 0x3000 + 16, (~(USER_PAGE + 0x2000) & 0x000ffffffffff000ull) | 0x120);
    memcpy(ram + USER_PAGE + 0x2000, "taken", 6);
    CHECK(gos_translate(&g, t[2].pgd, 0x402000, &pa, &w) == 0 && pa == USER_PAGE + 0x2000,
          "protnone: the inverted frame");
    CHECK(gos_vread(&g, t[2].pgd, 0x402000, buf, 6) == 6 && !strcmp(buf, "taken"), "protnone read");
    CHECK(gos_vwrite(&g, t[2].pgd, 0x402000, "T", 1) == 1 && ram[USER_PAGE + 0x2000] == 'T',
          "protnone write");
    put(PGD_B + 0x3000 + 16, (USER_PAGE + 0x2000) | 0x20);
    CHECK(gos_translate(&g, t[2].pgd, 0x402000, &pa, &w) < 0, "not present, not protnone");
    put(PGD_B + 0x3000 + 16, (~(0x7ull << 40) & 0x000ffffffffff000ull) | 0x100);
    CHECK(gos_vread(&g, t[2].pgd, 0x402000, buf, 4) == 0, "protnone frame outside RAM");
    put(PGD_B + 0x3000 + 16, 0);
    put(PGD_B + 0x2000 + 3 * 8, (~(PGD_B + 0x3000) & 0x000ffffffffff000ull) | 0x100);
    CHECK(gos_translate(&g, t[2].pgd, 0x600000, &pa, &w) < 0, "protnone only at the last level");
}

static void test_hostile(void)
{
    struct gos g;
    struct gos_mem mem = {.read = rd, .write = wr};
    struct gos_syms s = syms();
    char why[300] = "";
    struct gos_task t[8];
    size_t n;
    /* a task list node pointing outside RAM */
    build();
    CHECK(gos_open(&g, &mem, &s, why, sizeof(why)) == 0, why);
    put(T_A + O_TASKS, 0xffff888fffff0000ull);
    CHECK(gos_tasks(&g, t, 8, &n, why, sizeof(why)) < 0, "outside RAM");
    /* a thread ring that never comes back to its leader */
    build();
    CHECK(gos_open(&g, &mem, &s, why, sizeof(why)) == 0, why);
    put(T_B2 + O_TG, va(T_B2 + O_TG));
    CHECK(gos_tasks(&g, t, 8, &n, why, sizeof(why)) < 0, "an endless ring is refused");
    /* a task whose pid is out of range */
    build();
    CHECK(gos_open(&g, &mem, &s, why, sizeof(why)) == 0, why);
    bytes_put_u32(ram + T_A + O_PID, 0x7fffffff);
    CHECK(gos_tasks(&g, t, 8, &n, why, sizeof(why)) < 0, "a bad pid");
    /* no swapper: the kernel is not one gos knows */
    build();
    memset(ram + INIT_TASK + O_COMM, 0, 8);
    CHECK(gos_open(&g, &mem, &s, why, sizeof(why)) < 0, "no swapper");
    /* a page table pointing outside RAM */
    build();
    put(PGD_K + 511 * 8, 0xfff0000000ull | 3);
    CHECK(gos_open(&g, &mem, &s, why, sizeof(why)) < 0, "kernel tables outside RAM");
}

/* The auxiliary vector in an mm_struct's words: found after the argument
 * and environment strings, with AT_PAGESZ 4096, AT_PHDR and AT_ENTRY;
 * anything else (a bad type, no AT_NULL, a missing AT_ENTRY, strings out
 * of order) is not found. */
static void test_auxv_find(void)
{
    uint64_t w[64] = {0};
    /* pgd, counters..., arg_start, arg_end, env_start, env_end, auxv */
    w[0] = 0xffff888000123000ull;
    w[1] = 7;
    uint64_t at[] = {33, 0x7ffff7ffd000ull, 51, 3632, 16, 0x178bfbff, 6, 4096, 3, 0x555555554040ull,
                     9,  0x555555555060ull, 0,  0};
    w[6] = 0x7fffffffe500ull, w[7] = 0x7fffffffe520ull;
    w[8] = 0x7fffffffe520ull, w[9] = 0x7fffffffefe0ull;
    memcpy(w + 10, at, sizeof(at));
    size_t start = 0, len = 0;
    CHECK(gos_auxv_find(w, 64, &start, &len) == 0 && start == 10 && len == 14, "auxv found");
    w[10 + 10] = 60; /* an unknown type in place of AT_ENTRY */
    CHECK(gos_auxv_find(w, 64, &start, &len) < 0, "an unknown type");
    w[10 + 10] = 9;
    w[10 + 7] = 65536; /* AT_PAGESZ not 4096 */
    CHECK(gos_auxv_find(w, 64, &start, &len) < 0, "a bad page size");
    w[10 + 7] = 4096;
    w[7] = 0x7fffffffe400ull; /* arg_end before arg_start */
    CHECK(gos_auxv_find(w, 64, &start, &len) < 0, "strings out of order");
    w[7] = 0x7fffffffe520ull;
    CHECK(gos_auxv_find(w, 22, &start, &len) < 0, "no AT_NULL in the window");
    CHECK(gos_auxv_find(w, 64, &start, &len) == 0 && start == 10, "found again");
}

/* Process memory for gos_vdso_image: a buffer at address BUF_AT. */
#define BUF_AT 0x7fff00000000ull
struct mem {
    const uint8_t *p;
    size_t n;
};

static size_t mem_read(void *ctx, uint64_t addr, void *buf, size_t n)
{
    const struct mem *m = ctx;
    if (addr < BUF_AT || addr - BUF_AT >= m->n)
        return 0;
    size_t off = (size_t)(addr - BUF_AT), k = n < m->n - off ? n : m->n - off;
    memcpy(buf, m->p + off, k);
    return k;
}

/* gos_vdso_image over this host process's own vDSO (an x86-64 vDSO as a
 * kernel maps it), then over copies broken one field at a time: each is
 * refused (0), never read past. */
static void test_vdso_image(void)
{
    const uint8_t *host = (const uint8_t *)getauxval(AT_SYSINFO_EHDR);
    if (!host) {
        SKIP("no vDSO in this host process");
        return;
    }
    static uint8_t img[GOS_VDSO_MAX], copy[GOS_VDSO_MAX];
    /* The host's image: its length from its own headers. */
    const Elf64_Ehdr *he = (const Elf64_Ehdr *)host;
    size_t len = he->e_shoff + (size_t)he->e_shnum * sizeof(Elf64_Shdr);
    CHECK(len > sizeof(Elf64_Ehdr) && len <= GOS_VDSO_MAX, "the host vDSO's length");
    if (len <= sizeof(Elf64_Ehdr) || len > GOS_VDSO_MAX)
        return;
    memcpy(copy, host, len);
    struct mem m = {copy, len};
    size_t n = gos_vdso_image(mem_read, &m, BUF_AT, img);
    CHECK(n == len && memcmp(img, host, n) == 0, "the host's vDSO copied");
    CHECK(gos_vdso_image(mem_read, &m, 0, img) == 0, "no vDSO at 0");
    CHECK(gos_vdso_image(mem_read, &m, BUF_AT + 4096 * 16, img) == 0, "unmapped");
    m.n = len - 1; /* the section headers' last byte unmapped */
    CHECK(gos_vdso_image(mem_read, &m, BUF_AT, img) == 0, "a short image");
    m.n = len;
    Elf64_Ehdr *e = (Elf64_Ehdr *)copy;
    e->e_ident[EI_MAG1] = 'X';
    CHECK(gos_vdso_image(mem_read, &m, BUF_AT, img) == 0, "bad magic");
    memcpy(copy, host, len);
    e->e_machine = EM_386;
    CHECK(gos_vdso_image(mem_read, &m, BUF_AT, img) == 0, "not x86-64");
    memcpy(copy, host, len);
    e->e_shoff = GOS_VDSO_MAX - 8;
    CHECK(gos_vdso_image(mem_read, &m, BUF_AT, img) == 0, "section headers past the bound");
    memcpy(copy, host, len);
    e->e_phoff = ~0ull - 8;
    CHECK(gos_vdso_image(mem_read, &m, BUF_AT, img) == 0, "program headers wrap");
    memcpy(copy, host, len);
    Elf64_Shdr *sh = (Elf64_Shdr *)(copy + e->e_shoff);
    sh[e->e_shnum - 1].sh_type = SHT_PROGBITS;
    sh[e->e_shnum - 1].sh_offset = 4096;
    sh[e->e_shnum - 1].sh_size = ~0ull - 100;
    CHECK(gos_vdso_image(mem_read, &m, BUF_AT, img) == 0, "a section past the bound");
    memcpy(copy, host, len);
    Elf64_Phdr *ph = (Elf64_Phdr *)(copy + e->e_phoff);
    for (size_t i = 0; i < e->e_phnum; i++)
        if (ph[i].p_type == PT_LOAD) {
            ph[i].p_filesz = ph[i].p_memsz = GOS_VDSO_MAX + 1;
            break;
        }
    CHECK(gos_vdso_image(mem_read, &m, BUF_AT, img) == 0, "a PT_LOAD past the bound");
    memcpy(copy, host, len);
    CHECK(gos_vdso_image(mem_read, &m, BUF_AT, img) == n, "the intact copy again");
}

int main(void)
{
    ram = calloc(1, RAM);
    if (!ram)
        return 1;
    test_layout_and_tasks();
    test_null_active_mm();
    test_hostile();
    test_auxv_find();
    test_vdso_image();
    free(ram);
    return unit_done();
}
