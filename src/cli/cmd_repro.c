/*
 * cmd_repro: `rewind repro [--builds K] [--vary LIST] [--json] RUN-OPTIONS
 * --collect PATH -- CMD`: K builds of CMD with varied seeds, directory
 * orders and epochs (rw_repro), then which collected files differ from
 * build 1's and, for each, who wrote the first differing byte (the builds
 * track writes under PATH unless --track-writes says otherwise).
 * docs/nix.md, docs/tutorials/reproducible-builds.md.
 * This file parses and prints: the builds, the comparison and the blame
 * are the engine's (rw_repro, rw_repro_compare in src/run/repro.c;
 * rw_blame in src/trace/writes.c).
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

/* A repro's command line, and what it holds until it ends. */
struct repro_cli {
    struct rw_repro_config c;
    struct rw_nix_config nc;
    struct rw_nix_job nj;
    int json, nix;
    double timeout;
    char **rest; /* RUN-OPTIONS and the command (or the installable) */
    int nrest;
    char base[2200], glob[2300];
};

/* A helper's "go on": every other value is cmd_repro's exit code. */
#define REPRO_GO (-1)

/* repro's own options; the rest into r->rest. The index of "--" (argc if
 * none); *stop set to an exit code when the command ends here. */
static int repro_options(int argc, char **argv, struct repro_cli *r, int *stop)
{
    int i;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--"))
            break;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            help();
            *stop = 0;
            return i;
        } else if (!strcmp(a, "--json")) {
            r->json = 1;
        } else if (!strcmp(a, "--builds") || !strcmp(a, "--vary")) {
            if (i + 1 >= argc) {
                *stop = cli_error(2, "%s needs a value (see rewind repro --help)", a);
                return i;
            }
            const char *v = argv[++i];
            uint64_t n;
            if (!strcmp(a, "--vary")) {
                if (parse_vary(v, &r->c) < 0) {
                    *stop = cli_error(2, "--vary takes seed, dirorder, epoch or none: %s", v);
                    return i;
                }
            } else if (cli_read_step(v, &n) < 0 || n < 2 || n > RW_REPRO_MAX) {
                *stop = cli_error(2, "--builds needs a number from 2 to %d: %s", RW_REPRO_MAX, v);
                return i;
            } else {
                r->c.builds = n;
            }
        } else {
            r->rest[r->nrest++] = argv[i];
        }
    }
    return i;
}

/* The command line: repro's options, then the run's (or an installable,
 * docs/nix.md: the derivation's build is the job). */
static int repro_parse(int argc, char **argv, struct repro_cli *r)
{
    rw_repro_config_init(&r->c);
    r->rest = calloc((size_t)argc + 2, sizeof(char *));
    if (!r->rest)
        return cli_error(2, "out of memory");
    r->rest[r->nrest++] = argv[0];
    int stop = REPRO_GO;
    int i = repro_options(argc, argv, r, &stop);
    if (stop != REPRO_GO)
        return stop;
    if (i == argc) {
        rw_nix_config_init(&r->nc);
        int np = cli_nix_args(r->nrest, r->rest, &r->nc, &r->timeout);
        if (np < 0)
            return 2;
        r->nix = np == 0;
    }
    for (; i < argc; i++)
        r->rest[r->nrest++] = argv[i];
    if (!r->nix) {
        int pr = cli_run_args(r->nrest, r->rest, &r->c.run, &r->timeout);
        if (pr != 0)
            return pr > 0 ? 0 : 2;
        if (!r->c.run.collect)
            return cli_error(2, "repro needs --collect PATH: the outputs to compare");
    }
    return REPRO_GO;
}

/* The builds: made and stored by rw_repro (src/run/repro.c). */
static int repro_build(rw_home *h, struct repro_cli *r, struct rw_repro_build *b)
{
    struct rw_error err;
    if (r->nix) {
        int e = cli_nix_job(h, &r->nc, &r->nj, r->json);
        if (e)
            return e;
        r->c.run = r->nj.run;
    }
    rw_repro_paths(&r->c, r->nix ? r->nj.out_path : NULL, r->base, sizeof(r->base), r->glob,
                   sizeof(r->glob));
    r->c.run.quiet = 1;
    r->c.run.observer = cli_stdio;
    r->c.progress = r->json && !getenv("REWIND_PROGRESS") ? NULL : on_progress;
    r->c.abort = cli_abort_on_signals(r->timeout);
    r->c.run.abort = r->c.abort;
    int rr = rw_repro(h, &r->c, b, &err);
    if (r->nix)
        rw_nix_job_free(&r->nj);
    if (rr < 0)
        return cli_error(err.code ? err.code : 2, "%s", err.msg);
    return REPRO_GO;
}

static void print_builds(const struct repro_cli *r, const struct rw_repro_build *b)
{
    if (r->json) {
        printf("{\"builds\":[");
        for (uint64_t k = 0; k < r->c.builds; k++)
            printf("%s{\"run\":\"%s\",\"outcome\":\"%s\",\"exit\":%d,\"seed\":%" PRIu64
                   ",\"dirorder\":%s%" PRIu64 "%s,\"epoch\":%" PRId64 "}",
                   k ? "," : "", b[k].id, rw_outcome_word(b[k].outcome), b[k].exit_code, b[k].seed,
                   b[k].dirorder_on ? "" : "null", b[k].dirorder_on ? b[k].dirorder : 0, "",
                   b[k].epoch_s);
        printf("],\"differences\":[");
        return;
    }
    for (uint64_t k = 0; k < r->c.builds; k++)
        printf("build %" PRIu64 ": run %s %s %d\n", k + 1, b[k].id, rw_outcome_word(b[k].outcome),
               b[k].exit_code);
}

/* What print_diff needs of the session. */
struct repro_print {
    rw_home *h;
    const struct rw_repro_build *b;
    int json, first;
    long n; /* differences printed */
};

/* One difference rw_repro_compare found, blamed on both sides. */
static void print_diff(void *ctx, const struct rw_repro_diff *d)
{
    struct repro_print *p = ctx;
    const char *id0 = p->b[0].id, *idk = p->b[d->build].id;
    uint64_t k = d->build;
    if (p->json) {
        printf("%s{\"path\":", p->first ? "" : ",");
        cli_read_json_str(d->path, strlen(d->path));
        printf(",\"build\":%" PRIu64 ",\"change\":\"%s\"", k + 1,
               d->change == '+'   ? "only_in_build"
               : d->change == '-' ? "missing_in_build"
                                  : "differs");
        if (d->ranged) {
            printf(",\"first_diff\":%" PRIu64 ",\"last_diff\":%" PRIu64 ",\"blame\":", d->first,
                   d->last);
            cli_blame(p->h, idk, d->path, d->first, d->datak, d->lenk, 1, "");
            printf(",\"blame_build1\":");
            cli_blame(p->h, id0, d->path, d->first, d->data0, d->len0, 1, "");
        }
        putchar('}');
    } else {
        printf("%s %s%" PRIu64, d->path,
               d->change == '+'   ? "only in build "
               : d->change == '-' ? "missing in build "
                                  : "differs in build ",
               k + 1);
        if (d->ranged)
            printf(": bytes %" PRIu64 "..%" PRIu64 " (of %zu and %zu)\n", d->first, d->last,
                   d->len0, d->lenk);
        else
            putchar('\n');
        if (d->ranged) {
            char ind[40];
            cli_blame(p->h, id0, d->path, d->first, d->data0, d->len0, 0, "  build 1: ");
            snprintf(ind, sizeof(ind), "  build %" PRIu64 ": ", k + 1);
            cli_blame(p->h, idk, d->path, d->first, d->datak, d->lenk, 0, ind);
        }
    }
    p->first = 0;
    p->n++;
}

/* The report: the builds, each difference, the verdict. The exit code. */
static int repro_report(rw_home *h, const struct repro_cli *r, const struct rw_repro_build *b)
{
    struct rw_error err;
    int differs = !rw_repro_ended_alike(b, r->c.builds), rc = 0;
    print_builds(r, b);
    struct repro_print p = {.h = h, .b = b, .json = r->json, .first = 1};
    long n = rw_repro_compare(h, b, r->c.builds, r->base, print_diff, &p, &err);
    if (n < 0)
        rc = cli_error(2, "%s", err.msg);
    if (n == -1) /* build 1's files unreadable: nothing compared */
        return rc;
    if (p.n > 0) /* also those before a build whose files cannot be listed */
        differs = 1;
    if (r->json)
        printf("],\"reproducible\":%s}\n", differs ? "false" : "true");
    else if (!rc)
        printf("%s\n", differs ? "NOT reproducible"
                               : "reproducible: every build collected the "
                                 "same files");
    return rc ? rc : differs;
}

int cmd_repro(int argc, char **argv)
{
    static struct repro_cli r; /* the run config points into it until the end */
    static struct rw_repro_build b[RW_REPRO_MAX];
    memset(&r, 0, sizeof(r));
    int rc = repro_parse(argc, argv, &r);
    rw_home *h = NULL;
    if (rc != REPRO_GO)
        goto out;
    h = cli_open_home();
    if (!h) {
        rc = RW_EINTERNAL;
        goto out;
    }
    if ((rc = repro_build(h, &r, b)) != REPRO_GO)
        goto out;
    rc = repro_report(h, &r, b);
out:
    free(r.rest);
    if (h)
        rw_home_close(h);
    return rc;
}
