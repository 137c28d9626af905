/* unwind: a guest thread's user stack as frames with function, file and
 * line, unwound by elfutils' libdwfl (CFI, else frame pointers) over a
 * memory callback and the registers gos read; the executable is a host
 * copy of the guest's file, the vDSO a checked copy of its image in the
 * process's memory. docs/debugging.md. */
#ifndef REWIND_GUESTOS_UNWIND_H
#define REWIND_GUESTOS_UNWIND_H

#include <stddef.h>
#include <stdint.h>

#include "guestos/gos.h"

#define GOS_FRAMES_MAX 64

struct gos_frame {
    uint64_t pc;    /* the return address minus one for callers (the call site) */
    char func[128]; /* "" if unknown */
    uint64_t func_off;
    char file[256]; /* "" if no line information */
    int line;
};

/* Process memory: bytes read at addr (fewer: the rest is not mapped). */
typedef size_t (*gos_read_fn)(void *ctx, uint64_t addr, void *buf, size_t n);

/* The largest vDSO image copied (Linux 6.1's x86-64 vDSO is 8 KiB). */
#define GOS_VDSO_MAX (64u * 1024)

/* Copy the vDSO's ELF image at base (AT_SYSINFO_EHDR) out of process
 * memory into img (GOS_VDSO_MAX bytes): its length, or 0 if base holds no
 * x86-64 ET_DYN image whose header tables and PT_LOAD and section file
 * ranges all lie within GOS_VDSO_MAX and can be read. */
size_t gos_vdso_image(gos_read_fn read, void *ctx, uint64_t base, uint8_t *img);

/* Unwind the thread whose user registers are r, in the process whose
 * executable is the ELF file exe (a host path; its load bias: bias, 0 for
 * a fixed-address executable) and whose vDSO is at vdso (0: none; an
 * image gos_vdso_image refuses is left out), memory read through
 * read(ctx). Up to max frames into out, *n of them; a frame in the vDSO
 * has the file "[vdso]" and line 0. 0, or -1 with why (exe not usable). */
int gos_unwind(const char *exe, uint64_t bias, uint64_t vdso, gos_read_fn read, void *ctx,
               const struct gos_regs *r, struct gos_frame *out, size_t max, size_t *n, char *why,
               size_t wn);

#endif
