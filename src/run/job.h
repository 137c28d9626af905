/*
 * job: the description of what rewind-init runs (argv, env, cwd), encoded in
 * the format guest/init/init.c parses: "REWINDJOB1\0", argc "\0", argv...,
 * envc "\0", env..., cwd "\0".
 */
#ifndef REWIND_RUN_JOB_H
#define REWIND_RUN_JOB_H

#include <stddef.h>

/* Encode; returns a malloc'd buffer and its length in *len, or NULL. */
char *job_encode(char **argv, char **env, const char *cwd, size_t *len);

#endif
