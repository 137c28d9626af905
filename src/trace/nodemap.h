/*
 * nodemap: which node (docs/faults.md, "Nodes") each process of a run
 * belongs to, followed record by record through a trace: rewind-init's
 * node-start records (from pid 1 only: any root job can emit init records)
 * name each node's leader, and a process forked by a node's process belongs
 * to that node. A process outside every node has none. After a kill fault
 * or a power cut, rewind-init may restart a node (docs/faults.md): its
 * node-restart record (from pid 1 too) names the node's new leader.
 *
 * Invariants:
 *  1. A run without node-start records costs nothing: no memory is taken
 *     and every process has no node.
 *  2. A forked child's node is its parent's at the fork, so a pid reused
 *     after an exit gets its new parent's node (or none), never the old.
 *  3. A node's name is one the spec allows (input/nodes.h invariant 1) and
 *     every pid is at most REWIND_TID_MAX; other records are ignored.
 *  4. A node restart ("NAME PID", REWIND_INIT_NODE_RESTART from pid 1, with
 *     invariant 3's checks) adds no node: it maps PID to the node already
 *     started as NAME, and is ignored when no node has that name. Node
 *     numbers stay those of the node starts.
 */
#ifndef REWIND_TRACE_NODEMAP_H
#define REWIND_TRACE_NODEMAP_H

#include <stddef.h>
#include <stdint.h>

#define NODEMAP_MAX 16

struct nodemap {
    char names[NODEMAP_MAX][17];
    int count;
    uint32_t *pid; /* open addressing; 0: empty slot */
    uint8_t *node; /* per slot: node index + 1, 0: none */
    size_t cap, n; /* slots (a power of 2), used slots */
    int oom;
};

void nodemap_init(struct nodemap *m);
void nodemap_free(struct nodemap *m);

/* Feed one record (kind, flags, pid, aux and payload as in the trace). */
void nodemap_feed(struct nodemap *m, unsigned kind, unsigned flags, uint32_t pid, uint64_t aux,
                  const uint8_t *payload, size_t len);

/* The name of node number node (1-based, in node-start order), or NULL. */
const char *nodemap_name(const struct nodemap *m, unsigned node);

/* The node of process pid, or NULL. */
const char *nodemap_of(const struct nodemap *m, uint32_t pid);

#endif
