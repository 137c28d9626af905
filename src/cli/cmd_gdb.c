/*
 * cmd_gdb: `rewind gdb RUN STEP [--pid P] [--port N] [--verify] [-- GDB-ARGS]`:
 * Debian's gdb on process P (default: the job) of a throwaway machine
 * paused at STEP of RUN, through the GDB remote-protocol stub of
 * src/gdbstub (docs/debugging.md). The program is copied out of the
 * guest's filesystem at STEP and given to gdb, so symbols and lines work.
 * --port N serves the stub alone on 127.0.0.1:N (for an IDE). --verify:
 * after the session, run the machine to the run's end and check its trace
 * is the stored run's (a debugger never changes the run).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/cli_read.h"
#include "gdbstub/stub.h"
#include "rewind.h"

static void help(void)
{
    puts("usage: rewind gdb RUN STEP [--pid P | --kernel] [--port N] [--verify] [--history STEP]\n"
         "                  [--timeout S] [-- GDB-ARGS...]\n\n"
         "Debug process P (default: the job) at STEP of RUN with gdb: a throwaway\n"
         "machine paused at STEP, shown to gdb as a Linux process (its threads,\n"
         "registers, memory, the program read from the guest's filesystem there).\n"
         "continue, step, next, finish, breakpoints and watchpoints (hardware, at most\n"
         "3 at once) stop only in P; reverse-continue, reverse-stepi, reverse-step,\n"
         "reverse-next and reverse-finish replay the run from a step before. Nothing\n"
         "stored changes.\n\n"
         "  --pid P         the process (see rewind ps)\n"
         "  --kernel        the whole machine: the vCPU as one thread, the guest kernel's\n"
         "                  symbols, breakpoints anywhere (no reverse execution)\n"
         "  --port N        serve the stub alone on 127.0.0.1:N (target remote :N)\n"
         "  --verify        after the session, run on to the run's end and check the\n"
         "                  trace is the stored run's (exit 1 if not)\n"
         "  --history STEP  reverse execution goes back at most to STEP (default: the\n"
         "                  step P exec'd its program)\n"
         "  --timeout S     give up after S seconds of wall time (default: none)\n"
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

int cmd_gdb(int argc, char **argv)
{
    static const struct option opts[] = {
        {"pid", required_argument, 0, 'p'},     {"port", required_argument, 0, 'P'},
        {"verify", no_argument, 0, 'v'},        {"history", required_argument, 0, 'H'},
        {"timeout", required_argument, 0, 't'}, {"help", no_argument, 0, 'h'},
        {"kernel", no_argument, 0, 'k'},        {0, 0, 0, 0},
    };
    uint64_t pid = 0, port = 0, history = 0;
    int verify = 0, c, use_port = 0, kernel = 0;
    double timeout = 0;
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
        case 'H':
            if (cli_read_step(optarg, &history) < 0 || history == 0)
                return cli_error(2, "--history needs a step number: %s", optarg);
            break;
        case 't':
            if (cli_read_seconds(optarg, &timeout) < 0)
                return cli_error(2, "--timeout must be a positive number of seconds: %s", optarg);
            break;
        case 'h':
            help();
            return 0;
        default:
            return cli_error(2, "see rewind gdb --help");
        }
    }
    if (kernel && pid)
        return cli_error(2, "--pid and --kernel exclude each other");
    if (dd - optind != 2)
        return cli_error(2, "gdb needs RUN STEP (see rewind gdb --help)");
    const char *ref = argv[optind];
    uint64_t step;
    if (cli_read_step(argv[optind + 1], &step) < 0 || step == 0)
        return cli_error(2, "STEP must be a positive step number: %s", argv[optind + 1]);
    int rest = dd < argc ? dd + 1 : argc;
    rw_home *h = cli_open_home();
    if (!h)
        return RW_EINTERNAL;
    volatile sig_atomic_t *abort_flag = cli_abort_on_signals(timeout);
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
    char tmp[64] = "";
    if (!use_port && !kernel && rw_program_copy(h, ref, step, p32, exe, &o, tmp, &err) < 0) {
        if (tmp[0])
            unlink(tmp);
        rw_home_close(h);
        return cli_fail(&err);
    }
    struct gdbs_config cfg = {.h = h,
                              .ref = ref,
                              .step = step,
                              .pid = p32,
                              .history = history,
                              .max_singlesteps = 200000,
                              .abort = abort_flag,
                              .notes = stderr,
                              .exe = exe,
                              .exe_local = kernel   ? exe
                                           : tmp[0] ? tmp
                                                    : NULL,
                              .kernel = kernel};
    struct gdbs_result res;
    struct gdbs_session *s;
    if (gdbs_start(&cfg, &res, &s, &err) < 0) {
        if (tmp[0])
            unlink(tmp);
        rw_home_close(h);
        return cli_fail(&err);
    }
    int bound;
    int lfd = listen_on(use_port ? (int)port : 0, &bound);
    if (lfd < 0) {
        int e = errno;
        gdbs_end(s, 0, &err);
        if (tmp[0])
            unlink(tmp);
        rw_home_close(h);
        return cli_error(RW_EUSAGE, "cannot listen on 127.0.0.1:%d: %s", (int)port, strerror(e));
    }
    pid_t child = -1;
    int gstatus = 0;
    if (use_port) {
        fprintf(stderr, "rewind: gdb stub for %s %u at step %llu on 127.0.0.1:%d\n",
                kernel ? "the whole machine, vcpu" : "process", kernel ? 0 : p32,
                (unsigned long long)step, bound);
    } else {
        char target[64], *args[argc + 16];
        snprintf(target, sizeof(target), "target remote 127.0.0.1:%d", bound);
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
            fprintf(stderr, "rewind: cannot run gdb: %s (apt-get install gdb)\n", strerror(errno));
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
    if (cfd >= 0) {
        gdbs_serve(s, cfd);
        close(cfd);
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
    fprintf(stderr, "rewind: gdb session: %llu debug exits, %llu replays\n",
            (unsigned long long)res.debug_exits, (unsigned long long)res.replays);
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
