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

/* Load ref at step, then restore, run to the step and inspect (ins). */
static int inspect(rw_home *h, const char *ref, struct run_inspect *ins,
                   const struct rw_options *op, enum run_keep keep, struct rw_result *res,
                   struct rw_error *err)
{
    struct run_stored st;
    memset(res, 0, sizeof(*res));
    if (run_stored_at(h, ref, ins->at, 1, op, &st, err) < 0)
        return -1;
    st.o.no_keyframes = keep == RUN_KEEP_NOTHING; /* a throwaway keeps none */
    run_stored_runtime(&st.o, op);
    struct run_ctx c;
    int rc = run_prepare(&c, &st.o, ins, keep, 1, res, err);
    if (rc == 0)
        rc = run_restore(&c, st.name, ins->at, 0);
    rc = run_through(&c, rc); /* with the inspection started at ins->at */
    run_stored_free(&st);
    return rc;
}

int rw_cat(rw_home *h, const char *ref, uint64_t step, const char *path,
           const struct rw_options *op, struct rw_result *res, struct rw_error *err)
{
    struct run_inspect ins = {.kind = "cat", .at = step, .pid = op->pid, .path = path};
    return inspect(h, ref, &ins, op, RUN_KEEP_NOTHING, res, err);
}

int rw_shell(rw_home *h, const char *ref, uint64_t step, const struct rw_options *op,
             struct rw_result *res, struct rw_error *err)
{
    struct run_inspect ins = {
        .kind = "shell", .at = step, .pid = op->pid, .session_fd = op->input_fd};
    session_end_input = 0; /* a SIGINT from here on ends this session's input */
    return inspect(h, ref, &ins, op, RUN_KEEP, res, err);
}

void rw_shell_end_input(void)
{
    session_end_input = 1;
}

void rw_shell_winch(void)
{
    session_winch = 1;
}
