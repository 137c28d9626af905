/*
 * cmd_checks: `rewind checks [--json]`: the stored checks, newest first
 * (src/explore/checkrec.h), one line each; and `rewind show CHECK`
 * (cli_show_check): what one check tried and found.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "cli_read.h"
#include "rewind.h"

struct out {
    int json, n;
};

static void verdict(const struct rw_check_info *c, char *buf, size_t n)
{
    if (!c->found && c->unmet)
        snprintf(buf, n, "%llu assertions never met", (unsigned long long)c->unmet);
    else if (!c->found)
        snprintf(buf, n, "%s", c->judged ? "no failure" : "no difference");
    else if (!c->schedule)
        snprintf(buf, n, "schedule 0 fails");
    else if (c->narrowed)
        snprintf(buf, n, "schedule %llu fails, deciding step %s", (unsigned long long)c->schedule,
                 c->deciding);
    else
        snprintf(buf, n, "schedule %llu fails", (unsigned long long)c->schedule);
}

static int print_check(void *ctx, const struct rw_check_info *c)
{
    struct out *o = ctx;
    char when[32] = "-", v[120];
    time_t t = (time_t)c->created;
    struct tm tm;
    if (gmtime_r(&t, &tm))
        strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm);
    verdict(c, v, sizeof(v));
    if (o->json) {
        printf("%s{\"id\":\"%s\",\"created\":%lld,\"base\":\"%s\",\"start\":%llu,\"first\":%llu,"
               "\"schedules\":%llu,\"tried\":%llu,\"failures\":%llu,\"found\":%s,\"verdict\":",
               o->n++ ? ",\n" : "", c->id, (long long)c->created, c->base,
               (unsigned long long)c->start, (unsigned long long)c->first,
               (unsigned long long)c->schedules, (unsigned long long)c->tried,
               (unsigned long long)c->failures, c->found ? "true" : "false");
        cli_read_json_str(v, strlen(v));
        printf(",\"runs\":%zu}", c->nruns);
        return 0;
    }
    if (!o->n++)
        printf("%-18s %-19s %-18s %9s %9s  %s\n", "CHECK", "CREATED", "SCHEDULE 0", "TRIED",
               "FAILURES", "VERDICT");
    printf("%-18s %-19s %-18s %9llu %9llu  %s\n", c->id, when, c->base,
           (unsigned long long)c->tried, (unsigned long long)c->failures, v);
    return 0;
}

int cmd_checks(int argc, char **argv)
{
    int json = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json")) {
            json = 1;
        } else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            puts("usage: rewind checks [--json]\n\n"
                 "The stored checks, newest first: each check's id, its schedule-0 run, how\n"
                 "many schedules it tried and saw fail, and its verdict. rewind show CHECK\n"
                 "prints one; rewind ls shows each check as one line instead of its runs.");
            return 0;
        } else {
            return cli_error(2, "checks takes only --json (see rewind checks --help)");
        }
    }
    rw_home *h = cli_read_home();
    if (!h)
        return 1;
    struct out o = {.json = json};
    struct rw_error err;
    if (json)
        putchar('[');
    if (rw_checks_list(h, print_check, &o, &err) < 0)
        return cli_read_fail(1, &err);
    if (json)
        puts("]");
    else if (!o.n)
        puts("(no checks)");
    return 0;
}

static const char *js(json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    return s ? s : "?";
}

static long long ji(json_t *o, const char *k)
{
    return (long long)json_integer_value(json_object_get(o, k));
}

int cli_show_check(const char *ref, int json)
{
    rw_home *h = cli_read_home();
    if (!h)
        return 1;
    char *text = NULL;
    struct rw_error err;
    if (rw_check_record(h, ref, &text, &err) < 0)
        return err.code == RW_EUSAGE && !strncmp(err.msg, "no check", 8) ? -1
                                                                         : cli_read_fail(1, &err);
    if (json) {
        puts(text);
        free(text);
        return 0;
    }
    json_error_t je;
    json_t *r = json_loads(text, 0, &je);
    free(text);
    if (!r)
        return cli_error(1, "check %s: unreadable record", ref);
    json_t *s0 = json_object_get(r, "schedule0");
    printf("check:     %s\n", js(r, "id"));
    printf("schedule 0: run %s (%s %lld)\n", js(r, "base"), js(s0, "outcome"), ji(s0, "exit_code"));
    char range[64]; /* "N", or "A..B" for --schedules A..B */
    if (ji(r, "first") > 1)
        snprintf(range, sizeof(range), "%lld..%lld", ji(r, "first"), ji(r, "schedules"));
    else
        snprintf(range, sizeof(range), "%lld", ji(r, "schedules"));
    printf("schedules: %lld tried of %s, forked after step %lld%s%s\n", ji(r, "tried"), range,
           ji(r, "start"), json_is_true(json_object_get(r, "keep_going")) ? ", keep going" : "",
           json_is_true(json_object_get(r, "vary_seed")) ? ", seed varied" : "");
    printf("judged by: %s\n", json_is_true(json_object_get(r, "judged_by_properties"))
                                  ? "its properties"
                                  : "ending like schedule 0");
    json_t *iv = json_object_get(r, "failure_interval95");
    printf("failures:  %lld (95%% interval %.1f%%..%.1f%%)\n", ji(r, "failures"),
           100 * json_real_value(json_array_get(iv, 0)),
           100 * json_real_value(json_array_get(iv, 1)));
    if (json_is_true(json_object_get(r, "found"))) {
        json_t *f = json_object_get(r, "failing");
        printf("first failing: schedule %lld, run %s (%s %lld)%s%s\n", ji(r, "schedule"),
               js(f, "id"), js(f, "outcome"), ji(f, "exit_code"),
               json_object_get(f, "fails") ? ": " : "",
               json_object_get(f, "fails") ? js(f, "fails") : "");
        if (json_is_true(json_object_get(r, "narrowed")))
            printf("deciding step: %lld, where the perturbation %s; passing run %s, failing run "
                   "%s\n",
                   ji(r, "deciding_step"), js(r, "perturbation"),
                   js(json_object_get(r, "passing_run"), "id"),
                   js(json_object_get(r, "failing_run"), "id"));
    }
    size_t i;
    json_t *p;
    json_array_foreach(json_object_get(r, "properties"), i, p)
    {
        printf("property %s: reached %lld, passed %lld, failed %lld", js(p, "property"),
               ji(p, "reached"), ji(p, "passed"), ji(p, "failed"));
        if (json_object_get(p, "first_failing_run"))
            printf("; first failing run %s (step %lld)", js(p, "first_failing_run"),
                   ji(p, "first_failing_step"));
        putchar('\n');
    }
    printf("runs:      %zu (rewind ls --forks-of %s)\n",
           json_array_size(json_object_get(r, "runs")), js(r, "base"));
    json_decref(r);
    return 0;
}
