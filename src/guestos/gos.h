/*
 * gos: the guest kernel's state read from its memory at a paused step:
 * its tasks (pid, tgid, comm, state, which one is current), each task's
 * saved user registers (the pt_regs at the top of its kernel stack) and its
 * kernel stack pointer, and a process's memory read and written through its
 * own page tables (mm->pgd). The guest kernel is uniprocessor, x86-64,
 * 4-level paging, not relocated (guest/linux/rewind.config).
 *
 * Everything here works over a physical-memory accessor (struct gos_mem),
 * so it runs on a live VM and, in unit tests, on made-up memory. The guest
 * is untrusted: every pointer read from it is checked, every walk bounded.
 * docs/debugging.md describes how the structure offsets are found.
 */
#ifndef REWIND_GUESTOS_GOS_H
#define REWIND_GUESTOS_GOS_H

#include <stddef.h>
#include <stdint.h>

/* Guest-physical memory: read/write n bytes at gpa; 0, or -1 when any of
 * it is outside guest RAM. */
struct gos_mem {
    void *ctx;
    int (*read)(void *ctx, uint64_t gpa, void *buf, size_t n);
    int (*write)(void *ctx, uint64_t gpa, const void *buf, size_t n);
};

/* The kernel's symbols gos needs (virtual addresses). */
struct gos_syms {
    uint64_t init_task, current_task, init_mm, init_stack, init_top_pgt;
};

/* task_struct and mm_struct offsets, found by gos_open. */
struct gos_layout {
    size_t state, stack, tasks, mm, pid, comm, group_leader, thread_group;
    size_t thread_sp; /* 0: not found (no sleeping task seen yet) */
    size_t mm_pgd;
    uint64_t thread_size;
};

struct gos {
    struct gos_mem mem;
    struct gos_syms sym;
    struct gos_layout lay;
    uint64_t kpgd; /* physical address of the kernel's top page table */
};

#define GOS_TASKS_MAX 4096 /* a walk over the task list stops here */
#define GOS_COMM 16

struct gos_task {
    uint64_t addr; /* its task_struct */
    uint32_t pid, tgid;
    char comm[GOS_COMM + 1];
    uint32_t state;     /* __state: 0 running, 1 interruptible, 2 uninterruptible, ... */
    int current;        /* the task on the CPU */
    int kernel_thread;  /* no mm */
    uint64_t mm, pgd;   /* its mm_struct, and mm->pgd as a physical address */
    uint64_t stack;     /* base of its kernel stack */
    uint64_t kernel_sp; /* thread.sp (saved at its last switch; 0 if unknown) */
};

/* User-mode registers as the kernel saved them (struct pt_regs). */
struct gos_regs {
    uint64_t r15, r14, r13, r12, rbp, rbx, r11, r10, r9, r8, rax, rcx, rdx, rsi, rdi;
    uint64_t orig_rax, rip, cs, rflags, rsp, ss;
};

/* Read the symbols from the guest kernel's ELF at path. 0 or -1 (why). */
int gos_syms_load(const char *kernel_path, struct gos_syms *s, char *why, size_t n);

/* Find the offsets in the running kernel's memory. 0 or -1 (why). */
int gos_open(struct gos *g, const struct gos_mem *mem, const struct gos_syms *s, char *why,
             size_t n);

/* Kernel virtual memory (through the kernel's page tables). 0 or -1. */
int gos_kread(const struct gos *g, uint64_t va, void *buf, size_t n);

/* Translate va through the page table at physical pgd. 0 with *pa, or -1
 * (not mapped). *writable: the mapping allows writes (may be NULL). */
int gos_translate(const struct gos *g, uint64_t pgd, uint64_t va, uint64_t *pa, int *writable);
/* A process's memory through its page table pgd (gos_task.pgd), page by
 * page. Bytes read: n, or fewer when a page is not mapped (0: none). */
size_t gos_vread(const struct gos *g, uint64_t pgd, uint64_t va, void *buf, size_t n);
/* Write, even to read-only pages (breakpoints in text). Bytes written. */
size_t gos_vwrite(const struct gos *g, uint64_t pgd, uint64_t va, const void *buf, size_t n);

/* Every task (thread group leaders from the task list, and each one's
 * threads), up to max, into out; *count gets how many. Tasks are ordered as
 * the kernel lists them, a leader before its threads. 0 or -1 (why). */
int gos_tasks(struct gos *g, struct gos_task *out, size_t max, size_t *count, char *why, size_t n);

/* The user registers t saved on entry to the kernel (its pt_regs). 0, or
 * -1 when t is a kernel thread or its pt_regs do not look like user mode. */
int gos_user_regs(const struct gos *g, const struct gos_task *t, struct gos_regs *r);
/* Write them back (the debugger's G/P packets on a thread not running). */
int gos_set_user_regs(const struct gos *g, const struct gos_task *t, const struct gos_regs *r);

/* The auxiliary vector the kernel saved for t's process at exec (its
 * mm_struct's saved_auxv; src/guestos/auxv.c says how it is found): up to
 * max words (type/value pairs, AT_NULL included) into out. 0 with *count,
 * or -1 (a kernel thread, or no vector found). */
#define GOS_AUXV_WORDS 64
int gos_auxv(const struct gos *g, const struct gos_task *t, uint64_t *out, size_t max,
             size_t *count);
/* The search itself, over the words w[0..n): the first vector found (start
 * and length in words), or -1 when none fits. */
int gos_auxv_find(const uint64_t *w, size_t n, size_t *start, size_t *len);

#endif
