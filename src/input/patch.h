/*
 * patch: gdb's writes as an input of a run (`rewind gdb --keep`,
 * docs/debugging.md "Keeping a session"). A run whose spec has
 * "gdb_writes" {at, ops} gets, when its machine stands at step `at` (right
 * after that step, before the vCPU runs on: where `rewind gdb RUN at`
 * starts), the ops applied in order exactly as the gdb stub applied them
 * on its machine: memory through the process's page tables (gos_vwrite),
 * registers where rw_machine_user_regs reads them (debug_set_regs). This
 * module is the input (pure: no machine); src/run/patchapply.c applies it.
 *
 * Invariants:
 *  1. A spec without writes has no "gdb_writes" key: no other run's id
 *     changes (spec.c).
 *  2. The writes are applied once, in on_step of step `at` (ctx.c), before
 *     that step's keyframe is taken: every keyframe of the run at `at` or
 *     after holds them, every one before does not.
 *  3. A kept run starts from its parent's keyframe before `at` (never at
 *     it: the parent's keyframe at `at` lacks the writes), so every run of
 *     the spec, from boot or from a keyframe of its chain before `at`,
 *     passes on_step of `at` (fork.c, rw_fork_patched).
 *  4. A spec's writes are untrusted (imports): patch_from_json accepts
 *     only the canonical form patch_to_json writes (the same text, so the
 *     same id), within RW_PATCH_OPS_MAX and RW_PATCH_BYTES_MAX; a write
 *     that cannot be applied ends the run as a guest error saying which.
 */
#ifndef REWIND_INPUT_PATCH_H
#define REWIND_INPUT_PATCH_H

#include <jansson.h>
#include <stddef.h>

#include "rewind.h"

/* The spec's "gdb_writes" value (a new reference). */
json_t *patch_to_json(const struct rw_patch *p);
/* Parse a spec's "gdb_writes" (v NULL: none, *out NULL). 0 with *out
 * (malloc'd, or NULL), or -1 with why (invariant 4). */
int patch_from_json(json_t *v, struct rw_patch **out, char *why, size_t n);
/* Tests only (REWIND_TEST_HOLES=1 and REWIND_TEST_HOLE_NO_PATCH=1): the
 * writes are not applied, so a kept run's replay differs from it
 * (tests/system/t_gdb.sh sees it). */
int patch_hole(void);

#endif
