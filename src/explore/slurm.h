/*
 * slurm: the Slurm engine's helpers shared with its task (slurm.c,
 * slurm_task.c); the engine itself is eng_slurm_ops (engine.h).
 */
#ifndef REWIND_EXPLORE_SLURM_H
#define REWIND_EXPLORE_SLURM_H

#include <stddef.h>

/* The path of tool name in PATH (into path). 0, or -1 when absent. */
int slurm_find_tool(const char *name, char *path, size_t n);
/* Run argv (found in PATH) with a wall limit: stdout into out (may be
 * NULL with outlen 0), the last line of stderr into errl. Its exit
 * status, or -1 when it could not run or did not end in time. */
int slurm_cmd(char *const argv[], char *out, size_t outlen, char *errl, size_t errlen);

/* What one task's squeue line says of it (slurm.c invariant 2). */
enum slurm_tstate {
    SLURM_T_ACTIVE, /* pending to run, running, ending, suspended: wait */
    SLURM_T_ENDED,  /* a final state: it runs no more */
    SLURM_T_HELD,   /* held (by a failed launch, a user, an admin): it would
                       wait forever for a `scontrol release` */
    SLURM_T_UNKNOWN /* a state this build does not know */
};
/* The class of state (squeue %T, long or short form; sacct's "CANCELLED
 * by 0" too) with reason (squeue %r; may be NULL). */
enum slurm_tstate slurm_state_class(const char *state, const char *reason);

/* One line of `squeue -h -r -o '%A|%i|%T|%N|%r'` for an array task. */
struct slurm_line {
    unsigned long long array_job; /* the array's job id (%i before '_') */
    unsigned long long index;     /* the task's index (%i after '_') */
    char state[32];
    char node[64]; /* "" when none */
    char reason[128];
};
/* Parse line into *l: 0, or -1 when it is not an array task's line. */
int slurm_parse_line(const char *line, struct slurm_line *l);

#endif
