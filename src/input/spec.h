/*
 * spec: every input of a run, written down (docs/formats.md, "spec.json"). The run id
 * is the first 64 bits (16 hex digits) of the SHA-256 of the spec's
 * canonical JSON, in which the kernel, init and root image appear by content
 * hash, so the same inputs give the same id on any machine.
 */
#ifndef REWIND_INPUT_SPEC_H
#define REWIND_INPUT_SPEC_H

#include <stddef.h>
#include <stdint.h>

#include "input/sched.h"

struct rw_patch;

#define SPEC_ARGS_MAX 4096

struct run_spec {
    char kernel_hash[65], init_hash[65], image_hash[65];
    char **argv; /* NULL-terminated, owned by the caller */
    char **env;  /* NULL-terminated, owned by the caller */
    const char *cwd;
    uint64_t mem_mib;
    uint64_t seed;
    uint64_t schedule;
    uint64_t quantum_ns;
    int64_t epoch_s; /* wall clock at boot, seconds since 1970 */
    const char *cpu_model;
    uint64_t test_holes;         /* 0 except in rewind's own negative tests */
    const struct sched *perturb; /* NULL or no segments: unperturbed */
    /* A shell session (rewind shell): at step inspect_at, inspect process
     * inspect_pid with a shell fed the inputs whose hash is inputs_hash. */
    const char *inspect_kind; /* NULL: none */
    uint64_t inspect_pid, inspect_at;
    const char *inputs_hash;
    /* Properties (docs/tutorials/properties.md): --expect strings and the
     * --property command; absent from the JSON when none, so ids of runs
     * without properties are unchanged. */
    char **expect;        /* NULL-terminated, or NULL */
    const char *property; /* NULL: none */
    /* docs/nix.md, each absent from the JSON when unset (ids unchanged). */
    int dirorder_on;
    uint64_t dirorder;
    const char *track_writes; /* NULL: none */
    const char *collect;      /* NULL: none */
    const char *nix_drv;      /* NULL: none */
    /* docs/determinism.md: memory-access points; absent when off (ids unchanged). */
    int preempt_memory;
    /* docs/determinism.md: the CPUs the job sees; absent when 1 (ids unchanged). */
    unsigned cpus;
    /* docs/faults.md: the nodes ("NAME=COMMAND"); absent when NULL (ids unchanged). */
    char **nodes;
    /* docs/faults.md: the nodes' restart commands ("NAME=COMMAND", input/nodes.h
     * invariant 3), each a "restart" in its node's object; NULL: none (ids unchanged). */
    char **restarts;
    /* gdb's writes at a step (src/input/patch.h): absent when NULL. */
    const struct rw_patch *patch;
};

/* Parse a spec's "perturb" array into s (seed not set). 0, or -1 if malformed. */
struct json_t;
int spec_parse_perturb(struct json_t *spec, struct sched *s);

/* Canonical JSON of the spec (sorted keys, compact). Caller frees. */
char *spec_to_json(const struct run_spec *s);

/* Run id: 16 lowercase hex digits + NUL. */
void spec_id(const struct run_spec *s, char id[17]);

/* Midnight UTC of the day containing t. */
int64_t spec_default_epoch(int64_t t);

/* Parse --epoch: seconds since 1970, or YYYY-MM-DD[THH:MM:SS] (UTC).
 * Returns 0 or -1. */
int spec_parse_epoch(const char *s, int64_t *out);

#endif
