/*
 * cmd_open: `rewind open RUN [STEP] [--compare RUN2]`: print the URL of the
 * page showing RUN at STEP, from the running `rewind serve` of this home
 * (its state file, checked alive) or from one started in the background.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "cli_read.h"
#include "../serve/serve.h"

static void help(void)
{
    puts("usage: rewind open RUN [STEP] [--compare RUN2] [--read-only]\n\n"
         "Print the URL of the page showing RUN at STEP (and its comparison with RUN2)\n"
         "in the browser. Reuses the rewind serve of this home if one is running, else\n"
         "starts one in the background (on 127.0.0.1, any free port; its log is\n"
         "$REWIND_HOME/serve.log; stop it with kill on the pid in $REWIND_HOME/serve.json).");
}

/* Start `rewind serve` detached (a session of its own, stdin /dev/null),
 * its output appended to serve.log. 0, or the exit code after one line
 * saying why it could not start. */
static int start_server(rw_home *h, int read_only)
{
    char log[4200];
    snprintf(log, sizeof log, "%s/serve.log", rw_home_path(h));
    int out = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (out < 0)
        return cli_error(125, "cannot start rewind serve: cannot open %s: %s", log,
                         strerror(errno));
    char *argv[] = {"rewind", "serve", read_only ? "--read-only" : NULL, NULL};
    struct rw_spawn s;
    struct rw_error err;
    rw_spawn_init(&s);
    s.path = "/proc/self/exe";
    s.in = RW_SPAWN_NULL;
    s.out = s.err = out;
    s.new_session = 1;
    pid_t pid; /* never waited for: it outlives this process */
    int rc = rw_spawn(argv, &s, &pid, &err);
    close(out);
    return rc < 0 ? cli_error(125, "cannot start rewind serve: %s", err.msg) : 0;
}

int cmd_open(int argc, char **argv)
{
    static const struct option lo[] = {{"compare", required_argument, 0, 'c'},
                                       {"read-only", no_argument, 0, 'r'},
                                       {"help", no_argument, 0, 'h'},
                                       {0, 0, 0, 0}};
    const char *cmp = NULL;
    int read_only = 0, c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
        if (c == 'c')
            cmp = optarg;
        else if (c == 'r')
            read_only = 1;
        else if (c == 'h') {
            help();
            return 0;
        } else
            return cli_error(2, "see rewind open --help");
    }
    int nop = argc - optind;
    if (nop < 1 || nop > 2)
        return cli_error(2, "open needs RUN [STEP] (see rewind open --help)");
    uint64_t step = 0;
    if (nop == 2 && cli_read_step(argv[optind + 1], &step) < 0)
        return cli_error(2, "not a step: %s", argv[optind + 1]);
    rw_home *h = cli_read_home();
    if (!h)
        return 1;
    struct rw_error err;
    char id[RW_ID_MAX], cid[RW_ID_MAX] = "";
    if (rw_resolve(h, argv[optind], id, &err) < 0)
        return cli_fail(&err);
    if (cmp && rw_resolve(h, cmp, cid, &err) < 0)
        return cli_fail(&err);
    struct rw_run_info info;
    if (rw_run_info(h, id, &info, &err) < 0)
        return cli_fail(&err);
    uint64_t steps = info.steps;
    rw_run_info_free(&info);
    if (step > steps)
        return cli_error(2, "step %" PRIu64 " is past the end of run %s (%" PRIu64 " steps)", step,
                         id, steps);
    char path[4200];
    serve_state_path(h, path, sizeof path);
    struct serve_state st;
    int alive = serve_state_read(path, &st) == 0 && serve_state_alive(&st);
    if (!alive) {
        int rc = start_server(h, read_only);
        if (rc != 0)
            return rc;
        /* wait for its state file to name a live server: 15 s at most */
        for (int i = 0; i < 150 && !alive; i++) {
            struct timespec ts = {0, 100 * 1000 * 1000};
            nanosleep(&ts, NULL);
            alive = serve_state_read(path, &st) == 0 && serve_state_alive(&st);
        }
        if (!alive)
            return cli_error(1, "rewind serve did not start (see %s/serve.log)", rw_home_path(h));
        fprintf(stderr, "rewind: started rewind serve, pid %ld\n", st.pid);
    }
    const char *host = strcmp(st.bind, "0.0.0.0") ? st.bind : "127.0.0.1";
    printf(strchr(host, ':') ? "http://[%s]:%u/%s/#run=%s" : "http://%s:%u/%s/#run=%s", host,
           st.port, st.token, id);
    if (nop == 2)
        printf("&step=%" PRIu64, step);
    if (cmp)
        printf("&cmp=%s", cid);
    putchar('\n');
    return 0;
}
