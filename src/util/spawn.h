/*
 * spawn: the one way rewind starts another program. The engine starts
 * mkfs.erofs and tar for images, fsck.erofs for a spin report, nix and the
 * Slurm commands (spawn_start, a program searched in PATH); the front ends
 * start gdb, a detached `rewind serve` and serve's children through the
 * public pair rw_spawn and rw_spawn_wait (include/rewind.h), which is
 * spawn_run and the waits below. Every program is started with
 * posix_spawn(p), so a program that cannot be run is an error of the call
 * (its errno), never a child that has to report it.
 *
 * Invariants:
 *  1. The child gets exactly fds 0, 1 and 2 from the call: every other fd
 *     of the caller is closed in it, close-on-exec or not (a detached
 *     server never holds a pipe its caller's caller waits on).
 *  2. A wait is retried on EINTR and reaps the child exactly once.
 *  3. A stream given as one of the caller's fds 0..2 that is not that
 *     stream's own (rewind started with stdin or stdout closed hands out 0
 *     or 1 for a pipe) reaches the child: it is moved above 2 before any
 *     stream of the child is set.
 *  4. The child's signal state is the caller's unless asked (struct
 *     rw_spawn: unblock_all, sigdefault): a handler becomes the default at
 *     exec anyway, an ignored or blocked signal stays so otherwise.
 */
#ifndef REWIND_UTIL_SPAWN_H
#define REWIND_UTIL_SPAWN_H

#include <sys/types.h>

#include "rewind.h"

#define SPAWN_NULL RW_SPAWN_NULL /* the stream is /dev/null */
#define SPAWN_KEEP RW_SPAWN_KEEP /* the stream is the caller's own */

/* Start argv as o says (struct rw_spawn, include/rewind.h). 0 with *pid,
 * or -1 with errno (ENOENT: no such program; EACCES, ENOEXEC: not
 * runnable; EAGAIN, ENOMEM: no process could be made; EINVAL: a bad
 * signal in o->sigdefault). */
int spawn_run(char *const argv[], const struct rw_spawn *o, pid_t *pid);

/* Start argv[0] (searched in PATH) with environment env (NULL: the
 * caller's) and stdin, stdout, stderr on the fds in, out, err (or
 * SPAWN_NULL, SPAWN_KEEP; out and err may be one fd): spawn_run with
 * nothing else asked. 0 with *pid, or -1 with errno. */
int spawn_start(char *const argv[], char *const env[], int in, int out, int err, pid_t *pid);

/* Wait for pid to end (invariant 2). 0 with its wait status in *status,
 * or -1 with errno. */
int spawn_wait(pid_t pid, int *status);

/* Reap pid if it has ended (invariant 2), without waiting: 1 with its
 * wait status in *status, 0 while it runs, or -1 with errno. */
int spawn_poll(pid_t pid, int *status);

#endif
