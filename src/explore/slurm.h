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

#endif
