/* debug: the guest kernel's view of a paused machine (src/run/debug.c),
 * for the engine's debugging modes (where, the gdb stub's backend). */
#ifndef REWIND_RUN_DEBUG_H
#define REWIND_RUN_DEBUG_H

#include "guestos/gos.h"
#include "rewind.h"

/* The machine's guestos handle, opened on first use. NULL with err. */
struct gos *debug_gos(rw_machine *m, struct rw_error *err);
/* The tasks now (valid until the next call). 0 or -1 with err. */
int debug_tasks(rw_machine *m, const struct gos_task **tasks, size_t *n, struct rw_error *err);
/* The task of thread tid now, or NULL with err (RW_EUSAGE: none). */
const struct gos_task *debug_task(rw_machine *m, uint32_t tid, struct rw_error *err);
/* The physical page table of process pid. 0 or -1 with err. */
int debug_pgd(rw_machine *m, uint32_t pid, uint64_t *pgd, struct rw_error *err);

/* debug_gos_open and debug_set_regs: run/guestview.h. */
#include "run/guestview.h"

#endif
