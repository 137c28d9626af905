/*
 * nodes: a run's nodes as an input (docs/faults.md, "Nodes"): each a
 * "NAME=COMMAND" string, validated here, carried in the spec as
 * "nodes": [{"name": NAME, "run": COMMAND}, ...] (absent when none, so ids
 * of runs without nodes are unchanged) and to rewind-init in /job
 * (src/input/job.h). Pure: no I/O.
 *
 * Invariants:
 *  1. A valid list has 1..NODES_MAX entries, each NAME=COMMAND with NAME of
 *     1..16 bytes of [a-z0-9-] starting with a letter, not "job", unique,
 *     and COMMAND of 1..4096 bytes: exactly what guest/init/nodes.h accepts.
 *  2. nodes_from_json(nodes_to_json(v)) gives v back, entry for entry.
 */
#ifndef REWIND_INPUT_NODES_H
#define REWIND_INPUT_NODES_H

#include <stddef.h>

#define NODES_MAX 16
#define NODE_NAME_MAX 16
#define NODE_RUN_MAX 4096

struct json_t;

/* 0 if v (NULL-terminated "NAME=COMMAND" strings) is a valid list; else -1
 * with why (one line naming the entry). */
int nodes_valid(char *const *v, char *why, size_t whylen);

/* Is s[0..n) a node's name (invariant 1)? Also what a trace's node-start
 * record must name (trace/nodemap.h invariant 3). */
int nodes_name_ok(const char *s, size_t n);

/* The length of entry e's name (the bytes before '='). */
size_t nodes_name_len(const char *e);

/* The spec's array for a valid list (a new reference). */
struct json_t *nodes_to_json(char *const *v);

/* A spec's "nodes" array back into a malloc'd NULL-terminated list of
 * malloc'd strings (*out NULL when a is NULL). 0, or -1 if malformed or
 * invalid (invariant 1) or out of memory. */
int nodes_from_json(struct json_t *a, char ***out);

/* Free a list from nodes_from_json. */
void nodes_free(char **v);

#endif
