/*
 * spawn: serve's children are this very binary, started with a pipe for
 * their output (serve_spawn, declared in serve.h) through rewind's one
 * spawner (rw_spawn, include/rewind.h: src/util/spawn.h's invariants hold)
 * with no signal blocked and SIGINT, SIGTERM and SIGPIPE at their default
 * (the server blocks the first two and ignores the third), and refused
 * once the binary was replaced (action.c invariant 4). Apart from action.c
 * so that child.c, which runs a child to its end, and action.c, which
 * starts them, do not need each other.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "serve.h"

/* This very binary (the kernel and rewind-init are found beside it). */
static const char *self_exe(void)
{
    return "/proc/self/exe";
}

/* The binary's path and identity when the server started (action.c invariant 4). */
static struct {
    int known;
    char path[4096];
    dev_t dev;
    ino_t ino;
    off_t size;
    struct timespec mtime;
} self_id;
static char self_replaced_msg[4300];

/* Note path as the server's binary. 0, or -1 if it cannot be read. */
static int self_note(const char *path)
{
    struct stat st;
    self_id.known = 0;
    self_replaced_msg[0] = 0;
    if (strlen(path) >= sizeof self_id.path || stat(path, &st) < 0)
        return -1;
    snprintf(self_id.path, sizeof self_id.path, "%s", path);
    self_id.dev = st.st_dev;
    self_id.ino = st.st_ino;
    self_id.size = st.st_size;
    self_id.mtime = st.st_mtim;
    self_id.known = 1;
    snprintf(self_replaced_msg, sizeof self_replaced_msg,
             "%s was replaced (rebuilt or upgraded) after this server started, and a child "
             "would not run the server's own program: restart rewind serve",
             self_id.path);
    return 0;
}

void serve_spawn_init(void)
{
    char path[4096];
    ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
    if (n <= 0)
        return;
    path[n] = 0;
    self_note(path);
}

/* Is the file the server was started from still the one it runs? */
static int self_replaced(void)
{
    struct stat st;
    if (!self_id.known)
        return 0;
    return stat(self_id.path, &st) < 0 || st.st_dev != self_id.dev || st.st_ino != self_id.ino ||
           st.st_size != self_id.size || st.st_mtim.tv_sec != self_id.mtime.tv_sec ||
           st.st_mtim.tv_nsec != self_id.mtime.tv_nsec;
}

const char *serve_spawn_error(int e)
{
    return e == ESTALE && self_replaced_msg[0] ? self_replaced_msg : strerror(e);
}

/* Spawn argv with stdin from in_fd (-1: /dev/null) and stdout+stderr to
 * pipes (*out, *err; err may be NULL: merged into out), through the one
 * spawner (rw_spawn: only fds 0, 1 and 2 reach the child). Returns the
 * pid or -1 with errno. */
pid_t serve_spawn(char *const argv[], int in_fd, int *out, int *err)
{
    if (self_replaced()) { /* action.c invariant 4 */
        errno = ESTALE;
        return -1;
    }
    int po[2], pe[2] = {-1, -1};
    if (pipe2(po, O_CLOEXEC) < 0)
        return -1;
    if (err && pipe2(pe, O_CLOEXEC) < 0) {
        close(po[0]);
        close(po[1]);
        return -1;
    }
    struct rw_spawn s;
    rw_spawn_init(&s);
    s.path = self_exe();
    s.in = in_fd >= 0 ? in_fd : RW_SPAWN_NULL;
    s.out = po[1];
    s.err = err ? pe[1] : po[1];
    s.unblock_all = 1; /* the server blocks SIGINT/SIGTERM */
    s.sigdefault[0] = SIGINT;
    s.sigdefault[1] = SIGTERM;
    s.sigdefault[2] = SIGPIPE; /* the server ignores it */
    pid_t pid;
    struct rw_error e;
    int rc = rw_spawn(argv, &s, &pid, &e);
    int spawn_errno = errno;
    close(po[1]);
    if (err)
        close(pe[1]);
    if (rc < 0) {
        close(po[0]);
        if (err)
            close(pe[0]);
        errno = spawn_errno;
        return -1;
    }
    *out = po[0];
    if (err)
        *err = pe[0];
    return pid;
}
