/* unwind: a guest thread's user stack as frames with function, file and
 * line, unwound by elfutils' libdwfl (CFI, else frame pointers) over a
 * memory callback and the registers gos read; the executable is a host
 * copy of the guest's file. docs/debugging.md. */
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

/* An ELF image copied out of the process (its vDSO), loaded at bias. */
struct gos_image {
    const void *bytes;
    size_t len; /* 0: none */
    uint64_t bias;
};

/* Unwind the thread whose user registers are r, in the process whose
 * executable is the ELF file exe (a host path; its load bias: bias, 0 for
 * a fixed-address executable), memory read through read(ctx); vdso (NULL
 * or len 0: none) is reported beside it, so a thread stopped in the vDSO
 * (clock_gettime) unwinds through it to its caller. Up to max frames into
 * out, *n of them. 0, or -1 with why (exe not usable). */
int gos_unwind(const char *exe, uint64_t bias, const struct gos_image *vdso, gos_read_fn read,
               void *ctx, const struct gos_regs *r, struct gos_frame *out, size_t max, size_t *n,
               char *why, size_t wn);

#endif
