/*
 * inspect: cat and shell. Both restore a stored run's keyframe before the
 * step, run to the step, freeze the guest's processes and start an
 * inspector in the guest (rewind-init): cat reads one file and the run is
 * thrown away; a shell reads keystrokes at idle steps (run/session.h) and
 * is kept as a run of its own whose spec names the inspection and whose id
 * covers its inputs, so rw_replay re-runs it.
 */
#include "run/modes.h"

#include <string.h>

static int inspect_run(const struct run_opts *o, const struct run_inspect *ins, const char *from,
                       enum run_keep keep, struct rw_result *res, struct rw_error *err)
{
    struct run_ctx c;
    int rc = run_prepare(&c, o, ins, keep, 1, res, err);
    if (rc == 0)
        rc = run_restore(&c, from, ins->at, 0);
    if (rc == 0)
        rc = run_keyframes_begin(&c);
    if (rc == 0)
        rc = run_inspect_start(&c);
    if (rc == 0)
        rc = run_loop(&c, 0);
    if (rc == 0)
        rc = run_settle(&c);
    if (rc == 0)
        rc = run_finish(&c);
    return run_close(&c, rc);
}

int rw_cat(rw_home *h, const char *ref, uint64_t step, const char *path,
           const struct rw_options *op, struct rw_result *res, struct rw_error *err)
{
    struct run_stored st;
    memset(res, 0, sizeof(*res));
    if (run_stored_at(h, ref, step, 1, op, &st, err) < 0)
        return -1;
    struct run_inspect ins = {.kind = "cat", .at = step, .pid = op->pid, .path = path};
    st.o.no_keyframes = 1;
    st.o.obs = &op->observer;
    st.o.abort = op->abort;
    int rc = inspect_run(&st.o, &ins, st.name, RUN_KEEP_NOTHING, res, err);
    run_stored_free(&st);
    return rc;
}

int rw_shell(rw_home *h, const char *ref, uint64_t step, const struct rw_options *op,
             struct rw_result *res, struct rw_error *err)
{
    struct run_stored st;
    memset(res, 0, sizeof(*res));
    if (run_stored_at(h, ref, step, 1, op, &st, err) < 0)
        return -1;
    struct run_inspect ins = {
        .kind = "shell", .at = step, .pid = op->pid, .session_fd = op->input_fd};
    st.o.quiet = 0;
    st.o.obs = &op->observer;
    st.o.abort = op->abort;
    int rc = inspect_run(&st.o, &ins, st.name, RUN_KEEP, res, err);
    run_stored_free(&st);
    return rc;
}

void rw_shell_winch(void)
{
    session_winch = 1;
}
