/*
 * cli_nix: the installable of `rewind nix`, `rewind check` and `rewind
 * repro` (docs/nix.md): -f FILE, -A ATTR or INSTALLABLE among run options,
 * parsed once for the three commands.
 *
 * Invariants:
 *  1. An argument is the installable only when it is not an option and not
 *     the value of the option before it (cli_nix_flag lists the run options
 *     that take no value; every other --option takes one unless written
 *     --option=VALUE), so `--dirorder 1` never makes "1" an installable;
 *     and nothing after `--` is one (it is the command of a plain run:
 *     `check -- prog arg` never takes "arg" for an installable).
 *  2. The options a derivation fixes (--root, --cwd, -e, --collect, a
 *     command) are refused with one line, never silently overridden.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "rewind_check.h"

/* Run options (cmd_run.c) and the callers' own that take no value. */
static int cli_nix_flag(const char *a)
{
    static const char *flags[] = {"--console", "--no-keyframes", "--help",
                                  "-h",        "--json",         "--keep-going"};
    for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++)
        if (!strcmp(a, flags[i]))
            return 1;
    return a[0] != '-' || strchr(a, '=') != NULL;
}

static int cli_nix_fixed(const char *a)
{
    static const char *fixed[] = {"--root", "--cwd", "-e", "--collect", "--"};
    for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++) {
        size_t l = strlen(fixed[i]);
        if (!strncmp(a, fixed[i], l) && (a[l] == 0 || (a[l] == '=' && l > 2)))
            return 1;
    }
    return 0;
}

int cli_nix_args(int argc, char **argv, struct rw_nix_config *c, double *timeout_s)
{
    RW_ASSERT(argc >= 1 && c);
    const char *inst = NULL, *file = NULL, *attr = NULL;
    char **rest = calloc((size_t)argc + 5, sizeof(char *));
    if (!rest)
        return cli_error(2, "out of memory"), -1;
    int n = 0;
    rest[n++] = argv[0];
    rest[n++] = "--root";
    rest[n++] = "/";
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--")) { /* a command follows: nothing after it is an installable */
            rest[n++] = argv[i];
            break;
        }
        if (!strcmp(a, "-f") || !strcmp(a, "-A")) {
            if (i + 1 >= argc) {
                free(rest);
                return cli_error(2, "%s needs a value", a), -1;
            }
            *(a[1] == 'f' ? &file : &attr) = argv[++i];
        } else if (a[0] != '-') { /* invariant 1 */
            if (inst) {
                free(rest);
                return cli_error(2, "one installable at a time: %s and %s", inst, a), -1;
            }
            inst = a;
        } else {
            rest[n++] = argv[i];
            if (!cli_nix_flag(a) && i + 1 < argc)
                rest[n++] = argv[++i];
        }
    }
    if (!inst && !file) {
        free(rest);
        return 1;
    }
    if (inst && file) {
        free(rest);
        return cli_error(2, "give an installable or -f FILE, not both"), -1;
    }
    if (attr && !file) {
        free(rest);
        return cli_error(2, "-A ATTR goes with -f FILE"), -1;
    }
    for (int i = 3; i < n; i++)
        if (cli_nix_fixed(rest[i])) { /* invariant 2 */
            cli_error(2, "the derivation fixes the root, cwd, environment and output: drop %s",
                      rest[i]);
            free(rest);
            return -1;
        }
    rest[n++] = "--";
    rest[n++] = "true";
    rest[n] = NULL;
    struct rw_run_config run;
    int pr = cli_run_args(n, rest, &run, timeout_s);
    if (pr != 0) {
        free(rest);
        return -1; /* the callers answer --help before */
    }
    c->installable = inst;
    c->file = file;
    c->attr = attr;
    c->run = run;
    /* run.argv points into rest, which therefore lives as long as the
     * command; rw_nix_prepare replaces it with the builder's. */
    return 0;
}

int cli_nix_job(rw_home *h, struct rw_nix_config *c, struct rw_nix_job *j, int json)
{
    RW_ASSERT(h && c && j);
    struct rw_error err;
    c->run.observer = cli_stdio;
    if (rw_nix_prepare(h, c, j, &err) < 0)
        return cli_error(err.code ? err.code : 2, "%s", err.msg);
    if (!json)
        printf("derivation %s\noutput %s %s\n", j->drv, j->out_name, j->out_path);
    return 0;
}
