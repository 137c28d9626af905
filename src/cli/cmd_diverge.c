/*
 * cmd_diverge: `rewind diverge A B`: where two runs that should be equal
 * part. The monitor-debugging tool of docs/determinism.md: first the first
 * differing trace event and its step; then, if both runs were made with
 * --state-log, the first step whose register hash differs and the last
 * and first RAM-hash checkpoints around it.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "home/runref.h"
#include "trace/compare.h"
#include "trace/describe.h"
#include "cli/cli.h"

static int entry_at(const char *path, uint64_t index, char *out, size_t n)
{
    struct trace_reader *r = malloc(sizeof(*r));
    struct trace_entry e;
    int found = 0;
    if (r && trace_open_read(r, path) == 0) {
        for (uint64_t i = 0; trace_next(r, &e); i++)
            if (i == index) {
                describe_entry(&e, out, n);
                found = 1;
                break;
            }
        trace_close_read(r);
    }
    free(r);
    if (!found)
        snprintf(out, n, "(trace ended)");
    return found;
}

/* First differing register-hash step and bracketing RAM checkpoints. */
static void compare_states(const char *da, const char *db)
{
    char pa[4200], pb[4200];
    snprintf(pa, sizeof(pa), "%s/states", da);
    snprintf(pb, sizeof(pb), "%s/states", db);
    FILE *a = fopen(pa, "r"), *b = fopen(pb, "r");
    if (!a || !b) {
        printf("state hashes: not recorded (run both with --state-log K to compare "
               "registers and RAM)\n");
        if (a)
            fclose(a);
        if (b)
            fclose(b);
        return;
    }
    uint64_t ea[2], eb[2], last_ram_equal = 0, first_regs = 0, first_ram = 0;
    while (fread(ea, sizeof(ea), 1, a) == 1 && fread(eb, sizeof(eb), 1, b) == 1) {
        if (ea[0] != eb[0]) {
            first_regs = first_regs ? first_regs : (ea[0] & ~(1ull << 63));
            break;
        }
        int ram = (ea[0] >> 63) & 1;
        uint64_t step = ea[0] & ~(1ull << 63);
        if (ea[1] == eb[1]) {
            if (ram)
                last_ram_equal = step;
            continue;
        }
        if (ram && !first_ram)
            first_ram = step;
        if (!ram && !first_regs)
            first_regs = step;
        if (first_ram)
            break;
    }
    fclose(a);
    fclose(b);
    if (!first_regs && !first_ram) {
        printf("state hashes: equal over every step both runs logged\n");
        return;
    }
    if (first_regs)
        printf("registers first differ at step %" PRIu64 "\n", first_regs);
    if (first_ram)
        printf("RAM equal at step %" PRIu64 ", differs at step %" PRIu64 "\n", last_ram_equal,
               first_ram);
}

int cmd_diverge(int argc, char **argv)
{
    if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        puts("usage: rewind diverge RUN-A RUN-B\n\nFind where two runs that should be "
             "identical part: the first differing\ntrace event and its step; with "
             "--state-log on both runs, also the first\nstep whose register hash differs "
             "and the RAM checkpoints around it.\nExit 0 if identical, 1 if they part.");
        return 0;
    }
    if (argc != 3)
        return cli_error(2, "diverge needs two runs (see rewind diverge --help)");
    char da[4096], db[4096], err[512];
    if (runref_resolve(cli_home(), argv[1], da, sizeof(da), err, sizeof(err)) < 0 ||
        runref_resolve(cli_home(), argv[2], db, sizeof(db), err, sizeof(err)) < 0)
        return cli_error(2, "%s", err);
    char ta[4200], tb[4200];
    snprintf(ta, sizeof(ta), "%s/trace", da);
    snprintf(tb, sizeof(tb), "%s/trace", db);
    struct trace_difference d;
    int rc = compare_traces(ta, tb, &d);
    if (rc < 0)
        return cli_error(1, "cannot read the traces of %s and %s (%s)", argv[1], argv[2],
                         rc == -2 ? "not a trace file" : "missing");
    if (!d.differ) {
        printf("identical: %" PRIu64 " events\n", d.common);
        compare_states(da, db);
        return 0;
    }
    char xa[600], xb[600];
    entry_at(ta, d.index, xa, sizeof(xa));
    entry_at(tb, d.index, xb, sizeof(xb));
    printf("traces part at event %" PRIu64 " after %" PRIu64 " equal events\n", d.index,
           d.common);
    printf("  %s: step %" PRIu64 ": %s\n", argv[1], d.step_a, xa);
    printf("  %s: step %" PRIu64 ": %s\n", argv[2], d.step_b, xb);
    compare_states(da, db);
    return 1;
}
