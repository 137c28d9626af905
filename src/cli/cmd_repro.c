/*
 * cmd_repro: `rewind repro [--builds K] [--vary LIST] [--json] RUN-OPTIONS
 * --collect PATH -- CMD`: K builds of CMD with varied seeds, directory
 * orders and epochs (rw_repro), then which collected files differ from
 * build 1's and, for each, who wrote the first differing byte (the builds
 * track writes under PATH unless --track-writes says otherwise).
 * docs/nix.md, docs/tutorials/reproducible-builds.md.
 * Exit 0 when every build ended alike and collected identical files, 1 when
 * something does not reproduce, 2 on bad usage or a build that cannot run.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_read.h"
#include "rewind.h"

static void help(void)
{
    puts("usage: rewind repro [--builds K] [--vary LIST] [--json] RUN-OPTIONS --collect PATH\n"
         "                    -- CMD [ARG...]\n"
         "       rewind repro [--builds K] [--vary LIST] [--json] [RUN-OPTIONS]\n"
         "                    INSTALLABLE | -f FILE [-A ATTR]\n"
         "\n"
         "Build K times (default 2) with varied inputs and report what does not reproduce:\n"
         "the collected files (--collect PATH, required) that differ from build 1's, with\n"
         "the process that wrote the first differing byte of each (rewind blame).\n"
         "\n"
         "  --builds K     number of builds (2..64)\n"
         "  --vary LIST    what build k varies, comma-separated (default seed,dirorder,epoch):\n"
         "                 seed (seed+k), dirorder (directory order k; build 1 keeps the\n"
         "                 filesystems' own order), epoch (clock k*1000003 s later), none\n"
         "  --json         one JSON object\n"
         "  RUN-OPTIONS    as for rewind run; --track-writes defaults to PATH/*\n"
         "  INSTALLABLE    .#attr, FLAKE#attr, a .drv or -f FILE -A ATTR: build the\n"
         "                 derivation as rewind nix does; PATH is its output\n"
         "\n"
         "Exit status: 0 reproducible, 1 something differs, 2 bad usage or a build that\n"
         "could not run.");
}

static int parse_vary(const char *v, struct rw_repro_config *c)
{
    char buf[200];
    snprintf(buf, sizeof(buf), "%s", v);
    c->vary_seed = c->vary_dirorder = c->vary_epoch = 0;
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (!strcmp(t, "seed"))
            c->vary_seed = 1;
        else if (!strcmp(t, "dirorder"))
            c->vary_dirorder = 1;
        else if (!strcmp(t, "epoch"))
            c->vary_epoch = 1;
        else if (strcmp(t, "none"))
            return -1;
    }
    return 0;
}

static void on_progress(void *ctx, const char *line)
{
    (void)ctx;
    fprintf(stderr, "rewind: %s\n", line);
}

/* The guest path of a collected entry. */
static void guest_path(const char *base, const char *rel, char *out, size_t n)
{
    if (!strcmp(rel, "."))
        snprintf(out, n, "%s", base);
    else
        snprintf(out, n, "%s%s%s", base, base[strlen(base) - 1] == '/' ? "" : "/", rel);
}

int cmd_repro(int argc, char **argv)
{
    static struct rw_repro_config c;
    rw_repro_config_init(&c);
    int json = 0, i, nrest = 0;
    double timeout = 0;
    char **rest = calloc((size_t)argc + 2, sizeof(char *));
    if (!rest)
        return cli_error(2, "out of memory");
    rest[nrest++] = argv[0];
    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--"))
            break;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            help();
            free(rest);
            return 0;
        } else if (!strcmp(a, "--json")) {
            json = 1;
        } else if (!strcmp(a, "--builds") || !strcmp(a, "--vary")) {
            if (i + 1 >= argc)
                return cli_error(2, "%s needs a value (see rewind repro --help)", a);
            const char *v = argv[++i];
            uint64_t n;
            if (!strcmp(a, "--vary")) {
                if (parse_vary(v, &c) < 0)
                    return cli_error(2, "--vary takes seed, dirorder, epoch or none: %s", v);
            } else if (cli_read_step(v, &n) < 0 || n < 2 || n > RW_REPRO_MAX) {
                return cli_error(2, "--builds needs a number from 2 to %d: %s", RW_REPRO_MAX, v);
            } else {
                c.builds = n;
            }
        } else {
            rest[nrest++] = argv[i];
        }
    }
    /* repro INSTALLABLE (docs/nix.md): the derivation's build is the job */
    static struct rw_nix_config nc;
    static struct rw_nix_job nj;
    int nix = 0;
    if (i == argc) {
        rw_nix_config_init(&nc);
        int np = cli_nix_args(nrest, rest, &nc, &timeout);
        if (np < 0)
            return 2;
        nix = np == 0;
    }
    for (; i < argc; i++)
        rest[nrest++] = argv[i];
    if (!nix) {
        int pr = cli_run_args(nrest, rest, &c.run, &timeout);
        if (pr != 0)
            return pr > 0 ? 0 : 2;
        if (!c.run.collect)
            return cli_error(2, "repro needs --collect PATH: the outputs to compare");
    }
    rw_home *h = cli_open_home();
    if (!h)
        return RW_EINTERNAL;
    static char base[2200], glob[2300];
    struct rw_error err;
    if (nix) {
        int e = cli_nix_job(h, &nc, &nj, json);
        if (e) {
            rw_home_close(h);
            return e;
        }
        c.run = nj.run;
        /* the output is a directory or one file: both match PATH* */
        if (!c.run.track_writes) {
            snprintf(glob, sizeof(glob), "%s*", nj.out_path);
            c.run.track_writes = glob;
        }
    }
    if (c.run.collect[0] == '/')
        snprintf(base, sizeof(base), "%s", c.run.collect);
    else
        snprintf(base, sizeof(base), "%s%s%s", c.run.cwd,
                 c.run.cwd[strlen(c.run.cwd) - 1] == '/' ? "" : "/", c.run.collect);
    if (!c.run.track_writes) {
        snprintf(glob, sizeof(glob), "%s%s*", base, base[strlen(base) - 1] == '/' ? "" : "/");
        c.run.track_writes = glob;
    }
    c.run.quiet = 1;
    c.run.observer = cli_stdio;
    c.progress = json && !getenv("REWIND_PROGRESS") ? NULL : on_progress;
    c.abort = cli_abort_on_signals(timeout);
    c.run.abort = c.abort;
    static struct rw_repro_build b[RW_REPRO_MAX];
    int rr = rw_repro(h, &c, b, &err);
    if (nix)
        rw_nix_job_free(&nj);
    if (rr < 0) {
        rw_home_close(h);
        return cli_error(err.code ? err.code : 2, "%s", err.msg);
    }
    int differs = 0;
    for (uint64_t k = 1; k < c.builds; k++)
        if (b[k].outcome != b[0].outcome || b[k].exit_code != b[0].exit_code)
            differs = 1;
    if (json) {
        printf("{\"builds\":[");
        for (uint64_t k = 0; k < c.builds; k++)
            printf("%s{\"run\":\"%s\",\"outcome\":\"%s\",\"exit\":%d,\"seed\":%" PRIu64
                   ",\"dirorder\":%s%" PRIu64 "%s,\"epoch\":%" PRId64 "}",
                   k ? "," : "", b[k].id, rw_outcome_word(b[k].outcome), b[k].exit_code, b[k].seed,
                   b[k].dirorder_on ? "" : "null", b[k].dirorder_on ? b[k].dirorder : 0, "",
                   b[k].epoch_s);
        printf("],\"differences\":[");
    } else {
        for (uint64_t k = 0; k < c.builds; k++)
            printf("build %" PRIu64 ": run %s %s %d\n", k + 1, b[k].id,
                   rw_outcome_word(b[k].outcome), b[k].exit_code);
    }
    int first = 1, rc = 0;
    struct rw_collected *v0 = NULL;
    size_t n0 = 0;
    char status[256];
    if (rw_collect_list(h, b[0].id, &v0, &n0, status, sizeof(status), &err) < 0) {
        rc = cli_error(2, "%s", err.msg);
        goto out;
    }
    for (uint64_t k = 1; k < c.builds && !rc; k++) {
        struct rw_collected *vk = NULL;
        size_t nk = 0;
        if (rw_collect_list(h, b[k].id, &vk, &nk, status, sizeof(status), &err) < 0) {
            rc = cli_error(2, "%s", err.msg);
            break;
        }
        size_t x = 0, y = 0;
        while (x < n0 || y < nk) {
            int cmp = x >= n0 ? 1 : y >= nk ? -1 : strcmp(v0[x].path, vk[y].path);
            const struct rw_collected *a = cmp <= 0 ? &v0[x] : NULL, *e = cmp >= 0 ? &vk[y] : NULL;
            x += cmp <= 0;
            y += cmp >= 0;
            if (a && e && a->type == e->type && !strcmp(a->sha256, e->sha256))
                continue;
            differs = 1;
            const struct rw_collected *any = a ? a : e;
            char gp[3400];
            guest_path(base, any->path, gp, sizeof(gp));
            const char *what = !a   ? "only in build "
                               : !e ? "missing in build "
                                    : "differs in build ";
            void *da = NULL, *dk = NULL;
            size_t la = 0, lk = 0;
            uint64_t from = 0, to = 0;
            int ranged = a && e && a->type == 'f' && e->type == 'f' &&
                         rw_collect_read(h, b[0].id, a->path, &da, &la, &err) == 0 &&
                         rw_collect_read(h, b[k].id, e->path, &dk, &lk, &err) == 0 &&
                         cli_diff_range(da, la, dk, lk, &from, &to);
            if (json) {
                printf("%s{\"path\":", first ? "" : ",");
                cli_read_json_str(gp, strlen(gp));
                printf(",\"build\":%" PRIu64 ",\"change\":\"%s\"", k + 1,
                       !a   ? "only_in_build"
                       : !e ? "missing_in_build"
                            : "differs");
                if (ranged) {
                    printf(",\"first_diff\":%" PRIu64 ",\"last_diff\":%" PRIu64 ",\"blame\":", from,
                           to);
                    cli_blame(h, b[k].id, gp, from, dk, lk, 1, "");
                    printf(",\"blame_build1\":");
                    cli_blame(h, b[0].id, gp, from, da, la, 1, "");
                }
                putchar('}');
            } else {
                printf("%s %s%" PRIu64, gp, what, k + 1);
                if (ranged)
                    printf(": bytes %" PRIu64 "..%" PRIu64 " (of %zu and %zu)\n", from, to, la, lk);
                else
                    putchar('\n');
                if (ranged) {
                    char ind[40];
                    cli_blame(h, b[0].id, gp, from, da, la, 0, "  build 1: ");
                    snprintf(ind, sizeof(ind), "  build %" PRIu64 ": ", k + 1);
                    cli_blame(h, b[k].id, gp, from, dk, lk, 0, ind);
                }
            }
            first = 0;
            free(da);
            free(dk);
        }
        free(vk);
    }
    if (json)
        printf("],\"reproducible\":%s}\n", differs ? "false" : "true");
    else if (!rc)
        printf("%s\n", differs ? "NOT reproducible"
                               : "reproducible: every build collected the "
                                 "same files");
    if (!rc)
        rc = differs;
out:
    free(v0);
    free(rest);
    rw_home_close(h);
    return rc;
}
