/*
 * cmd_show: `rewind show RUN [--json]`: the run's spec and outcome, and the
 * `rewind run` command line that recreates it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run/spec.h"
#include "cli/cli.h"
#include "cli/cliutil.h"

/* Quote s for a POSIX shell if it needs it. */
static void shq(const char *s)
{
    if (*s && strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=:,+@%") ==
                  strlen(s)) {
        fputs(s, stdout);
        return;
    }
    putchar('\'');
    for (; *s; s++)
        if (*s == '\'')
            fputs("'\\''", stdout);
        else
            putchar(*s);
    putchar('\'');
}

int cmd_show(int argc, char **argv)
{
    int json = 0;
    const char *ref = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json"))
            json = 1;
        else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            puts("usage: rewind show RUN [--json]\n\nThe run's spec (every input), its outcome, "
                 "and the rewind run command line\nthat recreates it.");
            return 0;
        } else if (!ref)
            ref = argv[i];
        else
            return cli_error(2, "show takes one run (see rewind show --help)");
    }
    if (!ref)
        return cli_error(2, "show needs a run (see rewind show --help)");
    char dir[4096];
    json_t *m = cli_load_run(ref, dir, sizeof(dir));
    if (!m)
        return 1;
    if (json) {
        char *d = json_dumps(m, JSON_SORT_KEYS | JSON_INDENT(2));
        puts(d ? d : "{}");
        free(d);
        json_decref(m);
        return 0;
    }
    json_t *spec = json_object_get(m, "spec");
    printf("run:      %s\n", json_string_value(json_object_get(m, "id")));
    printf("dir:      %s\n", dir);
    printf("outcome:  %s (exit code %lld), %lld steps, %.6f s virtual, %lld events\n",
           json_string_value(json_object_get(m, "outcome")),
           (long long)json_integer_value(json_object_get(m, "exit_code")),
           (long long)json_integer_value(json_object_get(m, "steps")),
           (double)json_integer_value(json_object_get(m, "virtual_ns")) / 1e9,
           (long long)json_integer_value(json_object_get(m, "events")));
    printf("trace:    %s\nram:      %s\n", json_string_value(json_object_get(m, "trace_hash")),
           json_string_value(json_object_get(m, "ram_hash")));
    printf("kernel:   %s\ninit:     %s\nimage:    %s\ncpu:      %s\n",
           json_string_value(json_object_get(spec, "kernel")),
           json_string_value(json_object_get(spec, "init")),
           json_string_value(json_object_get(spec, "image")),
           json_string_value(json_object_get(spec, "cpu")));
    const char *par = json_string_value(json_object_get(m, "parent"));
    if (par) {
        json_t *fs = json_object_get(m, "fork_step");
        printf("parent:   %s", par);
        if (fs)
            printf(" (forked at step %lld)", (long long)json_integer_value(fs));
        putchar('\n');
    }
    printf("keyframes: %lld (every %lld steps)\n",
           (long long)json_integer_value(json_object_get(m, "keyframes")),
           (long long)json_integer_value(json_object_get(m, "keyframe_every")));
    struct sched sc = {0};
    int plain = 1; /* the perturbation is what --schedule flags say */
    if (spec_parse_perturb(spec, &sc) == 0) {
        for (unsigned k = 0; k < sc.n; k++) {
            const struct sched_segment *g = &sc.seg[k];
            printf("schedule: %llu (%s) at steps [%llu, ", (unsigned long long)g->schedule,
                   sched_strategy(g->schedule), (unsigned long long)g->from);
            if (g->until == UINT64_MAX)
                printf("end)\n");
            else
                printf("%llu)\n", (unsigned long long)g->until);
        }
        plain = sc.n == 0 || (sc.n == 1 && sc.seg[0].origin == sc.seg[0].from &&
                              sc.seg[0].horizon == (sc.seg[0].until == UINT64_MAX
                                                        ? 65536
                                                        : sc.seg[0].until - sc.seg[0].from));
    }
    printf("command:  rewind run --root %s/images/%s.erofs", cli_home(),
           json_string_value(json_object_get(spec, "image")));
    printf(" --cwd ");
    shq(json_string_value(json_object_get(spec, "cwd")));
    size_t i;
    json_t *v;
    json_array_foreach(json_object_get(spec, "env"), i, v)
    {
        const char *e = json_string_value(v);
        if (!e || !strncmp(e, "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", 80) ||
            !strcmp(e, "HOME=/root"))
            continue;
        printf(" -e ");
        shq(e);
    }
    printf(" --mem %lld --seed %lld --epoch %lld --quantum %lld",
           (long long)json_integer_value(json_object_get(spec, "mem_mib")),
           (long long)json_integer_value(json_object_get(spec, "seed")),
           (long long)json_integer_value(json_object_get(spec, "epoch")),
           (long long)json_integer_value(json_object_get(spec, "quantum_ns")));
    if (sc.n == 1 && plain) {
        printf(" --schedule %llu --schedule-from %llu", (unsigned long long)sc.seg[0].schedule,
               (unsigned long long)sc.seg[0].from);
        if (sc.seg[0].until != UINT64_MAX)
            printf(" --schedule-until %llu", (unsigned long long)sc.seg[0].until);
    }
    printf(" --");
    json_array_foreach(json_object_get(spec, "argv"), i, v)
    {
        putchar(' ');
        shq(json_string_value(v) ? json_string_value(v) : "");
    }
    putchar('\n');
    if (!plain)
        printf("          (plus the perturbation above, made by fork or check: rewind replay "
               "%s re-runs it)\n", json_string_value(json_object_get(m, "id")));
    json_decref(m);
    return 0;
}
