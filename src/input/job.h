/*
 * job: the description of what rewind-init runs (argv, env, cwd), encoded in
 * the format guest/init/init.c parses: "REWINDJOB1\0", argc "\0", argv...,
 * envc "\0", env..., cwd "\0".
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

#endif
