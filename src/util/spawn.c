/*
 * spawn: see spawn.h.
 */
#include "util/spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/apierr.h"
#include "util/check.h"

extern char **environ;

/* Stream fd of the child (0, 1, 2) from what the caller gave. 0 or an
 * errno. */
static int stream(posix_spawn_file_actions_t *fa, int child_fd, int from)
{
    if (from == SPAWN_KEEP)
        return 0;
    if (from == SPAWN_NULL)
        return posix_spawn_file_actions_addopen(fa, child_fd, "/dev/null",
                                                child_fd == 0 ? O_RDONLY : O_WRONLY, 0);
    return posix_spawn_file_actions_adddup2(fa, from, child_fd);
}

/* The file actions: the streams, then every other fd closed (invariant 1).
 * moved[] gets the fds moved above 2 (invariant 3; -1: none), for the
 * caller to close after the spawn, also when this fails. 0 or an errno. */
static int spawn_files(posix_spawn_file_actions_t *fa, const struct rw_spawn *o, int moved[3])
{
    int from[3] = {o->in, o->out, o->err};
    for (int i = 0; i < 3; i++)
        if (from[i] >= 0 && from[i] < 3 && from[i] != i) {
            moved[i] = fcntl(from[i], F_DUPFD_CLOEXEC, 3);
            if (moved[i] < 0)
                return errno;
            from[i] = moved[i];
        }
    int rc = 0;
    for (int i = 0; i < 3 && rc == 0; i++)
        rc = stream(fa, i, from[i]);
    return rc ? rc : posix_spawn_file_actions_addclosefrom_np(fa, 3);
}

/* The attributes o asks for (invariant 4; a new session). 0 or an errno. */
static int spawn_attrs(posix_spawnattr_t *at, const struct rw_spawn *o)
{
    short flags = 0;
    sigset_t set;
    if (o->new_session)
        flags |= POSIX_SPAWN_SETSID;
    if (o->unblock_all) {
        sigemptyset(&set);
        posix_spawnattr_setsigmask(at, &set);
        flags |= POSIX_SPAWN_SETSIGMASK;
    }
    sigemptyset(&set);
    for (int i = 0; i < RW_SPAWN_SIGS && o->sigdefault[i]; i++) {
        if (sigaddset(&set, o->sigdefault[i]) < 0)
            return EINVAL;
        flags |= POSIX_SPAWN_SETSIGDEF;
    }
    if (flags & POSIX_SPAWN_SETSIGDEF)
        posix_spawnattr_setsigdefault(at, &set);
    return posix_spawnattr_setflags(at, flags);
}

int spawn_run(char *const argv[], const struct rw_spawn *o, pid_t *pid)
{
    RW_ASSERT(argv && argv[0] && o && pid);
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    int rc = posix_spawn_file_actions_init(&fa);
    if (rc != 0) {
        errno = rc;
        return -1;
    }
    if ((rc = posix_spawnattr_init(&at)) != 0) {
        posix_spawn_file_actions_destroy(&fa);
        errno = rc;
        return -1;
    }
    int moved[3] = {-1, -1, -1};
    rc = spawn_files(&fa, o, moved);
    if (rc == 0)
        rc = spawn_attrs(&at, o);
    char *const *env = o->env ? o->env : environ;
    if (rc == 0)
        rc = o->path ? posix_spawn(pid, o->path, &fa, &at, argv, env)
                     : posix_spawnp(pid, argv[0], &fa, &at, argv, env);
    posix_spawnattr_destroy(&at);
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

void rw_spawn_init(struct rw_spawn *s)
{
    *s = (struct rw_spawn){.in = SPAWN_KEEP, .out = SPAWN_KEEP, .err = SPAWN_KEEP};
}

int spawn_start(char *const argv[], char *const env[], int in, int out, int err, pid_t *pid)
{
    struct rw_spawn o;
    rw_spawn_init(&o);
    o.env = env;
    o.in = in;
    o.out = out;
    o.err = err;
    return spawn_run(argv, &o, pid);
}

int spawn_wait(pid_t pid, int *status)
{
    RW_ASSERT(pid > 0 && status);
    while (waitpid(pid, status, 0) < 0)
        if (errno != EINTR)
            return -1;
    return 0;
}

int spawn_poll(pid_t pid, int *status)
{
    RW_ASSERT(pid > 0 && status);
    pid_t r;
    while ((r = waitpid(pid, status, WNOHANG)) < 0)
        if (errno != EINTR)
            return -1;
    return r == pid;
}

int rw_spawn(char *const argv[], const struct rw_spawn *s, pid_t *pid, struct rw_error *err)
{
    if (spawn_run(argv, s, pid) == 0)
        return 0;
    int e = errno;
    int code = RW_EINTERNAL;
    if (e == ENOENT)
        code = RW_ENOTFOUND;
    else if (e == EACCES || e == ENOEXEC)
        code = RW_ENOTEXEC;
    apierr_set(err, code, "cannot run %s: %s", s->path ? s->path : argv[0], strerror(e));
    errno = e;
    return -1;
}

int rw_spawn_wait(pid_t pid, int *status, int block, struct rw_error *err)
{
    int rc = block ? spawn_wait(pid, status) : spawn_poll(pid, status);
    if (rc < 0) {
        int e = errno;
        apierr_set(err, RW_EINTERNAL, "cannot wait for process %ld: %s", (long)pid, strerror(e));
        errno = e;
        return -1;
    }
    return block ? 1 : rc;
}
