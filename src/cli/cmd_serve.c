/*
 * cmd_serve: `rewind serve [--port N] [--bind ADDR] [--read-only]`: the
 * timeline in a browser (src/serve, docs/serve.md).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_read.h"
#include "../serve/serve.h"

static void help(void)
{
    puts("usage: rewind serve [--port N] [--bind ADDR] [--read-only]\n\n"
         "Serve the runs of $REWIND_HOME to a browser: the timeline of each run, what\n"
         "the run shows at any step, comparisons, forks and shells. Prints the URL to\n"
         "open: it holds a random token that every request needs. Binds 127.0.0.1 by\n"
         "default (--bind 0.0.0.0 exposes it to the network: anyone with the URL can\n"
         "fork runs and open shells). --port 0 (the default) takes any free port.\n"
         "--read-only refuses every action (fork, cat, shell). Ctrl-C stops it.\n"
         "rewind open RUN [STEP] reuses a running server or starts one.");
}

int cmd_serve(int argc, char **argv)
{
    static const struct option lo[] = {{"port", required_argument, 0, 'p'},
                                       {"bind", required_argument, 0, 'b'},
                                       {"read-only", no_argument, 0, 'r'},
                                       {"help", no_argument, 0, 'h'},
                                       {0, 0, 0, 0}};
    struct serve_opts o = {.bind = "127.0.0.1"};
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
        if (c == 'p') {
            char *end;
            unsigned long p = strtoul(optarg, &end, 10);
            if (*end || !*optarg || p > 65535 || optarg[0] == '-')
                return cli_error(2, "--port needs a number 0..65535: %s", optarg);
            o.port = (unsigned)p;
        } else if (c == 'b') {
            o.bind = optarg;
        } else if (c == 'r') {
            o.read_only = 1;
        } else if (c == 'h') {
            help();
            return 0;
        } else {
            return cli_error(2, "see rewind serve --help");
        }
    }
    if (optind != argc)
        return cli_error(2, "serve takes no operands (see rewind serve --help)");
    rw_home *h = cli_read_home();
    if (!h)
        return 1;
    char state[4200];
    serve_state_path(h, state, sizeof state);
    o.state = state;
    return serve_run(h, &o);
}
