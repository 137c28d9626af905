/*
 * gos: see gos.h. How the offsets are found, without debug info in the
 * guest kernel (docs/debugging.md, "Reading the guest kernel"):
 *
 *  - the kernel's top page table is init_top_pgt, at its link address minus
 *    __START_KERNEL_map (the kernel is not relocated); kernel virtual
 *    addresses, the direct map included, are translated through it;
 *  - init_task's contents are known: comm "swapper", pid 0, real_parent,
 *    parent and group_leader pointing to init_task (as src/vmm/spin.c
 *    does), stack == init_stack, mm == NULL and active_mm a kernel pointer
 *    (&init_mm, or the mm it borrows while lazy) or NULL (cleared when the
 *    CPU left idle for a user task; then the task list must hold another
 *    task);
 *  - the fields between are laid out as Linux 6.1's task_struct has them:
 *    __state just before stack, tasks two words before mm (the first such
 *    pair whose tasks is a ring of tasks through init_task), thread_group
 *    112 bytes after group_leader; each is checked in memory (thread_group
 *    of init_task is an empty list; tasks is a ring through init_task whose
 *    nodes are tasks);
 *  - mm->pgd is the word of init_mm equal to init_top_pgt;
 *  - thread.sp is the word that lies inside the kernel stack of every task
 *    not on the CPU and whose frame (struct inactive_task_frame) returns
 *    into kernel text.
 *
 * Invariants:
 *  1. Every guest read goes through gos_mem after a page-table walk whose
 *     every entry is read through gos_mem: a bad pointer gives -1, never a
 *     host access outside guest RAM.
 *  2. Walks over guest lists are bounded (GOS_TASKS_MAX nodes, and a thread
 *     ring by the same bound); a ring that does not close is an error.
 *  3. A task is reported only if its pid, tgid and comm look like one (pid
 *     below PID_MAX_LIMIT, comm printable or empty).
 *  4. Offsets are found once in gos_open (thread_sp: once, when a task not
 *     on the CPU is first seen) and never change afterwards.
 *  5. A last-level entry that is protnone (present clear, _PAGE_PROTNONE
 *     set: a page the memory-access points took back, or NUMA hinting)
 *     still maps its page, whose frame Linux stores inverted (L1TF): the
 *     debugger reads and writes what the thread would see at its next
 *     access. Any other non-present entry (swap, none) maps nothing.
 */
#include "guestos/gos.h"

#include <stdio.h>
#include <string.h>

#include "util/bytes.h"
#include "util/check.h"
#include "guestos/elfsym.h"

#define GOS_KERNEL_MAP 0xffffffff80000000ull /* __START_KERNEL_map */
#define GOS_KTEXT_END 0xffffffffc0000000ull  /* end of the kernel image mapping */
#define GOS_PID_MAX 4194304u                 /* PID_MAX_LIMIT */
#define GOS_SCAN 8192                        /* bytes of init_task searched */
#define GOS_SCAN_MM 2048                     /* bytes of init_mm searched */
#define GOS_SCAN_THREAD 12288                /* bytes of a task searched for thread.sp */
#define GOS_PTREGS 168                       /* sizeof(struct pt_regs) */
#define GOS_PAGE 4096ull
#define PTE_P 1ull
#define PTE_RW 2ull
#define PTE_PS 0x80ull
#define PTE_ADDR 0x000ffffffffff000ull
#define PTE_PROTNONE 0x100ull /* _PAGE_PROTNONE: the global bit, in a non-present entry */

int gos_syms_load(const char *kernel_path, struct gos_syms *s, char *why, size_t n)
{
    static const char *names[] = {"init_task", "current_task", "init_mm", "init_stack",
                                  "init_top_pgt"};
    uint64_t *vals[] = {&s->init_task, &s->current_task, &s->init_mm, &s->init_stack,
                        &s->init_top_pgt};
    memset(s, 0, sizeof(*s));
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        int r = elfsym_address(kernel_path, names[i], vals[i]);
        if (r != 1) {
            snprintf(why, n, "the guest kernel %s %s", kernel_path,
                     r < 0 ? "is not a readable ELF file" : "names no such symbol");
            if (r == 0)
                snprintf(why, n, "the guest kernel %s has no symbol %s", kernel_path, names[i]);
            return -1;
        }
    }
    return 0;
}

int gos_translate(const struct gos *g, uint64_t pgd, uint64_t va, uint64_t *pa, int *writable)
{
    /* Canonical addresses only. */
    uint64_t top = va >> 47;
    if (top != 0 && top != 0x1ffff)
        return -1;
    uint64_t table = pgd & PTE_ADDR;
    int rw = 1;
    for (int level = 3; level >= 0; level--) {
        unsigned shift = 12 + 9 * (unsigned)level;
        uint64_t idx = (va >> shift) & 511;
        uint8_t e8[8];
        if (g->mem.read(g->mem.ctx, table + idx * 8, e8, 8) < 0) /* invariant 1 */
            return -1;
        uint64_t e = bytes_get_u64(e8);
        if (!(e & PTE_P)) {
            if (level != 0 || !(e & PTE_PROTNONE))
                return -1;
            e = ~e; /* invariant 5: the frame is stored inverted */
            e = (e & PTE_ADDR) | (~e & ~PTE_ADDR);
        }
        rw &= (e & PTE_RW) != 0;
        if (level == 0 || ((level == 1 || level == 2) && (e & PTE_PS))) {
            uint64_t mask = (1ull << shift) - 1;
            *pa = ((e & PTE_ADDR) & ~mask) | (va & mask);
            if (writable)
                *writable = rw;
            return 0;
        }
        table = e & PTE_ADDR;
    }
    return -1;
}

/* Copy n bytes at va of page table pgd to or from buf; bytes done. */
static size_t vcopy(const struct gos *g, uint64_t pgd, uint64_t va, void *buf, size_t n, int write)
{
    uint8_t *b = buf;
    size_t done = 0;
    while (done < n) {
        uint64_t pa;
        if (gos_translate(g, pgd, va, &pa, NULL) < 0)
            break;
        size_t in_page = (size_t)(GOS_PAGE - (va & (GOS_PAGE - 1)));
        size_t take = n - done < in_page ? n - done : in_page;
        int r = write ? (g->mem.write ? g->mem.write(g->mem.ctx, pa, b + done, take) : -1)
                      : g->mem.read(g->mem.ctx, pa, b + done, take);
        if (r < 0)
            break;
        done += take;
        va += take;
    }
    return done;
}

size_t gos_vread(const struct gos *g, uint64_t pgd, uint64_t va, void *buf, size_t n)
{
    return vcopy(g, pgd, va, buf, n, 0);
}

size_t gos_vwrite(const struct gos *g, uint64_t pgd, uint64_t va, const void *buf, size_t n)
{
    return vcopy(g, pgd, va, (void *)buf, n, 1);
}

int gos_kread(const struct gos *g, uint64_t va, void *buf, size_t n)
{
    return vcopy(g, g->kpgd, va, buf, n, 0) == n ? 0 : -1;
}

static int kread_u64(const struct gos *g, uint64_t va, uint64_t *v)
{
    uint8_t b[8];
    if (gos_kread(g, va, b, 8) < 0)
        return -1;
    *v = bytes_get_u64(b);
    return 0;
}

static int comm_ok(const char *c)
{
    for (; *c; c++)
        if ((unsigned char)*c < 0x20 || (unsigned char)*c > 0x7e)
            return 0;
    return 1;
}

/* Read the identity of the task at addr (invariant 3). 0 or -1. */
static int read_ident(const struct gos *g, uint64_t addr, struct gos_task *t)
{
    uint8_t ids[8];
    memset(t, 0, sizeof(*t));
    t->addr = addr;
    if (gos_kread(g, addr + g->lay.pid, ids, 8) < 0 ||
        gos_kread(g, addr + g->lay.comm, t->comm, GOS_COMM) < 0)
        return -1;
    t->comm[GOS_COMM] = 0;
    t->pid = bytes_get_u32(ids);
    t->tgid = bytes_get_u32(ids + 4);
    if (t->pid >= GOS_PID_MAX || t->tgid >= GOS_PID_MAX || !comm_ok(t->comm))
        return -1;
    return 0;
}

/* Is `off` the task list's offset: a ring from init_task whose nodes are
 * tasks, closed within the bound (invariant 2)? */
static int tasks_ring_ok(struct gos *g, size_t off, unsigned min_others)
{
    uint64_t head = g->sym.init_task + off, node = head;
    for (unsigned i = 0; i < GOS_TASKS_MAX; i++) {
        uint64_t next, back;
        if (kread_u64(g, node, &next) < 0 || kread_u64(g, next + 8, &back) < 0 || back != node)
            return 0;
        if (next == head)
            return i >= min_others;
        struct gos_task t;
        g->lay.tasks = off;
        if (read_ident(g, next - off, &t) < 0)
            return 0;
        node = next;
    }
    return 0;
}

int gos_open(struct gos *g, const struct gos_mem *mem, const struct gos_syms *s, char *why,
             size_t n)
{
    memset(g, 0, sizeof(*g));
    g->mem = *mem;
    g->sym = *s;
    if (s->init_top_pgt < GOS_KERNEL_MAP) {
        snprintf(why, n, "init_top_pgt is not in the kernel image mapping");
        return -1;
    }
    g->kpgd = s->init_top_pgt - GOS_KERNEL_MAP;
    g->lay.thread_size = 16384; /* THREAD_SIZE: 4 pages, no KASAN (rewind.config) */
    uint8_t buf[GOS_SCAN];      /* 8 KiB on the stack: no static buffer (reentrant) */
    if (gos_kread(g, s->init_task, buf, sizeof(buf)) < 0) {
        snprintf(why, n, "cannot read init_task in guest memory");
        return -1;
    }
    const uint8_t *c = memmem(buf, sizeof(buf), "swapper", 7);
    if (!c || (size_t)(c - buf) + GOS_COMM > sizeof(buf)) {
        snprintf(why, n, "no \"swapper\" in init_task");
        return -1;
    }
    struct gos_layout *l = &g->lay;
    l->comm = (size_t)(c - buf);
    size_t rp = 0;
    for (size_t off = 16; off + 56 <= sizeof(buf); off += 8) {
        if (bytes_get_u64(buf + off) == s->init_task &&
            bytes_get_u64(buf + off + 8) == s->init_task &&
            bytes_get_u64(buf + off + 48) == s->init_task && bytes_get_u64(buf + off - 8) == 0) {
            rp = off;
            break;
        }
    }
    if (!rp) {
        snprintf(why, n, "no real_parent/parent/group_leader in init_task");
        return -1;
    }
    l->pid = rp - 8;
    l->group_leader = rp + 48;
    l->thread_group = l->group_leader + 112;
    if (l->thread_group + 16 > sizeof(buf) ||
        bytes_get_u64(buf + l->thread_group) != s->init_task + l->thread_group ||
        bytes_get_u64(buf + l->thread_group + 8) != s->init_task + l->thread_group) {
        snprintf(why, n, "init_task's thread_group is not where Linux 6.1 has it");
        return -1;
    }
    for (size_t off = 8; off < l->pid && !l->stack; off += 8)
        if (bytes_get_u64(buf + off) == s->init_stack)
            l->stack = off;
    if (!l->stack) {
        snprintf(why, n, "no stack in init_task");
        return -1;
    }
    l->state = l->stack - 8;
    /* mm (NULL: a kernel thread) then active_mm (&init_mm, the mm it
     * borrows while lazy, or NULL: Linux clears it when the CPU goes from
     * idle straight to a user task, which is most steps of a busy program),
     * with the task list two words before them (no SMP fields between); the
     * ring through init_task decides. A NULL active_mm is only taken with a
     * ring of at least one other task, so that an empty list head elsewhere
     * in init_task (two words pointing at themselves) is not mistaken for
     * the task list. */
    for (size_t off = l->stack + 24; off + 16 <= l->pid && !l->mm; off += 8) {
        uint64_t active = bytes_get_u64(buf + off + 8);
        if (bytes_get_u64(buf + off) != 0 || (active != 0 && active < 0xffff800000000000ull))
            continue;
        if (tasks_ring_ok(g, off - 16, active ? 0 : 1)) {
            l->mm = off;
            l->tasks = off - 16;
        }
    }
    if (!l->mm) {
        snprintf(why, n, "no mm/active_mm and task list in init_task");
        return -1;
    }
    uint8_t mmb[GOS_SCAN_MM];
    if (gos_kread(g, s->init_mm, mmb, sizeof(mmb)) < 0) {
        snprintf(why, n, "cannot read init_mm in guest memory");
        return -1;
    }
    for (size_t off = 0; off + 8 <= sizeof(mmb); off += 8)
        if (bytes_get_u64(mmb + off) == s->init_top_pgt) {
            l->mm_pgd = off;
            break;
        }
    if (!l->mm_pgd) {
        snprintf(why, n, "no pgd in init_mm");
        return -1;
    }
    return 0;
}

/* The rest of t from its task_struct: state, stack, mm, pgd. 0 or -1. */
static int read_task(const struct gos *g, uint64_t current, struct gos_task *t)
{
    uint8_t st[4];
    uint64_t mm, stack;
    if (gos_kread(g, t->addr + g->lay.state, st, 4) < 0 ||
        kread_u64(g, t->addr + g->lay.stack, &stack) < 0 ||
        kread_u64(g, t->addr + g->lay.mm, &mm) < 0)
        return -1;
    t->state = bytes_get_u32(st);
    t->stack = stack;
    t->mm = mm;
    t->current = t->addr == current;
    t->kernel_thread = mm == 0;
    if (mm) {
        uint64_t pgd_va, pa;
        if (kread_u64(g, mm + g->lay.mm_pgd, &pgd_va) < 0 ||
            gos_translate(g, g->kpgd, pgd_va, &pa, NULL) < 0)
            return -1;
        t->pgd = pa;
    }
    if (g->lay.thread_sp && !t->current)
        kread_u64(g, t->addr + g->lay.thread_sp, &t->kernel_sp);
    return 0;
}

/* Does off hold a saved kernel stack pointer of task t (not on the CPU)? */
static int sp_fits(const struct gos *g, const struct gos_task *t, size_t off)
{
    uint64_t sp, ret;
    if (kread_u64(g, t->addr + off, &sp) < 0 || sp <= t->stack ||
        sp + 56 > t->stack + g->lay.thread_size || (sp & 7))
        return 0;
    return kread_u64(g, sp + 48, &ret) == 0 && ret >= GOS_KERNEL_MAP && ret < GOS_KTEXT_END;
}

/* Find thread.sp from the tasks not on the CPU (invariant 4). */
static void find_thread_sp(struct gos *g, struct gos_task *t, size_t count)
{
    size_t seen = 0;
    for (size_t i = 0; i < count; i++)
        seen += !t[i].current && t[i].stack;
    if (!seen)
        return;
    for (size_t off = (g->lay.comm + GOS_COMM + 7) & ~(size_t)7; off < GOS_SCAN_THREAD; off += 8) {
        int all = 1;
        for (size_t i = 0; i < count && all; i++)
            if (!t[i].current && t[i].stack)
                all = sp_fits(g, &t[i], off);
        if (all) {
            g->lay.thread_sp = off;
            for (size_t i = 0; i < count; i++)
                if (!t[i].current)
                    kread_u64(g, t[i].addr + off, &t[i].kernel_sp);
            return;
        }
    }
}

int gos_tasks(struct gos *g, struct gos_task *out, size_t max, size_t *count, char *why, size_t n)
{
    *count = 0;
    uint64_t current;
    if (kread_u64(g, g->sym.current_task, &current) < 0) {
        snprintf(why, n, "cannot read current_task");
        return -1;
    }
    uint64_t head = g->sym.init_task + g->lay.tasks, node = head;
    unsigned visited = 0;
    size_t k = 0;
    do {
        uint64_t leader = node - g->lay.tasks;
        /* The leader, then its threads around thread_group (invariant 2). */
        uint64_t tg = leader + g->lay.thread_group, tnode = tg;
        do {
            struct gos_task t;
            uint64_t addr = tnode - g->lay.thread_group;
            if (read_ident(g, addr, &t) < 0 || read_task(g, current, &t) < 0) {
                snprintf(why, n, "the task at 0x%llx does not look like one",
                         (unsigned long long)addr);
                return -1;
            }
            if (k < max)
                out[k] = t;
            k++;
            if (++visited > GOS_TASKS_MAX || kread_u64(g, tnode, &tnode) < 0) {
                snprintf(why, n, "the task list does not close within %u tasks", GOS_TASKS_MAX);
                return -1;
            }
        } while (tnode != tg);
        if (kread_u64(g, node, &node) < 0) {
            snprintf(why, n, "cannot read the task list");
            return -1;
        }
    } while (node != head);
    *count = k < max ? k : max;
    if (!g->lay.thread_sp)
        find_thread_sp(g, out, *count);
    return 0;
}

static uint64_t ptregs_addr(const struct gos *g, const struct gos_task *t)
{
    return t->stack + g->lay.thread_size - GOS_PTREGS;
}

int gos_user_regs(const struct gos *g, const struct gos_task *t, struct gos_regs *r)
{
    uint8_t b[GOS_PTREGS];
    if (t->kernel_thread || !t->stack || gos_kread(g, ptregs_addr(g, t), b, sizeof(b)) < 0)
        return -1;
    uint64_t *f = &r->r15;
    for (size_t i = 0; i < GOS_PTREGS / 8; i++)
        f[i] = bytes_get_u64(b + 8 * i);
    return (r->cs & 3) == 3 ? 0 : -1; /* user mode saved there */
}

int gos_set_user_regs(const struct gos *g, const struct gos_task *t, const struct gos_regs *r)
{
    uint8_t b[GOS_PTREGS];
    const uint64_t *f = &r->r15;
    for (size_t i = 0; i < GOS_PTREGS / 8; i++)
        bytes_put_u64(b + 8 * i, f[i]);
    if (t->kernel_thread || !t->stack || (r->cs & 3) != 3)
        return -1;
    return gos_vwrite(g, g->kpgd, ptregs_addr(g, t), b, sizeof(b)) == sizeof(b) ? 0 : -1;
}
