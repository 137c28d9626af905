/*
 * cmd_shell: `rewind shell RUN STEP [--pid P]`: an interactive shell inside
 * a fork of RUN at STEP, in process P's root, working directory and
 * environment, on a pty in the guest. Keystrokes reach the guest at idle
 * steps and are logged (src/run/session.h), so the session is kept as a run
 * of its own that `rewind replay` re-runs exactly.
 */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "explore/explore.h"
#include "run/session.h"
#include "cli/cli.h"
#include "cli/cliutil.h"

static void on_winch(int sig)
{
    (void)sig;
    session_winch = 1;
}

int cmd_shell(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"pid", required_argument, 0, 'p'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    uint64_t pid = 0, step;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (c) {
        case 'p':
            if (cli_parse_step(optarg, &pid) < 0 || pid == 0)
                return cli_error(2, "--pid needs a process id (see rewind ps): %s", optarg);
            break;
        case 'h':
            puts("usage: rewind shell RUN STEP [--pid P]\n\n"
                 "Open an interactive shell inside the VM of RUN at STEP, in process P's\n"
                 "(default: the job's) root, directory and environment, on a pty. Every\n"
                 "process of the run is frozen at STEP. Exit the shell to end the session;\n"
                 "it is kept as a run (its keystrokes included) that rewind replay re-runs.");
            return 0;
        default:
            return cli_error(2, "see rewind shell --help");
        }
    }
    if (optind != argc - 2)
        return cli_error(2, "shell needs RUN STEP (see rewind shell --help)");
    struct run_opts o;
    char base[64], err[1024];
    uint64_t steps;
    if (cli_derive(argv[optind], argv[optind + 1], 1, &o, base, &step, &steps) < 0)
        return 2;
    (void)steps;
    o.inspect_kind = "shell";
    o.inspect_at = step;
    o.inspect_pid = pid;
    o.session_fd = 0;
    o.from_run = base;
    o.from_step = step;
    o.quiet = 0;
    o.abort = cli_abort_on_signals(0);
    signal(SIGINT, SIG_IGN); /* ^C belongs to the guest (raw mode sends it as a byte) */
    struct sigaction sa = {.sa_handler = on_winch};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGWINCH, &sa, NULL);
    struct termios saved, raw;
    int tty = isatty(0) && tcgetattr(0, &saved) == 0;
    if (tty) {
        raw = saved;
        cfmakeraw(&raw);
        tcsetattr(0, TCSANOW, &raw);
    }
    struct run_result r;
    int rc = run_execute(&o, &r, err, sizeof(err));
    if (tty)
        tcsetattr(0, TCSANOW, &saved);
    if (rc < 0)
        return cli_error(r.exit_code == RUN_EXIT_INTERNAL ? 125 : 2, "%s", err);
    fflush(stdout);
    fprintf(stderr, "rewind: session kept as run %s (rewind replay %s re-runs it)\n", r.id, r.id);
    return r.inspect_status;
}
