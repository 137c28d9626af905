/*
 * cmd_watch: `rewind watch RUN ADDR|SYMBOL --pid P [--len N] [--from S]
 * [--to S] [--json]`: every write to that memory of process P over the run,
 * with its step, old and new value and writer (rw_watch in
 * include/rewind.h; docs/tutorials/debugging.md).
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "cli_read.h"
#include "rewind.h"

/* A value as an unsigned little-endian integer (len <= 8), else hex bytes. */
static void value_text(const uint8_t *v, uint64_t len, char *out, size_t n)
{
    if (len <= 8) {
        uint64_t x = 0;
        for (uint64_t i = 0; i < len; i++)
            x |= (uint64_t)v[i] << (8 * i);
        snprintf(out, n, "%llu", (unsigned long long)x);
        return;
    }
    size_t o = 0;
    out[0] = 0;
    for (uint64_t i = 0; i < len && o + 3 < n; i++)
        o += (size_t)snprintf(out + o, n - o, "%02x", v[i]);
}

static void writer_text(const struct rw_watch_hit *h, char *out, size_t n)
{
    if (!h->exact) {
        snprintf(out, n, "(seen after the step; no watchpoint hit)");
        return;
    }
    char where[300] = "";
    if (h->line)
        snprintf(where, sizeof(where), " (%s:%d)", h->file, h->line);
    if (h->func[0])
        snprintf(out, n, "%s+0x%llx%s%s", h->func, (unsigned long long)h->func_off, where,
                 h->user ? "" : " [kernel]");
    else
        snprintf(out, n, "0x%llx%s", (unsigned long long)h->rip, h->user ? "" : " [kernel]");
}

static void print_json(const struct rw_watch_result *r)
{
    printf("{\"addr\":%llu,\"len\":%llu,\"exe\":", (unsigned long long)r->addr,
           (unsigned long long)r->len);
    cli_read_json_str(r->exe, strlen(r->exe));
    printf(",\"steps\":%llu,\"trace_verified\":%s,\"trace_hash\":\"%s\",\"wall_s\":%.3f,"
           "\"watchpoint_exits\":%llu,\"single_stepped\":%llu,\"left_seen\":%llu,"
           "\"single_step_exits\":%llu,\"single_step_error\":",
           (unsigned long long)r->steps, r->trace_verified ? "true" : "false", r->trace_hash,
           r->wall_s, (unsigned long long)r->watchpoint_hits, (unsigned long long)r->stepped,
           (unsigned long long)r->left, (unsigned long long)r->step_exits);
    cli_read_json_str(r->step_error, strlen(r->step_error));
    printf(",\"writes\":[");
    for (size_t i = 0; i < r->n; i++) {
        const struct rw_watch_hit *h = &r->hits[i];
        char o[80], nv[80];
        value_text(h->old_val, r->len, o, sizeof(o));
        value_text(h->new_val, r->len, nv, sizeof(nv));
        printf("%s\n{\"step\":%llu,\"tid\":%u,\"exact\":%s,\"caught\":\"%s\",\"old\":",
               i ? "," : "", (unsigned long long)h->step, h->tid, h->exact ? "true" : "false",
               !h->exact    ? "seen"
               : h->by_step ? "single-step"
                            : "watchpoint");
        if (h->old_known)
            printf("\"%s\"", o);
        else
            printf("null");
        printf(",\"new\":\"%s\"", nv);
        if (h->exact) {
            printf(",\"user\":%s,\"rip\":%llu,\"function\":", h->user ? "true" : "false",
                   (unsigned long long)h->rip);
            cli_read_json_str(h->func, strlen(h->func));
            printf(",\"offset\":%llu,\"file\":", (unsigned long long)h->func_off);
            cli_read_json_str(h->file, strlen(h->file));
            printf(",\"line\":%d", h->line);
        }
        putchar('}');
    }
    puts("]}");
}

static void print_text(const struct rw_watch_result *r)
{
    printf("%10s %7s  %-24s %s\n", "STEP", "TID", "OLD -> NEW", "WRITER");
    for (size_t i = 0; i < r->n; i++) {
        const struct rw_watch_hit *h = &r->hits[i];
        char o[80], nv[80], change[170], who[512], tid[16];
        value_text(h->old_val, r->len, o, sizeof(o));
        value_text(h->new_val, r->len, nv, sizeof(nv));
        snprintf(change, sizeof(change), "%s -> %s", h->old_known ? o : "?", nv);
        writer_text(h, who, sizeof(who));
        if (h->tid)
            snprintf(tid, sizeof(tid), "%u%s", h->tid, h->exact ? "" : "?");
        else
            snprintf(tid, sizeof(tid), "?");
        printf("%10llu %7s  %-24s %s\n", (unsigned long long)h->step, tid, change, who);
    }
    printf("%zu write%s to %llu byte%s at 0x%llx over steps up to %llu; ", r->n,
           r->n == 1 ? "" : "s", (unsigned long long)r->len, r->len == 1 ? "" : "s",
           (unsigned long long)r->addr, (unsigned long long)r->steps);
    if (r->trace_verified)
        printf("the replay equals the stored run (trace %.16s)\n", r->trace_hash);
    else
        printf("stopped at --to: the replay's trace was not compared\n");
    if (r->stepped)
        printf("%llu change%s no watchpoint reported single-stepped to the writer (%llu debug "
               "exits)\n",
               (unsigned long long)r->stepped, r->stepped == 1 ? "" : "s",
               (unsigned long long)r->step_exits);
    if (r->step_error[0])
        printf("single-stepping the seen changes failed: %s\n", r->step_error);
    if (r->left)
        printf("%llu change%s left as seen after the step (a stretch over the single-step "
               "budget, or not reproduced; --exact steps them all)\n",
               (unsigned long long)r->left, r->left == 1 ? "" : "s");
}

int cmd_watch(int argc, char **argv)
{
    static const struct option lo[] = {
        {"pid", required_argument, 0, 'p'},  {"len", required_argument, 0, 'l'},
        {"from", required_argument, 0, 'f'}, {"to", required_argument, 0, 't'},
        {"json", no_argument, 0, 'j'},       {"exact", no_argument, 0, 'x'},
        {"help", no_argument, 0, 'h'},       {0, 0, 0, 0}};
    struct rw_watch_config c = {.to = UINT64_MAX};
    rw_options_init(&c.opts);
    c.opts.observer = cli_stdio;
    int json = 0, opt;
    optind = 1;
    while ((opt = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
        uint64_t *dst = opt == 'p' ? &c.pid : opt == 'l' ? &c.len : opt == 'f' ? &c.from : &c.to;
        if (opt == 'p' || opt == 'l' || opt == 'f' || opt == 't') {
            const char *flag = opt == 'p' ? "pid" : opt == 'l' ? "len" : opt == 'f' ? "from" : "to";
            if (cli_read_step(optarg, dst) < 0)
                return cli_error(2, "--%s needs a number: %s", flag, optarg);
        } else if (opt == 'j') {
            json = 1;
        } else if (opt == 'x') {
            c.exact = 1;
        } else if (opt == 'h') {
            puts("usage: rewind watch RUN ADDR|SYMBOL --pid P [--len N] [--from S] [--to S] "
                 "[--exact] [--json]\n\n"
                 "Every write to N bytes (default: the symbol's size, else 8; at most 32)\n"
                 "at ADDR, or at SYMBOL of P's executable, in process P's address space\n"
                 "over the run: the step, the old and new value, the writing thread and\n"
                 "its function and line. The run is replayed with hardware watchpoints\n"
                 "(a watchpoint exit is never a step) and compared with the stored run\n"
                 "at its end. A change no watchpoint reported (a host whose KVM does not\n"
                 "deliver them) is found after its step, and that step's stretch is then\n"
                 "single-stepped to its writer (at most 100,000 debug exits each; after two\n"
                 "stretches over that, the rest are listed as seen, without a writer).\n\n"
                 "--from S, --to S  only the writes in steps S..S (--to stops the replay\n"
                 "                  there, and the trace is then not compared)\n"
                 "--exact           single-step every seen change's stretch, however long\n"
                 "--json            one object: addr, len, exe, steps, trace_verified,\n"
                 "                  single_stepped, left_seen, writes [{step, tid, exact,\n"
                 "                  caught (watchpoint, single-step, seen), old, new,\n"
                 "                  function, file, line}]");
            return 0;
        } else {
            return cli_error(2, "see rewind watch --help");
        }
    }
    if (argc - optind != 2)
        return cli_error(2, "watch needs RUN and ADDR|SYMBOL (see rewind watch --help)");
    if (!c.pid)
        return cli_error(2, "watch needs --pid P: the process whose memory (see rewind ps)");
    c.what = argv[optind + 1];
    rw_home *h = cli_open_home();
    if (!h)
        return 125;
    struct rw_watch_result r;
    struct rw_error err;
    int rc = rw_watch(h, argv[optind], &c, &r, &err);
    rw_home_close(h);
    if (rc < 0)
        return cli_fail(&err);
    if (json)
        print_json(&r);
    else
        print_text(&r);
    rw_watch_free(&r);
    return 0;
}
