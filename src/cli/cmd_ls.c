/*
 * cmd_ls: `rewind ls [--name N] [--status S] [--since T] [--json]`: runs,
 * newest first. Runs that never finished (killed mid-way) are listed with
 * status "incomplete". `rewind ls --forks-of RUN`: the family tree under
 * one run.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "cli_read.h"
#include "rewind.h"

/* Checks (rewind checks): each shown as one line after its schedule-0
 * run; the runs a check made are left out unless --all. */
struct ls_check {
    char id[RW_ID_MAX], base[RW_ID_MAX], verdict[120];
    uint64_t tried, failures;
    size_t nruns;
};

struct ls_checks {
    struct ls_check *c;
    size_t n;
    char (*members)[RW_ID_MAX]; /* sorted */
    size_t nmembers;
};

struct out {
    int json, n;
    int started;      /* the head is printed */
    const char *root; /* --forks-of: the tree's root */
    int all;          /* --all: a check's runs too */
    struct ls_checks *checks;
};

static int ls_cmp_id(const void *a, const void *b)
{
    return strcmp((const char *)a, (const char *)b);
}

static int ls_take_check(void *ctx, const struct rw_check_info *ci)
{
    struct ls_checks *k = ctx;
    struct ls_check *nc = realloc(k->c, (k->n + 1) * sizeof(*nc));
    char(*nm)[RW_ID_MAX] = realloc(k->members, (k->nmembers + ci->nruns + 1) * sizeof(*nm));
    if (nc)
        k->c = nc;
    if (nm)
        k->members = nm;
    if (!nc || !nm)
        return 0;
    struct ls_check *c = &k->c[k->n++];
    snprintf(c->id, sizeof(c->id), "%s", ci->id);
    snprintf(c->base, sizeof(c->base), "%s", ci->base);
    c->tried = ci->tried;
    c->failures = ci->failures;
    c->nruns = ci->nruns;
    if (!ci->found && ci->unmet)
        snprintf(c->verdict, sizeof(c->verdict), "%llu assertions never met",
                 (unsigned long long)ci->unmet);
    else if (!ci->found)
        snprintf(c->verdict, sizeof(c->verdict), "%s", ci->judged ? "no failure" : "no difference");
    else if (!ci->schedule)
        snprintf(c->verdict, sizeof(c->verdict), "schedule 0 fails");
    else
        snprintf(c->verdict, sizeof(c->verdict), "schedule %llu fails%s%s",
                 (unsigned long long)ci->schedule, ci->narrowed ? ", deciding step " : "",
                 ci->narrowed ? ci->deciding : "");
    for (size_t i = 0; i < ci->nruns; i++)
        snprintf(k->members[k->nmembers++], RW_ID_MAX, "%s", ci->runs[i]);
    return 0;
}

static int ls_is_member(const struct ls_checks *k, const char *id)
{
    return k && k->nmembers && bsearch(id, k->members, k->nmembers, RW_ID_MAX, ls_cmp_id);
}

static void ls_print_checks_of(struct out *o, const char *base)
{
    for (size_t i = 0; o->checks && i < o->checks->n; i++) {
        const struct ls_check *c = &o->checks->c[i];
        if (strcmp(c->base, base))
            continue;
        if (o->json)
            printf(",\n{\"kind\":\"check\",\"id\":\"%s\",\"base\":\"%s\",\"tried\":%llu,"
                   "\"failures\":%llu,\"runs\":%zu}",
                   c->id, c->base, (unsigned long long)c->tried, (unsigned long long)c->failures,
                   c->nruns);
        else
            printf("  check %s: %llu schedules, %llu failing: %s (%zu runs: rewind show %s)\n",
                   c->id, (unsigned long long)c->tried, (unsigned long long)c->failures, c->verdict,
                   c->nruns, c->id);
    }
}

/* The head ('[', the column titles or the tree's root) comes with the
 * first row, or after a listing without rows: a listing that fails prints
 * only its error. */
static void begin(struct out *o)
{
    if (o->started++)
        return;
    if (o->json)
        putchar('[');
    else if (o->root)
        printf("%s\n", o->root);
    else
        printf("%-18s %-19s %-14s %10s  %s\n", "RUN", "CREATED", "OUTCOME", "STEPS", "COMMAND");
}

/* Print one JSON object of a listing (jansson escapes every string: an
 * imported manifest's outcome or parent is untrusted text). */
static void put_obj(struct out *o, json_t *obj)
{
    char *d = obj ? json_dumps(obj, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    printf("%s%s", o->n++ ? ",\n" : "", d ? d : "{}");
    free(d);
    json_decref(obj);
}

/* A JSON string of s; a text that is not UTF-8 (a truncated command, a
 * directory's name of any bytes) gets '?' for its stray bytes (cli_tty)
 * rather than being left out. */
static json_t *jtext(const char *s)
{
    json_t *j = json_string(s);
    return j ? j : json_string(cli_tty(s));
}

static json_t *str_or_null(int has, const char *s)
{
    return has ? jtext(s) : json_null();
}

static int print_run(void *ctx, const struct rw_run_info *r, const struct rw_error *why)
{
    struct out *o = ctx;
    if (r && !o->all && ls_is_member(o->checks, r->id))
        return 0; /* a check's run: its check's line stands for it */
    begin(o);     /* before an unreadable run's line too, as a terminal shows it */
    if (!r)
        return cli_read_fail(0, why);
    if (r->incomplete) {
        if (o->json)
            put_obj(o, json_pack("{s:o, s:s, s:o}", "id", jtext(r->id), "outcome", "incomplete",
                                 "dir", jtext(r->dir)));
        else
            printf("%-18s %-19s %-14s %10s  (incomplete: %s)\n", cli_tty(r->id), "-", "incomplete",
                   "-", cli_tty(r->path));
        return 0;
    }
    char when[32] = "-", outcome[80];
    time_t t = (time_t)r->created;
    struct tm tm;
    if (gmtime_r(&t, &tm))
        strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm);
    if (!strcmp(r->outcome, "exited"))
        snprintf(outcome, sizeof(outcome), "exited:%lld", (long long)r->exit_code);
    else
        snprintf(outcome, sizeof(outcome), "%s", r->outcome[0] ? r->outcome : "?");
    if (o->json) {
        json_t *j = json_object();
        json_object_set_new(j, "id", jtext(r->id));
        json_object_set_new(j, "name", str_or_null(r->has_name, r->name));
        json_object_set_new(j, "created", json_integer((json_int_t)r->created));
        json_object_set_new(j, "outcome", jtext(r->outcome));
        json_object_set_new(j, "exit_code", json_integer((json_int_t)r->exit_code));
        json_object_set_new(j, "steps", json_integer((json_int_t)r->steps));
        json_object_set_new(j, "parent", str_or_null(r->has_parent, r->parent));
        json_object_set_new(j, "command", jtext(r->command));
        put_obj(o, j);
    } else {
        /* an imported manifest's text: no control character reaches the terminal */
        printf("%-18s %-19s %-14s %10lld  %s%s%s%s\n", cli_tty(r->id), when, cli_tty(outcome),
               (long long)r->steps, r->has_name ? "[" : "", cli_tty(r->name),
               r->has_name ? "] " : "", cli_tty(r->command));
    }
    ls_print_checks_of(o, r->id);
    return 0;
}

static int print_fork(void *ctx, const struct rw_run_info *r, const struct rw_error *why)
{
    struct out *o = ctx;
    if (!r)
        return cli_read_fail(0, why);
    begin(o);
    const char *what = r->outcome[0] ? r->outcome : "?";
    if (o->json)
        put_obj(o, json_pack("{s:o, s:o, s:i, s:I, s:o, s:I, s:I}", "id", jtext(r->id), "parent",
                             jtext(r->parent), "generation", r->generation, "fork_step",
                             (json_int_t)r->fork_step, "outcome", jtext(what), "exit_code",
                             (json_int_t)r->exit_code, "steps", (json_int_t)r->steps));
    else
        printf("%*s%s  forked at step %lld  %s:%lld after %lld steps\n", 2 * r->generation, "",
               cli_tty(r->id), (long long)r->fork_step, cli_tty(what), (long long)r->exit_code,
               (long long)r->steps);
    return 0;
}

static int forks_of(rw_home *h, const char *ref, int json)
{
    struct rw_run_info root;
    if (cli_read_run(ref, &root) < 0)
        return 2;
    rw_run_info_free(&root);
    struct out o = {.json = json, .root = root.id};
    struct rw_error err;
    char id[RW_ID_MAX];
    int n = rw_forks(h, ref, id, print_fork, &o, &err);
    if (n < 0)
        return cli_read_fail(1, &err);
    begin(&o);
    if (json)
        puts("]");
    else if (!n)
        printf("  (no forks)\n");
    return 0;
}

/* An outcome word (rw_outcome_word), or "incomplete": what --status
 * can match; anything else is a typo, not an empty listing. */
static int ls_status_known(const char *s)
{
    if (!strcmp(s, "incomplete"))
        return 1;
    for (int o = RW_RUNNING; o <= RW_SPIN; o++)
        if (!strcmp(s, rw_outcome_word((enum rw_outcome)o)))
            return 1;
    return 0;
}

int cmd_ls(int argc, char **argv)
{
    static const struct option lo[] = {
        {"name", required_argument, 0, 'n'},     {"status", required_argument, 0, 's'},
        {"since", required_argument, 0, 'S'},    {"json", no_argument, 0, 'j'},
        {"forks-of", required_argument, 0, 'f'}, {"all", no_argument, 0, 'a'},
        {"help", no_argument, 0, 'h'},           {0, 0, 0, 0}};
    struct rw_run_filter f = {0};
    const char *forks = NULL;
    int json = 0, c, all = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
        switch (c) {
        case 'n':
            f.name = optarg;
            break;
        case 's':
            if (!ls_status_known(optarg))
                return cli_error(2,
                                 "--status %s is no outcome (exited, not-found, not-executable, "
                                 "init-failed, panic, guest-error, stalled, timeout, stopped, "
                                 "limit, spin, running, incomplete)",
                                 cli_tty(optarg));
            f.status = optarg;
            break;
        case 'S':
            if (rw_parse_time(optarg, &f.since) < 0)
                return cli_error(2, "--since needs seconds or YYYY-MM-DD[THH:MM:SS]: %s", optarg);
            break;
        case 'j':
            json = 1;
            break;
        case 'f':
            forks = optarg;
            break;
        case 'a':
            all = 1;
            break;
        case 'h':
            puts("usage: rewind ls [--name N] [--status S] [--since T] [--all] [--json]\n"
                 "       rewind ls --forks-of RUN [--json]\n\nRuns, newest "
                 "first. S is an outcome: exited, panic, guest-error, timeout,\nstalled, "
                 "not-found, ... T is seconds since 1970 or YYYY-MM-DD[THH:MM:SS] (UTC).\n"
                 "--forks-of shows the family tree of RUN: its forks, theirs, and so on.\n"
                 "A check (rewind checks) is one line under its schedule-0 run; the runs it\n"
                 "made are listed only with --all (or --forks-of).");
            return 0;
        default:
            return cli_error(2, "see rewind ls --help");
        }
    }
    if (optind != argc)
        return cli_error(2, "ls takes no arguments (see rewind ls --help)");
    rw_home *h = cli_read_home();
    if (!h)
        return 1;
    if (forks)
        return forks_of(h, forks, json);
    struct ls_checks ks = {0};
    struct out o = {.json = json, .all = all, .checks = &ks};
    struct rw_error err;
    if (rw_checks_list(h, ls_take_check, &ks, &err) < 0)
        ks.n = ks.nmembers = 0; /* unreadable checks: list every run */
    if (ks.nmembers)
        qsort(ks.members, ks.nmembers, RW_ID_MAX, ls_cmp_id);
    int lrc = rw_runs_list(h, &f, print_run, &o, &err);
    free(ks.c);
    free(ks.members);
    if (lrc < 0)
        return cli_read_fail(1, &err);
    begin(&o);
    if (json)
        puts("]");
    return 0;
}
