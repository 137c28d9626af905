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
 * Network (docs/networking.md): before the job starts init brings up the
 * loopback device, the only network device of the guest.
 *  1. lo is up with 127.0.0.1/8 and ::1/128 before the job's fork, set with
 *     ioctls only (the root may have no tools); a failure ends the run as an
 *     init failure, never as a job that runs without its network.
 *  2. `localhost` resolves whatever the root holds: when the root has no
 *     /etc/hosts (or no /etc/nsswitch.conf) init writes one into the
 *     writable overlay; a file the root has (even a dangling symlink) is
 *     never replaced. The files' contents are fixed, so runs stay identical.
 *
 * /job format (written by src/run/job.c): "REWINDJOB1\0", then argc as
 * decimal and NUL, argc strings each NUL-terminated, envc and NUL, envc
 * strings, then cwd NUL; then, only for a run with properties (src/run/job.h),
 * "REWINDPROPS1\0", the --property command (or "") NUL, and the file
 * properties' paths as a counted list. After the job (and its leftovers)
 * ended, init runs the command and reads the files in the job's root, cwd
 * and env, and reports them as tagged marks (src/explore/props.h), before
 * REWIND_INIT_JOB_EXIT. Without properties nothing of this happens.
 *
 * Inspect (see rewind_abi.h): the kernel freezes the job and sends SIGUSR2.
 * The handler only sets a flag, except while init is parked in its wait
 * (wait_child), where it siglongjmps back to the top of the wait loop; that
 * loop blocks in waitid(WNOWAIT) and reaps only after it left the parked
 * state, so a status is never lost and a request that arrives between the
 * flag check and the wait is still seen. (SA_RESTART: no other syscall of
 * init sees EINTR.) The loop forks the inspector (inspect()), keeps waiting
 * for the job meanwhile, and emits REWIND_INIT_INSPECT_DONE with the
 * inspector's exit status when it ends. An inspection still running when
 * the job exits (it was past freezing: in do_exit) ends before leftovers are
 * killed. Once the job has exited init reaps what is left, serves a pending
 * request (the job's root is then /newroot, its cwd the job's cwd) and checks
 * once more after REWIND_INIT_JOB_EXIT. Requests before the handler is
 * installed (before JOB_START) or after that last check (the run is powering
 * off) are not answered. A request before the job's exec sees the root and
 * cwd the job is about to enter, and the job never starts. Without a
 * request nothing of this changes what a run does: no signal is sent,
 * waitid + waitpid and sigprocmask make no step, and the exec result is read
 * after the job is reaped instead of before.
 */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <net/if.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "../include/rewind_abi.h"
#include "nodes.h"

#define JOB_MAX (1 << 20)
#define ARGS_MAX 4096

struct job {
    char *argv[ARGS_MAX + 1];
    char *envp[ARGS_MAX + 1];
    const char *cwd;
    const char *property;      /* NULL: none */
    char *files[ARGS_MAX + 1]; /* file properties' paths, NULL-terminated */
    const char *collect;       /* --collect PATH, or NULL */
    struct nodes nodes;        /* the run's nodes (nodes.h); count 0: none */
};

static int ctl_fd = -1;

/* The job's main process (0 before it is forked) and whether it was reaped;
 * its description, for an inspection after it exited. */
static pid_t job_pid;
static int job_reaped;
static struct job *the_job;

/* Inspect state: see the comment at the top. */
static volatile sig_atomic_t inspect_pending, parked;
static sigjmp_buf park_jb;
static pid_t inspector;

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

void nodes_die(const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    die("%s", msg);
    for (;;) /* die powers the machine off */
        pause();
}

int nodes_emit(unsigned long long event, const char *text)
{
    struct rewind_init_msg m = {.event = event, .len = strlen(text), .text = (uintptr_t)text};
    return ctl_fd >= 0 && ioctl(ctl_fd, REWIND_IOC_INIT_MSG, &m) == 0 ? 0 : -1;
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

/* "REWINDNODES1\0" count NUL, then name NUL run NUL per node (src/input/job.h);
 * the host checked the names, init checks them again. */
static void parse_nodes(struct nodes *ns, char **p, char *end)
{
    char *n = next(p, end);
    long cnt = n ? strtol(n, NULL, 10) : -1;
    if (cnt < 1 || cnt > NODES_MAX || ns->count)
        die("/job has a malformed node list");
    for (long i = 0; i < cnt; i++) {
        struct node *nd = &ns->node[i];
        if (!(nd->name = next(p, end)) || !(nd->run = next(p, end)))
            die("/job has a malformed node list");
        size_t l = strlen(nd->name);
        if (l < 1 || l > NODE_NAME_MAX ||
            strspn(nd->name, "abcdefghijklmnopqrstuvwxyz0123456789-") != l ||
            !(nd->name[0] >= 'a' && nd->name[0] <= 'z') || !strcmp(nd->name, "job"))
            die("/job names a node '%s': not a node name", nd->name);
        for (long k = 0; k < i; k++)
            if (!strcmp(ns->node[k].name, nd->name))
                die("/job names node '%s' twice", nd->name);
    }
    ns->count = (int)cnt;
}

/* "REWINDRESTART1\0" count NUL, then name NUL command NUL per node with a
 * restart (src/input/job.h), after the nodes section: each names a node. */
static void parse_restarts(struct nodes *ns, char **p, char *end)
{
    char *n = next(p, end);
    long cnt = n ? strtol(n, NULL, 10) : -1;
    if (cnt < 1 || cnt > ns->count)
        die("/job has a malformed restart list");
    for (long i = 0; i < cnt; i++) {
        char *name = next(p, end), *cmd = next(p, end);
        int k = 0;
        if (!name || !cmd || !*cmd)
            die("/job has a malformed restart list");
        while (k < ns->count && strcmp(ns->node[k].name, name))
            k++;
        if (k == ns->count || ns->node[k].restart)
            die("/job restarts '%s': not a node, or twice", name);
        ns->node[k].restart = cmd;
    }
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
    while (p < end) {
        char *tag = next(&p, end);
        if (tag && !strcmp(tag, "REWINDNODES1")) {
            parse_nodes(&j->nodes, &p, end);
            continue;
        }
        if (tag && !strcmp(tag, "REWINDRESTART1")) {
            parse_restarts(&j->nodes, &p, end);
            continue;
        }
        if (tag && !strcmp(tag, "REWINDNETEM1")) {
            if (!j->nodes.count)
                die("/job has net faults but no nodes");
            j->nodes.netem = 1;
            continue;
        }
        if (tag && !strcmp(tag, "REWINDCOLLECT1")) {
            if (!(j->collect = next(&p, end)) || !*j->collect)
                die("/job has a malformed collect path");
            continue;
        }
        if (!tag || strcmp(tag, "REWINDPROPS1") || !(j->property = next(&p, end)) ||
            take_list(&p, end, j->files) < 0)
            die("/job has malformed properties");
        if (!*j->property)
            j->property = NULL;
    }
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
    /* The links every Linux system has in /dev (udev makes them): bash's
     * process substitution <(...) opens /dev/fd/N, and programs write to
     * /dev/stdout. devtmpfs starts without them. */
    static const char *const devlinks[][2] = {{"/proc/self/fd", "/newroot/dev/fd"},
                                              {"/proc/self/fd/0", "/newroot/dev/stdin"},
                                              {"/proc/self/fd/1", "/newroot/dev/stdout"},
                                              {"/proc/self/fd/2", "/newroot/dev/stderr"}};
    for (size_t i = 0; i < sizeof(devlinks) / sizeof(devlinks[0]); i++)
        if (symlink(devlinks[i][0], devlinks[i][1]) < 0 && errno != EEXIST)
            die("symlink %s: %s", devlinks[i][1], strerror(errno));
    mkdirs("/newroot/tmp");
    chmod("/newroot/tmp", 01777);
}

/* ------------------------------------------------------------------------ */
/* Loopback network (invariants 1 and 2 at the top) */

/* The kernel's struct in6_ifreq (linux/ipv6.h), which glibc does not
 * declare: the argument of SIOCSIFADDR on an AF_INET6 socket. */
struct net_in6_ifreq {
    struct in6_addr addr;
    uint32_t prefixlen;
    int ifindex;
};

static void net_ioctl(int fd, unsigned long req, void *arg, const char *what)
{
    if (ioctl(fd, req, arg) < 0)
        die("loopback: %s: %s", what, strerror(errno));
}

static void net_set_ipv4(int fd, unsigned long req, const char *addr, const char *what)
{
    struct ifreq ifr = {0};
    struct sockaddr_in sin = {.sin_family = AF_INET};
    snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
    inet_pton(AF_INET, addr, &sin.sin_addr);
    memcpy(&ifr.ifr_addr, &sin, sizeof(sin));
    net_ioctl(fd, req, &ifr, what);
}

static void net_loopback_up(void)
{
    int fd4 = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd4 < 0)
        die("loopback: no IPv4 socket: %s", strerror(errno));
    net_set_ipv4(fd4, SIOCSIFADDR, "127.0.0.1", "set 127.0.0.1");
    net_set_ipv4(fd4, SIOCSIFNETMASK, "255.0.0.0", "set netmask 255.0.0.0");
    struct ifreq ifr = {0};
    snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
    net_ioctl(fd4, SIOCGIFFLAGS, &ifr, "get flags");
    ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
    net_ioctl(fd4, SIOCSIFFLAGS, &ifr, "set up");
    net_ioctl(fd4, SIOCGIFINDEX, &ifr, "get index");
    int index = ifr.ifr_ifindex;
    close(fd4);

    /* The kernel adds ::1 itself when lo goes up; asking again makes the
     * address independent of that (EEXIST then means it is there). */
    int fd6 = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd6 < 0)
        die("loopback: no IPv6 socket: %s", strerror(errno));
    struct net_in6_ifreq r6 = {.addr = IN6ADDR_LOOPBACK_INIT, .prefixlen = 128, .ifindex = index};
    if (ioctl(fd6, SIOCSIFADDR, &r6) < 0 && errno != EEXIST)
        die("loopback: set ::1: %s", strerror(errno));
    close(fd6);
}

/* Create /newroot/PATH with TEXT unless the root has something there. */
static void net_provide_file(const char *path, const char *text)
{
    struct stat st;
    if (lstat(path, &st) == 0 || errno != ENOENT)
        return;
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0)
        die("cannot create %s: %s", path, strerror(errno));
    size_t n = strlen(text);
    if (write(fd, text, n) != (ssize_t)n)
        die("cannot write %s: %s", path, strerror(errno));
    close(fd);
}

static void net_provide_names(void)
{
    struct stat st;
    if (lstat("/newroot/etc", &st) < 0) {
        if (errno != ENOENT)
            return;
        mkdirs("/newroot/etc");
    } else if (!S_ISDIR(st.st_mode)) {
        return; /* a symlink or a file: the root's business */
    }
    net_provide_file("/newroot/etc/hosts", "# written by rewind-init: the root has no /etc/hosts\n"
                                           "127.0.0.1\tlocalhost\n"
                                           "::1\tlocalhost ip6-localhost ip6-loopback\n");
    net_provide_file("/newroot/etc/nsswitch.conf",
                     "# written by rewind-init: the root has no /etc/nsswitch.conf\n"
                     "hosts: files dns\n");
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
        if (in < 0 || out < 0 || er < 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(er, 2) < 0)
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

/* ------------------------------------------------------------------------ */
/* Inspect: the inspector process (a child of init) */

#define REQ_MAX (REWIND_SHARED_REQ_MAX + 1)
#define ENV_MAX (64 * 1024)

/* Opened in init's root, before the inspector enters the process's root. */
static int out_fd = -1, err_fd = -1, in_fd = -1;

static void write_all(int fd, const void *buf, size_t n)
{
    const char *p = buf;
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return;
        p += w;
        n -= (size_t)w;
    }
}

static void __attribute__((noreturn)) inspect_fail(int code, const char *fmt, ...)
{
    char msg[600];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(msg, sizeof(msg) - 1, fmt, ap);
    va_end(ap);
    if (n < 0)
        n = 0;
    if (n > (int)sizeof(msg) - 2)
        n = (int)sizeof(msg) - 2;
    msg[n++] = '\n';
    if (err_fd >= 0)
        write_all(err_fd, msg, (size_t)n);
    _exit(code);
}

static void inspect_cat(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT || errno == ENOTDIR)
            _exit(REWIND_INSPECT_NOT_FOUND);
        inspect_fail(REWIND_INSPECT_ERROR, "%s: %s", path, strerror(errno));
    }
    static char buf[65536];
    for (;;) {
        ssize_t n = read(fd, buf, sizeof(buf));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            inspect_fail(REWIND_INSPECT_ERROR, "%s: %s", path, strerror(errno));
        if (n == 0)
            break;
        write_all(out_fd, buf, (size_t)n);
    }
    _exit(0);
}

static volatile sig_atomic_t shell_done;

static void on_sigchld(int sig)
{
    (void)sig;
    shell_done = 1;
}

static int status_code(int st)
{
    if (WIFEXITED(st))
        return WEXITSTATUS(st);
    if (WIFSIGNALED(st))
        return 128 + WTERMSIG(st);
    return REWIND_INSPECT_ERROR;
}

/* Copy whatever the pty has now to stdout; returns -1 once it is closed. */
static int drain_master(int master)
{
    static char buf[4096];
    for (;;) {
        ssize_t n = read(master, buf, sizeof(buf));
        if (n > 0) {
            write_all(out_fd, buf, (size_t)n);
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EAGAIN)
            return 0;
        return -1; /* EIO: no slave left open; or EOF */
    }
}

/* Input frames (struct rewind_input_frame + payload) may arrive split across
 * reads: keep the unparsed tail. Returns 1 on an EOF frame. */
static int feed_frames(int master, const unsigned char *in, size_t n)
{
    static unsigned char acc[sizeof(struct rewind_input_frame) + 65535];
    static size_t have;
    while (n) {
        size_t take = sizeof(acc) - have < n ? sizeof(acc) - have : n;
        memcpy(acc + have, in, take);
        have += take;
        in += take;
        n -= take;
        size_t off = 0;
        while (have - off >= sizeof(struct rewind_input_frame)) {
            struct rewind_input_frame h;
            memcpy(&h, acc + off, sizeof(h));
            size_t total = sizeof(h) + h.len;
            if (have - off < total)
                break;
            const unsigned char *pl = acc + off + sizeof(h);
            if (h.type == REWIND_INPUT_DATA) {
                /* Blocking write: the shell reads its terminal. */
                int fl = fcntl(master, F_GETFL);
                fcntl(master, F_SETFL, fl & ~O_NONBLOCK);
                write_all(master, pl, h.len);
                fcntl(master, F_SETFL, fl);
            } else if (h.type == REWIND_INPUT_WINSIZE && h.len >= 4) {
                struct winsize ws = {0};
                uint16_t rc[2];
                memcpy(rc, pl, sizeof(rc));
                ws.ws_row = rc[0];
                ws.ws_col = rc[1];
                ioctl(master, TIOCSWINSZ, &ws);
            } else if (h.type == REWIND_INPUT_EOF) {
                return 1;
            }
            off += total;
        }
        memmove(acc, acc + off, have - off);
        have -= off;
    }
    return 0;
}

static void inspect_shell(char **envp)
{
    /* The pty of the inspected root's devpts (init mounts one in /newroot). */
    int master = open("/dev/pts/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (master < 0)
        master = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (master < 0)
        inspect_fail(REWIND_INSPECT_ERROR, "cannot open a pty: %s", strerror(errno));
    int unlock = 0;
    if (ioctl(master, TIOCSPTLCK, &unlock) < 0)
        inspect_fail(REWIND_INSPECT_ERROR, "unlockpt: %s", strerror(errno));
    /* The slave, opened before the fork: the master never sees "no slave"
     * before the shell has its terminal. */
    int slave = ioctl(master, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (slave < 0) {
        char name[64];
        unsigned int n = 0;
        if (ioctl(master, TIOCGPTN, &n) == 0) {
            snprintf(name, sizeof(name), "/dev/pts/%u", n);
            slave = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
        }
    }
    if (slave < 0)
        inspect_fail(REWIND_INSPECT_ERROR, "cannot open the pty slave: %s", strerror(errno));

    struct sigaction sa = {.sa_handler = on_sigchld, .sa_flags = SA_NOCLDSTOP};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGCHLD, &sa, NULL);
    sigset_t chld, orig;
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    sigprocmask(SIG_BLOCK, &chld, &orig);

    pid_t sh = fork();
    if (sh < 0)
        inspect_fail(REWIND_INSPECT_ERROR, "fork: %s", strerror(errno));
    if (sh == 0) {
        sigprocmask(SIG_SETMASK, &orig, NULL);
        signal(SIGCHLD, SIG_DFL);
        signal(SIGUSR2, SIG_DFL);
        setsid();
        ioctl(slave, TIOCSCTTY, 0);
        dup2(slave, 0);
        dup2(slave, 1);
        dup2(slave, 2);
        for (int fd = 3; fd < 1024; fd++)
            close(fd);
        char *argv[] = {"sh", "-i", NULL};
        execve("/bin/sh", argv, envp);
        char msg[128];
        int n = snprintf(msg, sizeof(msg), "rewind: cannot run /bin/sh: %s\r\n", strerror(errno));
        write_all(2, msg, (size_t)n);
        _exit(errno == ENOENT ? 127 : 126);
    }

    close(slave);
    fcntl(master, F_SETFL, fcntl(master, F_GETFL) | O_NONBLOCK);
    int master_open = 1, st = 0;
    for (;;) {
        if (shell_done && waitpid(sh, &st, WNOHANG) == sh)
            break;
        shell_done = 0;
        struct pollfd pf[2] = {{.fd = master_open ? master : -1, .events = POLLIN},
                               {.fd = in_fd, .events = POLLIN}};
        int r = ppoll(pf, 2, NULL, &orig);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            inspect_fail(REWIND_INSPECT_ERROR, "poll: %s", strerror(errno));
        }
        if (master_open && (pf[0].revents & (POLLIN | POLLHUP | POLLERR)) &&
            drain_master(master) < 0 && !(pf[0].revents & POLLIN)) {
            /* No slave open any more (the shell and its children are gone
             * or closed it): stop watching; the shell's exit ends the loop. */
            master_open = 0;
        }
        if (pf[1].revents & POLLIN) {
            static unsigned char buf[4096];
            ssize_t n = read(in_fd, buf, sizeof(buf));
            if (n > 0 && feed_frames(master, buf, (size_t)n)) {
                /* EOF: hang up the terminal; the shell gets SIGHUP. */
                close(master);
                master_open = 0;
                master = -1;
                kill(-sh, SIGHUP);
                kill(sh, SIGCONT);
                while (waitpid(sh, &st, 0) < 0 && errno == EINTR)
                    ;
                _exit(status_code(st));
            }
        }
    }
    if (master_open)
        drain_master(master);
    _exit(status_code(st));
}

static size_t read_file(const char *path, char *buf, size_t max)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    size_t got = 0;
    ssize_t n;
    while (got < max && ((n = read(fd, buf + got, max - got)) > 0 || (n < 0 && errno == EINTR)))
        if (n > 0)
            got += (size_t)n;
    close(fd);
    return got;
}

/* Split a NUL-separated environment into envp (with PWD set to pwd). */
static char **make_env(char *buf, size_t len, const char *pwd)
{
    static char *envp[ARGS_MAX + 2];
    static char pwd_var[4200];
    size_t k = 0;
    for (size_t i = 0; i < len && k < ARGS_MAX;) {
        char *e = buf + i;
        size_t l = strnlen(e, len - i);
        if (l && strncmp(e, "PWD=", 4) != 0)
            envp[k++] = e;
        i += l + 1;
    }
    snprintf(pwd_var, sizeof(pwd_var), "PWD=%s", pwd);
    envp[k++] = pwd_var;
    envp[k] = NULL;
    return envp;
}

/* The inspector: runs in a child of init, never returns. */
static void __attribute__((noreturn)) inspect(void)
{
    signal(SIGUSR2, SIG_DFL);
    out_fd = open("/dev/rewind-stdout", O_WRONLY | O_CLOEXEC);
    err_fd = open("/dev/rewind-stderr", O_WRONLY | O_CLOEXEC);
    in_fd = open("/dev/rewind-stdin", O_RDONLY | O_CLOEXEC);

    static char req[REQ_MAX];
    struct rewind_inspect_req r = {.buf = (uintptr_t)req, .len = sizeof(req) - 1};
    int len = ioctl(ctl_fd, REWIND_IOC_INSPECT_REQ, &r);
    if (len <= 0)
        inspect_fail(REWIND_INSPECT_ERROR, "rewind: no inspect request: %s", strerror(errno));
    req[len] = 0;
    char *p = req, *end = req + len;
    char *kind = next(&p, end), *pidtxt = next(&p, end), *path = NULL;
    if (!kind || !pidtxt)
        inspect_fail(REWIND_INSPECT_ERROR, "rewind: malformed inspect request");
    int is_cat = strcmp(kind, "cat") == 0;
    if (is_cat && !(path = next(&p, end)))
        inspect_fail(REWIND_INSPECT_ERROR, "rewind: cat request without a path");
    if (!is_cat && strcmp(kind, "shell") != 0)
        inspect_fail(REWIND_INSPECT_ERROR, "rewind: unknown inspect request '%s'", kind);
    char *e;
    long pid = strtol(pidtxt, &e, 10);
    if (*pidtxt == 0 || *e || pid < 0)
        inspect_fail(REWIND_INSPECT_ERROR, "rewind: bad pid '%s'", pidtxt);

    /* Root, cwd and environment of the process (init's /newroot/proc). */
    static char envbuf[ENV_MAX];
    size_t envlen = 0;
    int dfd = -1;
    char proc[64];
    if (pid != 0 || (job_pid > 0 && !job_reaped)) {
        pid_t target = pid ? (pid_t)pid : job_pid;
        snprintf(proc, sizeof(proc), "/newroot/proc/%d/cwd", (int)target);
        dfd = open(proc, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        struct stat a, b;
        snprintf(proc, sizeof(proc), "/newroot/proc/%d/root/", (int)target);
        if (dfd >= 0 && pid == 0 && stat(proc, &a) == 0 && stat("/", &b) == 0 &&
            a.st_dev == b.st_dev && a.st_ino == b.st_ino) {
            /* The job's process before its chroot and exec: show the root
             * and cwd it is about to enter. */
            close(dfd);
            dfd = -1;
        } else if (dfd >= 0) {
            snprintf(proc, sizeof(proc), "/newroot/proc/%d/environ", (int)target);
            envlen = read_file(proc, envbuf, sizeof(envbuf) - 1);
            snprintf(proc, sizeof(proc), "/newroot/proc/%d/root", (int)target);
            if (chroot(proc) < 0 || fchdir(dfd) < 0)
                inspect_fail(REWIND_INSPECT_ERROR, "rewind: cannot enter process %d: %s",
                             (int)target, strerror(errno));
        } else if (pid != 0) {
            inspect_fail(REWIND_INSPECT_ERROR, "rewind: no process %ld", pid);
        }
        /* else: the job is exiting (a zombie has no root) or has not
         * entered its root yet: as if not started / reaped. */
    }
    if (dfd < 0) {
        /* The job is gone or not started: its root and the cwd it starts in. */
        if (chroot("/newroot") < 0 || chdir("/") < 0)
            inspect_fail(REWIND_INSPECT_ERROR, "rewind: chroot /newroot: %s", strerror(errno));
        if (the_job && chdir(the_job->cwd) < 0 && chdir("/") < 0)
            inspect_fail(REWIND_INSPECT_ERROR, "rewind: chdir: %s", strerror(errno));
        for (char *const *v = the_job ? the_job->envp : NULL; v && *v; v++) {
            size_t l = strlen(*v) + 1;
            if (envlen + l >= sizeof(envbuf))
                break;
            memcpy(envbuf + envlen, *v, l);
            envlen += l;
        }
    }
    if (is_cat)
        inspect_cat(path);

    static char cwd[4096];
    if (!getcwd(cwd, sizeof(cwd)))
        snprintf(cwd, sizeof(cwd), "/");
    envbuf[envlen] = 0;
    inspect_shell(make_env(envbuf, envlen, cwd));
    _exit(REWIND_INSPECT_ERROR);
}

/* ------------------------------------------------------------------------ */
/* Waiting */

/* Restarts (nodes.c invariant 5): the kernel says a restart is due (only
 * the kernel sends SI_KERNEL). Sets a flag and, like on_inspect, leaves the
 * parked wait; the wait loop asks the kernel which (serve_restarts). */
static volatile sig_atomic_t restart_signalled;
static void on_restart(int sig, siginfo_t *si, void *uc)
{
    (void)sig;
    (void)uc;
    if (si->si_code == SI_KERNEL)
        restart_signalled = 1;
    if (parked) {
        parked = 0;
        siglongjmp(park_jb, 1);
    }
}

static void on_inspect(int sig)
{
    (void)sig;
    inspect_pending = 1;
    if (parked) {
        parked = 0;
        siglongjmp(park_jb, 1);
    }
}

static void inspector_done(int st)
{
    char text[16];
    snprintf(text, sizeof(text), "%d", status_code(st));
    inspector = 0;
    emit(REWIND_INIT_INSPECT_DONE, text);
}

/* The restarts the kernel says are due (REWIND_IOC_RESTART_DUE), while the
 * job runs: after it exited (reaped or not) nothing restarts. */
static void serve_restarts(void)
{
    if (job_pid <= 0 || job_reaped)
        return;
    siginfo_t si = {0};
    if (waitid(P_PID, (id_t)job_pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid)
        return;
    uint64_t due = 0;
    if (ioctl(ctl_fd, REWIND_IOC_RESTART_DUE, &due) < 0)
        return;
    for (int i = 0; i < the_job->nodes.count; i++)
        if ((due & (1ull << i)) && the_job->nodes.node[i].restart &&
            nodes_restart(&the_job->nodes, i, the_job->envp) < 0) {
            char msg[80];
            snprintf(msg, sizeof(msg), "nodes: the kernel refused %s's restart",
                     the_job->nodes.node[i].name);
            emit(REWIND_INIT_ERROR, msg);
        }
}

/* waitpid(-1, st, 0) that also serves inspect requests: returns the pid of
 * a reaped child other than the inspector, or -1 (ECHILD) when none is left
 * and no inspector runs; with upto_inspector, also 0 once an inspector
 * ended. */
static pid_t wait_child(int *st, int upto_inspector)
{
    siginfo_t si;
    sigsetjmp(park_jb, 1);
    for (;;) {
        if (inspect_pending && inspector == 0) {
            inspect_pending = 0;
            pid_t p = fork();
            if (p == 0)
                inspect();
            if (p > 0)
                inspector = p;
            else
                emit(REWIND_INIT_ERROR, "inspect: fork failed");
        }
        /* no restart while an inspection is asked for or runs: the
         * inspected guest must not change */
        if (restart_signalled && inspector == 0 && !inspect_pending) {
            restart_signalled = 0;
            serve_restarts();
        }
        parked = 1;
        if ((restart_signalled && inspector == 0) || (inspect_pending && inspector == 0)) {
            parked = 0;
            continue;
        }
        si.si_pid = 0;
        int r = waitid(P_ALL, 0, &si, WEXITED | WNOWAIT);
        parked = 0;
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        int s = 0;
        pid_t w = waitpid(si.si_pid, &s, 0);
        if (w < 0)
            continue;
        if (w == inspector) {
            inspector_done(s);
            if (upto_inspector)
                return 0;
            continue;
        }
        if (st)
            *st = s;
        return w;
    }
}

static uint64_t run_job(const struct job *j)
{
    int pfd[2];
    if (pipe2(pfd, O_CLOEXEC) < 0)
        die("pipe: %s", strerror(errno));
    /* SIGUSR2 stays blocked until the job is forked: a request handled
     * before the fork means the job must not start; one that arrives
     * during the fork is still pending in it, and the kernel then freezes
     * the child (rewind_freeze_child). */
    sigset_t usr2, old;
    sigemptyset(&usr2);
    sigaddset(&usr2, SIGUSR2);
    sigprocmask(SIG_BLOCK, &usr2, &old);
    if (inspect_pending) {
        /* Inspected before the job started: serve it; the job never runs. */
        sigprocmask(SIG_SETMASK, &old, NULL);
        while (wait_child(NULL, 0) > 0)
            ;
        for (;;)
            pause();
    }
    emit(REWIND_INIT_JOB_START, j->argv[0]);
    pid_t pid = fork();
    if (pid < 0)
        die("fork: %s", strerror(errno));
    if (pid == 0) {
        sigprocmask(SIG_SETMASK, &old, NULL);
        close(pfd[0]);
        exec_job(j, pfd[1]);
    }
    job_pid = pid;
    sigprocmask(SIG_SETMASK, &old, NULL);
    close(pfd[1]);
    /* Wait first, read the child's errno after: an inspection may freeze
     * the child before its exec, and init must still be able to serve it.
     * (The pipe keeps what the child wrote; exec closes it: EOF.) */
    int st = 0;
    for (;;) {
        pid_t w = wait_child(&st, 0);
        if (w == pid)
            break;
        if (w < 0)
            die("waitpid: %s", strerror(errno));
    }
    job_reaped = 1;
    int e = 0;
    ssize_t n = read(pfd[0], &e, sizeof(e));
    close(pfd[0]);
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

/* ------------------------------------------------------------------------ */
/* Properties (src/explore/props.h): after the job, run the --property
 * command and read the file properties' files, in the job's root, cwd and
 * env; report both as marks of PID 1 with a tag line. */

#define PROP_OUT_MAX (1 << 20)

/* One or more marks: the tag, then up to 3000 bytes of buf each. */
static void prop_mark(const char *tag, const char *buf, size_t n)
{
    static char rec[3400];
    size_t tl = strlen(tag);
    do {
        size_t k = n < 3000 ? n : 3000;
        memcpy(rec, tag, tl);
        memcpy(rec + tl, buf, k);
        if (write(ctl_fd, rec, tl + k) < 0)
            return;
        buf += k;
        n -= k;
    } while (n);
}

/* Fork a child in the job's root and cwd with fd 1 and 2 on a pipe: for
 * file == NULL it runs /bin/sh -c property, else it copies the file to the
 * pipe (exit status: 0, or the errno). Reads the pipe (up to PROP_OUT_MAX
 * kept) into *out, and returns the child's exit code (128+N if killed). */
static int prop_child(const struct job *j, const char *file, char **out, size_t *outlen)
{
    int pfd[2];
    *out = malloc(PROP_OUT_MAX);
    *outlen = 0;
    if (!*out || pipe2(pfd, O_CLOEXEC) < 0)
        return 125;
    pid_t pid = fork();
    if (pid < 0)
        return 125;
    if (pid == 0) {
        setsid();
        if (chroot("/newroot") < 0 || chdir("/") < 0 || chdir(j->cwd) < 0)
            _exit(file ? errno : 125);
        int in = open("/dev/null", O_RDONLY);
        if (in < 0 || dup2(in, 0) < 0 || dup2(pfd[1], 1) < 0 || dup2(pfd[1], 2) < 0)
            _exit(file ? EIO : 125);
        if (!file) {
            char *argv[] = {"sh", "-c", (char *)j->property, NULL};
            execve("/bin/sh", argv, (char **)j->envp);
            _exit(127);
        }
        int fd = open(file, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            _exit(errno);
        char buf[4096];
        ssize_t n;
        while ((n = read(fd, buf, sizeof(buf))) > 0)
            write_all(1, buf, (size_t)n);
        _exit(n < 0 ? errno : 0);
    }
    close(pfd[1]);
    char buf[4096];
    ssize_t n;
    while ((n = read(pfd[0], buf, sizeof(buf))) != 0) {
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            break;
        size_t k = (size_t)n;
        if (*outlen + k > PROP_OUT_MAX)
            k = PROP_OUT_MAX - *outlen;
        memcpy(*out + *outlen, buf, k);
        *outlen += k;
    }
    close(pfd[0]);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void serve_properties(const struct job *j)
{
    char *out;
    size_t len;
    char tag[64], num[16];
    if (j->property) {
        int code = prop_child(j, NULL, &out, &len);
        if (len)
            prop_mark("rewind-init:property-output\n", out, len);
        free(out);
        snprintf(num, sizeof(num), "%d", code);
        prop_mark("rewind-init:property-exit\n", num, strlen(num));
    }
    for (int i = 0; j->files[i]; i++) {
        int e = prop_child(j, j->files[i], &out, &len);
        if (e) {
            const char *why = strerror(e);
            snprintf(tag, sizeof(tag), "rewind-init:file-missing:%d\n", i);
            prop_mark(tag, why, strlen(why));
        } else {
            snprintf(tag, sizeof(tag), "rewind-init:file:%d\n", i);
            prop_mark(tag, out, len);
        }
        free(out);
    }
}

/*
 * --collect PATH (docs/nix.md): after the job and its properties, a child in
 * the job's root and cwd walks PATH (entries sorted by name with strcmp, so
 * the directory order the kernel returns does not matter) and reports each
 * entry as marks:
 *   "rewind-init:collect\n" T " " MODE " " SIZE " " REL   T: f, d or l; MODE
 *                                                        octal; REL relative
 *                                                        to PATH ("." for it)
 *   "rewind-init:collect-data\n" + bytes                 content of the last
 *                                                        f (or l's target)
 *   "rewind-init:collect-end\n" + "ok" | a reason       once, last
 * At most COLLECT_MAX bytes of content are reported ("truncated" at the end).
 */
#define COLLECT_MAX (256ull << 20)
static uint64_t collect_bytes;

static int name_cmp(const struct dirent **a, const struct dirent **b)
{
    return strcmp((*a)->d_name, (*b)->d_name);
}

static int collect_walk(const char *path, const char *rel, int depth)
{
    struct stat st;
    char head[4400];
    if (lstat(path, &st) < 0)
        return depth ? 0 : -1;
    char t = S_ISREG(st.st_mode) ? 'f' : S_ISDIR(st.st_mode) ? 'd' : S_ISLNK(st.st_mode) ? 'l' : 0;
    if (!t)
        return 0;
    int hl = snprintf(head, sizeof(head), "%c %o %llu %s", t, (unsigned)(st.st_mode & 07777),
                      (unsigned long long)st.st_size, rel);
    if (hl < 0 || (size_t)hl >= sizeof(head))
        return 0;
    prop_mark("rewind-init:collect\n", head, (size_t)hl);
    if (t == 'l') {
        char target[4096];
        ssize_t n = readlink(path, target, sizeof(target));
        if (n > 0)
            prop_mark("rewind-init:collect-data\n", target, (size_t)n);
    } else if (t == 'f') {
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        char buf[3000];
        ssize_t n;
        while (fd >= 0 && (n = read(fd, buf, sizeof(buf))) > 0) {
            if (collect_bytes + (uint64_t)n > COLLECT_MAX) {
                close(fd);
                return 1;
            }
            collect_bytes += (uint64_t)n;
            prop_mark("rewind-init:collect-data\n", buf, (size_t)n);
        }
        if (fd >= 0)
            close(fd);
    } else if (depth < 64) {
        struct dirent **list;
        int n = scandir(path, &list, NULL, name_cmp);
        int stop = 0;
        for (int i = 0; i < n; i++) {
            const char *nm = list[i]->d_name;
            if (!stop && strcmp(nm, ".") && strcmp(nm, "..")) {
                char *cp = malloc(strlen(path) + strlen(nm) + 2);
                char *cr = malloc(strlen(rel) + strlen(nm) + 2);
                if (cp && cr) {
                    sprintf(cp, "%s/%s", path, nm);
                    if (!strcmp(rel, "."))
                        sprintf(cr, "%s", nm);
                    else
                        sprintf(cr, "%s/%s", rel, nm);
                    stop = collect_walk(cp, cr, depth + 1) > 0;
                }
                free(cp);
                free(cr);
            }
            free(list[i]);
        }
        if (n >= 0)
            free(list);
        return stop;
    }
    return 0;
}

static void serve_collect(const struct job *j)
{
    pid_t pid = fork();
    if (pid < 0)
        return;
    if (pid == 0) {
        const char *why = "ok";
        if (chroot("/newroot") < 0 || chdir("/") < 0 || chdir(j->cwd) < 0)
            why = strerror(errno);
        else {
            int r = collect_walk(j->collect, ".", 0);
            if (r < 0)
                why = strerror(errno);
            else if (r > 0)
                why = "truncated";
        }
        prop_mark("rewind-init:collect-end\n", why, strlen(why));
        _exit(0);
    }
    int st;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
}

/* A running inspection (the job may have exited while it was frozen) ends
 * first; a pending request is served after the kill, in what is left. */
static void kill_leftovers(void)
{
    while (inspector && wait_child(NULL, 1) > 0)
        ;
    kill(-1, SIGKILL);
    while (wait_child(NULL, 0) > 0)
        ;
}

int main(void)
{
    if (getpid() != 1) {
        fprintf(stderr, "rewind-init: must run as PID 1 inside a rewind guest\n");
        return 2;
    }
    static struct job j;
    the_job = &j;
    struct sigaction sa = {.sa_handler = on_inspect, .sa_flags = SA_RESTART};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGUSR2, &sa, NULL);
    setup_root();
    net_loopback_up();
    net_provide_names();
    parse_job(&j);
    for (int i = 0; i < j.nodes.count; i++)
        if (j.nodes.node[i].restart) { /* only then: the kernel signals a PID 1 that handles it */
            struct sigaction rs = {.sa_sigaction = on_restart, .sa_flags = SA_RESTART | SA_SIGINFO};
            sigemptyset(&rs.sa_mask);
            sigaddset(&rs.sa_mask, SIGUSR2);
            sigaction(REWIND_SIG_RESTART, &rs, NULL);
            break;
        }
    nodes_start(&j.nodes, j.envp);
    uint64_t status = run_job(&j);
    kill_leftovers();
    if (j.property || j.files[0]) {
        serve_properties(&j);
        kill_leftovers();
    }
    if (j.collect) {
        serve_collect(&j);
        kill_leftovers();
    }
    emit(REWIND_INIT_JOB_EXIT, "");
    while (wait_child(NULL, 0) > 0) /* a request at the JOB_EXIT step */
        ;
    power_off(status);
    return 0;
}
