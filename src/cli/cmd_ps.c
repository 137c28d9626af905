/*
 * cmd_ps: `rewind ps RUN [STEP] [--json]`: the processes alive at STEP
 * (default: the end), as a tree under init, rebuilt from the trace's fork,
 * exec and exit events. Orphans are shown under init, as the kernel
 * reparents them. Kernel threads (not descendants of init) are left out.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/cliutil.h"

struct proc {
    uint32_t pid, ppid;
    int threads; /* live threads besides the leader */
    char argv[256];
};

struct tree {
    uint64_t upto;
    struct proc *v;
    size_t n, cap;
};

static struct proc *find(struct tree *t, uint32_t pid)
{
    for (size_t i = 0; i < t->n; i++)
        if (t->v[i].pid == pid)
            return &t->v[i];
    return NULL;
}

static struct proc *add(struct tree *t, uint32_t pid, uint32_t ppid)
{
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 64;
        struct proc *nv = realloc(t->v, cap * sizeof(*nv));
        if (!nv)
            return NULL;
        t->v = nv;
        t->cap = cap;
    }
    struct proc *p = &t->v[t->n++];
    memset(p, 0, sizeof(*p));
    p->pid = pid;
    p->ppid = ppid;
    return p;
}

static void drop(struct tree *t, uint32_t pid)
{
    for (size_t i = 0; i < t->n; i++)
        if (t->v[i].ppid == pid)
            t->v[i].ppid = 1;
    for (size_t i = 0; i < t->n; i++)
        if (t->v[i].pid == pid) {
            t->v[i] = t->v[--t->n];
            return;
        }
}

/* EXEC payload: path NUL argv0 NUL argv1 ... ; keep argv joined by spaces. */
static void set_argv(struct proc *p, const uint8_t *pl, uint32_t n)
{
    const uint8_t *z = memchr(pl, 0, n);
    size_t o = 0;
    if (!z)
        return;
    for (const uint8_t *s = z + 1; s < pl + n && o + 2 < sizeof(p->argv); s++)
        p->argv[o++] = *s ? (char)*s : ' ';
    while (o && p->argv[o - 1] == ' ')
        o--;
    p->argv[o] = 0;
}

static int step(void *ctx, const struct trace_entry *e)
{
    struct tree *t = ctx;
    if (e->step > t->upto)
        return 1;
    const struct rewind_record *r = &e->rec;
    struct proc *p;
    switch (r->kind) {
    case REWIND_REC_FORK:
        if (r->flags & 1) {
            if ((p = find(t, r->pid)))
                p->threads++;
        } else if (!find(t, (uint32_t)r->aux)) {
            struct proc *parent = find(t, r->pid);
            p = add(t, (uint32_t)r->aux, r->pid);
            if (p && (parent = find(t, r->pid)))
                memcpy(p->argv, parent->argv, sizeof(p->argv));
        }
        break;
    case REWIND_REC_EXEC:
        if ((p = find(t, r->pid)))
            set_argv(p, e->payload, e->payload_len);
        break;
    case REWIND_REC_EXIT:
        if (r->tid == r->pid)
            drop(t, r->pid);
        else if ((p = find(t, r->pid)) && p->threads > 0)
            p->threads--;
        break;
    default:
        break;
    }
    return 0;
}

static int under_init(struct tree *t, const struct proc *p)
{
    for (int depth = 0; p && depth < 4096; depth++) {
        if (p->pid == 1)
            return 1;
        p = find(t, p->ppid);
    }
    return 0;
}

static void print_tree(struct tree *t, uint32_t pid, int depth, int json, int *n)
{
    for (size_t i = 0; i < t->n; i++) {
        struct proc *p = &t->v[i];
        if (p->ppid != pid || p->pid == pid)
            continue;
        if (json) {
            printf("%s{\"pid\":%u,\"ppid\":%u,\"threads\":%d,\"argv\":", (*n)++ ? ",\n" : "",
                   p->pid, p->ppid, p->threads + 1);
            cli_json_str(p->argv, strlen(p->argv));
            putchar('}');
        } else {
            printf("%7u %7u %7d  %*s%s\n", p->pid, p->ppid, p->threads + 1, 2 * depth, "",
                   p->argv);
        }
        print_tree(t, p->pid, depth + 1, json, n);
    }
}

int cmd_ps(int argc, char **argv)
{
    static const struct option lo[] = {
        {"json", no_argument, 0, 'j'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    int json = 0, c;
    struct tree t = {.upto = UINT64_MAX};
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
        if (c == 'j')
            json = 1;
        else if (c == 'h') {
            puts("usage: rewind ps RUN [STEP] [--json]\n\nThe process tree alive at STEP "
                 "(default: the end of the run): pid, ppid,\nthreads and argv, rebuilt from "
                 "the trace's fork, exec and exit events.");
            return 0;
        } else
            return cli_error(2, "see rewind ps --help");
    }
    if (optind >= argc || argc - optind > 2)
        return cli_error(2, "ps needs RUN [STEP] (see rewind ps --help)");
    if (argc - optind == 2 && cli_parse_step(argv[optind + 1], &t.upto) < 0)
        return cli_error(2, "STEP must be a step number: %s", argv[optind + 1]);
    char dir[4096];
    json_t *m = cli_load_run(argv[optind], dir, sizeof(dir));
    if (!m)
        return 1;
    json_decref(m);
    struct proc *init = add(&t, 1, 0);
    if (init)
        snprintf(init->argv, sizeof(init->argv), "/init");
    int rc = cli_each_entry(dir, step, &t);
    /* Keep only init's descendants (kernel threads hang off kthreadd). */
    for (size_t i = 0; i < t.n;)
        if (!under_init(&t, &t.v[i]))
            t.v[i] = t.v[--t.n];
        else
            i++;
    int n = 0;
    if (json) {
        putchar('[');
        if (find(&t, 1)) {
            printf("{\"pid\":1,\"ppid\":0,\"threads\":1,\"argv\":\"/init\"}");
            n = 1;
        }
        print_tree(&t, 1, 0, 1, &n);
        puts("]");
    } else {
        printf("%7s %7s %7s  %s\n", "PID", "PPID", "THREADS", "ARGV");
        if (find(&t, 1))
            printf("%7u %7u %7d  %s\n", 1u, 0u, 1, "/init");
        print_tree(&t, 1, 1, 0, &n);
    }
    free(t.v);
    return rc < 0 ? 1 : 0;
}
