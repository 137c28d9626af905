/*
 * cmd_nix: `rewind nix INSTALLABLE [--json] [RUN-OPTIONS]` or `rewind nix -f
 * FILE [-A ATTR]`: build a derivation in the VM from its input closure and
 * say whether its output's NAR hash matches the store's copy (docs/nix.md).
 * Exit 0 when it matches (or the store has no copy), 1 when it differs or
 * the build failed, 2 on bad usage or when nix cannot evaluate it.
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
    puts("usage: rewind nix INSTALLABLE [--json] [--mem M] [--seed N] [--epoch E]\n"
         "                  [--dirorder N] [--track-writes GLOB]\n"
         "       rewind nix -f FILE [-A ATTR] [...]\n"
         "\n"
         "Build a derivation in the VM: the user's nix evaluates INSTALLABLE (.#attr,\n"
         "FLAKE#attr or a .drv path) and realises its inputs on the host; the input\n"
         "closure is the VM's root; the builder runs with the derivation's environment\n"
         "and arguments in /build, with no network. The output's NAR hash is compared\n"
         "with the store's copy. The .drv is part of the run's spec; the output is kept\n"
         "with the run (rewind diff --files).\n"
         "\n"
         "Exit status: 0 the output matches the store's (or there is none), 1 it\n"
         "differs or the build failed, 2 bad usage or nix could not evaluate it.");
}

int cmd_nix(int argc, char **argv)
{
    static struct rw_nix_config c;
    rw_nix_config_init(&c);
    int json = 0, n = 0;
    char **args = calloc((size_t)argc + 1, sizeof(char *));
    if (!args)
        return cli_error(2, "out of memory");
    for (int i = 0; i < argc; i++) {
        if (i && (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))) {
            help();
            free(args);
            return 0;
        }
        if (i && !strcmp(argv[i], "--json"))
            json = 1;
        else
            args[n++] = argv[i];
    }
    double timeout = 0;
    int pr = cli_nix_args(n, args, &c, &timeout);
    if (pr != 0) {
        free(args);
        return pr > 0 ? cli_error(2, "nix needs an installable or -f FILE (see rewind nix --help)")
                      : 2;
    }
    c.run.observer = cli_stdio;
    rw_home *h = cli_open_home();
    if (!h)
        return RW_EINTERNAL;
    c.run.abort = cli_abort_on_signals(timeout);
    static struct rw_nix_report r;
    struct rw_error err;
    int rc = rw_nix_build(h, &c, &r, &err);
    rw_home_close(h);
    if (rc < 0)
        return cli_error(err.code ? err.code : 2, "%s", err.msg);
    int ok = !r.message[0] && (!r.in_store || r.matches);
    if (json) {
        printf(
            "{\"drv\":\"%s\",\"output\":\"%s\",\"path\":\"%s\",\"run\":\"%s\",\"outcome\":\"%s\","
            "\"exit\":%d,\"nar_hash\":\"%s\",\"in_store\":%s,\"store_hash\":\"%s\","
            "\"matches\":%s,\"network\":%s,\"message\":",
            r.drv, r.out_name, r.out_path, r.run.id, rw_outcome_word(r.run.outcome),
            r.run.exit_code, r.nar_hash, r.in_store ? "true" : "false", r.store_hash,
            r.matches ? "true" : "false", r.network ? "true" : "false");
        cli_read_json_str(r.message, strlen(r.message));
        puts("}");
        return ok ? 0 : 1;
    }
    printf("derivation %s\nrun %s: %s %d\n", r.drv, r.run.id, rw_outcome_word(r.run.outcome),
           r.run.exit_code);
    if (r.message[0]) {
        fprintf(stderr, "rewind: %s\n", r.message);
        return 1;
    }
    printf("output %s %s\n  built in the VM: %s\n", r.out_name, r.out_path, r.nar_hash);
    if (!r.in_store)
        printf("  the store has no copy to compare with\n");
    else
        printf("  the store's copy: %s\n%s\n", r.store_hash,
               r.matches ? "matches the store" : "DIFFERS from the store");
    return ok ? 0 : 1;
}
