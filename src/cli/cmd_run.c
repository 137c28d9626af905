/*
 * cmd_run: `rewind run --root ROOT [options] -- CMD ARGS...`.
 * Parses flags, runs, prints the closing line and exits with CMD's status.
 */

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "run/runner.h"
#include "run/spec.h"
#include "cli/cli.h"
#include "cli/cliutil.h"

#define ENV_MAX 1024


static void help(FILE *f)
{
    fputs("usage: rewind run --root ROOT [options] -- CMD [ARGS...]\n"
          "\n"
          "Run CMD inside a deterministic one-vCPU VM whose root filesystem is ROOT\n"
          "(a directory, a tarball or an erofs image), under a writable tmpfs overlay.\n"
          "\n"
          "options:\n"
          "  --root ROOT      root filesystem (required)\n"
          "  --cwd DIR        working directory inside the VM (default /)\n"
          "  -e KEY=VAL       set an environment variable (repeatable); the job sees\n"
          "                   only PATH, HOME and what -e sets, never the host's env\n"
          "  --mem MIB        guest RAM in MiB (default 512, 64..3072)\n"
          "  --timeout S      end the run after S seconds of wall time (outcome timeout)\n"
          "  --seed N         seed of the guest's entropy (default 0)\n"
          "  --epoch E        wall clock at boot: seconds since 1970 or YYYY-MM-DD[THH:MM:SS]\n"
          "                   (default: midnight UTC today)\n"
          "  --quantum NS     virtual nanoseconds per step (default 5000)\n"
          "  --name NAME      a name to refer to the run by (rewind ls/show/log NAME)\n"
          "  --console        copy the guest kernel's console to stderr\n"
          "  --state-log K    keep a hash of the registers at every step and of RAM every\n"
          "                   K steps (for `rewind diverge`; slows the run)\n"
          "  --schedule S     perturb the run with schedule S (0: none; odd: random,\n"
          "                   even: PCT change points), a pure function of seed, S, step\n"
          "  --schedule-from A, --schedule-until B\n"
          "                   perturb only steps in [A, B) (default: all)\n"
          "  --no-keyframes   keep no keyframes (no seek, cat, shell or fork for this run)\n"
          "  --keyframe-every N  a keyframe every N steps (default 4096) and where the\n"
          "                   job starts\n"
          "  -h, --help       this text\n"
          "\n"
          "Exit status: CMD's own status (128+N if killed by signal N), or 2 bad usage,\n"
          "119 guest error/stall, 120 no usable /dev/kvm, 121 bad root, 122 kernel missing,\n"
          "123 guest kernel panic, 124 timeout, 125 internal error, 126 CMD not executable,\n"
          "127 CMD not found in the root.\n",
          f);
}

static int env_set(char **env, int *n, const char *kv)
{
    const char *eq = strchr(kv, '=');
    if (!eq || eq == kv)
        return -1;
    size_t k = (size_t)(eq - kv) + 1;
    for (int i = 0; i < *n; i++)
        if (!strncmp(env[i], kv, k)) {
            env[i] = (char *)kv;
            return 0;
        }
    if (*n >= ENV_MAX)
        return -1;
    env[(*n)++] = (char *)kv;
    env[*n] = NULL;
    return 0;
}

/* Parse run options and the command into o. Returns 0, 1 after --help was
 * printed, or -1 after one error line. Used by run and check. */
#define ARGERR(...) (cli_error(2, __VA_ARGS__), -1)

int cli_run_args(int argc, char **argv, struct run_opts *o_out)
{
    static const struct option longopts[] = {
        {"root", required_argument, 0, 'r'},   {"cwd", required_argument, 0, 'c'},
        {"mem", required_argument, 0, 'm'},    {"timeout", required_argument, 0, 't'},
        {"seed", required_argument, 0, 's'},   {"epoch", required_argument, 0, 'E'},
        {"quantum", required_argument, 0, 'q'}, {"console", no_argument, 0, 'C'},
        {"help", no_argument, 0, 'h'},         {"test-hole", required_argument, 0, 'H'}, {"state-log", required_argument, 0, 'S'},
        {"name", required_argument, 0, 'N'},   {"no-keyframes", no_argument, 0, 'K'},
        {"keyframe-every", required_argument, 0, 'k'}, {"schedule", required_argument, 0, 'P'},
        {"schedule-from", required_argument, 0, 'A'}, {"schedule-until", required_argument, 0, 'B'},
        {0, 0, 0, 0},
    };
    static char *env[ENV_MAX + 1];
    int nenv = 0;
    env_set(env, &nenv, "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin");
    env_set(env, &nenv, "HOME=/root");
    struct run_opts o = {.cwd = "/", .mem_mib = 512, .quantum_ns = 5000};
    uint64_t schedule = 0, sfrom = 0, suntil = UINT64_MAX;
    o.epoch_s = spec_default_epoch((int64_t)time(NULL));
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "+e:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'r':
            o.root = optarg;
            break;
        case 'c':
            if (optarg[0] != '/')
                return ARGERR("--cwd must be an absolute path inside the VM: %s", optarg);
            o.cwd = optarg;
            break;
        case 'e':
            if (env_set(env, &nenv, optarg) < 0)
                return ARGERR("-e needs KEY=VALUE, got '%s'", optarg);
            break;
        case 'm':
            if (cli_parse_step(optarg, &o.mem_mib) < 0 || o.mem_mib < 64 || o.mem_mib > 3072)
                return ARGERR("--mem must be a number of MiB from 64 to 3072: %s", optarg);
            break;
        case 't': {
            char *end;
            o.timeout_s = strtod(optarg, &end);
            if (*end || o.timeout_s <= 0)
                return ARGERR("--timeout must be a positive number of seconds: %s", optarg);
            break;
        }
        case 's':
            if (cli_parse_step(optarg, &o.seed) < 0)
                return ARGERR("--seed must be a non-negative integer: %s", optarg);
            break;
        case 'E':
            if (spec_parse_epoch(optarg, &o.epoch_s) < 0)
                return ARGERR("--epoch must be seconds or YYYY-MM-DD[THH:MM:SS]: %s",
                                 optarg);
            break;
        case 'q':
            if (cli_parse_step(optarg, &o.quantum_ns) < 0 || o.quantum_ns == 0 ||
                o.quantum_ns > 1000000000)
                return ARGERR("--quantum must be 1..1000000000 ns: %s", optarg);
            break;
        case 'C':
            o.show_console = 1;
            break;
        case 'N':
            if (!*optarg || strchr(optarg, '/') || optarg[0] == '@' || optarg[0] == '.')
                return ARGERR("--name must be non-empty, without '/', not starting with "
                                    "'@' or '.': %s", optarg);
            o.name = optarg;
            break;
        case 'S':
            if (cli_parse_step(optarg, &o.state_log) < 0 || o.state_log == 0)
                return ARGERR("--state-log needs a RAM-hash interval in steps: %s", optarg);
            break;
        case 'K':
            o.no_keyframes = 1;
            break;
        case 'P':
            if (cli_parse_step(optarg, &schedule) < 0)
                return ARGERR("--schedule needs a schedule number: %s", optarg);
            break;
        case 'A':
            if (cli_parse_step(optarg, &sfrom) < 0)
                return ARGERR("--schedule-from needs a step: %s", optarg);
            break;
        case 'B':
            if (cli_parse_step(optarg, &suntil) < 0)
                return ARGERR("--schedule-until needs a step: %s", optarg);
            break;
        case 'k':
            if (cli_parse_step(optarg, &o.kf_every) < 0 || o.kf_every == 0)
                return ARGERR("--keyframe-every needs a positive number of steps: %s",
                                 optarg);
            break;
        case 'H':
            if (cli_test_hole(optarg, &o) < 0)
                return -1;
            break;
        case 'h':
            help(stdout);
            return 1;
        default:
            return ARGERR("see rewind run --help");
        }
    }
    if (!o.root)
        return ARGERR("run needs --root ROOT (see rewind run --help)");
    if (sfrom >= suntil)
        return ARGERR("--schedule-from must be below --schedule-until");
    if (schedule && sched_push(&o.sched, schedule, sfrom, suntil, sfrom,
                               suntil == UINT64_MAX ? 65536 : suntil - sfrom) < 0)
        return ARGERR("bad schedule window");
    if (optind >= argc)
        return ARGERR("run needs a command after -- (see rewind run --help)");
    o.argv = argv + optind;
    o.env = env;
    o.home = cli_home();
    o.kernel = cli_artifact("REWIND_KERNEL", "kernel/vmlinux");
    o.init = cli_artifact("REWIND_INIT", "rewind-init");
    *o_out = o;
    return 0;
}

int cmd_run(int argc, char **argv)
{
    struct run_opts o;
    int pr = cli_run_args(argc, argv, &o);
    if (pr != 0)
        return pr > 0 ? 0 : 2;
    o.abort = cli_abort_on_signals(o.timeout_s);
    struct run_result r;
    char err[1024];
    if (run_execute(&o, &r, err, sizeof(err)) < 0)
        return cli_error(r.exit_code, "%s", err);
    if (r.diverged)
        fprintf(stderr, "rewind: DETERMINISM VIOLATION: %s\n", r.divergence);
    if (r.outcome == PLATFORM_EXITED)
        fprintf(stderr, "rewind: run %s exited:%d after %llu steps, %.3fs virtual, %.3fs wall\n",
                r.id, r.exit_code, (unsigned long long)r.steps, r.virt_ns / 1e9, r.wall_s);
    else
        fprintf(stderr, "rewind: run %s %s after %llu steps, %.3fs virtual, %.3fs wall: %s\n", r.id,
                run_outcome_word(r.outcome), (unsigned long long)r.steps, r.virt_ns / 1e9,
                r.wall_s, r.message);
    return r.exit_code;
}
