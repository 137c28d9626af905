/*
 * nodes: a run's nodes as an input (docs/faults.md, "Nodes"): each a
 * "NAME=COMMAND" string, validated here, carried in the spec as
 * "nodes": [{"name": NAME, "run": COMMAND}, ...] (absent when none, so ids
 * of runs without nodes are unchanged) and to rewind-init in /job
 * (src/input/job.h). A node may have a restart command, which rewind-init
 * runs a while after a kill or a power cut (faults.h): a "NAME=COMMAND"
 * string of a second list, the restarts, carried in the spec as "restart":
 * COMMAND in that node's object (absent without one, so every other spec
 * is unchanged). Pure: no I/O.
 *
 * Invariants:
 *  1. A valid list has 1..NODES_MAX entries, each NAME=COMMAND with NAME of
 *     1..16 bytes of [a-z0-9-] starting with a letter, not "job", unique,
 *     and COMMAND of 1..4096 bytes: exactly what guest/init/nodes.h accepts.
 *  2. nodes_from_json(nodes_to_json(v, r)) gives v back, entry for entry,
 *     and r back in the nodes' order (NULL when r has no entry).
 *  3. A valid restart list, for a valid node list, has entries
 *     NAME=COMMAND with NAME a node of the list, at most one per node, and
 *     COMMAND of 1..4096 bytes of UTF-8 (so at most NODES_MAX entries).
 *     Whatever its order, it means the same restarts: the spec and /job
 *     carry them in the nodes' order.
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

/* 0 if restarts (NULL-terminated "NAME=COMMAND" strings, or NULL) is a
 * valid restart list for the valid node list nodes (invariant 3); else -1
 * with why (one line naming the entry). */
int nodes_restarts_valid(char *const *nodes, char *const *restarts, char *why, size_t whylen);

/* The restart command of the node whose name is name[0..nl) in restarts,
 * or NULL. */
const char *nodes_restart_of(char *const *restarts, const char *name, size_t nl);

/* Bit i set when node i + 1 of nodes has a restart in restarts (struct
 * sched's fault_restart). */
unsigned nodes_restart_mask(char *const *nodes, char *const *restarts);

/* The spec's array for a valid list and its valid restarts (NULL: none; a
 * new reference). */
struct json_t *nodes_to_json(char *const *v, char *const *restarts);

/* A spec's "nodes" array back into a malloc'd NULL-terminated list of
 * malloc'd strings (*out NULL when a is NULL), and its restarts into
 * another, in the nodes' order (*restarts NULL when no node has one). 0, or
 * -1 if malformed or invalid (invariants 1 and 3) or out of memory (both
 * NULL). */
int nodes_from_json(struct json_t *a, char ***out, char ***restarts);

/* Free a list from nodes_from_json. */
void nodes_free(char **v);

#endif
