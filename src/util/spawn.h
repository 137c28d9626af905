/*
 * spawn: the one way the engine starts another program (mkfs.erofs and tar
 * for images, fsck.erofs for a spin report, nix, the Slurm commands): the
 * program searched in PATH, its three standard streams set by the caller,
 * started with posix_spawnp, so a program that cannot be run is an error
 * of the call (its errno), never a child that has to report it.
 *
 * Invariants:
 *  1. The child gets only fds 0, 1 and 2 from the call (everything else
 *     the caller opens close-on-exec stays closed in it).
 *  2. A wait is retried on EINTR and reaps the child exactly once.
 */
#ifndef REWIND_UTIL_SPAWN_H
#define REWIND_UTIL_SPAWN_H

#include <sys/types.h>

#define SPAWN_NULL (-1) /* the stream is /dev/null */
#define SPAWN_KEEP (-2) /* the stream is the caller's own */

/* Start argv[0] (searched in PATH) with environment env (NULL: the
 * caller's) and stdin, stdout, stderr on the fds in, out, err (or
 * SPAWN_NULL, SPAWN_KEEP; out and err may be one fd). 0 with *pid, or -1
 * with errno (ENOENT: no such program; EACCES, ENOEXEC: not runnable;
 * EAGAIN, ENOMEM: no process could be made). */
int spawn_start(char *const argv[], char *const env[], int in, int out, int err, pid_t *pid);

/* Wait for pid to end (invariant 2). 0 with its wait status in *status,
 * or -1 with errno. */
int spawn_wait(pid_t pid, int *status);

#endif
