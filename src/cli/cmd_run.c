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

#include <jansson.h>

#include "cli.h"
#include "cli_read.h"
#include "rewind.h"

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
          "  --mem MIB        guest RAM in MiB (default 512, from 64 to what the host has\n"
          "                   available; untouched guest memory costs the host nothing)\n"
          "  --timeout S      end the run after S seconds of wall time (outcome timeout)\n"
          "  --max-trace MB   end the run when its trace passes MB MiB (outcome limit;\n"
          "                   default 4096)\n"
          "  --max-disk MB    end the run when its trace, keyframes and new pages pass\n"
          "                   MB MiB (outcome limit; default 16384)\n"
          "  --spin-limit S   end the run as `spin` when the guest makes no step for S\n"
          "                   seconds of wall time, naming the process, its mode, the\n"
          "                   instruction and function (default 60; 0: never)\n"
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
          "  --preempt memory|off  memory-access schedule points (part of the spec): in a\n"
          "                   process with threads, a thread's first access to a page\n"
          "                   another thread touched is a step, so schedules can switch\n"
          "                   threads there and a spin-wait progresses (default: off;\n"
          "                   check: memory; docs/determinism.md)\n"
          "  --cpus N         the job sees N online CPUs (1..64, default 1; part of the\n"
          "                   spec): nproc, sched_getaffinity, /proc/cpuinfo and\n"
          "                   /sys/devices/system/cpu say N, one vCPU runs them in turn\n"
          "  --dirorder N     the guest kernel returns directory entries in an order drawn\n"
          "                   from N, on every filesystem (docs/nix.md)\n"
          "  --track-writes GLOB  record each write to a regular file whose path matches\n"
          "                   GLOB ('*' matches '/' too) for `rewind blame`\n"
          "  --node NAME=COMMAND  a node (repeatable, up to 16; part of the spec): COMMAND\n"
          "                   runs under /bin/sh -c, before the job, in a network and\n"
          "                   host name of its own: NAME at 10.77.0.N (N: its place in the\n"
          "                   list), the job at 10.77.0.254 ('job'); every name resolves\n"
          "                   (docs/faults.md)\n"
          "  --nodes FILE     the nodes from a JSON file: {\"nodes\": [{\"name\": NAME,\n"
          "                   \"run\": COMMAND, \"restart\": COMMAND}, ...]}, \"restart\"\n"
          "                   optional (docs/formats.md)\n"
          "  --restart NAME=COMMAND  node NAME's restart command (one per node at most;\n"
          "                   part of the spec): after a kill or power fault of NAME,\n"
          "                   COMMAND runs under /bin/sh -c in the node's network and host\n"
          "                   name, 10 ms to 1.3 s of virtual time later (a schedule\n"
          "                   decision)\n"
          "  --faults KINDS   inject faults into the nodes at steps of the schedule's\n"
          "                   window: kill (SIGKILL to a node's processes; then its\n"
          "                   --restart, if any), pause (SIGSTOP for 10 ms..1.3 s of\n"
          "                   virtual time, then SIGCONT), partition (the node's link\n"
          "                   drops every packet for 10 ms..1.3 s), clock (the node's wall\n"
          "                   clock steps 1..128 s forward or back; its monotonic clocks do\n"
          "                   not), net (for 10 ms..1.3 s the node's link delays every\n"
          "                   packet 1..128 ms, or loses, duplicates or reorders 10..80%\n"
          "                   of its packets), disk (for 10 ms..1.3 s the node's writes\n"
          "                   and syncs of files matching --disk-glob fail with EIO, or\n"
          "                   its writes with ENOSPC, or its syncs with EIO), split (for\n"
          "                   10 ms..1.3 s the nodes form two sides that cannot reach\n"
          "                   each other; the job reaches both; needs two nodes), power\n"
          "                   (a kill whose node also loses its writes since their file's\n"
          "                   last fsync, on files matching --disk-glob); a list or\n"
          "                   `all`. Each is a schedule decision (seed, schedule, step):\n"
          "                   needs --node and, on run, --schedule S (part of the spec;\n"
          "                   docs/faults.md)\n"
          "  --fault-rate N   faults per schedule on average (1..1000, default 2)\n"
          "  --disk-glob GLOB the files disk faults fail and power cuts undo the unsynced\n"
          "                   writes of: a glob of the path ('*' matches '/' too, '?' one\n"
          "                   byte; default '*', every file); needs --faults with disk or\n"
          "                   power (part of the spec)\n"
          "  --collect PATH   keep the files under PATH (in the job's root, after the job)\n"
          "                   with the run, for `rewind diff --files`\n"
          "  --expect P       a property of the run (repeatable; part of the spec):\n"
          "                   exit=N, outcome=WORD, 'output~ERE' (the job's output\n"
          "                   matches the POSIX extended regex), 'file:/PATH~ERE' (the\n"
          "                   file in the VM after the job matches)\n"
          "  --property CMD   run `sh -c CMD` in the VM after the job ends (same root,\n"
          "                   cwd, env); exit status 0 passes (its output kept apart)\n"
          "  -h, --help       this text\n"
          "\n"
          "With properties, each one's verdict is printed after the run, and a failing\n"
          "one makes the exit status 1 when CMD's own would be 0.\n"
          "\n"
          "Exit status: CMD's own status (128+N if killed by signal N), or 2 bad usage,\n"
          "119 guest error/stall, 120 no usable /dev/kvm, 121 bad root, 122 kernel missing,\n"
          "123 guest kernel panic, 124 timeout, 125 internal error, 126 CMD not executable,\n"
          "127 CMD not found in the root, 118 a disk limit (--max-trace, --max-disk) hit,\n"
          "117 spin (no step for --spin-limit seconds).\n",
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

#define ARGERR(...) (cli_error(2, __VA_ARGS__), -1)

/* What cli_run_args keeps across its option helpers. */
struct run_argv {
    struct rw_run_config *c;
    char **env, **expect, **nodes, **restarts;
    int nenv, nexpect, nnodes, nrestarts;
    double *timeout_s;
};

#define RUN_OPT_OTHER 2 /* an option helper's "not mine" */

static const struct option run_longopts[] = {
    {"root", required_argument, 0, 'r'},
    {"cwd", required_argument, 0, 'c'},
    {"mem", required_argument, 0, 'm'},
    {"timeout", required_argument, 0, 't'},
    {"seed", required_argument, 0, 's'},
    {"epoch", required_argument, 0, 'E'},
    {"quantum", required_argument, 0, 'q'},
    {"console", no_argument, 0, 'C'},
    {"help", no_argument, 0, 'h'},
    {"test-hole", required_argument, 0, 'H'},
    {"state-log", required_argument, 0, 'S'},
    {"name", required_argument, 0, 'N'},
    {"no-keyframes", no_argument, 0, 'K'},
    {"keyframe-every", required_argument, 0, 'k'},
    {"schedule", required_argument, 0, 'P'},
    {"schedule-from", required_argument, 0, 'A'},
    {"schedule-until", required_argument, 0, 'B'},
    {"max-trace", required_argument, 0, 'T'},
    {"max-disk", required_argument, 0, 'D'},
    {"spin-limit", required_argument, 0, 'L'},
    {"expect", required_argument, 0, 'X'},
    {"property", required_argument, 0, 'Y'},
    {"dirorder", required_argument, 0, 'O'},
    {"track-writes", required_argument, 0, 'W'},
    {"collect", required_argument, 0, 'G'},
    {"preempt", required_argument, 0, 'M'},
    {"cpus", required_argument, 0, 'U'},
    {"node", required_argument, 0, 'n'},
    {"nodes", required_argument, 0, 'F'},
    {"faults", required_argument, 0, 'f'},
    {"fault-rate", required_argument, 0, 'R'},
    {"restart", required_argument, 0, 'Z'},
    {"disk-glob", required_argument, 0, 'g'},
    {0, 0, 0, 0},
};

/* The machine's and the run's own options: 0, -1 after an error line, or
 * RUN_OPT_OTHER. */
static int run_opt_machine(struct run_argv *a, int ch)
{
    struct rw_run_config *cp = a->c;
    switch (ch) {
    case 'r':
        cp->root = optarg;
        return 0;
    case 'c':
        if (optarg[0] != '/')
            return ARGERR("--cwd must be an absolute path inside the VM: %s", optarg);
        cp->cwd = optarg;
        return 0;
    case 'e':
        if (env_set(a->env, &a->nenv, optarg) < 0)
            return ARGERR("-e needs KEY=VALUE, got '%s'", optarg);
        return 0;
    case 'm':
        if (cli_read_step(optarg, &cp->mem_mib) < 0 || cp->mem_mib < rw_defaults.mem_min_mib ||
            cp->mem_mib > rw_defaults.mem_max_mib)
            return ARGERR("--mem must be a number of MiB from %llu to %llu: %s",
                          (unsigned long long)rw_defaults.mem_min_mib,
                          (unsigned long long)rw_defaults.mem_max_mib, optarg);
        return 0;
    case 't':
        if (cli_read_seconds(optarg, a->timeout_s) < 0)
            return ARGERR("--timeout must be a positive number of seconds: %s", optarg);
        return 0;
    case 's':
        if (cli_read_step(optarg, &cp->seed) < 0)
            return ARGERR("--seed must be a non-negative integer: %s", optarg);
        return 0;
    case 'E':
        if (rw_parse_epoch(optarg, &cp->epoch_s) < 0)
            return ARGERR("--epoch must be seconds or YYYY-MM-DD[THH:MM:SS]: %s", optarg);
        return 0;
    case 'q':
        if (cli_read_step(optarg, &cp->quantum_ns) < 0 || cp->quantum_ns == 0 ||
            cp->quantum_ns > 1000000000)
            return ARGERR("--quantum must be 1..1000000000 ns: %s", optarg);
        return 0;
    case 'C':
        cp->show_console = 1;
        return 0;
    case 'N':
        if (!*optarg || strchr(optarg, '/') || optarg[0] == '@' || optarg[0] == '.')
            return ARGERR("--name must be non-empty, without '/', not starting with "
                          "'@' or '.': %s",
                          optarg);
        cp->name = optarg;
        return 0;
    case 'S':
        if (cli_read_step(optarg, &cp->state_log) < 0 || cp->state_log == 0)
            return ARGERR("--state-log needs a RAM-hash interval in steps: %s", optarg);
        return 0;
    case 'K':
        cp->no_keyframes = 1;
        return 0;
    case 'k':
        if (cli_read_step(optarg, &cp->keyframe_every) < 0 || cp->keyframe_every == 0)
            return ARGERR("--keyframe-every needs a positive number of steps: %s", optarg);
        return 0;
    case 'L': {
        char *end;
        cp->spin_limit_s = strtod(optarg, &end);
        if (end == optarg || *end || !(cp->spin_limit_s >= 0) || cp->spin_limit_s > 1e9)
            return ARGERR("--spin-limit must be a number of seconds (0: never): %s", optarg);
        return 0;
    }
    default:
        return RUN_OPT_OTHER;
    }
}

/* The job's inputs, perturbation, properties and limits. */
static int add_node(struct run_argv *a, char *spec)
{
    if (a->nnodes >= (int)RW_NODES_MAX)
        return ARGERR("--node: at most %d nodes", RW_NODES_MAX);
    a->nodes[a->nnodes++] = spec;
    a->nodes[a->nnodes] = NULL;
    a->c->nodes = a->nodes;
    return 0;
}

/* --restart NAME=COMMAND: counted here; rw_record checks each against the
 * nodes (one line naming the entry). */
static int add_restart(struct run_argv *a, char *spec)
{
    if (a->nrestarts >= (int)RW_NODES_MAX)
        return ARGERR("--restart: at most %d, one per node", RW_NODES_MAX);
    a->restarts[a->nrestarts++] = spec;
    a->restarts[a->nrestarts] = NULL;
    a->c->restarts = a->restarts;
    return 0;
}

/* --nodes FILE: {"nodes": [{"name": NAME, "run": COMMAND, "restart":
 * COMMAND}, ...]} (docs/formats.md, "Nodes file"; "restart" optional), each
 * entry as --node NAME=COMMAND and --restart NAME=COMMAND. */
static int nodes_file(struct run_argv *a, const char *path)
{
    json_error_t je;
    json_t *o = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
    if (!o && je.line > 0)
        return ARGERR("--nodes %s: %s (line %d)", path, je.text, je.line);
    if (!o)
        return ARGERR("--nodes %s: %s", path, je.text);
    json_t *arr = json_object_get(o, "nodes"), *e;
    size_t i;
    int rc = 0;
    if (!json_is_array(arr) || !json_array_size(arr))
        rc = ARGERR("--nodes %s: needs {\"nodes\": [{\"name\": ..., \"run\": ...}, ...]}", path);
    json_array_foreach(arr, i, e)
    {
        const char *name = json_string_value(json_object_get(e, "name"));
        const char *run = json_string_value(json_object_get(e, "run"));
        json_t *rj = json_object_get(e, "restart");
        const char *rs = json_string_value(rj);
        char *s = NULL, *r = NULL;
        if (rc == 0 && (!name || !run || strchr(name, '=') || (rj && !rs) ||
                        json_object_size(e) != (rj ? 3u : 2u))) {
            rc = ARGERR("--nodes %s: entry %zu needs exactly a string \"name\" (no '='), a "
                        "string \"run\" and optionally a string \"restart\"",
                        path, i + 1);
        } else if (rc == 0 && (asprintf(&s, "%s=%s", name, run) < 0 ||
                               (rs && asprintf(&r, "%s=%s", name, rs) < 0))) {
            rc = ARGERR("out of memory");
        } else if (rc == 0) {
            rc = add_node(a, s); /* kept for the process's life, as optarg is */
            if (rc == 0 && r)
                rc = add_restart(a, r);
        }
    }
    json_decref(o);
    return rc;
}

static int run_opt_job(struct run_argv *a, int ch)
{
    struct rw_run_config *cp = a->c;
    switch (ch) {
    case 'P':
        if (cli_read_step(optarg, &cp->schedule) < 0)
            return ARGERR("--schedule needs a schedule number: %s", optarg);
        return 0;
    case 'A':
        if (cli_read_step(optarg, &cp->schedule_from) < 0)
            return ARGERR("--schedule-from needs a step: %s", optarg);
        return 0;
    case 'B':
        if (cli_read_step(optarg, &cp->schedule_until) < 0)
            return ARGERR("--schedule-until needs a step: %s", optarg);
        return 0;
    case 'n':
        return add_node(a, optarg);
    case 'F':
        return nodes_file(a, optarg);
    case 'Z':
        return add_restart(a, optarg);
    case 'f':
        cp->faults = optarg;
        return 0;
    case 'g': /* checked with --faults (rw_record, one line) */
        cp->disk_glob = optarg;
        return 0;
    case 'R': {
        uint64_t n;
        if (cli_read_step(optarg, &n) < 0 || n < 1 || n > 1000)
            return ARGERR("--fault-rate takes 1 to 1000 faults per schedule: %s", optarg);
        cp->fault_rate = (unsigned)n;
        return 0;
    }
    case 'X':
        if (a->nexpect >= RW_PROPS_MAX - 1)
            return ARGERR("at most %d --expect", RW_PROPS_MAX - 1);
        a->expect[a->nexpect++] = optarg;
        a->expect[a->nexpect] = NULL;
        cp->expect = a->expect;
        return 0;
    case 'Y':
        if (!*optarg)
            return ARGERR("--property needs a command");
        cp->property = optarg;
        return 0;
    case 'O':
        if (cli_read_step(optarg, &cp->dirorder) < 0)
            return ARGERR("--dirorder must be a non-negative integer: %s", optarg);
        cp->dirorder_on = 1;
        return 0;
    case 'W':
        cp->track_writes = optarg;
        return 0;
    case 'G':
        cp->collect = optarg;
        return 0;
    case 'M':
        if (strcmp(optarg, "memory") && strcmp(optarg, "off"))
            return ARGERR("--preempt takes memory or off: %s", optarg);
        cp->preempt = optarg;
        return 0;
    case 'U': {
        uint64_t n;
        if (cli_read_step(optarg, &n) < 0 || n < 1 || n > RW_CPUS_MAX)
            return ARGERR("--cpus takes 1 to %u: %s", RW_CPUS_MAX, optarg);
        cp->cpus = (unsigned)n;
        return 0;
    }
    case 'H':
        if (cli_test_hole(optarg, cp) < 0)
            return -1;
        return 0;
    case 'T':
        if (cli_read_limit("--max-trace", optarg, &cp->max_trace_mb) < 0)
            return -1;
        return 0;
    case 'D':
        if (cli_read_limit("--max-disk", optarg, &cp->max_disk_mb) < 0)
            return -1;
        return 0;
    default:
        return RUN_OPT_OTHER;
    }
}

/* Parse run options and the command into o. Returns 0, 1 after --help was
 * printed, or -1 after one error line. Used by run and check. */
int cli_run_args(int argc, char **argv, struct rw_run_config *out, double *timeout_s)
{
    static char *env[ENV_MAX + 1];
    static char *expect[RW_PROPS_MAX + 1];
    static char *nodes[RW_NODES_MAX + 1], *restarts[RW_NODES_MAX + 1];
    struct rw_run_config c;
    rw_run_config_init(&c);
    struct run_argv a = {.c = &c,
                         .env = env,
                         .expect = expect,
                         .nodes = nodes,
                         .restarts = restarts,
                         .timeout_s = timeout_s};
    for (char **e = c.env; *e; e++)
        env_set(env, &a.nenv, *e);
    *timeout_s = 0;
    int ch;
    optind = 1;
    while ((ch = getopt_long(argc, argv, "+e:h", run_longopts, NULL)) != -1) {
        int r = run_opt_machine(&a, ch);
        if (r == RUN_OPT_OTHER)
            r = run_opt_job(&a, ch);
        if (r == RUN_OPT_OTHER && ch == 'h') {
            help(stdout);
            return 1;
        }
        if (r == RUN_OPT_OTHER)
            return ARGERR("see rewind run --help");
        if (r < 0)
            return -1;
    }
    if (!c.root)
        return ARGERR("run needs --root ROOT (see rewind run --help)");
    if (c.schedule_from >= c.schedule_until)
        return ARGERR("--schedule-from must be below --schedule-until");
    if (optind >= argc)
        return ARGERR("run needs a command after -- (see rewind run --help)");
    c.argv = argv + optind;
    c.env = env;
    c.observer = cli_stdio;
    *out = c;
    return 0;
}

int cmd_run(int argc, char **argv)
{
    struct rw_run_config c;
    double timeout;
    int pr = cli_run_args(argc, argv, &c, &timeout);
    if (pr != 0)
        return pr > 0 ? 0 : 2;
    rw_home *h = cli_open_home();
    if (!h)
        return RW_EINTERNAL;
    c.abort = cli_abort_on_signals(timeout);
    struct rw_result r;
    struct rw_error err;
    if (c.faults && !c.schedule) {
        rw_home_close(h);
        return cli_error(2, "--faults on run needs --schedule S (schedule 0 injects none; "
                            "rewind check draws schedules itself)");
    }
    int rc = rw_record(h, &c, &r, &err);
    struct rw_prop_verdict pv[RW_PROPS_MAX];
    int npv = 0, pfail = 0;
    if (rc == 0 && (c.expect || c.property) &&
        rw_props_judge(h, r.id, pv, RW_PROPS_MAX, &npv, &err) < 0) {
        rw_home_close(h);
        return cli_fail(&err);
    }
    rw_home_close(h);
    if (rc < 0)
        return cli_fail(&err);
    /* cli_say: a full stderr pipe cannot keep a timed-out run from exiting */
    for (int i = 0; i < npv; i++) {
        cli_say("property %s: %s (%s)", pv[i].what, pv[i].passed ? "passed" : "FAILED",
                pv[i].detail);
        pfail |= !pv[i].passed;
    }
    if (r.diverged)
        cli_say("DETERMINISM VIOLATION: %s", r.divergence);
    if (r.outcome == RW_EXITED)
        cli_say("run %s exited:%d after %llu steps, %.3fs virtual, %.3fs wall", r.id, r.exit_code,
                (unsigned long long)r.steps, r.virt_ns / 1e9, r.wall_s);
    else
        cli_say("run %s %s after %llu steps, %.3fs virtual, %.3fs wall: %s", r.id,
                rw_outcome_word(r.outcome), (unsigned long long)r.steps, r.virt_ns / 1e9, r.wall_s,
                r.message);
    return pfail && r.exit_code == 0 ? 1 : r.exit_code;
}
