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

#include "cli/cli.h"
#include "cli/cli_read.h"

int cli_test_hole(const char *name, struct rw_run_config *c)
{
    const char *t = getenv("REWIND_TEST_HOLES");
    if (!t || strcmp(t, "1") != 0) {
        fprintf(stderr, "rewind: --test-hole is only for rewind's own tests (it breaks "
                        "determinism on purpose)\n");
        return -1;
    }
    if (rw_test_hole(c, name) < 0) {
        fprintf(stderr,
                "rewind: unknown test hole '%s' (host-tsc, timer-at-host-exit, "
                "host-rng, kf-no-io-completion, restore-no-tlb-flush, guest-hostile, "
                "refuse-go-on)\n",
                name);
        return -1;
    }
    return 0;
}

static volatile sig_atomic_t abort_flag;

static void on_abort_signal(int sig)
{
    (void)sig;
    abort_flag = 1;
    rw_interrupt();
}

volatile sig_atomic_t *cli_abort_on_signals(double timeout_s)
{
    struct sigaction sa = {.sa_handler = on_abort_signal};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGALRM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL); /* a closed terminal: the same clean end */
    signal(SIGPIPE, SIG_IGN);
    if (timeout_s > 0) {
        struct itimerval it = {0};
        it.it_value.tv_sec = (time_t)timeout_s;
        it.it_value.tv_usec = (suseconds_t)((timeout_s - (double)(time_t)timeout_s) * 1e6);
        setitimer(ITIMER_REAL, &it, NULL);
    }
    return &abort_flag;
}

/* Write n bytes to fd, unbuffered. A reader that stops reading (a full
 * pipe) must not keep the run past --timeout or SIGINT: wait in poll slices
 * and write at most a pipe buffer at once, so no write blocks for long, and
 * once the abort flag is set, drop what fd cannot take now. A closed pipe
 * (SIGPIPE ignored) drops the rest. */
static void out_all(int fd, const char *b, size_t n)
{
    while (n > 0) {
        struct pollfd pf = {.fd = fd, .events = POLLOUT};
        int r = poll(&pf, 1, abort_flag ? 0 : 200);
        if (r == 0 && abort_flag)
            return;
        if (r < 0 && errno != EINTR)
            return;
        if (r <= 0)
            continue;
        ssize_t w = write(fd, b, n < 4096 ? n : 4096);
        if (w < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (w <= 0)
            return;
        b += w;
        n -= (size_t)w;
    }
}

static void stdio_output(void *ctx, enum rw_stream s, const void *buf, size_t n)
{
    (void)ctx;
    fflush(stdout); /* whatever the command printed before comes first */
    if (s == RW_NOTICE) {
        char line[1600];
        int k = snprintf(line, sizeof(line), "rewind: %.*s\n", (int)n, (const char *)buf);
        out_all(2, line, k < 0 ? 0 : (size_t)k < sizeof(line) ? (size_t)k : sizeof(line) - 1);
        return;
    }
    out_all(s == RW_STDOUT ? 1 : 2, buf, n);
}

void cli_vsay(const char *fmt, va_list ap)
{
    char line[2048];
    int n = snprintf(line, sizeof(line), "rewind: ");
    int m = vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
    size_t len = (size_t)n + (m < 0 ? 0 : (size_t)m);
    if (len > sizeof(line) - 2)
        len = sizeof(line) - 2;
    line[len++] = '\n';
    fflush(stdout);
    out_all(2, line, len);
}

void cli_say(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cli_vsay(fmt, ap);
    va_end(ap);
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
        fprintf(stderr, "rewind: %s\n", err.msg);
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
            if (holes.test_holes)
                return cli_error(-1, "%s takes only the keyframe test holes", cmd);
            o->snap_holes = holes.snap_holes;
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

const char *cli_bytes_text(uint64_t b, char *buf, size_t n)
{
    static const char *unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = (double)b;
    int u = 0;
    while (v >= 1024 && u < 4) {
        v /= 1024;
        u++;
    }
    if (u == 0)
        snprintf(buf, n, "%" PRIu64 " B", b);
    else
        snprintf(buf, n, "%.1f %s", v, unit[u]);
    return buf;
}
