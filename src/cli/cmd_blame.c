/*
 * cmd_blame: `rewind blame RUN PATH [OFFSET | --diff OTHER] [--json]`: the
 * process that wrote byte OFFSET of PATH (default 0), or the first byte of
 * each range where RUN's collected PATH differs from OTHER's: its pid,
 * argv, the step and the write, and the chain of processes above it
 * (docs/nix.md). It needs a run made with --track-writes GLOB matching
 * PATH; --diff needs both runs made with --collect holding PATH.
 * Exit 0 when every byte asked about was blamed, 1 when one was not (no
 * tracked write covers it), 2 on error.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_read.h"
#include "rewind.h"

#define RANGES_MAX 16
#define RANGE_GAP 16 /* differing bytes closer than this are one range */

struct find {
    const char *path;
    uint64_t offset, writes;
    int found;
    struct rw_write w;
};

static int on_write(void *ctx, const struct rw_write *w)
{
    struct find *f = ctx;
    if (strcmp(w->path, f->path))
        return 0;
    f->writes++;
    if (f->offset >= w->offset && f->offset - w->offset < w->length) {
        f->found = 1;
        f->w = *w;
    }
    return 0;
}

struct procs {
    struct rw_proc v[4096];
    size_t n;
};

static int on_proc(void *ctx, const struct rw_proc *p)
{
    struct procs *ps = ctx;
    if (ps->n < sizeof(ps->v) / sizeof(ps->v[0]))
        ps->v[ps->n++] = *p;
    return 0;
}

static const struct rw_proc *proc_of(const struct procs *ps, uint32_t pid)
{
    for (size_t i = 0; i < ps->n; i++)
        if (ps->v[i].pid == pid)
            return &ps->v[i];
    return NULL;
}

/* A guest's argv on one line: up to its first newline (a script given to
 * sh -c shows its first line) and at most ARGV_SHOWN bytes, then "...";
 * other control bytes escaped (\xNN). It is untrusted text. */
#define ARGV_SHOWN 200
static void put_argv(const char *a)
{
    size_t i = 0;
    for (; a[i] && a[i] != '\n' && i < ARGV_SHOWN; i++) {
        unsigned char ch = (unsigned char)a[i];
        if (ch < 32 || ch == 127)
            printf("\\x%02x", ch);
        else
            putchar(ch);
    }
    if (a[i])
        fputs("...", stdout);
}

int cli_blame(rw_home *h, const char *id, const char *path, uint64_t offset, const void *content,
              size_t clen, int json, const char *indent)
{
    struct find f = {.path = path, .offset = offset};
    struct rw_trace_status st;
    struct rw_error err;
    if (rw_writes(h, id, on_write, &f, &st, &err) < 0)
        return cli_read_fail(-1, &err);
    if (!f.found) {
        if (json)
            printf("{\"run\":\"%s\",\"offset\":%" PRIu64 ",\"found\":false,\"writes\":%" PRIu64 "}",
                   id, offset, f.writes);
        else
            printf("%sbyte %" PRIu64 " of %s in run %s: no tracked write covers it (%" PRIu64
                   " writes to the file recorded%s)\n",
                   indent, offset, path, id, f.writes,
                   f.writes ? "" : "; was the run made with --track-writes matching it?");
        return 1;
    }
    static struct procs ps;
    ps.n = 0;
    if (rw_ps(h, id, f.w.step, on_proc, &ps, &st, &err) < 0)
        return cli_read_fail(-1, &err);
    int holds = -1; /* the file still holds the write's bytes */
    if (content && !(f.w.flags & 1) && f.w.offset <= clen && f.w.length <= clen - f.w.offset)
        holds = rw_fnv64((const char *)content + f.w.offset, f.w.length) == f.w.fnv;
    const struct rw_proc *p = proc_of(&ps, f.w.pid);
    if (json) {
        printf("{\"run\":\"%s\",\"offset\":%" PRIu64 ",\"found\":true,\"pid\":%u,\"tid\":%u,"
               "\"step\":%" PRIu64 ",\"event\":%" PRIu64 ",\"write_offset\":%" PRIu64
               ",\"write_length\":%" PRIu64 ",\"argv\":",
               id, offset, f.w.pid, f.w.tid, f.w.step, f.w.index, f.w.offset, f.w.length);
        cli_read_json_str(p ? p->argv : "", strlen(p ? p->argv : ""));
        printf(",\"still_holds\":%s,\"chain\":[", holds < 0 ? "null" : holds ? "true" : "false");
        int k = 0;
        for (const struct rw_proc *q = p; q && k < 64;
             q = q->pid == 1 ? NULL : proc_of(&ps, q->ppid)) {
            printf("%s{\"pid\":%u,\"argv\":", k++ ? "," : "", q->pid);
            cli_read_json_str(q->argv, strlen(q->argv));
            putchar('}');
        }
        printf("]}");
        return 0;
    }
    printf("%sbyte %" PRIu64 " of %s in run %s was written by pid %u `", indent, offset, path, id,
           f.w.pid);
    put_argv(p ? p->argv : "?");
    printf("` at step %" PRIu64 " (event %" PRIu64 ")\n", f.w.step, f.w.index);
    printf("%s  the write: %" PRIu64 " bytes at offset %" PRIu64 ", tid %u%s\n", indent, f.w.length,
           f.w.offset, f.w.tid,
           holds < 0 ? ""
           : holds   ? "; the file still holds these bytes"
                     : "; the file's bytes there changed since");
    printf("%s  chain:", indent);
    int k = 0;
    for (const struct rw_proc *q = p; q && k < 64; q = q->pid == 1 ? NULL : proc_of(&ps, q->ppid)) {
        printf("%s pid %u `", k++ ? " <-" : "", q->pid);
        put_argv(q->argv);
        putchar('`');
    }
    if (!p)
        printf(" pid %u (not in the process tree)", f.w.pid);
    putchar('\n');
    return 0;
}

/* The path of guest file path relative to run id's --collect PATH, or -1. */
int cli_collect_rel(const char *ref, const char *path, char *rel, size_t rellen, int quiet)
{
    struct rw_run_info info;
    if (cli_read_run(ref, &info) < 0)
        return -1;
    json_error_t je;
    json_t *spec = info.spec_json ? json_loads(info.spec_json, 0, &je) : NULL;
    const char *col = json_string_value(json_object_get(spec, "collect"));
    const char *cwd = json_string_value(json_object_get(spec, "cwd"));
    char base[2200];
    int rc = -1;
    if (col) {
        if (col[0] == '/' || !cwd)
            snprintf(base, sizeof(base), "%s", col);
        else
            snprintf(base, sizeof(base), "%s%s%s", cwd, cwd[strlen(cwd) - 1] == '/' ? "" : "/",
                     col);
        size_t bl = strlen(base);
        while (bl > 1 && base[bl - 1] == '/')
            base[--bl] = 0;
        if (!strcmp(path, base)) {
            snprintf(rel, rellen, ".");
            rc = 0;
        } else if (!strncmp(path, base, bl) && (path[bl] == '/' || bl == 1)) {
            snprintf(rel, rellen, "%s", path + bl + (bl == 1 ? 0 : 1));
            rc = 0;
        }
    }
    if (rc < 0 && !quiet)
        cli_error(2, "%s is not under run %s's --collect path%s%s", path, info.dir,
                  col ? " " : " (it has none)", col ? col : "");
    json_decref(spec);
    rw_run_info_free(&info);
    return rc;
}

/* The ranges where a and b differ (merged across gaps under RANGE_GAP). */
int cli_diff_ranges(const unsigned char *a, size_t la, const unsigned char *b, size_t lb,
                    uint64_t from[], uint64_t to[], int max)
{
    size_t m = la > lb ? la : lb;
    int n = 0;
    for (size_t i = 0; i < m && n < max;) {
        int d = i >= la || i >= lb || a[i] != b[i];
        if (!d) {
            i++;
            continue;
        }
        size_t j = i, last = i;
        while (j < m && j - last < RANGE_GAP) {
            if (j >= la || j >= lb || a[j] != b[j])
                last = j;
            j++;
        }
        from[n] = i;
        to[n++] = last;
        i = last + 1;
    }
    return n;
}

int cmd_blame(int argc, char **argv)
{
    static const struct option lo[] = {{"diff", required_argument, 0, 'd'},
                                       {"json", no_argument, 0, 'j'},
                                       {"help", no_argument, 0, 'h'},
                                       {0, 0, 0, 0}};
    const char *other = NULL;
    int json = 0, c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
        if (c == 'd')
            other = optarg;
        else if (c == 'j')
            json = 1;
        else if (c == 'h') {
            puts("usage: rewind blame RUN PATH [OFFSET | --diff OTHER] [--json]\n\n"
                 "The process that wrote byte OFFSET (default 0) of the guest file PATH in\n"
                 "RUN: its pid, argv, the step and the write, and the chain of processes\n"
                 "above it. With --diff OTHER: the same for the first byte of each range\n"
                 "where RUN's collected PATH differs from OTHER's. RUN must have been made\n"
                 "with --track-writes GLOB matching PATH (and --collect for --diff).\n"
                 "Exit 0 when every byte was blamed, 1 when one was not, 2 on error.");
            return 0;
        } else
            return cli_error(2, "see rewind blame --help");
    }
    int nargs = argc - optind;
    if (nargs < 2 || nargs > 3 || (other && nargs == 3))
        return cli_error(2,
                         "blame needs RUN PATH [OFFSET | --diff OTHER] (see rewind blame --help)");
    const char *path = argv[optind + 1];
    if (path[0] != '/')
        return cli_error(2, "PATH must be absolute, as the guest sees it: %s", path);
    uint64_t offset = 0;
    if (nargs == 3 && cli_read_step(argv[optind + 2], &offset) < 0)
        return cli_error(2, "OFFSET must be a non-negative integer: %s", argv[optind + 2]);
    rw_home *h = cli_read_home();
    if (!h)
        return 2;
    struct rw_error err = {0};
    char id[RW_ID_MAX], oid[RW_ID_MAX], rel[1100];
    if (rw_resolve(h, argv[optind], id, &err) < 0)
        return cli_read_fail(2, &err);
    void *ca = NULL, *cb = NULL;
    size_t la = 0, lb = 0;
    int have_a = cli_collect_rel(id, path, rel, sizeof(rel), !other) == 0 &&
                 rw_collect_read(h, id, rel, &ca, &la, &err) == 0;
    if (!other) {
        int r = cli_blame(h, id, path, offset, have_a ? ca : NULL, la, json, "");
        if (json)
            putchar('\n');
        free(ca);
        return r < 0 ? 2 : r;
    }
    if (!have_a)
        return err.msg[0] ? cli_read_fail(2, &err) : 2;
    if (rw_resolve(h, other, oid, &err) < 0 ||
        cli_collect_rel(oid, path, rel, sizeof(rel), 0) < 0 ||
        rw_collect_read(h, oid, rel, &cb, &lb, &err) < 0) {
        free(ca);
        return err.msg[0] ? cli_read_fail(2, &err) : 2;
    }
    uint64_t from[RANGES_MAX], to[RANGES_MAX];
    int n = cli_diff_ranges(ca, la, cb, lb, from, to, RANGES_MAX), worst = 0;
    if (json)
        printf("{\"run\":\"%s\",\"other\":\"%s\",\"path\":", id, oid);
    if (json)
        cli_read_json_str(path, strlen(path));
    if (json)
        printf(",\"ranges\":[");
    else if (!n)
        printf("%s is the same in runs %s and %s\n", path, id, oid);
    else
        printf("%s differs in %d range%s between runs %s and %s%s\n", path, n, n == 1 ? "" : "s",
               id, oid, n == RANGES_MAX ? " (the first ones)" : "");
    for (int i = 0; i < n; i++) {
        if (json) {
            printf("%s{\"from\":%" PRIu64 ",\"to\":%" PRIu64 ",\"blame\":", i ? "," : "", from[i],
                   to[i]);
        } else
            printf("bytes %" PRIu64 "..%" PRIu64 ":\n", from[i], to[i]);
        int r = cli_blame(h, id, path, from[i], ca, la, json, "  ");
        if (json)
            printf(",\"other\":");
        int r2 = cli_blame(h, oid, path, from[i], cb, lb, json, "  ");
        if (json)
            putchar('}');
        if (r < 0 || r2 < 0)
            worst = 2;
        else if ((r || r2) && !worst)
            worst = 1;
    }
    if (json)
        puts("]}");
    free(ca);
    free(cb);
    return worst;
}
