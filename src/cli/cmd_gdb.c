/*
 * cmd_gdb: `rewind gdb RUN STEP [--pid P] [--port N | --stdio] [--verify]
 * [-- GDB-ARGS]`: Debian's gdb on process P (default: the job) of a
 * throwaway machine paused at STEP of RUN, through the GDB remote-protocol
 * stub of src/gdbstub (docs/debugging.md). The program is copied out of the
 * guest's filesystem at STEP and given to gdb, so symbols and lines work.
 *
 * Transports (none needs a network interface but --port):
 *  - default: gdb is started here and reaches the stub over a Unix socket
 *    in a private temporary directory (`target remote PATH`);
 *  - --stdio: the stub alone on stdin/stdout, for
 *    `target remote | rewind gdb --stdio RUN STEP` (stdout carries only
 *    packets: everything else this process prints goes to stderr);
 *  - --port N: the stub alone on 127.0.0.1:N (an IDE).
 * --verify: after the session, run the machine to the run's end and check
 * its trace is the stored run's (a debugger never changes the run).
 * --keep: gdb's writes at the session's start become a new run (a fork of
 * RUN at STEP whose spec names them: rw_fork_patched, src/input/patch.h).
 *
 * Phases: gdb_parse, gdb_prepare (home, program, --keep's base, the stub),
 * one transport (gdb_serve_stdio, or gdb_serve_socket: listen_on /
 * listen_unix, gdb_launch, gdb_accept), gdb_finish; gdb_cleanup is the one
 * cleanup path, whatever phase stopped.
 *
 * Invariants:
 *  1. With --stdio, fd 1 is the stub's alone: it is moved aside before the
 *     machine starts and fd 1 points to stderr from then on.
 *  2. The Unix socket and its directory are removed before returning.
 *  3. With --keep, a run is stored only when gdb wrote (the writes the
 *     stub kept, stub.c invariant 9), and it is a fork of RUN at STEP with
 *     exactly those writes: nothing else the session did reaches it.
 */
#include <arpa/inet.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "cli_read.h"
#include "rewind_check.h"
#include "../gdbstub/stub.h"
#include "rewind.h"

static void help(void)
{
    puts("usage: rewind gdb RUN STEP [--pid P | --kernel] [--port N | --stdio] [--verify]\n"
         "                  [--keep] [--history STEP] [--timeout S]\n"
         "                  [--spin-limit S] [-- GDB-ARGS...]\n\n"
         "Debug process P (default: the job) at STEP of RUN with gdb: a throwaway\n"
         "machine paused at STEP, shown to gdb as a Linux process (its threads,\n"
         "registers, memory, the program read from the guest's filesystem there).\n"
         "continue, step, next, finish, breakpoints and watchpoints (at most 32 at once;\n"
         "3 with --kernel) stop only in P; reverse-continue, reverse-stepi, reverse-step,\n"
         "reverse-next and reverse-finish replay the run from a step before. Nothing\n"
         "stored changes unless --keep.\n\n"
         "  --pid P         the process (see rewind ps)\n"
         "  --kernel        the whole machine: the vCPU as one thread, the guest kernel's\n"
         "                  symbols, breakpoints anywhere (no reverse execution)\n"
         "  --port N        serve the stub alone on 127.0.0.1:N (target remote :N)\n"
         "  --stdio         serve the stub alone on stdin/stdout, for gdb's\n"
         "                  target remote | rewind gdb --stdio RUN STEP\n"
         "  --verify        after the session, run on to the run's end and check the\n"
         "                  trace is the stored run's (exit 1 if not)\n"
         "  --history STEP  reverse execution goes back at most to STEP (default: the\n"
         "                  step P exec'd its program)\n"
         "  --timeout S     give up after S seconds of wall time (default: none)\n"
         "  --spin-limit S  a continue or step ends the run as `spin` when the guest\n"
         "                  makes no step for S seconds of wall time (default: 60, as\n"
         "                  rewind run; every instruction of P traps, so P runs slower\n"
         "                  than in a run; 0: never; none by default with --verify)\n"
         "  --keep          keep gdb's writes made at STEP (set var, set $reg, before any\n"
         "                  continue or step; later writes are refused) as a new run: a\n"
         "                  fork of RUN at STEP with those writes, run to its end and\n"
         "                  stored (exit: the job's status, as rewind fork); without\n"
         "                  writes nothing is stored\n"
         "  GDB-ARGS        passed to gdb after the connection (e.g. -batch -ex bt)");
}

static int listen_on(int port, int *out_port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t al = sizeof(a);
    if (bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(fd, 1) < 0 ||
        getsockname(fd, (struct sockaddr *)&a, &al) < 0) {
        close(fd);
        return -1;
    }
    *out_port = ntohs(a.sin_port);
    return fd;
}

/* A Unix socket in a new private directory (invariant 2: the caller
 * removes both with unix_done). fd, or -1 with errno. */
static int listen_unix(char dir[64], char path[128])
{
    const char *td = getenv("TMPDIR");
    if (!td || !*td || strlen(td) > 40)
        td = "/tmp";
    snprintf(dir, 64, "%s/rewind-gdb-XXXXXX", td);
    if (!mkdtemp(dir)) {
        dir[0] = 0;
        return -1;
    }
    snprintf(path, 128, "%s/stub", dir);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    RW_ASSERT(strlen(path) < sizeof(a.sun_path));
    memcpy(a.sun_path, path, strlen(path) + 1);
    if (bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(fd, 1) < 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    return fd;
}

static void unix_done(const char *dir, const char *path)
{
    if (path[0])
        unlink(path);
    if (dir[0])
        rmdir(dir);
}

/* What kind of program the ELF file at path is: 0 a fixed-address static
 * program, 1 a fixed-address dynamically linked one (PT_INTERP), 2 a
 * position-independent executable (ET_DYN), -1 not an x86-64 ELF. The file
 * is the guest's: every size is checked. */
static int elf_kind(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    Elf64_Ehdr e;
    int kind = -1;
    if (pread(fd, &e, sizeof(e), 0) != (ssize_t)sizeof(e) || memcmp(e.e_ident, ELFMAG, SELFMAG) ||
        e.e_ident[EI_CLASS] != ELFCLASS64 || e.e_machine != EM_X86_64 ||
        (e.e_type != ET_EXEC && e.e_type != ET_DYN) || e.e_phentsize != sizeof(Elf64_Phdr) ||
        e.e_phnum > 256)
        goto out;
    kind = e.e_type == ET_DYN ? 2 : 0;
    for (unsigned i = 0; i < e.e_phnum && kind == 0; i++) {
        Elf64_Phdr ph;
        if (pread(fd, &ph, sizeof(ph), (off_t)(e.e_phoff + i * sizeof(ph))) !=
            (ssize_t)sizeof(ph)) {
            kind = -1;
            break;
        }
        if (ph.p_type == PT_INTERP)
            kind = 1;
    }
out:
    close(fd);
    return kind;
}

/* The step the process exec'd its program at (the start of its history). */
struct first_exec {
    uint32_t pid;
    uint64_t step;
};
static int on_exec(void *ctx, const struct rw_event *ev)
{
    struct first_exec *f = ctx;
    if (ev->pid == f->pid)
        f->step = ev->step; /* the last exec before the session's step */
    return 0;
}

/* Ctrl-C in a session (gdb and rewind share the terminal) stops the
 * running command only: the stub reports the stop and clears the flags
 * (gdbstub/stub.h). --timeout, SIGTERM and SIGHUP end the session. */
static volatile sig_atomic_t gdb_interrupt, gdb_stopping;
static volatile sig_atomic_t *gdb_abort;

static void on_gdb_signal(int sig)
{
    if (sig == SIGINT)
        gdb_interrupt = 1;
    else
        gdb_stopping = 1;
    *gdb_abort = 1;
    rw_interrupt();
}

/* --keep at the session's end (invariant 3): the writes the stub kept
 * beyond base_n (those run ref held already) become a new run. The exit
 * code. */
static int keep_session(rw_home *h, const char *ref, uint64_t step, const struct rw_patch *p,
                        unsigned base_n, volatile sig_atomic_t *abort_flag)
{
    if (*abort_flag) {
        fprintf(stderr, "rewind: nothing kept: the session was stopped (--timeout or a signal)\n");
        return 1;
    }
    if (p->n == base_n) {
        fprintf(stderr,
                "rewind: nothing to keep: gdb wrote nothing at step %llu (without writes the "
                "session's run is run %s itself)\n",
                (unsigned long long)step, ref);
        return 0;
    }
    struct rw_options o;
    struct rw_result r;
    struct rw_error err;
    rw_options_init(&o);
    o.observer = cli_stdio;
    o.abort = abort_flag;
    if (rw_fork_patched(h, ref, p, &o, &r, &err) < 0)
        return cli_fail(&err);
    if (r.diverged)
        fprintf(stderr, "rewind: DETERMINISM VIOLATION: %s\n", r.divergence);
    unsigned n = p->n - base_n;
    fprintf(stderr, "rewind: kept run %s (fork of %s at step %llu with %u gdb write%s)\n", r.id,
            r.parent, (unsigned long long)step, n, n == 1 ? "" : "s");
    fprintf(stderr, "rewind: run %s %s:%d after %llu steps, %.3fs virtual, %.3fs wall\n", r.id,
            rw_outcome_word(r.outcome), r.exit_code, (unsigned long long)r.steps, r.virt_ns / 1e9,
            r.wall_s);
    return r.exit_code;
}

/* A session's command line. */
struct gdb_args {
    uint64_t pid, port, history, step;
    int verify, use_port, kernel, use_stdio, keep;
    double timeout, spin_limit; /* spin_limit < 0: the default */
    const char *ref;
    int argc, dd, rest; /* GDB-ARGS are argv[rest..argc) */
    char **argv;
};

/* What a session holds; gdb_cleanup releases all of it (the one cleanup
 * path of cmd_gdb). */
struct gdb_session {
    rw_home *h;
    volatile sig_atomic_t *abort_flag;
    uint32_t p32;
    char exe[256], tmp[64];
    struct rw_patch *patch;
    unsigned base_n;
    struct gdbs_config cfg; /* the stub keeps a pointer to it: lives as long as s */
    struct gdbs_session *s;
    struct gdbs_result res;
    int wout;
    char udir[64], upath[128];
    pid_t child; /* gdb: -1 none started, -2 ended without connecting */
    int gstatus;
};

/* A helper's "go on": every other value is cmd_gdb's exit code. */
#define GDB_GO (-1)

static void gdb_cleanup(struct gdb_session *g)
{
    struct rw_error err;
    if (g->s)
        gdbs_end(g->s, 0, &err);
    unix_done(g->udir, g->upath); /* invariant 2 */
    if (g->tmp[0])
        unlink(g->tmp);
    free(g->patch);
    if (g->wout != STDOUT_FILENO)
        close(g->wout);
    if (g->h)
        rw_home_close(g->h);
}

static int gdb_option(struct gdb_args *a, int c)
{
    switch (c) {
    case 'p':
        if (cli_read_step(optarg, &a->pid) < 0 || a->pid == 0 || a->pid > 4194304)
            return cli_error(2, "--pid needs a process id (see rewind ps): %s", optarg);
        return GDB_GO;
    case 'P':
        if (cli_read_step(optarg, &a->port) < 0 || a->port == 0 || a->port > 65535)
            return cli_error(2, "--port needs a TCP port (1-65535): %s", optarg);
        a->use_port = 1;
        return GDB_GO;
    case 'v':
        a->verify = 1;
        return GDB_GO;
    case 'k':
        a->kernel = 1;
        return GDB_GO;
    case 'S':
        a->use_stdio = 1;
        return GDB_GO;
    case 'H':
        if (cli_read_step(optarg, &a->history) < 0 || a->history == 0)
            return cli_error(2, "--history needs a step number: %s", optarg);
        return GDB_GO;
    case 't':
        if (cli_read_seconds(optarg, &a->timeout) < 0)
            return cli_error(2, "--timeout must be a positive number of seconds: %s", optarg);
        return GDB_GO;
    case 'K':
        a->keep = 1;
        return GDB_GO;
    case 'L': {
        char *end;
        a->spin_limit = strtod(optarg, &end);
        if (end == optarg || *end || !(a->spin_limit >= 0) || a->spin_limit > 1e9)
            return cli_error(2, "--spin-limit must be a number of seconds (0: never): %s", optarg);
        return GDB_GO;
    }
    case 'h':
        help();
        return 0;
    default:
        return cli_error(2, "see rewind gdb --help");
    }
}

/* The options that exclude each other, then RUN STEP. */
static int gdb_check_args(struct gdb_args *a)
{
    if (a->kernel && a->pid)
        return cli_error(2, "--pid and --kernel exclude each other");
    if (a->keep && a->kernel)
        return cli_error(2, "--keep and --kernel exclude each other (a kept session writes to one "
                            "process)");
    if (a->keep && a->verify)
        return cli_error(2, "--keep and --verify exclude each other (replay the kept run with "
                            "rewind replay ID)");
    if (a->use_stdio && a->use_port)
        return cli_error(2, "--stdio and --port exclude each other");
    if ((a->use_stdio || a->use_port) && a->dd < a->argc)
        return cli_error(2, "GDB-ARGS need rewind to start gdb: not with --stdio or --port");
    if (a->dd - optind != 2)
        return cli_error(2, "gdb needs RUN STEP (see rewind gdb --help)");
    a->ref = a->argv[optind];
    if (cli_read_step(a->argv[optind + 1], &a->step) < 0 || a->step == 0)
        return cli_error(2, "STEP must be a positive step number: %s", a->argv[optind + 1]);
    a->rest = a->dd < a->argc ? a->dd + 1 : a->argc;
    return GDB_GO;
}

static int gdb_parse(int argc, char **argv, struct gdb_args *a)
{
    static const struct option opts[] = {
        {"pid", required_argument, 0, 'p'},
        {"port", required_argument, 0, 'P'},
        {"verify", no_argument, 0, 'v'},
        {"history", required_argument, 0, 'H'},
        {"timeout", required_argument, 0, 't'},
        {"help", no_argument, 0, 'h'},
        {"kernel", no_argument, 0, 'k'},
        {"stdio", no_argument, 0, 'S'},
        {"keep", no_argument, 0, 'K'},
        {"spin-limit", required_argument, 0, 'L'},
        {0, 0, 0, 0},
    };
    *a = (struct gdb_args){.argc = argc, .argv = argv, .dd = argc, .spin_limit = -1};
    optind = 1;
    /* rewind's options end at "--": what follows is gdb's. */
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--")) {
            a->dd = i;
            break;
        }
    int c, rc;
    while ((c = getopt_long(a->dd, argv, "h", opts, NULL)) != -1)
        if ((rc = gdb_option(a, c)) != GDB_GO)
            return rc;
    return gdb_check_args(a);
}

/* --stdio (invariant 1): stdout is the stub's alone. */
static int gdb_stdio_setup(struct gdb_session *g)
{
    fflush(stdout);
    g->wout = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
    if (g->wout < 0 || dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
        if (g->wout < 0)
            g->wout = STDOUT_FILENO;
        return cli_error(RW_EINTERNAL, "--stdio: cannot set up stdout: %s", strerror(errno));
    }
    return GDB_GO;
}

static void gdb_signals(struct gdb_session *g, double timeout)
{
    g->abort_flag = cli_abort_on_signals(timeout);
    gdb_abort = g->abort_flag;
    struct sigaction sa = {.sa_handler = on_gdb_signal};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGALRM, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
}

/* The program gdb debugs (the guest kernel with --kernel) and the step
 * reverse execution goes back to (--history, or P's last exec). */
static int gdb_program(struct gdb_args *a, struct gdb_session *g)
{
    struct rw_error err;
    g->p32 = (uint32_t)a->pid;
    if (a->kernel) { /* the whole machine: the guest kernel's ELF */
        snprintf(g->exe, sizeof(g->exe), "%s", rw_default_kernel());
        g->p32 = 0;
    } else if (rw_process_program(g->h, a->ref, a->step, &g->p32, g->exe, sizeof(g->exe), &err) <
               0) {
        return cli_fail(&err);
    }
    if (!a->history && !a->kernel) {
        char id[RW_ID_MAX];
        struct first_exec f = {g->p32, 1};
        struct rw_event_query q = RW_EVENTS_ALL;
        q.to = a->step;
        q.kind = rw_event_kind("exec");
        if (rw_resolve(g->h, a->ref, id, &err) == 0)
            rw_events(g->h, id, &q, on_exec, &f, NULL, &err);
        a->history = f.step ? f.step : 1;
    }
    if (a->history > a->step)
        a->history = a->step;
    return GDB_GO;
}

/* --keep: the writes run ref holds already (invariant 3 counts beyond). */
static int gdb_keep_base(struct gdb_args *a, struct gdb_session *g)
{
    struct rw_error err;
    if (!a->keep)
        return GDB_GO;
    g->patch = calloc(1, sizeof(*g->patch));
    if (!g->patch)
        return cli_error(RW_EINTERNAL, "out of memory");
    if (rw_patch_base(g->h, a->ref, a->step, g->patch, &err) < 0)
        return cli_fail(&err);
    g->base_n = g->patch->n;
    return GDB_GO;
}

/* The program copied out of the guest's filesystem at STEP, for gdb. */
static int gdb_copy_program(struct gdb_args *a, struct gdb_session *g, struct rw_options *o)
{
    struct rw_error err;
    if (!a->kernel && rw_program_copy(g->h, a->ref, a->step, g->p32, g->exe, o, g->tmp, &err) < 0)
        return cli_fail(&err);
    int kind = a->kernel ? 0 : elf_kind(g->tmp);
    if (kind < 0)
        return cli_error(RW_EUSAGE, "%s at step %llu is not an x86-64 ELF program", g->exe,
                         (unsigned long long)a->step);
    /* kind 2, a position-independent program: gdb places it by the
     * process's auxiliary vector (qXfer:auxv:read). */
    if (kind == 1)
        fprintf(stderr,
                "rewind: %s is dynamically linked: gdb finds its libraries through the guest's "
                "dynamic linker, served from the guest's files (not tested: the test root's "
                "programs are static)\n",
                g->exe);
    return GDB_GO;
}

/* The forward commands' spin limit: --spin-limit, else none with --verify
 * (under the trap flag P runs far slower than in its run: a spin ended by
 * the wall clock would truncate the run and --verify would report a
 * difference the debugger did not make), else rewind run's default. */
static double gdb_spin_limit(const struct gdb_args *a, double dflt)
{
    if (a->spin_limit >= 0)
        return a->spin_limit;
    return a->verify ? 0 : dflt;
}

static int gdb_start_stub(struct gdb_args *a, struct gdb_session *g)
{
    struct rw_error err;
    struct rw_options o;
    rw_options_init(&o);
    g->cfg = (struct gdbs_config){.h = g->h,
                                  .ref = a->ref,
                                  .step = a->step,
                                  .pid = g->p32,
                                  .history = a->history,
                                  .abort = g->abort_flag,
                                  .interrupt = &gdb_interrupt,
                                  .stopping = &gdb_stopping,
                                  .notes = stderr,
                                  .exe = g->exe,
                                  .exe_local = a->kernel ? g->exe : g->tmp,
                                  .kernel = a->kernel,
                                  .keep = g->patch,
                                  .spin_limit_s = gdb_spin_limit(a, o.spin_limit_s)};
    if (gdbs_start(&g->cfg, &g->res, &g->s, &err) < 0)
        return cli_fail(&err);
    return GDB_GO;
}

/* Everything up to a stub ready for its transport. */
static int gdb_prepare(struct gdb_args *a, struct gdb_session *g)
{
    int rc;
    if (a->use_stdio && (rc = gdb_stdio_setup(g)) != GDB_GO)
        return rc;
    g->h = cli_open_home();
    if (!g->h)
        return RW_EINTERNAL;
    gdb_signals(g, a->timeout);
    if ((rc = gdb_program(a, g)) != GDB_GO)
        return rc;
    struct rw_options o;
    rw_options_init(&o);
    o.abort = g->abort_flag;
    if ((rc = gdb_keep_base(a, g)) != GDB_GO || (rc = gdb_copy_program(a, g, &o)) != GDB_GO)
        return rc;
    return gdb_start_stub(a, g);
}

/* --stdio: the stub on stdin and the saved stdout. */
static void gdb_serve_stdio(struct gdb_args *a, struct gdb_session *g)
{
    if (!*g->abort_flag)
        gdbs_serve(g->s, STDIN_FILENO, g->wout);
    close(g->wout);
    g->wout = STDOUT_FILENO;
    /* gdb closing the pipe waits 5 s, sends SIGTERM, then waits for
     * good: --verify's run to the end is let finish (SIGINT still
     * stops it). */
    if (a->verify)
        signal(SIGTERM, SIG_IGN);
}

/* gdb in the foreground on the Unix socket at g->upath, GDB-ARGS after
 * the connection, started through the one spawner (rw_spawn: the listening
 * socket is not among the fds it gets). GDB_GO, or the exit code when gdb
 * cannot be run (one line naming the package: 127 when it is missing). */
static int gdb_launch(struct gdb_args *a, struct gdb_session *g)
{
    char target[160], *args[a->argc + 16];
    snprintf(target, sizeof(target), "target remote %s", g->upath);
    int k = 0;
    args[k++] = "gdb";
    args[k++] = "-q";
    args[k++] = "-nx";
    args[k++] = "-ex";
    args[k++] = "set remotetimeout 3600";
    args[k++] = "-ex";
    args[k++] = "set exec-file-mismatch off";
    args[k++] = "-ex";
    args[k++] = target;
    for (int i = a->rest; i < a->argc; i++)
        args[k++] = a->argv[i];
    args[k++] = a->kernel ? g->exe : g->tmp;
    args[k] = NULL;
    struct rw_spawn sp;
    struct rw_error err;
    rw_spawn_init(&sp);
    if (rw_spawn(args, &sp, &g->child, &err) < 0) {
        g->child = -1;
        return cli_error(err.code, "%s (apt-get install gdb)", err.msg);
    }
    return GDB_GO;
}

/* The connection: until gdb connects, gdb exits, or the abort flag. The
 * connected fd or -1. */
static int gdb_accept(struct gdb_session *g, int lfd)
{
    for (;;) {
        struct pollfd pf = {.fd = lfd, .events = POLLIN};
        int pr = poll(&pf, 1, 1000);
        if (pr > 0) {
            int cfd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
            if (cfd >= 0)
                return cfd;
        }
        if (*g->abort_flag)
            return -1;
        if (g->child > 0 && rw_spawn_wait(g->child, &g->gstatus, 0, NULL) == 1) {
            g->child = -2; /* gdb ended without connecting */
            return -1;
        }
    }
}

/* --port N (an IDE connects) or the default (gdb started here). */
static int gdb_serve_socket(struct gdb_args *a, struct gdb_session *g)
{
    int bound = 0, rc;
    int lfd = a->use_port ? listen_on((int)a->port, &bound) : listen_unix(g->udir, g->upath);
    if (lfd < 0) {
        int e = errno;
        if (a->use_port)
            return cli_error(RW_EUSAGE, "cannot listen on 127.0.0.1:%d: %s", (int)a->port,
                             strerror(e));
        return cli_error(RW_EINTERNAL, "cannot make a Unix socket for gdb: %s", strerror(e));
    }
    if (a->use_port)
        fprintf(stderr, "rewind: gdb stub for %s %u at step %llu on 127.0.0.1:%d\n",
                a->kernel ? "the whole machine, vcpu" : "process", a->kernel ? 0 : g->p32,
                (unsigned long long)a->step, bound);
    else if ((rc = gdb_launch(a, g)) != GDB_GO) {
        close(lfd);
        return rc; /* cmd_gdb's cleanup removes the socket (invariant 2) */
    }
    int cfd = gdb_accept(g, lfd);
    close(lfd);
    unix_done(g->udir, g->upath); /* invariant 2: connected or given up */
    g->udir[0] = g->upath[0] = 0;
    if (cfd >= 0) {
        gdbs_serve(g->s, cfd, cfd);
        close(cfd);
    }
    return GDB_GO;
}

/* --verify: the session's machine ran to the end of the stored run's
 * trace. 0, 1 if it differs, or an error's exit code. */
static int gdb_verify(struct gdb_args *a, struct gdb_session *g, int ex)
{
    struct rw_run_info info;
    struct rw_error err;
    if (rw_run_info(g->h, a->ref, &info, &err) < 0)
        return cli_fail(&err);
    int same = !strcmp(info.trace_hash, g->res.trace_hash) && info.steps == g->res.steps;
    fprintf(stderr, "rewind: the session's machine ran to step %llu: trace %s %s run %s\n",
            (unsigned long long)g->res.steps, g->res.trace_hash, same ? "equal to" : "DIFFERS from",
            info.id);
    rw_run_info_free(&info);
    return same ? ex : 1;
}

/* The session's end: gdb waited for, the stub ended, its summary, then
 * --keep or --verify. The exit code. */
static int gdb_finish(struct gdb_args *a, struct gdb_session *g)
{
    struct rw_error err;
    int status = g->gstatus;
    if (g->child > 0 && rw_spawn_wait(g->child, &status, 1, NULL) < 0)
        status = 0; /* not our child: cannot be */
    if (g->tmp[0])
        unlink(g->tmp);
    g->tmp[0] = 0;
    int rc = gdbs_end(g->s, a->verify, &err);
    g->s = NULL;
    int ex = g->child != -1 && WIFEXITED(status) ? WEXITSTATUS(status) : 0;
    if (rc < 0)
        return cli_fail(&err);
    fprintf(stderr, "rewind: gdb session: %llu debug exits, %llu replays",
            (unsigned long long)g->res.debug_exits, (unsigned long long)g->res.replays);
    if (g->res.windows_given_up) /* src/gdbstub/stub.c invariant 6 */
        fprintf(stderr, " (%llu windows given up over their budget)",
                (unsigned long long)g->res.windows_given_up);
    fputc('\n', stderr);
    if (g->res.modified)
        fprintf(stderr, "rewind: gdb wrote to the machine's registers or memory: from there on "
                        "its run is not the stored run\n");
    if (a->keep)
        return keep_session(g->h, a->ref, a->step, g->patch, g->base_n, g->abort_flag);
    return a->verify ? gdb_verify(a, g, ex) : ex;
}

int cmd_gdb(int argc, char **argv)
{
    struct gdb_args a;
    int rc = gdb_parse(argc, argv, &a);
    if (rc != GDB_GO)
        return rc;
    struct gdb_session g = {.wout = STDOUT_FILENO, .child = -1};
    if ((rc = gdb_prepare(&a, &g)) != GDB_GO)
        goto out;
    if (a.use_stdio)
        gdb_serve_stdio(&a, &g);
    else if ((rc = gdb_serve_socket(&a, &g)) != GDB_GO)
        goto out;
    rc = gdb_finish(&a, &g);
out:
    gdb_cleanup(&g);
    return rc;
}
