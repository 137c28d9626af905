/*
 * cmd_ls: `rewind ls [--name N] [--status S] [--since T] [--json]`: runs,
 * newest first. Runs that never finished (killed mid-way) are listed with
 * status "incomplete".
 */
#include <dirent.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "home/runref.h"
#include "run/spec.h"
#include "cli/cli.h"
#include "cli/cliutil.h"

static void argv_text(json_t *spec, char *out, size_t n)
{
    json_t *a = json_object_get(spec, "argv");
    size_t i, o = 0;
    json_t *v;
    out[0] = 0;
    json_array_foreach(a, i, v)
    {
        o += (size_t)snprintf(out + o, o < n ? n - o : 0, "%s%s", i ? " " : "",
                              json_string_value(v) ? json_string_value(v) : "");
        if (o >= n)
            break;
    }
}

static int matches(json_t *m, const char *name, const char *status, int64_t since)
{
    const char *nm = json_string_value(json_object_get(m, "name"));
    const char *oc = json_string_value(json_object_get(m, "outcome"));
    if (name && (!nm || strcmp(nm, name)))
        return 0;
    if (status && (!oc || strcmp(oc, status)))
        return 0;
    if (since && json_integer_value(json_object_get(m, "created")) < since)
        return 0;
    return 1;
}

static void list_incomplete(int json, int *n)
{
    char runs[4096];
    snprintf(runs, sizeof(runs), "%s/runs", cli_home());
    DIR *d = opendir(runs);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (e->d_name[0] != '.' || !strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") ||
            strstr(e->d_name, ".old"))
            continue;
        char id[64];
        snprintf(id, sizeof(id), "%s", e->d_name + 1);
        char *dot = strchr(id, '.');
        if (dot)
            *dot = 0;
        if (json)
            printf("%s{\"id\":\"%s\",\"outcome\":\"incomplete\",\"dir\":\"%s\"}", (*n)++ ? ",\n" : "",
                   id, e->d_name);
        else
            printf("%-18s %-19s %-14s %10s  (incomplete: %s/%s)\n", id, "-", "incomplete", "-",
                   runs, e->d_name);
    }
    if (d)
        closedir(d);
}

/* --forks-of: the family tree under one run: every run whose parent chain
 * reaches it, indented by generation. */
struct node {
    char name[64], parent[64], what[64];
    long long from, steps, code;
};

static void tree(const struct node *v, int n, const char *root, int depth, int json, int *k)
{
    for (int i = 0; i < n; i++) {
        if (strcmp(v[i].parent, root))
            continue;
        if (json)
            printf("%s{\"id\":\"%s\",\"parent\":\"%s\",\"generation\":%d,\"fork_step\":%lld,"
                   "\"outcome\":\"%s\",\"exit_code\":%lld,\"steps\":%lld}",
                   (*k)++ ? ",\n" : "", v[i].name, root, depth, v[i].from, v[i].what,
                   v[i].code, v[i].steps);
        else
            printf("%*s%s  forked at step %lld  %s:%lld after %lld steps\n", 2 * depth, "",
                   v[i].name, v[i].from, v[i].what, v[i].code, v[i].steps), (*k)++;
        if (depth < 64)
            tree(v, n, v[i].name, depth + 1, json, k);
    }
}

static int forks_of(const char *ref, int json)
{
    char dir[4096];
    json_t *m = cli_load_run(ref, dir, sizeof(dir));
    if (!m)
        return 2;
    const char *b = strrchr(dir, '/');
    char root[64];
    snprintf(root, sizeof(root), "%.63s", b ? b + 1 : dir);
    json_decref(m);
    char **names = NULL;
    int count = runref_list(cli_home(), &names);
    if (count < 0)
        return cli_error(1, "cannot read %s/runs", cli_home());
    struct node *v = calloc((size_t)count + 1, sizeof(*v));
    int n = 0;
    for (int i = 0; v && i < count; i++) {
        char d[4096];
        json_t *x = cli_load_run(names[i], d, sizeof(d));
        if (!x)
            continue;
        const char *par = json_string_value(json_object_get(x, "parent"));
        const char *oc = json_string_value(json_object_get(x, "outcome"));
        snprintf(v[n].name, sizeof(v[n].name), "%s", names[i]);
        snprintf(v[n].parent, sizeof(v[n].parent), "%s", par ? par : "");
        snprintf(v[n].what, sizeof(v[n].what), "%s", oc ? oc : "?");
        json_t *fs = json_object_get(x, "fork_step");
        v[n].from = (long long)json_integer_value(fs ? fs : json_object_get(x, "from_step"));
        v[n].steps = (long long)json_integer_value(json_object_get(x, "steps"));
        v[n].code = (long long)json_integer_value(json_object_get(x, "exit_code"));
        n++;
        json_decref(x);
    }
    int k = 0;
    if (json)
        putchar('[');
    else
        printf("%s\n", root);
    if (v)
        tree(v, n, root, json ? 1 : 1, json, &k);
    if (json)
        puts("]");
    else if (!k)
        printf("  (no forks)\n");
    free(v);
    runref_free(names, count);
    return 0;
}

int cmd_ls(int argc, char **argv)
{
    static const struct option lo[] = {{"name", required_argument, 0, 'n'},
                                       {"status", required_argument, 0, 's'},
                                       {"since", required_argument, 0, 'S'},
                                       {"json", no_argument, 0, 'j'},
                                       {"forks-of", required_argument, 0, 'f'},
                                       {"help", no_argument, 0, 'h'},
                                       {0, 0, 0, 0}};
    const char *name = NULL, *status = NULL, *forks = NULL;
    int64_t since = 0;
    int json = 0, c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
        switch (c) {
        case 'n':
            name = optarg;
            break;
        case 's':
            status = optarg;
            break;
        case 'S':
            if (spec_parse_epoch(optarg, &since) < 0)
                return cli_error(2, "--since needs seconds or YYYY-MM-DD[THH:MM:SS]: %s", optarg);
            break;
        case 'j':
            json = 1;
            break;
        case 'f':
            forks = optarg;
            break;
        case 'h':
            puts("usage: rewind ls [--name N] [--status S] [--since T] [--json]\n"
                 "       rewind ls --forks-of RUN [--json]\n\nRuns, newest "
                 "first. S is an outcome: exited, panic, guest-error, timeout,\nstalled, "
                 "not-found, ... T is seconds since 1970 or YYYY-MM-DD[THH:MM:SS] (UTC).\n"
                 "--forks-of shows the family tree of RUN: its forks, theirs, and so on.");
            return 0;
        default:
            return cli_error(2, "see rewind ls --help");
        }
    }
    if (optind != argc)
        return cli_error(2, "ls takes no arguments (see rewind ls --help)");
    if (forks)
        return forks_of(forks, json);
    char **names = NULL;
    int count = runref_list(cli_home(), &names);
    if (count < 0)
        return cli_error(1, "cannot read %s/runs", cli_home());
    int n = 0;
    if (json)
        putchar('[');
    else
        printf("%-18s %-19s %-14s %10s  %s\n", "RUN", "CREATED", "OUTCOME", "STEPS", "COMMAND");
    for (int i = 0; i < count; i++) {
        char dir[4096];
        json_t *m = cli_load_run(names[i], dir, sizeof(dir));
        if (!m)
            continue;
        if (matches(m, name, status, since)) {
            char cmd[300], when[32] = "-";
            argv_text(json_object_get(m, "spec"), cmd, sizeof(cmd));
            time_t t = (time_t)json_integer_value(json_object_get(m, "created"));
            struct tm tm;
            if (gmtime_r(&t, &tm))
                strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm);
            const char *oc = json_string_value(json_object_get(m, "outcome"));
            long long code = (long long)json_integer_value(json_object_get(m, "exit_code"));
            char outcome[40];
            if (oc && !strcmp(oc, "exited"))
                snprintf(outcome, sizeof(outcome), "exited:%lld", code);
            else
                snprintf(outcome, sizeof(outcome), "%s", oc ? oc : "?");
            long long steps = (long long)json_integer_value(json_object_get(m, "steps"));
            const char *nm = json_string_value(json_object_get(m, "name"));
            if (json) {
                printf("%s{\"id\":\"%s\",\"name\":", n++ ? ",\n" : "", names[i]);
                if (nm)
                    cli_json_str(nm, strlen(nm));
                else
                    fputs("null", stdout);
                const char *par = json_string_value(json_object_get(m, "parent"));
                printf(",\"created\":%lld,\"outcome\":\"%s\",\"exit_code\":%lld,\"steps\":%lld,"
                       "\"parent\":%s%s%s,\"command\":",
                       (long long)t, oc ? oc : "", code, steps, par ? "\"" : "",
                       par ? par : "null", par ? "\"" : "");
                cli_json_str(cmd, strlen(cmd));
                putchar('}');
            } else {
                printf("%-18s %-19s %-14s %10lld  %s%s%s%s\n", names[i], when, outcome, steps,
                       nm ? "[" : "", nm ? nm : "", nm ? "] " : "", cmd);
            }
        }
        json_decref(m);
    }
    if (!name && !status && !since)
        list_incomplete(json, &n);
    if (json)
        puts("]");
    runref_free(names, count);
    return 0;
}
