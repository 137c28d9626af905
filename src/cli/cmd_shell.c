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

#include "../run/explore.h"
#include "../run/session.h"
#include "cli.h"
#include "cliutil.h"

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
    if (cli_parse_step(argv[optind + 1], &step) < 0 || step == 0)
        return cli_error(2, "STEP must be a positive step number: %s", argv[optind + 1]);
    char dir[4096], err[1024];
    json_t *m = cli_load_run(argv[optind], dir, sizeof(dir));
    if (!m)
        return 2;
    uint64_t steps = (uint64_t)json_integer_value(json_object_get(m, "steps"));
    json_decref(m);
    if (step >= steps)
        return cli_error(2, "run %s ends at step %llu; STEP must be below that", argv[optind],
                         (unsigned long long)steps);
    const char *base = strrchr(dir, '/');
    base = base ? base + 1 : dir;
    uint64_t first = explore_job_exec(cli_home(), base);
    if (!first)
        return cli_error(2, "run %s never executed its command: nothing to inspect", argv[optind]);
    if (step < first)
        return cli_error(2, "step %llu is before the job's command runs (step %llu); pick a step "
                            "from %llu on", (unsigned long long)step, (unsigned long long)first,
                         (unsigned long long)first);
    struct run_opts o;
    if (explore_opts(cli_home(), base, cli_artifact("REWIND_KERNEL", "kernel/vmlinux"),
                     cli_artifact("REWIND_INIT", "rewind-init"), &o, NULL, err, sizeof(err)) < 0)
        return cli_error(2, "cannot open a shell in run %s: %s", argv[optind], err);
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
