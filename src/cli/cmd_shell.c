/*
 * cmd_shell: `rewind shell RUN STEP [--pid P]`: an interactive shell inside
 * a fork of RUN at STEP, in process P's root, working directory and
 * environment, on a pty in the guest. Keystrokes reach the guest at idle
 * steps and are logged (src/run/session.h), so the session is kept as a run
 * of its own that `rewind replay` re-runs exactly. --json: the session's
 * bytes go to stderr and the kept run is one JSON object on stdout at the
 * end (rewind serve's shell: docs/serve.md, "Answers").
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "cli.h"
#include "rewind.h"

static void on_winch(int sig)
{
    (void)sig;
    rw_shell_winch();
}

/* SIGINT (a ^C when the input is not the terminal, or kill -INT): the first
 * ends the session's input as at end of file, so the guest's shell exits
 * and the session is kept; a second aborts the run like --timeout. In raw
 * mode a ^C typed at the terminal is a byte for the guest, not a signal. */
static volatile sig_atomic_t *shell_abort;
static volatile sig_atomic_t interrupts;

static void on_interrupt(int sig)
{
    (void)sig;
    if (interrupts++ == 0) {
        rw_shell_end_input();
        return;
    }
    if (shell_abort)
        *shell_abort = 1;
    rw_interrupt();
}

static void help(void)
{
    puts("usage: rewind shell RUN STEP [--pid P] [--timeout S] [--json]\n\n"
         "Open an interactive shell inside the VM of RUN at STEP, in process P's\n"
         "(default: the job's) root, directory and environment, on a pty. Every\n"
         "process of the run is frozen at STEP. Exit the shell to end the session;\n"
         "it is kept as a run (its keystrokes included) that rewind replay re-runs.\n"
         "SIGINT ends the input as at end of file (the session is kept); a second\n"
         "SIGINT aborts.\n\n"
         "  --timeout S      end the session after S seconds of wall time (default\n"
         "                   14400; exit 124, nothing kept)\n"
         "  --max-trace MB, --max-disk MB   disk limits of the session (see rewind run)\n"
         "  --json           the session on stderr, then the kept run as one JSON object\n"
         "                   on stdout");
}

int cmd_shell(int argc, char **argv)
{
    struct rw_options o;
    uint64_t step;
    static const struct cli_derived d = {"shell", "pid,timeout,max-trace,max-disk", 2, "RUN STEP",
                                         help};
    rw_home *h;
    int json;
    int ex = cli_start(argc, argv, &d, &o, &step, &h, &json);
    if (ex >= 0)
        return ex;
    o.input_fd = 0;
    shell_abort = o.abort;
    struct sigaction si = {.sa_handler = on_interrupt};
    sigemptyset(&si.sa_mask);
    sigaction(SIGINT, &si, NULL);
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
        return cli_fail_json(&err, json); /* the README's codes: 2 usage, 120 no KVM, ... */
    fflush(stdout);
    cli_say("session kept as run %s (rewind replay %s re-runs it)", r.id, r.id);
    int status = interrupts ? 128 + SIGINT : r.inspect_status; /* as a shell ended by ^C */
    if (json)
        cli_json_answer(json_pack("{s:s,s:i}", "id", r.id, "status", status));
    return status;
}
