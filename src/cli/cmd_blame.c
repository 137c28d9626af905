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

static void blame_json(const char *id, uint64_t offset, const struct rw_blame *b)
{
    if (!b->found) {
        printf("{\"run\":\"%s\",\"offset\":%" PRIu64 ",\"found\":false,\"writes\":%" PRIu64 "}", id,
               offset, b->writes);
        return;
    }
    const struct rw_write *w = &b->w;
    const char *argv = b->chain_n ? b->chain[0].argv : "";
    printf("{\"run\":\"%s\",\"offset\":%" PRIu64 ",\"found\":true,\"pid\":%u,\"tid\":%u,"
           "\"step\":%" PRIu64 ",\"event\":%" PRIu64 ",\"write_offset\":%" PRIu64
           ",\"write_length\":%" PRIu64 ",\"argv\":",
           id, offset, w->pid, w->tid, w->step, w->index, w->offset, w->length);
    cli_read_json_str(argv, strlen(argv));
    printf(",\"still_holds\":%s,\"chain\":[", b->holds < 0 ? "null" : b->holds ? "true" : "false");
    for (size_t k = 0; k < b->chain_n; k++) {
        printf("%s{\"pid\":%u,\"argv\":", k ? "," : "", b->chain[k].pid);
        cli_read_json_str(b->chain[k].argv, strlen(b->chain[k].argv));
        putchar('}');
    }
    printf("]}");
}

static void blame_text(const char *id, const char *path, uint64_t offset, const struct rw_blame *b,
                       const char *indent)
{
    if (!b->found) {
        printf("%sbyte %" PRIu64 " of %s in run %s: no tracked write covers it (%" PRIu64
               " writes to the file recorded%s)\n",
               indent, offset, path, id, b->writes,
               b->writes ? "" : "; was the run made with --track-writes matching it?");
        return;
    }
    const struct rw_write *w = &b->w;
    printf("%sbyte %" PRIu64 " of %s in run %s was written by pid %u `", indent, offset, path, id,
           w->pid);
    put_argv(b->chain_n ? b->chain[0].argv : "?");
    printf("` at step %" PRIu64 " (event %" PRIu64 ")\n", w->step, w->index);
    printf("%s  the write: %" PRIu64 " bytes at offset %" PRIu64 ", tid %u%s\n", indent, w->length,
           w->offset, w->tid,
           b->holds < 0 ? ""
           : b->holds   ? "; the file still holds these bytes"
                        : "; the file's bytes there changed since");
    printf("%s  chain:", indent);
    for (size_t k = 0; k < b->chain_n; k++) {
        printf("%s pid %u `", k ? " <-" : "", b->chain[k].pid);
        put_argv(b->chain[k].argv);
        putchar('`');
    }
    if (!b->chain_n)
        printf(" pid %u (not in the process tree)", w->pid);
    putchar('\n');
}

int cli_blame(rw_home *h, const char *id, const char *path, uint64_t offset, const void *content,
              size_t clen, int json, const char *indent)
{
    struct rw_blame *b = malloc(sizeof(*b));
    struct rw_error err;
    if (!b)
        return cli_error(-1, "out of memory");
    if (rw_blame(h, id, path, offset, content, clen, b, &err) < 0) {
        free(b);
        return cli_read_fail(-1, &err);
    }
    if (json)
        blame_json(id, offset, b);
    else
        blame_text(id, path, offset, b, indent);
    int rc = b->found ? 0 : 1;
    free(b);
    return rc;
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
