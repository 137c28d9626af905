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
 * RUN at STEP whose spec names them: rw_fork_patched, src/run/patch.h).
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

#include "cli/cli.h"
#include "cli/cli_read.h"
#include "util/check.h"
#include "gdbstub/stub.h"
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
         "                  than in a run; 0: never)\n"
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

int cmd_gdb(int argc, char **argv)
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
    uint64_t pid = 0, port = 0, history = 0;
    int verify = 0, c, use_port = 0, kernel = 0, use_stdio = 0, keep = 0;
    double timeout = 0, spin_limit = -1;
    optind = 1;
    /* rewind's options end at "--": what follows is gdb's. */
    int dd = argc;
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--")) {
            dd = i;
            break;
        }
    while ((c = getopt_long(dd, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'p':
            if (cli_read_step(optarg, &pid) < 0 || pid == 0 || pid > 4194304)
                return cli_error(2, "--pid needs a process id (see rewind ps): %s", optarg);
            break;
        case 'P':
            if (cli_read_step(optarg, &port) < 0 || port == 0 || port > 65535)
                return cli_error(2, "--port needs a TCP port (1-65535): %s", optarg);
            use_port = 1;
            break;
        case 'v':
            verify = 1;
            break;
        case 'k':
            kernel = 1;
            break;
        case 'S':
            use_stdio = 1;
            break;
        case 'H':
            if (cli_read_step(optarg, &history) < 0 || history == 0)
                return cli_error(2, "--history needs a step number: %s", optarg);
            break;
        case 't':
            if (cli_read_seconds(optarg, &timeout) < 0)
                return cli_error(2, "--timeout must be a positive number of seconds: %s", optarg);
            break;
        case 'K':
            keep = 1;
            break;
        case 'L': {
            char *end;
            spin_limit = strtod(optarg, &end);
            if (end == optarg || *end || !(spin_limit >= 0) || spin_limit > 1e9)
                return cli_error(2, "--spin-limit must be a number of seconds (0: never): %s",
                                 optarg);
            break;
        }
        case 'h':
            help();
            return 0;
        default:
            return cli_error(2, "see rewind gdb --help");
        }
    }
    if (kernel && pid)
        return cli_error(2, "--pid and --kernel exclude each other");
    if (keep && kernel)
        return cli_error(2, "--keep and --kernel exclude each other (a kept session writes to one "
                            "process)");
    if (keep && verify)
        return cli_error(2, "--keep and --verify exclude each other (replay the kept run with "
                            "rewind replay ID)");
    if (use_stdio && use_port)
        return cli_error(2, "--stdio and --port exclude each other");
    if ((use_stdio || use_port) && dd < argc)
        return cli_error(2, "GDB-ARGS need rewind to start gdb: not with --stdio or --port");
    if (dd - optind != 2)
        return cli_error(2, "gdb needs RUN STEP (see rewind gdb --help)");
    const char *ref = argv[optind];
    uint64_t step;
    if (cli_read_step(argv[optind + 1], &step) < 0 || step == 0)
        return cli_error(2, "STEP must be a positive step number: %s", argv[optind + 1]);
    int rest = dd < argc ? dd + 1 : argc;
    int wout = STDOUT_FILENO;
    if (use_stdio) { /* invariant 1: stdout is the stub's alone */
        fflush(stdout);
        wout = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
        if (wout < 0 || dup2(STDERR_FILENO, STDOUT_FILENO) < 0)
            return cli_error(RW_EINTERNAL, "--stdio: cannot set up stdout: %s", strerror(errno));
    }
    rw_home *h = cli_open_home();
    if (!h)
        return RW_EINTERNAL;
    volatile sig_atomic_t *abort_flag = cli_abort_on_signals(timeout);
    gdb_abort = abort_flag;
    struct sigaction sa = {.sa_handler = on_gdb_signal};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGALRM, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    struct rw_error err;
    uint32_t p32 = (uint32_t)pid;
    char exe[256];
    if (kernel) { /* the whole machine: the guest kernel's ELF */
        snprintf(exe, sizeof(exe), "%s", rw_default_kernel());
        p32 = 0;
    } else if (rw_process_program(h, ref, step, &p32, exe, sizeof(exe), &err) < 0) {
        rw_home_close(h);
        return cli_fail(&err);
    }
    if (!history && !kernel) {
        char id[RW_ID_MAX];
        struct first_exec f = {p32, 1};
        struct rw_event_query q = RW_EVENTS_ALL;
        q.to = step;
        q.kind = rw_event_kind("exec");
        if (rw_resolve(h, ref, id, &err) == 0)
            rw_events(h, id, &q, on_exec, &f, NULL, &err);
        history = f.step ? f.step : 1;
    }
    if (history > step)
        history = step;
    struct rw_options o;
    rw_options_init(&o);
    o.abort = abort_flag;
    struct rw_patch *patch = keep ? calloc(1, sizeof(*patch)) : NULL;
    if (keep && !patch) {
        rw_home_close(h);
        return cli_error(RW_EINTERNAL, "out of memory");
    }
    if (keep && rw_patch_base(h, ref, step, patch, &err) < 0) {
        free(patch);
        rw_home_close(h);
        return cli_fail(&err);
    }
    unsigned base_n = patch ? patch->n : 0;
    char tmp[64] = "";
    if (!kernel && rw_program_copy(h, ref, step, p32, exe, &o, tmp, &err) < 0) {
        if (tmp[0])
            unlink(tmp);
        rw_home_close(h);
        return cli_fail(&err);
    }
    int kind = kernel ? 0 : elf_kind(tmp);
    if (kind < 0) {
        unlink(tmp);
        rw_home_close(h);
        return cli_error(RW_EUSAGE, "%s at step %llu is not an x86-64 ELF program", exe,
                         (unsigned long long)step);
    }
    /* kind 2, a position-independent program: gdb places it by the
     * process's auxiliary vector (qXfer:auxv:read). */
    if (kind == 1)
        fprintf(stderr,
                "rewind: %s is dynamically linked: gdb finds its libraries through the guest's "
                "dynamic linker, served from the guest's files (not tested: the test root's "
                "programs are static)\n",
                exe);
    struct gdbs_config cfg = {.h = h,
                              .ref = ref,
                              .step = step,
                              .pid = p32,
                              .history = history,
                              .abort = abort_flag,
                              .interrupt = &gdb_interrupt,
                              .stopping = &gdb_stopping,
                              .notes = stderr,
                              .exe = exe,
                              .exe_local = kernel ? exe : tmp,
                              .kernel = kernel,
                              .keep = patch,
                              .spin_limit_s = spin_limit >= 0 ? spin_limit : o.spin_limit_s};
    struct gdbs_result res;
    struct gdbs_session *s;
    if (gdbs_start(&cfg, &res, &s, &err) < 0) {
        if (tmp[0])
            unlink(tmp);
        rw_home_close(h);
        return cli_fail(&err);
    }
    pid_t child = -1;
    int gstatus = 0;
    char udir[64] = "", upath[128] = "";
    if (use_stdio) {
        if (!*abort_flag)
            gdbs_serve(s, STDIN_FILENO, wout);
        close(wout);
        /* gdb closing the pipe waits 5 s, sends SIGTERM, then waits for
         * good: --verify's run to the end is let finish (SIGINT still
         * stops it). */
        if (verify)
            signal(SIGTERM, SIG_IGN);
    } else {
        int bound = 0;
        int lfd = use_port ? listen_on((int)port, &bound) : listen_unix(udir, upath);
        if (lfd < 0) {
            int e = errno;
            gdbs_end(s, 0, &err);
            unix_done(udir, upath);
            if (tmp[0])
                unlink(tmp);
            rw_home_close(h);
            if (use_port)
                return cli_error(RW_EUSAGE, "cannot listen on 127.0.0.1:%d: %s", (int)port,
                                 strerror(e));
            return cli_error(RW_EINTERNAL, "cannot make a Unix socket for gdb: %s", strerror(e));
        }
        if (use_port) {
            fprintf(stderr, "rewind: gdb stub for %s %u at step %llu on 127.0.0.1:%d\n",
                    kernel ? "the whole machine, vcpu" : "process", kernel ? 0 : p32,
                    (unsigned long long)step, bound);
        } else {
            char target[160], *args[argc + 16];
            snprintf(target, sizeof(target), "target remote %s", upath);
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
            for (int i = rest; i < argc; i++)
                args[k++] = argv[i];
            args[k++] = kernel ? exe : tmp;
            args[k] = NULL;
            child = fork();
            if (child == 0) {
                close(lfd);
                execvp("gdb", args);
                fprintf(stderr, "rewind: cannot run gdb: %s (apt-get install gdb)\n",
                        strerror(errno));
                _exit(127);
            }
        }
        int cfd = -1;
        for (;;) { /* until gdb connects, gdb exits, or the abort flag */
            struct pollfd pf = {.fd = lfd, .events = POLLIN};
            int pr = poll(&pf, 1, 1000);
            if (pr > 0) {
                cfd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
                if (cfd >= 0)
                    break;
            }
            if (*abort_flag)
                break;
            if (child > 0 && waitpid(child, &gstatus, WNOHANG) == child) {
                child = -2; /* gdb ended without connecting */
                break;
            }
        }
        close(lfd);
        unix_done(udir, upath); /* invariant 2: connected or given up */
        if (cfd >= 0) {
            gdbs_serve(s, cfd, cfd);
            close(cfd);
        }
    }
    int status = gstatus;
    if (child > 0)
        while (waitpid(child, &status, 0) < 0 && errno == EINTR)
            ;
    if (tmp[0])
        unlink(tmp);
    int rc = gdbs_end(s, verify, &err);
    int ex = child != -1 && WIFEXITED(status) ? WEXITSTATUS(status) : 0;
    if (rc < 0) {
        rw_home_close(h);
        return cli_fail(&err);
    }
    fprintf(stderr, "rewind: gdb session: %llu debug exits, %llu replays",
            (unsigned long long)res.debug_exits, (unsigned long long)res.replays);
    if (res.windows_given_up) /* src/gdbstub/stub.c invariant 6 */
        fprintf(stderr, " (%llu windows given up over their budget)",
                (unsigned long long)res.windows_given_up);
    fputc('\n', stderr);
    if (res.modified)
        fprintf(stderr, "rewind: gdb wrote to the machine's registers or memory: from there on "
                        "its run is not the stored run\n");
    if (keep) {
        int kr = keep_session(h, ref, step, patch, base_n, abort_flag);
        free(patch);
        rw_home_close(h);
        return kr;
    }
    if (verify) {
        struct rw_run_info info;
        if (rw_run_info(h, ref, &info, &err) < 0) {
            rw_home_close(h);
            return cli_fail(&err);
        }
        int same = !strcmp(info.trace_hash, res.trace_hash) && info.steps == res.steps;
        fprintf(stderr, "rewind: the session's machine ran to step %llu: trace %s %s run %s\n",
                (unsigned long long)res.steps, res.trace_hash, same ? "equal to" : "DIFFERS from",
                info.id);
        rw_run_info_free(&info);
        if (!same)
            ex = 1;
    }
    rw_home_close(h);
    return ex;
}
