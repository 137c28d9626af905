/*
 * spawn: see spawn.h.
 */
#include "util/spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/check.h"

extern char **environ;

/* Stream fd of the child (0, 1, 2) from what the caller gave. */
static void stream(posix_spawn_file_actions_t *fa, int child_fd, int from)
{
    if (from == SPAWN_KEEP)
        return;
    if (from == SPAWN_NULL)
        posix_spawn_file_actions_addopen(fa, child_fd, "/dev/null",
                                         child_fd == 0 ? O_RDONLY : O_WRONLY, 0);
    else
        posix_spawn_file_actions_adddup2(fa, from, child_fd); /* invariant 1 */
}

int spawn_start(char *const argv[], char *const env[], int in, int out, int err, pid_t *pid)
{
    RW_ASSERT(argv && argv[0] && pid);
    posix_spawn_file_actions_t fa;
    int rc = posix_spawn_file_actions_init(&fa);
    if (rc != 0) {
        errno = rc;
        return -1;
    }
    /* A caller's fd below 3 that is not already its own stream (rewind
     * started with stdin or stdout closed hands out 0 or 1 for a pipe)
     * would be overwritten by an earlier action: move it above 2 first. */
    int from[3] = {in, out, err}, moved[3] = {-1, -1, -1};
    for (int i = 0; i < 3; i++)
        if (from[i] >= 0 && from[i] < 3 && from[i] != i) {
            moved[i] = fcntl(from[i], F_DUPFD_CLOEXEC, 3);
            if (moved[i] < 0) {
                int e = errno;
                for (int j = 0; j < i; j++)
                    if (moved[j] >= 0)
                        close(moved[j]);
                posix_spawn_file_actions_destroy(&fa);
                errno = e;
                return -1;
            }
            from[i] = moved[i];
        }
    for (int i = 0; i < 3; i++)
        stream(&fa, i, from[i]);
    rc = posix_spawnp(pid, argv[0], &fa, NULL, argv, env ? env : environ);
    posix_spawn_file_actions_destroy(&fa);
    for (int i = 0; i < 3; i++)
        if (moved[i] >= 0)
            close(moved[i]);
    if (rc != 0) {
        errno = rc;
        return -1;
    }
    return 0;
}

int spawn_wait(pid_t pid, int *status)
{
    RW_ASSERT(pid > 0 && status);
    while (waitpid(pid, status, 0) < 0)
        if (errno != EINTR)
            return -1;
    return 0;
}
