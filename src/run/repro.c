/*
 * repro: K builds of one command with varied inputs (rw_repro in
 * include/rewind.h; `rewind repro`, docs/nix.md). Build k is the command's
 * run config with variation k: seed + k, directory order k (build 0 keeps
 * the filesystems' own order) and epoch + k * RW_VARY_EPOCH_STEP, each as
 * asked. Comparing the builds' collected files is the caller's (the CLI
 * reads them with rw_collect_list).
 *
 * Invariants:
 *  1. Build k's spec differs from build 0's only by the variation asked
 *     for, so a difference between their outputs is due to it (or to a
 *     schedule the builds share).
 *  2. Every build is a stored run (rw_record), named by its spec; a build
 *     that cannot run stops the repro with its error.
 */
#include <stdio.h>
#include <string.h>

#include "util/apierr.h"
#include "rewind.h"
#include "util/check.h"

void rw_repro_config_init(struct rw_repro_config *c)
{
    memset(c, 0, sizeof(*c));
    rw_run_config_init(&c->run);
    c->builds = 2;
    c->vary_seed = c->vary_dirorder = c->vary_epoch = 1;
}

int rw_repro(rw_home *h, const struct rw_repro_config *c, struct rw_repro_build *b,
             struct rw_error *err)
{
    RW_ASSERT(h && c && b);
    if (c->builds < 2 || c->builds > RW_REPRO_MAX)
        return apierr_set(err, RW_EUSAGE, "--builds must be from 2 to %d", RW_REPRO_MAX);
    if (!c->run.collect)
        return apierr_set(err, RW_EUSAGE, "repro needs --collect PATH: the outputs to compare");
    for (uint64_t k = 0; k < c->builds; k++) {
        struct rw_run_config r = c->run; /* invariant 1 */
        if (c->vary_seed)
            r.seed += k;
        if (c->vary_dirorder && k) {
            r.dirorder_on = 1;
            r.dirorder = c->run.dirorder_on ? c->run.dirorder + k : k;
        }
        if (c->vary_epoch)
            r.epoch_s += (int64_t)k * RW_VARY_EPOCH_STEP;
        r.name = NULL;
        struct rw_repro_build *x = &b[k];
        memset(x, 0, sizeof(*x));
        x->seed = r.seed;
        x->dirorder_on = r.dirorder_on;
        x->dirorder = r.dirorder;
        x->epoch_s = r.epoch_s;
        if (c->progress) {
            char line[300];
            snprintf(line, sizeof(line),
                     "repro: build %llu of %llu (seed %llu, dirorder %lld, epoch %lld)",
                     (unsigned long long)k + 1, (unsigned long long)c->builds,
                     (unsigned long long)r.seed, r.dirorder_on ? (long long)r.dirorder : -1LL,
                     (long long)r.epoch_s);
            c->progress(c->progress_ctx, line);
        }
        struct rw_result res;
        if (rw_record(h, &r, &res, err) < 0) /* invariant 2 */
            return -1;
        snprintf(x->id, sizeof(x->id), "%s", res.id);
        x->exit_code = res.exit_code;
        x->outcome = res.outcome;
        if (c->abort && *c->abort)
            return apierr_set(err, RW_EINTERNAL, "interrupted");
    }
    return 0;
}
