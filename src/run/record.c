/*
 * record: `rewind run`: boot a fresh VM, run the job to its end and keep
 * the run (ctx.h shows the phases).
 */
#include "run/modes.h"

#include <string.h>

int run_record(const struct run_opts *o, struct rw_result *res, struct rw_error *err)
{
    struct run_ctx c;
    int rc = run_prepare(&c, o, NULL, RUN_KEEP, 0, res, err);
    if (rc == 0)
        rc = run_boot(&c);
    return run_through(&c, rc);
}

int rw_record(rw_home *h, const struct rw_run_config *cfg, struct rw_result *res,
              struct rw_error *err)
{
    struct run_opts o;
    memset(res, 0, sizeof(*res));
    if (run_opts_from_config(h, cfg, &o, err) < 0)
        return -1;
    return run_record(&o, res, err);
}
