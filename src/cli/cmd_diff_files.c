/*
 * cmd_diff_files: `rewind diff --files A B [--json] [--no-diffoscope]`: the
 * entries two runs collected (--collect, docs/nix.md) that differ, with a
 * short diff of each: diffoscope's first lines when it is installed, else
 * the byte range that differs and the bytes at its start. Exit 0 when the
 * collected files are identical, 1 when they differ, 2 on error.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "cli_read.h"
#include "rewind.h"

#define DIFFOSCOPE_LINES 30

static void json_str(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            printf("\\%c", c);
        else if (c < 32)
            printf("\\u%04x", c);
        else
            putchar(c);
    }
    putchar('"');
}

static void show_bytes(const char *side, const unsigned char *p, size_t len, uint64_t at)
{
    printf("    %s @%" PRIu64 ": \"", side, at);
    for (size_t i = (size_t)at; i < len && i < at + 48; i++) {
        unsigned char c = p[i];
        if (c == '\n')
            fputs("\\n", stdout);
        else if (c == '"' || c == '\\')
            printf("\\%c", c);
        else if (c < 32 || c > 126)
            printf("\\x%02x", c);
        else
            putchar(c);
    }
    puts(at + 48 < len ? "\"..." : "\"");
}

static int have_diffoscope(void)
{
    return system("command -v diffoscope >/dev/null 2>&1") == 0;
}

static int write_tmp(const char *dir, const char *name, const void *p, size_t n)
{
    char path[4200];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    int ok = fwrite(p, 1, n, f) == n;
    return fclose(f) == 0 && ok ? 0 : -1;
}

/* diffoscope's first lines on the two contents (named like the file, so it
 * picks the right comparator). 0, or -1 when it could not run. */
static int diffoscope(const char *path, const void *a, size_t la, const void *b, size_t lb)
{
    char dir[] = "/tmp/rewind-diff-XXXXXX";
    if (!mkdtemp(dir))
        return -1;
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    char da[4200], db[4200];
    snprintf(da, sizeof(da), "%s/a", dir);
    snprintf(db, sizeof(db), "%s/b", dir);
    int rc = -1;
    if (mkdir(da, 0700) == 0 && mkdir(db, 0700) == 0 && write_tmp(da, base, a, la) == 0 &&
        write_tmp(db, base, b, lb) == 0) {
        char cmd[9000];
        snprintf(cmd, sizeof(cmd), "cd '%s' && diffoscope --text - 'a/%s' 'b/%s' 2>/dev/null", dir,
                 base, base);
        if (!strchr(base, '\'')) {
            FILE *p = popen(cmd, "r");
            if (p) {
                char line[400];
                int n = 0;
                while (fgets(line, sizeof(line), p)) {
                    if (n++ < DIFFOSCOPE_LINES)
                        printf("    %s%s", line, strchr(line, '\n') ? "" : "\n");
                }
                if (n > DIFFOSCOPE_LINES)
                    printf("    ... (%d more lines of diffoscope)\n", n - DIFFOSCOPE_LINES);
                int st = pclose(p);
                rc = (WIFEXITED(st) && WEXITSTATUS(st) <= 1 && n) ? 0 : -1;
            }
        }
    }
    snprintf(da, sizeof(da), "rm -rf '%s'", dir);
    if (system(da) != 0)
        rc = rc < 0 ? -1 : rc;
    return rc;
}

struct pair {
    const struct rw_collected *a, *b;
};

static int load(rw_home *h, const char *ref, char id[RW_ID_MAX], struct rw_collected **v, size_t *n)
{
    struct rw_error err;
    char status[256];
    if (rw_resolve(h, ref, id, &err) < 0)
        return cli_error(2, "%s", err.msg);
    if (rw_collect_list(h, id, v, n, status, sizeof(status), &err) < 0)
        return cli_error(2, "%s", err.msg);
    if (strcmp(status, "ok"))
        fprintf(stderr, "rewind: warning: run %s collected incompletely: %s\n", id, status);
    return 0;
}

int cmd_diff_files(int argc, char **argv)
{
    static const struct option lo[] = {{"files", no_argument, 0, 'f'},
                                       {"json", no_argument, 0, 'j'},
                                       {"no-diffoscope", no_argument, 0, 'n'},
                                       {"help", no_argument, 0, 'h'},
                                       {0, 0, 0, 0}};
    int json = 0, nodo = 0, c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
        if (c == 'j')
            json = 1;
        else if (c == 'n')
            nodo = 1;
        else if (c == 'h') {
            puts("usage: rewind diff --files RUN-A RUN-B [--json] [--no-diffoscope]\n\n"
                 "The files two runs kept with --collect that differ (or exist in one only),\n"
                 "each with a short diff: diffoscope's first lines when diffoscope is\n"
                 "installed (not with --no-diffoscope), else the byte range that differs.\n"
                 "Exit 0 if the collected files are identical, 1 if they differ.");
            return 0;
        } else if (c != 'f')
            return cli_error(2, "see rewind diff --help");
    }
    if (argc - optind != 2)
        return cli_error(2, "diff --files needs two runs (see rewind diff --help)");
    rw_home *h = cli_read_home();
    char ia[RW_ID_MAX], ib[RW_ID_MAX];
    struct rw_collected *va = NULL, *vb = NULL;
    size_t na = 0, nb = 0;
    if (load(h, argv[optind], ia, &va, &na) || load(h, argv[optind + 1], ib, &vb, &nb)) {
        free(va);
        return 2;
    }
    struct pair *ps = calloc(na + nb + 1, sizeof(*ps));
    size_t np = 0, i = 0, j = 0, same = 0;
    while (ps && (i < na || j < nb)) {
        int cmp = i >= na ? 1 : j >= nb ? -1 : strcmp(va[i].path, vb[j].path);
        struct pair p = {cmp <= 0 ? &va[i] : NULL, cmp >= 0 ? &vb[j] : NULL};
        i += cmp <= 0;
        j += cmp >= 0;
        if (p.a && p.b && p.a->type == p.b->type && !strcmp(p.a->sha256, p.b->sha256) &&
            p.a->mode == p.b->mode)
            same++;
        else
            ps[np++] = p;
    }
    int do_ = !json && !nodo && have_diffoscope();
    if (json)
        printf("{\"a\":\"%s\",\"b\":\"%s\",\"identical\":%s,\"same\":%zu,\"files\":[", ia, ib,
               np ? "false" : "true", same);
    else if (!np)
        printf("identical: %zu collected entries\n", same);
    else
        printf("%zu of %zu collected entries differ (A %s, B %s)\n", np, np + same, ia, ib);
    for (size_t k = 0; k < np; k++) {
        const struct rw_collected *a = ps[k].a, *b = ps[k].b, *any = a ? a : b;
        const char *what = !a                             ? "only in B"
                           : !b                           ? "only in A"
                           : a->type != b->type           ? "type differs"
                           : strcmp(a->sha256, b->sha256) ? "content differs"
                                                          : "mode differs";
        void *da = NULL, *db = NULL;
        size_t la = 0, lb = 0;
        uint64_t first = 0, last = 0;
        int ranged = 0;
        struct rw_error err;
        if (a && b && a->type == b->type && a->type != 'd' && strcmp(a->sha256, b->sha256)) {
            if (rw_collect_read(h, ia, a->path, &da, &la, &err) < 0 ||
                rw_collect_read(h, ib, b->path, &db, &lb, &err) < 0)
                cli_say("%s", err.msg);
            else
                ranged = rw_diff_range(da, la, db, lb, &first, &last);
        }
        if (json) {
            printf("%s{\"path\":", k ? "," : "");
            json_str(any->path);
            printf(",\"change\":\"%s\"", what);
            if (a)
                printf(",\"size_a\":%" PRIu64 ",\"sha256_a\":\"%s\"", a->size, a->sha256);
            if (b)
                printf(",\"size_b\":%" PRIu64 ",\"sha256_b\":\"%s\"", b->size, b->sha256);
            if (ranged)
                printf(",\"first_diff\":%" PRIu64 ",\"last_diff\":%" PRIu64, first, last);
            putchar('}');
        } else {
            printf("%s: %s", any->path, what);
            if (a && b)
                printf(" (%" PRIu64 " -> %" PRIu64 " bytes)", a->size, b->size);
            putchar('\n');
            if (ranged && !(do_ && diffoscope(any->path, da, la, db, lb) == 0)) {
                printf("    bytes %" PRIu64 "..%" PRIu64 " differ\n", first, last);
                show_bytes("A", da, la, first);
                show_bytes("B", db, lb, first);
            }
        }
        free(da);
        free(db);
    }
    if (json)
        puts("]}");
    free(ps);
    free(va);
    free(vb);
    return np ? 1 : 0;
}
