/*
 * job: the description of what rewind-init runs (argv, env, cwd), encoded in
 * the format guest/init/init.c parses: "REWINDJOB1\0", argc "\0", argv...,
 * envc "\0", env..., cwd "\0"; then tagged sections, each only when the
 * spec has what it carries (so a run without them keeps its bytes):
 * "REWINDPROPS1", "REWINDCOLLECT1", "REWINDNODES1", "REWINDRESTART1",
 * "REWINDNETEM1" (below). Numbers are decimal ASCII; every string ends
 * with a NUL.
 */
#ifndef REWIND_INPUT_JOB_H
#define REWIND_INPUT_JOB_H

#include <stddef.h>

/* Encode; returns a malloc'd buffer and its length in *len, or NULL. */
char *job_encode(char **argv, char **env, const char *cwd, size_t *len);

/* The same, then, only when there are properties for init to serve (a
 * property command or a file expectation; otherwise the bytes are those of
 * job_encode): "REWINDPROPS1\0", the property command (or "") "\0", the
 * count of files "\0", and each file's path "\0" (the PATH of every
 * "file:PATH~ERE" in expect, in order). */
char *job_encode_props(char **argv, char **env, const char *cwd, const char *property,
                       char **expect, size_t *len);

/* Append the --collect section ("REWINDCOLLECT1\0" path NUL, docs/nix.md) to
 * a job of *len bytes (freed on failure: NULL). */
char *job_append_collect(char *job, const char *collect, size_t *len);

/* Append the nodes section ("REWINDNODES1\0" count NUL, then each node's
 * NAME NUL COMMAND NUL, guest/init/init.c) for a valid list of "NAME=COMMAND"
 * strings (input/nodes.h) to a job of *len bytes (freed on failure: NULL). */
char *job_append_nodes(char *job, char *const *nodes, size_t *len);

/* Append the restarts section (docs/faults.md, restarts after a kill), only
 * when restarts has an entry (otherwise job is returned as it is):
 * "REWINDRESTART1\0", the count of restarts "\0", then NAME "\0" COMMAND "\0"
 * for each node of nodes that has a restart, in the nodes' order (whatever
 * the order of restarts: input/nodes.h invariant 3). E.g. nodes n1, n2, n3
 * with restarts "n3=x" and "n1=sh -c 'a=b'":
 *   "REWINDRESTART1\0" "2\0" "n1\0" "sh -c 'a=b'\0" "n3\0" "x\0"
 * nodes and restarts are valid (input/nodes.h invariants 1 and 3); job is of
 * *len bytes (freed on failure: NULL). Append after the nodes section. */
char *job_append_restarts(char *job, char *const *nodes, char *const *restarts, size_t *len);

/* Append the netem section, "REWINDNETEM1\0" and nothing more: rewind-init
 * then gives each node's link the netem qdiscs net faults change
 * (rewind_abi.h, REWIND_NETEM_HANDLE). Only when the spec's fault kinds
 * include net. job is of *len bytes (freed on failure: NULL). */
char *job_append_netem(char *job, size_t *len);

#endif
