/*
 * nodes: the nodes of a run, started by rewind-init before the job (see
 * nodes.c and docs/faults.md, "Nodes").
 */
#ifndef REWIND_INIT_NODES_H
#define REWIND_INIT_NODES_H

#include <sys/types.h>

#define NODES_MAX 16
#define NODE_NAME_MAX 16

struct node {
    const char *name;    /* [a-z][a-z0-9-]*, at most NODE_NAME_MAX bytes; not "job" */
    const char *run;     /* the command, for /bin/sh -c */
    pid_t pid;           /* its leader, once started */
    const char *restart; /* its restart command (docs/faults.md, "Restarts"), or NULL */
    int netfd, utsfd;    /* with a restart: its namespaces, kept open once started */
};

struct nodes {
    int count;
    int netem; /* net faults: a netem qdisc on both ends of every node's link */
    struct node node[NODES_MAX];
};

/* Start every node, in order (nodes.c invariants 1-4); envp is the job's
 * environment. Dies (an init failure) on any error. */
void nodes_start(struct nodes *ns, char **envp);

/* Start node i's restart command in the node's namespaces (invariant 5).
 * Never blocks on the new leader. 0, or -1 if the kernel refused it (the
 * leader then exits and the run goes on without the restart). */
int nodes_restart(struct nodes *ns, int i, char **envp);

/* Provided by init.c: end the run as an init failure with a message; emit
 * one REWIND_REC_INIT record (-1: the kernel refused it). */
void nodes_die(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
int nodes_emit(unsigned long long event, const char *text); /* 0 or -1 */

#endif
