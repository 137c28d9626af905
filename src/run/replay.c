/*
 * replay: run a stored run's spec again and compare it with the stored run
 * record by record (ctx.c, check_against_stored). How to start is decided
 * here: from boot; from the run's own keyframe at or before a step
 * (--from); a shell session from its parent's keyframe at the session's
 * step, fed its recorded keystrokes. With verify_restores, the replay's
 * keyframes are then restored in place and run to the end (the restore
 * differential). The replay is kept only when it differs (ctx.h invariant 5).
 */
#include "rewind_test.h"
#include "run/modes.h"

#include <stdio.h>
#include <string.h>

#include "util/homepath.h"

static int replay_run(const struct run_opts *o, const struct run_inspect *ins, const char *from,
                      uint64_t from_step, uint64_t verify, struct rw_result *res,
                      struct rw_error *err)
{
    struct run_ctx c;
    int rc = run_prepare(&c, o, ins, RUN_KEEP_IF_DIFFERENT, from || verify, res, err);
    c.verify = verify;
    if (rc == 0)
        rc = from ? run_restore(&c, from, from_step, 0) : run_boot(&c);
    return run_through(&c, rc);
}

int rw_replay(rw_home *h, const char *ref, const struct rw_options *op, struct rw_result *res,
              struct rw_error *err)
{
    struct run_stored st;
    char inputs[4200], name[RW_ID_MAX];
    memset(res, 0, sizeof(*res));
    if (rw_resolve(h, ref, name, err) < 0)
        return -1;
    if (run_stored_load(rw_home_path(h), name, op->kernel, op->init, &st, err) < 0)
        return -1;
    const char *from = op->from ? st.name : NULL;
    uint64_t from_step = op->from_step;
    const struct run_inspect *ins = NULL;
    int rc = 0;
    if (st.ins.kind) { /* a shell session: its keystrokes come from its inputs file */
        if (op->from && op->from_step > st.ins.at)
            rc = run_usage(err,
                           "this is a shell session from step %llu: replay it --from a step "
                           "up to that one",
                           (unsigned long long)st.ins.at);
        else if (home_path(inputs, sizeof(inputs), rw_home_path(h), HOME_RUNS, st.name, "inputs") <
                 0)
            rc = run_usage(err, "bad run name %s", st.name);
        st.ins.session_replay = inputs;
        ins = &st.ins;
        if (!op->from && st.parent[0]) {
            from = st.parent;
            from_step = st.ins.at;
        }
    }
    st.o.quiet = 1;
    st.o.snap_holes = op->test ? op->test->snap_holes : 0;
    st.o.obs = &op->observer;
    st.o.abort = op->abort;
    st.o.max_trace_mb = op->max_trace_mb;
    st.o.max_disk_mb = op->max_disk_mb;
    st.o.spin_limit_s = op->spin_limit_s;
    if (rc == 0)
        rc = replay_run(&st.o, ins, from, from_step, op->verify_restores, res, err);
    int cut = res->outcome == RW_TIMEOUT || res->outcome == RW_LIMIT || res->outcome == RW_SPIN;
    if (rc == 0 && !res->had_stored && !cut)
        rc = run_usage(err, "the stored run disappeared during the replay");
    run_stored_free(&st);
    return rc;
}
