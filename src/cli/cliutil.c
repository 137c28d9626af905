/* cliutil: what the running commands share (declared in cli.h): the test
 * holes, the abort on signals and cli_start. */

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <poll.h>
#include <signal.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "cli_read.h"
#include "rewind_test.h"

/* The holes --test-hole opened: one command per process, so one set. */
static struct rw_test_knobs test_knobs;

int cli_test_hole(const char *name, struct rw_run_config *c)
{
    const char *t = getenv("REWIND_TEST_HOLES");
    if (!t || strcmp(t, "1") != 0) {
        fprintf(stderr, "rewind: --test-hole is only for rewind's own tests (it breaks "
                        "determinism on purpose)\n");
        return -1;
    }
    if (rw_test_hole(&test_knobs, name) < 0) {
        fprintf(stderr,
                "rewind: unknown test hole '%s' (host-tsc, timer-at-host-exit, "
                "host-rng, kf-no-io-completion, restore-no-tlb-flush, guest-hostile, "
                "refuse-go-on, mem-host-time, mem-window-host-time, mem-stall-host-time, "
                "wait-host-time, fault-host-time, fault-at-host-exit)\n",
                name);
        return -1;
    }
    c->test = &test_knobs;
    return 0;
}

static void stdio_output(void *ctx, enum rw_stream s, const void *buf, size_t n)
{
    (void)ctx;
    fflush(stdout); /* whatever the command printed before comes first */
    if (s == RW_NOTICE) {
        char line[1600];
        int k = snprintf(line, sizeof(line), "rewind: %.*s\n", (int)n, (const char *)buf);
        cli_out_all(2, line, k < 0 ? 0 : (size_t)k < sizeof(line) ? (size_t)k : sizeof(line) - 1);
        return;
    }
    cli_out_all(s == RW_STDOUT ? 1 : 2, buf, n);
}

double cli_default_timeout(const char *cmd)
{
    /* A look at a file ends in seconds; a shell is a person's session. */
    return !strcmp(cmd, "cat") ? 600 : !strcmp(cmd, "shell") ? 14400 : 0;
}

int cli_read_limit(const char *flag, const char *arg, uint64_t *mb)
{
    if (cli_read_step(arg, mb) < 0 || *mb == 0 || *mb > (1ull << 30))
        return cli_error(-1, "%s needs a number of MiB from 1 to %llu: %s", flag, 1ull << 30, arg);
    return 0;
}

const struct rw_observer cli_stdio = {
    .output = stdio_output, .ctx = NULL, .progress = cli_progress};

static void stdio_output_json(void *ctx, enum rw_stream s, const void *buf, size_t n)
{
    stdio_output(ctx, s == RW_STDOUT ? RW_STDERR : s, buf, n);
}

const struct rw_observer cli_stdio_json = {
    .output = stdio_output_json, .ctx = NULL, .progress = cli_progress};

void cli_json_answer(json_t *obj)
{
    char *s = obj ? json_dumps(obj, JSON_COMPACT) : NULL;
    json_decref(obj);
    if (!s) {
        cli_say("cannot encode the JSON answer (out of memory, or text not UTF-8)");
        return;
    }
    printf("%s\n", s);
    fflush(stdout);
    free(s);
}

int cli_fail_json(const struct rw_error *err, int json)
{
    if (json)
        cli_json_answer(json_pack("{s:s,s:i}", "error", err->msg, "code", err->code));
    return cli_fail(err);
}

rw_home *cli_open_home(void)
{
    rw_home *h;
    struct rw_error err;
    if (rw_home_open(NULL, &h, &err) < 0) {
        cli_say("%s", err.msg);
        return NULL;
    }
    return h;
}

int cli_fail(const struct rw_error *err)
{
    cli_say("%s", err->msg);
    return err->code;
}

/* Every option of the commands that start from a stored run. */
static const struct option derived_opts[] = {
    {"from", required_argument, 0, 'f'},
    {"verify-restores", required_argument, 0, 'v'},
    {"timeout", required_argument, 0, 't'},
    {"test-hole", required_argument, 0, 'H'},
    {"schedule", required_argument, 0, 'P'},
    {"schedule-until", required_argument, 0, 'B'},
    {"name", required_argument, 0, 'N'},
    {"pid", required_argument, 0, 'p'},
    {"max-trace", required_argument, 0, 'T'},
    {"max-disk", required_argument, 0, 'D'},
    {"json", no_argument, 0, 'j'},
    {"help", no_argument, 0, 'h'},
};
#define NDERIVED (sizeof(derived_opts) / sizeof(derived_opts[0]))

static int accepts(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list; (p = strstr(p, name)); p += n)
        if ((p == list || p[-1] == ',') && (p[n] == ',' || !p[n]))
            return 1;
    return 0;
}

static int parse(int argc, char **argv, const struct cli_derived *d, struct rw_options *o,
                 double *timeout_s, uint64_t *step, int *json)
{
    const char *cmd = d->cmd, *accepted = d->accepted;
    struct option longopts[NDERIVED + 1];
    size_t n = 0;
    for (size_t i = 0; i < NDERIVED; i++)
        if (!strcmp(derived_opts[i].name, "help") ||
            (!strcmp(derived_opts[i].name, "json") ? json != NULL
                                                   : accepts(accepted, derived_opts[i].name)))
            longopts[n++] = derived_opts[i];
    memset(&longopts[n], 0, sizeof(longopts[n]));
    rw_options_init(o);
    o->observer = cli_stdio;
    *timeout_s = cli_default_timeout(cmd);
    struct rw_run_config holes;
    memset(&holes, 0, sizeof(holes));
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (c) {
        case 'f':
            if (cli_read_step(optarg, &o->from_step) < 0)
                return cli_error(-1, "--from needs a step number: %s", optarg);
            o->from = 1;
            break;
        case 'v':
            if (cli_read_step(optarg, &o->verify_restores) < 0 || !o->verify_restores)
                return cli_error(-1, "--verify-restores needs a positive count: %s", optarg);
            break;
        case 't':
            if (cli_read_seconds(optarg, timeout_s) < 0)
                return cli_error(-1, "--timeout must be a positive number of seconds: %s", optarg);
            break;
        case 'H':
            if (cli_test_hole(optarg, &holes) < 0)
                return -1;
            if (holes.test->holes)
                return cli_error(-1, "%s takes only the keyframe test holes", cmd);
            o->test = holes.test;
            break;
        case 'P':
            if (cli_read_step(optarg, &o->schedule) < 0)
                return cli_error(-1, "--schedule needs a schedule number: %s", optarg);
            break;
        case 'B':
            if (cli_read_step(optarg, &o->schedule_until) < 0)
                return cli_error(-1, "--schedule-until needs a step: %s", optarg);
            break;
        case 'N':
            if (!*optarg || strchr(optarg, '/') || optarg[0] == '@' || optarg[0] == '.')
                return cli_error(-1,
                                 "--name must be non-empty, without '/', not starting with "
                                 "'@' or '.': %s",
                                 optarg);
            o->name = optarg;
            break;
        case 'T':
            if (cli_read_limit("--max-trace", optarg, &o->max_trace_mb) < 0)
                return -1;
            break;
        case 'D':
            if (cli_read_limit("--max-disk", optarg, &o->max_disk_mb) < 0)
                return -1;
            break;
        case 'p':
            if (cli_read_step(optarg, &o->pid) < 0 || o->pid == 0)
                return cli_error(-1, "--pid needs a process id (see rewind ps): %s", optarg);
            break;
        case 'j':
            *json = 1;
            o->observer = cli_stdio_json;
            break;
        case 'h':
            d->help();
            return 1;
        default:
            return cli_error(-1, "see rewind %s --help", cmd);
        }
    }
    if (optind != argc - d->noperands)
        return cli_error(-1, "%s needs %s (see rewind %s --help)", cmd, d->operands, cmd);
    if (d->noperands >= 3 && !*argv[optind + 2])
        return cli_error(-1, "PATH is empty");
    const char *a = d->noperands >= 2 ? argv[optind + 1] : NULL;
    if (a && (cli_read_step(a, step) < 0 || *step == 0))
        return cli_error(-1, "STEP must be a positive step number: %s", a);
    return 0;
}

int cli_start(int argc, char **argv, const struct cli_derived *d, struct rw_options *o,
              uint64_t *step, rw_home **h, int *json)
{
    double timeout;
    if (json)
        *json = 0;
    int pr = parse(argc, argv, d, o, &timeout, step, json);
    if (pr != 0)
        return pr > 0 ? 0 : RW_EUSAGE;
    *h = cli_open_home();
    if (!*h)
        return RW_EINTERNAL;
    o->abort = cli_abort_on_signals(timeout);
    return -1;
}
