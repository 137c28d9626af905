/*
 * cmd_show: `rewind show RUN [--json]`: the run's spec and outcome, and the
 * `rewind run` command line that recreates it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_read.h"
#include "rewind.h"

/* A string field of o, or "-" where an incomplete or imported manifest has
 * none (printf must never get NULL for %s). */
static const char *jstr(json_t *o, const char *key)
{
    const char *v = json_string_value(key ? json_object_get(o, key) : o);
    return v ? cli_tty(v) : "-"; /* an imported manifest's text: no control characters */
}

/* The spec's perturbation segments, one line each: [schedule, from, until
 * or null, origin, horizon(, span_from, span_until or null)]
 * (docs/formats.md). */
static void print_segments(json_t *perturb)
{
    size_t k;
    json_t *g;
    json_array_foreach(perturb, k, g)
    {
        uint64_t sch = (uint64_t)json_integer_value(json_array_get(g, 0));
        json_t *until = json_array_get(g, 2);
        printf("schedule: %llu (%s) at steps [%llu, ", (unsigned long long)sch,
               rw_schedule_strategy(sch),
               (unsigned long long)json_integer_value(json_array_get(g, 1)));
        if (json_is_null(until))
            printf("end)");
        else
            printf("%llu)", (unsigned long long)json_integer_value(until));
        if (json_array_size(g) == 7) { /* a narrowing probe: its bursts over the span */
            json_t *su = json_array_get(g, 6);
            printf(", its bursts at [%llu, ",
                   (unsigned long long)json_integer_value(json_array_get(g, 5)));
            if (json_is_null(su))
                printf("end)");
            else
                printf("%llu)", (unsigned long long)json_integer_value(su));
        }
        printf("\n");
    }
}

/* Whether the spec's comma list of fault kinds (docs/formats.md) names
 * kind; 0 without a list. */
static int has_kind(json_t *faults, const char *kind)
{
    const char *k = json_string_value(json_object_get(faults, "kinds"));
    for (const char *p = k; p && *p;) {
        size_t w = strcspn(p, ",");
        if (w == strlen(kind) && !strncmp(p, kind, w))
            return 1;
        p += w + (p[w] == ',');
    }
    return 0;
}

/* The files of the disk glob, and what the run's kinds do to them
 * (docs/faults.md: disk faults fail calls on them, power cuts undo the
 * unsynced writes to them). */
static void show_disk_glob(json_t *faults)
{
    int disk = has_kind(faults, "disk"), power = has_kind(faults, "power");
    const char *glob = jstr(faults, "disk_glob");
    if (disk && power)
        printf("disk:     disk faults fail the node's calls on files matching %s; power cuts "
               "undo its unsynced writes to them\n",
               glob);
    else if (power)
        printf("disk:     power cuts undo the node's unsynced writes to files matching %s\n", glob);
    else
        printf("disk:     disk faults fail the node's calls on files matching %s\n", glob);
}

/* The VM has no network device: rewind-init brings up lo only
 * (docs/networking.md), and with nodes a bridge between them inside the VM
 * (docs/faults.md). */
static void show_network(json_t *spec)
{
    json_t *nodes = json_object_get(spec, "nodes");
    if (json_array_size(nodes)) {
        printf("network:  loopback, and the job (10.77.0.254) with %zu node%s on a bridge: nothing "
               "leaves the VM\n",
               json_array_size(nodes), json_array_size(nodes) == 1 ? "" : "s");
        size_t k;
        json_t *x;
        json_array_foreach(nodes, k, x)
        {
            printf("node:     %s at 10.77.0.%zu: ", jstr(x, "name"), k + 1);
            printf("%s\n", jstr(x, "run"));
            if (json_object_get(x, "restart")) { /* docs/faults.md: after a kill */
                printf("restart:  %s after a kill%s: ", jstr(x, "name"),
                       has_kind(json_object_get(spec, "faults"), "power") ? " or a power cut" : "");
                printf("%s\n", jstr(x, "restart"));
            }
        }
    } else {
        printf("network:  loopback only (127.0.0.1, ::1): nothing leaves the VM\n");
    }
}

int cmd_show(int argc, char **argv)
{
    int json = 0;
    const char *ref = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json"))
            json = 1;
        else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            puts("usage: rewind show RUN [--json]\n       rewind show CHECK [--json]\n\nThe run's "
                 "spec (every input), its outcome, "
                 "and the rewind run command line\nthat recreates it, and its properties' "
                 "verdicts. For a check (rewind checks):\nwhat it tried and found.");
            return 0;
        } else if (!ref)
            ref = argv[i];
        else
            return cli_error(2, "show takes one run (see rewind show --help)");
    }
    if (!ref)
        return cli_error(2, "show needs a run (see rewind show --help)");
    int crc = cli_show_check(ref, json); /* a check's id (cmd_checks.c) */
    if (crc >= 0)
        return crc;
    struct rw_run_info info;
    if (cli_read_run(ref, &info) < 0)
        return 1;
    json_t *m = json_loads(info.manifest_json ? info.manifest_json : "", 0, NULL);
    char dir[sizeof(info.path)];
    memcpy(dir, info.path, sizeof(dir));
    rw_run_info_free(&info);
    if (!json_is_object(m)) {
        json_decref(m);
        return cli_error(1, "run %s: its manifest is not a JSON object", ref);
    }
    if (json) {
        char *d = json_dumps(m, JSON_SORT_KEYS | JSON_INDENT(2));
        puts(d ? d : "{}");
        free(d);
        json_decref(m);
        return 0;
    }
    json_t *spec = json_object_get(m, "spec");
    printf("run:      %s\n", jstr(m, "id"));
    printf("dir:      %s\n", cli_tty(dir));
    json_t *names = json_object_get(m, "names"); /* every --name given, oldest first */
    if (json_array_size(names)) {
        size_t k;
        json_t *x;
        printf("names:   ");
        json_array_foreach(names, k, x) printf("%s %s", k ? "," : "", jstr(x, NULL));
        putchar('\n');
    } else if (json_string_value(json_object_get(m, "name"))) {
        printf("names:    %s\n", jstr(m, "name"));
    }
    printf("outcome:  %s (exit code %lld), %lld steps, %.6f s virtual, %lld events\n",
           jstr(m, "outcome"), (long long)json_integer_value(json_object_get(m, "exit_code")),
           (long long)json_integer_value(json_object_get(m, "steps")),
           (double)json_integer_value(json_object_get(m, "virtual_ns")) / 1e9,
           (long long)json_integer_value(json_object_get(m, "events")));
    if (!strcmp(jstr(m, "outcome"), "limit")) /* which cap (src/input/limits.h) */
        printf("limit:    %s\n", jstr(m, "message"));
    printf("trace:    %s\nram:      %s\n", jstr(m, "trace_hash"), jstr(m, "ram_hash"));
    printf("kernel:   %s\ninit:     %s\nimage:    %s\ncpu:      %s\n", jstr(spec, "kernel"),
           jstr(spec, "init"), jstr(spec, "image"), jstr(spec, "cpu"));
    show_network(spec);
    const char *par = json_string_value(json_object_get(m, "parent"));
    if (par) {
        json_t *fs = json_object_get(m, "fork_step");
        printf("parent:   %s", cli_tty(par));
        if (fs)
            printf(" (forked at step %lld)", (long long)json_integer_value(fs));
        putchar('\n');
    }
    printf("keyframes: %lld (every %lld steps)\n",
           (long long)json_integer_value(json_object_get(m, "keyframes")),
           (long long)json_integer_value(json_object_get(m, "keyframe_every")));
    print_segments(json_object_get(spec, "perturb"));
    json_t *faults = json_object_get(spec, "faults"); /* docs/faults.md */
    if (faults)
        printf("faults:   %s, %lld per schedule on average, at steps of the schedule's window\n",
               jstr(faults, "kinds"),
               (long long)json_integer_value(json_object_get(faults, "rate")));
    if (json_object_get(faults, "disk_glob")) /* docs/faults.md: with disk or power only */
        show_disk_glob(faults);
    char *line = NULL;
    int exact = 1;
    struct rw_error err;
    rw_home *h = cli_open_home();
    if (!h || rw_command_line(h, ref, &line, &exact, &err) < 0) {
        if (h)
            cli_fail(&err);
        rw_home_close(h);
        json_decref(m);
        return 1;
    }
    struct rw_prop_verdict pv[RW_PROPS_MAX];
    int npv = 0;
    if (rw_props_judge(h, ref, pv, RW_PROPS_MAX, &npv, &err) < 0)
        npv = 0;
    rw_home_close(h);
    printf("command:  %s\n", line); /* quoted: no control character is raw (shq) */
    free(line);
    if (!exact)
        printf("          (plus the perturbation above, made by fork or check: rewind replay "
               "%s re-runs it)\n",
               jstr(m, "id"));
    for (int i = 0; i < npv; i++) /* docs/tutorials/properties.md */
        printf("property %s: %s (%s)\n", pv[i].what, pv[i].passed ? "passed" : "FAILED",
               pv[i].detail);
    json_decref(m);
    return 0;
}
