/*
 * progmem: see progmem.h. Linux maps a program's PT_LOAD segments at its
 * exec and reads their pages in at the first touch, so just after an exec
 * gdb would find the program's code unreadable (and `break FUNC` could not
 * skip the prologue). The stub then serves those bytes from the program's
 * file, the same host copy it gives gdb (vFile, cmd_gdb.c).
 *
 * Invariants:
 *  1. Only the file part (p_filesz) of a PT_LOAD segment without PF_W is
 *     served, and none whose pages a writable segment shares (the process
 *     maps that page writable): never a writable segment, its .bss, nor anything outside the
 *     program (stack, heap, anonymous mappings): those stay unreadable.
 *  2. A read is served only when the process's auxiliary vector fits this
 *     program: AT_ENTRY is e_entry and AT_PHDR the program headers' address
 *     (as the kernel computes it at exec), both plus one bias, which is 0
 *     for a fixed-address program and page-aligned for a position-
 *     independent one. An exec of another program serves nothing (unless
 *     it has the same entry and header addresses).
 *  3. All of addr..addr+n lies in one segment's file part, or nothing is
 *     served; every size from the (guest's) file is checked.
 */
#include "progmem.h"

#include <elf.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "rewind_check.h"

int gdbs_progmem_open(struct gdbs_progmem *pm, const char *path)
{
    memset(pm, 0, sizeof(*pm));
    pm->fd = -1;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    Elf64_Ehdr e;
    if (pread(fd, &e, sizeof(e), 0) != (ssize_t)sizeof(e) || memcmp(e.e_ident, ELFMAG, SELFMAG) ||
        e.e_ident[EI_CLASS] != ELFCLASS64 || e.e_machine != EM_X86_64 ||
        (e.e_type != ET_EXEC && e.e_type != ET_DYN) || e.e_phentsize != sizeof(Elf64_Phdr) ||
        e.e_phnum > 256)
        goto bad;
    off_t size = lseek(fd, 0, SEEK_END);
    if (size < 0 || e.e_phoff > (uint64_t)size ||
        (uint64_t)e.e_phnum * sizeof(Elf64_Phdr) > (uint64_t)size - e.e_phoff)
        goto bad;                /* invariant 3: the headers are in the file */
    uint64_t wlo[256], whi[256]; /* writable segments' page ranges */
    int nw = 0;
    for (unsigned i = 0; i < e.e_phnum; i++) {
        Elf64_Phdr ph;
        if (pread(fd, &ph, sizeof(ph), (off_t)(e.e_phoff + i * sizeof(ph))) != (ssize_t)sizeof(ph))
            goto bad;
        if (ph.p_type == PT_LOAD && !pm->phdr && e.e_phoff >= ph.p_offset &&
            e.e_phoff - ph.p_offset < ph.p_filesz)
            pm->phdr = ph.p_vaddr + (e.e_phoff - ph.p_offset);
        if (ph.p_type == PT_LOAD && (ph.p_flags & PF_W) && ph.p_memsz &&
            ph.p_vaddr + ph.p_memsz > ph.p_vaddr) {
            wlo[nw] = ph.p_vaddr & ~4095ULL;
            whi[nw++] = ph.p_vaddr + ph.p_memsz; /* RW_ASSERT below: nw <= e_phnum */
        }
        if (ph.p_type != PT_LOAD || (ph.p_flags & PF_W) || !ph.p_filesz)
            continue;
        /* invariant 3: the file part is in the file and does not wrap */
        if (ph.p_offset > (uint64_t)size || ph.p_filesz > (uint64_t)size - ph.p_offset ||
            ph.p_vaddr + ph.p_filesz < ph.p_vaddr || pm->nseg == GDBS_PROGMEM_SEGS)
            goto bad;
        pm->seg[pm->nseg].vaddr = ph.p_vaddr;
        pm->seg[pm->nseg].filesz = ph.p_filesz;
        pm->seg[pm->nseg].offset = ph.p_offset;
        pm->nseg++;
    }
    RW_ASSERT(nw <= (int)e.e_phnum);
    /* invariant 1: a read-only segment sharing a page with a writable one
     * is that writable mapping in the process: not served */
    int keep = 0;
    for (int i = 0; i < pm->nseg; i++) {
        uint64_t lo = pm->seg[i].vaddr & ~4095ULL, hi = pm->seg[i].vaddr + pm->seg[i].filesz;
        int clash = 0;
        for (int w = 0; w < nw; w++)
            clash |= lo < ((whi[w] + 4095) & ~4095ULL) && wlo[w] < ((hi + 4095) & ~4095ULL);
        if (!clash)
            pm->seg[keep++] = pm->seg[i];
    }
    pm->nseg = keep;
    pm->fd = fd;
    pm->pie = e.e_type == ET_DYN;
    pm->entry = e.e_entry;
    return 0;
bad:
    close(fd);
    pm->nseg = 0;
    return -1;
}

size_t gdbs_progmem_read(const struct gdbs_progmem *pm, uint64_t at_entry, uint64_t at_phdr,
                         uint64_t addr, void *buf, size_t n)
{
    if (pm->fd < 0 || !n || !pm->phdr || !at_entry || !at_phdr)
        return 0;                         /* invariant 2: no auxiliary vector, nothing served */
    uint64_t bias = at_entry - pm->entry; /* invariant 2 */
    if ((pm->pie ? bias & 4095 : bias) || at_phdr != pm->phdr + bias)
        return 0;
    for (int i = 0; i < pm->nseg; i++) {
        uint64_t start = pm->seg[i].vaddr + bias, len = pm->seg[i].filesz;
        if (addr < start || addr - start >= len || n > len - (addr - start))
            continue; /* invariant 3: wholly inside or not at all */
        uint64_t off = pm->seg[i].offset + (addr - start);
        ssize_t got = pread(pm->fd, buf, n, (off_t)off);
        RW_ASSERT(got <= (ssize_t)n);
        return got == (ssize_t)n ? n : 0;
    }
    return 0;
}

void gdbs_progmem_close(struct gdbs_progmem *pm)
{
    if (pm->fd >= 0)
        close(pm->fd);
    pm->fd = -1;
    pm->nseg = 0;
}
