/*
 * cmd_replay: `rewind replay RUN [--from STEP]`: run the stored spec again,
 * from boot or from the keyframe at or before STEP, and compare every record
 * and the final RAM with the stored run. Prints `identical: N events over S
 * steps` and exits 0, or where the runs part and exits 1 (the new run is
 * kept as <id>~N for `rewind diff`). --verify-restores N also restores N of
 * the replay's keyframes in place and runs each to the end (the restore
 * differential).
 */
#include <getopt.h>
#include <stdio.h>

#include "cli.h"
#include "rewind.h"

static void help(void)
{
    puts("usage: rewind replay RUN [--from STEP] [--verify-restores N] [--timeout S]\n"
         "                     [--max-trace MB] [--max-disk MB]\n"
         "\n"
         "Run RUN's spec again (same kernel, init and root image) and compare every\n"
         "record, the step count and the final RAM. Exit 0 when identical, 1 when the\n"
         "runs part.\n"
         "\n"
         "  --from STEP          start from RUN's keyframe at or before STEP instead of\n"
         "                       booting (the history before it is RUN's own)\n"
         "  --verify-restores N  then restore N of the replay's keyframes, evenly spaced,\n"
         "                       into the same VM, run each to the end and compare\n"
         "  --timeout S          give up after S seconds of wall time\n"
         "  --max-trace MB, --max-disk MB\n"
         "                       disk limits of the replay (see rewind run)");
}

int cmd_replay(int argc, char **argv)
{
    struct rw_options o;
    uint64_t none;
    static const struct cli_derived d = {
        "replay", "from,verify-restores,timeout,test-hole,max-trace,max-disk", 1, "one run", help};
    rw_home *h;
    int ex = cli_start(argc, argv, &d, &o, &none, &h, NULL);
    if (ex >= 0)
        return ex;
    struct rw_result r;
    struct rw_error err;
    int rc = rw_replay(h, argv[optind], &o, &r, &err);
    rw_home_close(h);
    if (rc < 0)
        return cli_fail(&err);
    if (r.outcome == RW_TIMEOUT || r.outcome == RW_LIMIT || r.outcome == RW_SPIN) {
        /* cut short: nothing was compared past where it stopped */
        printf("cut: %s after %llu steps: %s\n", rw_outcome_word(r.outcome),
               (unsigned long long)r.steps, r.message);
        return r.exit_code;
    }
    int bad = r.diverged || r.restores_failed;
    if (r.diverged)
        printf("parts: %s\n", r.divergence);
    else if (o.from)
        printf("identical: %llu events over %llu steps (from the keyframe at step %llu, "
               "restored in %.3f s)\n",
               (unsigned long long)r.events, (unsigned long long)r.steps,
               (unsigned long long)r.from_step, r.restore_s);
    else
        printf("identical: %llu events over %llu steps\n", (unsigned long long)r.events,
               (unsigned long long)r.steps);
    if (o.verify_restores)
        printf("restores: %llu checked, %llu differ\n", (unsigned long long)r.restores_checked,
               (unsigned long long)r.restores_failed);
    return bad ? 1 : 0;
}
