/*
 * cmd_shell: `rewind shell RUN STEP [--pid P]`: an interactive shell inside
 * a fork of RUN at STEP, in process P's root, working directory and
 * environment, on a pty in the guest. Keystrokes reach the guest at idle
 * steps and are logged (src/run/session.h), so the session is kept as a run
 * of its own that `rewind replay` re-runs exactly.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "cli/cli.h"
#include "rewind.h"

static void on_winch(int sig)
{
    (void)sig;
    rw_shell_winch();
}

static void help(void)
{
    puts("usage: rewind shell RUN STEP [--pid P]\n\n"
         "Open an interactive shell inside the VM of RUN at STEP, in process P's\n"
         "(default: the job's) root, directory and environment, on a pty. Every\n"
         "process of the run is frozen at STEP. Exit the shell to end the session;\n"
         "it is kept as a run (its keystrokes included) that rewind replay re-runs.");
}

int cmd_shell(int argc, char **argv)
{
    struct rw_options o;
    uint64_t step;
    static const struct cli_derived d = {"shell", "pid", 2, "RUN STEP", help};
    rw_home *h;
    int ex = cli_start(argc, argv, &d, &o, &step, &h);
    if (ex >= 0)
        return ex;
    o.input_fd = 0;
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
    struct rw_result r;
    struct rw_error err;
    int rc = rw_shell(h, argv[optind], step, &o, &r, &err);
    rw_home_close(h);
    if (tty)
        tcsetattr(0, TCSANOW, &saved);
    if (rc < 0)
        return cli_fail(&err); /* the README's codes: 2 usage, 120 no KVM, ... */
    fflush(stdout);
    fprintf(stderr, "rewind: session kept as run %s (rewind replay %s re-runs it)\n", r.id, r.id);
    return r.inspect_status;
}
