/*
 * rewind-init: PID 1 of every rewind guest. Static, no libraries beyond libc.
 *
 * It mounts the root image (/dev/pmem0, erofs, read-only) under a tmpfs
 * overlay, runs the job described in /job chrooted into it with fd 1 and 2 on
 * /dev/rewind-stdout and /dev/rewind-stderr, waits for the job (reaping
 * orphans meanwhile), kills whatever is left, hands the job's wait status to
 * the monitor and powers off. Nothing here reads time or randomness; the
 * order of everything is fixed.
 *
 * /job format (written by src/run/job.c): "REWINDJOB1\0", then argc as
 * decimal and NUL, argc strings each NUL-terminated, envc and NUL, envc
 * strings, then cwd NUL.
 */

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../include/rewind_abi.h"

#define JOB_MAX (1 << 20)
#define ARGS_MAX 4096

struct job {
    char *argv[ARGS_MAX + 1];
    char *envp[ARGS_MAX + 1];
    const char *cwd;
};

static int ctl_fd = -1;

static void emit(uint64_t event, const char *text)
{
    struct rewind_init_msg m = {.event = event, .len = strlen(text), .text = (uintptr_t)text};
    if (ctl_fd >= 0)
        ioctl(ctl_fd, REWIND_IOC_INIT_MSG, &m);
}

static void power_off(uint64_t status)
{
    if (ctl_fd >= 0)
        ioctl(ctl_fd, REWIND_IOC_JOB_STATUS, &status);
    sync();
    reboot(RB_POWER_OFF);
    for (;;)
        pause();
}

static void die(const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    emit(REWIND_INIT_ERROR, msg);
    power_off(REWIND_JOB_INIT_FAILED);
}

static char *read_all(const char *path, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    char *buf = malloc(JOB_MAX);
    size_t got = 0;
    ssize_t n;
    while (buf && got < JOB_MAX && (n = read(fd, buf + got, JOB_MAX - got)) > 0)
        got += (size_t)n;
    close(fd);
    *len = got;
    return buf;
}

/* Take the next NUL-terminated string from [*p, end); NULL if none. */
static char *next(char **p, char *end)
{
    char *s = *p;
    char *z = s < end ? memchr(s, 0, (size_t)(end - s)) : NULL;
    if (!z)
        return NULL;
    *p = z + 1;
    return s;
}

static int take_list(char **p, char *end, char **out)
{
    char *n = next(p, end);
    if (!n)
        return -1;
    long cnt = strtol(n, NULL, 10);
    if (cnt < 0 || cnt > ARGS_MAX)
        return -1;
    for (long i = 0; i < cnt; i++)
        if (!(out[i] = next(p, end)))
            return -1;
    out[cnt] = NULL;
    return (int)cnt;
}

static void parse_job(struct job *j)
{
    size_t len = 0;
    char *buf = read_all("/job", &len);
    if (!buf)
        die("cannot read /job: %s", strerror(errno));
    char *p = buf, *end = buf + len;
    char *magic = next(&p, end);
    if (!magic || strcmp(magic, "REWINDJOB1") != 0)
        die("/job has a bad header");
    if (take_list(&p, end, j->argv) < 1 || take_list(&p, end, j->envp) < 0 ||
        !(j->cwd = next(&p, end)))
        die("/job is malformed");
}

static void mkdirs(const char *path)
{
    char tmp[4096];
    snprintf(tmp, sizeof(tmp), "%s", path);
    for (char *s = tmp + 1; *s; s++) {
        if (*s == '/') {
            *s = 0;
            mkdir(tmp, 0755);
            *s = '/';
        }
    }
    mkdir(tmp, 0755);
}

static void must_mount(const char *src, const char *dst, const char *type, unsigned long fl,
                       const char *data)
{
    mkdirs(dst);
    if (mount(src, dst, type, fl, data) < 0)
        die("mount %s on %s (%s): %s", src, dst, type, strerror(errno));
}

/* libnvdimm registers the legacy pmem region asynchronously: wait (in
 * virtual time, so deterministically) for its block device to appear. */
static void wait_for_device(const char *path)
{
    struct timespec ts = {0, 1000000};
    for (int i = 0; i < 1000; i++) {
        if (access(path, F_OK) == 0)
            return;
        nanosleep(&ts, NULL);
    }
    die("%s did not appear: the root image is not attached", path);
}

static void setup_root(void)
{
    must_mount("none", "/dev", "devtmpfs", 0, NULL);
    /* The kernel starts PID 1 with no fds (no /dev/console in our
     * initramfs): park 0..2 on /dev/null so later fds never land there. */
    for (int fd = 0; fd < 3; fd++)
        if (fcntl(fd, F_GETFD) < 0 && open("/dev/null", O_RDWR) < 0)
            reboot(RB_POWER_OFF);
    ctl_fd = open("/dev/rewind", O_RDWR | O_CLOEXEC);
    if (ctl_fd < 0) {
        /* Without the control device no status can reach the monitor. */
        reboot(RB_POWER_OFF);
    }
    wait_for_device("/dev/pmem0");
    must_mount("/dev/pmem0", "/lower", "erofs", MS_RDONLY, NULL);
    must_mount("rw", "/rw", "tmpfs", 0, "mode=0755");
    mkdirs("/rw/upper");
    mkdirs("/rw/work");
    must_mount("overlay", "/newroot", "overlay", 0,
               "lowerdir=/lower,upperdir=/rw/upper,workdir=/rw/work");
    must_mount("none", "/newroot/dev", "devtmpfs", 0, NULL);
    must_mount("devpts", "/newroot/dev/pts", "devpts", 0, "mode=0620,ptmxmode=0666");
    must_mount("proc", "/newroot/proc", "proc", 0, NULL);
    must_mount("sysfs", "/newroot/sys", "sysfs", 0, NULL);
    must_mount("tmpfs", "/newroot/dev/shm", "tmpfs", 0, "mode=1777");
    mkdirs("/newroot/tmp");
    chmod("/newroot/tmp", 01777);
}

static const char *env_get(char **envp, const char *key)
{
    size_t k = strlen(key);
    for (char **e = envp; *e; e++)
        if (strncmp(*e, key, k) == 0 && (*e)[k] == '=')
            return *e + k + 1;
    return NULL;
}

/* Resolve argv0 against PATH inside the (already chrooted) root. Returns 0
 * with the path in out, or an errno. */
static int resolve(const char *cmd, char **envp, char *out, size_t n)
{
    if (strchr(cmd, '/')) {
        snprintf(out, n, "%s", cmd);
        return access(out, F_OK) == 0 ? 0 : errno;
    }
    const char *path = env_get(envp, "PATH");
    if (!path)
        path = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
    int found_err = ENOENT;
    while (*path) {
        const char *c = strchr(path, ':');
        size_t l = c ? (size_t)(c - path) : strlen(path);
        snprintf(out, n, "%.*s/%s", (int)l, l ? path : ".", cmd);
        struct stat st;
        if (stat(out, &st) == 0 && S_ISREG(st.st_mode)) {
            if (access(out, X_OK) == 0)
                return 0;
            found_err = EACCES;
        }
        path = c ? c + 1 : path + l;
    }
    return found_err;
}

/* Runs in the job's child: never returns. err_fd gets an errno on failure. */
static void exec_job(const struct job *j, int err_fd)
{
    setsid();
    int e = 0;
    char path[4096];
    if (chroot("/newroot") < 0 || chdir("/") < 0)
        e = errno;
    else if (chdir(j->cwd) < 0)
        e = -errno; /* negative: the cwd, not the command */
    if (!e) {
        int in = open("/dev/null", O_RDONLY);
        int out = open("/dev/rewind-stdout", O_WRONLY);
        int er = open("/dev/rewind-stderr", O_WRONLY);
        if (in < 0 || out < 0 || er < 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0 ||
            dup2(er, 2) < 0)
            e = -EIO;
        else {
            for (int fd = 3; fd <= (in > er ? (in > out ? in : out) : er); fd++)
                if (fd != err_fd)
                    close(fd);
            e = resolve(j->argv[0], (char **)j->envp, path, sizeof(path));
            if (!e) {
                execve(path, j->argv, (char **)j->envp);
                e = errno;
            }
        }
    }
    if (write(err_fd, &e, sizeof(e)) < 0)
        _exit(126);
    _exit(127);
}

static uint64_t run_job(const struct job *j)
{
    int pfd[2];
    if (pipe2(pfd, O_CLOEXEC) < 0)
        die("pipe: %s", strerror(errno));
    emit(REWIND_INIT_JOB_START, j->argv[0]);
    pid_t pid = fork();
    if (pid < 0)
        die("fork: %s", strerror(errno));
    if (pid == 0) {
        close(pfd[0]);
        exec_job(j, pfd[1]);
    }
    close(pfd[1]);
    int e = 0;
    ssize_t n = read(pfd[0], &e, sizeof(e));
    close(pfd[0]);
    int st = 0;
    for (;;) {
        pid_t w = waitpid(-1, &st, 0);
        if (w == pid)
            break;
        if (w < 0 && errno != EINTR)
            die("waitpid: %s", strerror(errno));
    }
    if (n == (ssize_t)sizeof(e) && e != 0) {
        char msg[600];
        if (e < 0) {
            snprintf(msg, sizeof(msg), "cannot enter working directory %s: %s", j->cwd,
                     strerror(-e));
            emit(REWIND_INIT_ERROR, msg);
            return REWIND_JOB_INIT_FAILED;
        }
        snprintf(msg, sizeof(msg), "%s: %s", j->argv[0], strerror(e));
        emit(REWIND_INIT_ERROR, msg);
        return e == ENOENT ? REWIND_JOB_NOT_FOUND : REWIND_JOB_NOT_EXECUTABLE;
    }
    return (uint64_t)st;
}

static void kill_leftovers(void)
{
    kill(-1, SIGKILL);
    while (waitpid(-1, NULL, 0) > 0 || errno == EINTR)
        ;
}

int main(void)
{
    if (getpid() != 1) {
        fprintf(stderr, "rewind-init: must run as PID 1 inside a rewind guest\n");
        return 2;
    }
    static struct job j;
    setup_root();
    parse_job(&j);
    uint64_t status = run_job(&j);
    kill_leftovers();
    emit(REWIND_INIT_JOB_EXIT, "");
    power_off(status);
    return 0;
}
