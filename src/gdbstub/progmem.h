/* progmem: the program's read-only segments read from its file, for the
 * pages of them a process has not touched yet (not in its page table).
 * docs/debugging.md. */
#ifndef REWIND_GDBSTUB_PROGMEM_H
#define REWIND_GDBSTUB_PROGMEM_H

#include <stddef.h>
#include <stdint.h>

#define GDBS_PROGMEM_SEGS 16

struct gdbs_progmem {
    int fd;         /* the program's file (a host copy), -1: none */
    int pie;        /* ET_DYN: placed at a bias the auxiliary vector gives */
    uint64_t entry; /* e_entry */
    uint64_t phdr;  /* where the program headers are mapped (AT_PHDR unbiased), 0: nowhere */
    int nseg;
    struct {
        uint64_t vaddr, filesz, offset;
    } seg[GDBS_PROGMEM_SEGS]; /* the PT_LOAD segments without PF_W */
};

/* Read path's ELF program headers: 0, or -1 (not an x86-64 ELF program;
 * pm then serves nothing). */
int gdbs_progmem_open(struct gdbs_progmem *pm, const char *path);
/* The bytes at addr..addr+n of the process whose auxiliary vector has
 * at_entry and at_phdr, as the program's file holds them, when all of them
 * lie in the file part of one read-only segment: n, else 0 (invariants in
 * progmem.c). */
size_t gdbs_progmem_read(const struct gdbs_progmem *pm, uint64_t at_entry, uint64_t at_phdr,
                         uint64_t addr, void *buf, size_t n);
void gdbs_progmem_close(struct gdbs_progmem *pm);

#endif
