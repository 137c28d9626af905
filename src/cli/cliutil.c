/* cliutil: see cliutil.h. */
#include "cli/cliutil.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "home/runref.h"
#include "explore/explore.h"
#include "run/runner.h"
#include <sys/time.h>
#include "cli/cli.h"

json_t *cli_load_run(const char *ref, char *dir, size_t dirlen)
{
    char err[512];
    if (runref_resolve(cli_home(), ref, dir, dirlen, err, sizeof(err)) < 0) {
        cli_error(1, "%s", err);
        return NULL;
    }
    char path[4200];
    snprintf(path, sizeof(path), "%s/manifest.json", dir);
    json_error_t je;
    json_t *m = json_load_file(path, 0, &je);
    if (!m || !json_is_object(m)) {
        cli_error(1, "run %s: manifest %s is corrupt (%s)", ref, path, je.text);
        json_decref(m);
        return NULL;
    }
    return m;
}

int cli_each_entry(const char *dir, int (*fn)(void *ctx, const struct trace_entry *e), void *ctx)
{
    char path[4200];
    snprintf(path, sizeof(path), "%s/trace", dir);
    struct trace_reader *r = malloc(sizeof(*r));
    if (!r)
        return cli_error(-1, "out of memory");
    int o = trace_open_read(r, path);
    if (o < 0) {
        free(r);
        if (o == -2)
            return cli_error(-1, "%s is not a rewind trace (corrupt or foreign file)", path);
        return cli_error(-1, "cannot read %s: %s", path, strerror(errno));
    }
    struct trace_entry e;
    while (trace_next(r, &e))
        if (fn(ctx, &e))
            break;
    if (r->torn)
        fprintf(stderr, "rewind: warning: trace %s is truncated or corrupt after %llu "
                        "records; showing those\n",
                path, (unsigned long long)r->count);
    trace_close_read(r);
    free(r);
    return 0;
}

int cli_parse_step(const char *s, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || !*s || *end || *s == '-')
        return -1;
    *out = v;
    return 0;
}

/* Bytes >= 0x80 are written as \u00XX (Latin-1): always valid JSON, even
 * for output that is not UTF-8. */
void cli_json_str(const char *s, size_t n)
{
    putchar('"');
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\')
            printf("\\%c", c);
        else if (c == '\n')
            fputs("\\n", stdout);
        else if (c < 0x20 || c >= 0x7f)
            printf("\\u%04x", c);
        else
            putchar(c);
    }
    putchar('"');
}

int cli_test_hole(const char *name, struct run_opts *o)
{
    const char *t = getenv("REWIND_TEST_HOLES");
    if (!t || strcmp(t, "1") != 0) {
        fprintf(stderr, "rewind: --test-hole is only for rewind's own tests (it breaks "
                        "determinism on purpose)\n");
        return -1;
    }
    uint64_t bit = run_hole_bit(name);
    unsigned snap = run_snap_hole_bit(name);
    if (!bit && !snap) {
        fprintf(stderr, "rewind: unknown test hole '%s' (host-tsc, timer-at-host-exit, "
                        "host-rng, kf-no-io-completion, restore-no-tlb-flush)\n", name);
        return -1;
    }
    o->test_holes |= bit;
    o->snap_holes |= snap;
    return 0;
}

static volatile sig_atomic_t abort_flag;

static void on_abort_signal(int sig)
{
    (void)sig;
    abort_flag = 1;
    struct kvm_run *r = run_active_kvm_run;
    if (r)
        r->immediate_exit = 1;
}

volatile sig_atomic_t *cli_abort_on_signals(double timeout_s)
{
    struct sigaction sa = {.sa_handler = on_abort_signal};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGALRM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    if (timeout_s > 0) {
        struct itimerval it = {0};
        it.it_value.tv_sec = (time_t)timeout_s;
        it.it_value.tv_usec = (suseconds_t)((timeout_s - (double)(time_t)timeout_s) * 1e6);
        setitimer(ITIMER_REAL, &it, NULL);
    }
    return &abort_flag;
}

int cli_derive(const char *ref, const char *step_arg, int inspect, struct run_opts *o,
               char base[64], uint64_t *step, uint64_t *steps)
{
    if (cli_parse_step(step_arg, step) < 0 || *step == 0)
        return cli_error(2, "STEP must be a positive step number: %s", step_arg), -1;
    char dir[4096], err[1024];
    json_t *m = cli_load_run(ref, dir, sizeof(dir));
    if (!m)
        return -1;
    *steps = (uint64_t)json_integer_value(json_object_get(m, "steps"));
    json_decref(m);
    if (*step >= *steps)
        return cli_error(2, "run %s ends at step %llu; STEP must be below that", ref,
                         (unsigned long long)*steps), -1;
    const char *b = strrchr(dir, '/');
    snprintf(base, 64, "%.63s", b ? b + 1 : dir);
    if (inspect) {
        uint64_t first = explore_job_step(cli_home(), base, 1);
        if (!first)
            return cli_error(2, "run %s never executed its command: nothing to inspect", ref), -1;
        if (*step < first)
            return cli_error(2, "step %llu is before the job's command runs (step %llu); pick "
                                "a step from %llu on", (unsigned long long)*step,
                             (unsigned long long)first, (unsigned long long)first), -1;
    }
    if (explore_opts(cli_home(), base, cli_artifact("REWIND_KERNEL", "kernel/vmlinux"),
                     cli_artifact("REWIND_INIT", "rewind-init"), o, NULL, err, sizeof(err)) < 0)
        return cli_error(2, "run %s: %s", ref, err), -1;
    return 0;
}
