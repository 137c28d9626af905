/*
 * engine: see engine.h. The one function that runs a schedule (engine.h
 * invariant 1), what a schedule's worker answered as an outcome (its
 * worker: a one_shot pool of cworker.h, a VM per process, the pool check.c
 * uses), and the plan and outcome files the remote engines exchange. The
 * registry of engines is engine_via.c.
 *
 * Invariants (besides engine.h's):
 *  1. A worker ends by its wall limit (eng_timeout_s) as outcome "timeout",
 *     never hangs its parent (check.c invariant 1, cworker.h invariant 1).
 *  2. Files read back (plan.json, outcome files) are untrusted: every field
 *     is type-checked and bounded, names are checked before use as paths.
 */
#include "explore/engine.h"

#include <errno.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/homepath.h"
#include "run/modes.h"
#include "util/check.h"
#include "util/fail.h"
#include "util/io.h"

#define fail util_fail
#define ENG_DEFAULT_TIMEOUT_S 600.0

void eng_test_cut(uint64_t s, int again, double *spin_s)
{
    const char *holes = getenv("REWIND_TEST_HOLES"), *cut = getenv("REWIND_TEST_CUT_FIRST");
    if (again || !holes || strcmp(holes, "1") || !cut)
        return;
    char *end;
    unsigned long long k = strtoull(cut, &end, 10);
    if (*cut && !*end && k == s)
        *spin_s = 0.001;
}

int eng_task_one(const char *home, const struct eng_plan *p, uint64_t s,
                 volatile sig_atomic_t *abort, struct rw_result *r, struct rw_error *e)
{
    struct run_stored st;
    if (run_stored_load(home, p->base, p->kernel, p->init, &st, e) < 0)
        return -1;
    struct run_opts o = st.o;
    o.abort = abort;
    o.spin_limit_s = p->spin_limit_s;
    eng_test_cut(s, p->again, &o.spin_limit_s);
    o.obs = NULL;
    int rc;
    if (!p->vary_seed) {
        struct sched_segment g =
            sched_window(s, p->start + 1, UINT64_MAX, p->start + 1, p->horizon);
        rc = run_fork(&o, p->base, &g, r, e);
    } else {
        o.seed += s;
        o.quiet = 1;
        o.name = NULL;
        o.sched.n = 0;
        if (sched_push(&o.sched, s, p->start + 1, UINT64_MAX, p->start + 1, p->horizon) < 0)
            rc = run_usage(e, "bad schedule window");
        else
            rc = run_record(&o, r, e);
    }
    run_stored_free(&st);
    return rc;
}

/* --- one schedule in a worker of a one_shot pool (cworker.h) --- */

int eng_worker_run(void *ctx, const struct cworker_task *t, struct rw_result *r, struct rw_error *e)
{
    const struct eng_plan *p = ctx;
    return eng_task_one(p->home, p, t->schedule, &cworker_abort, r, e);
}

double eng_timeout_s(const struct eng_plan *p)
{
    return p->timeout_s > 0 ? p->timeout_s : ENG_DEFAULT_TIMEOUT_S; /* invariant 1 */
}

int eng_outcome_of(int rc, const struct cworker_result *r, uint64_t s, struct eng_outcome *o)
{
    o->schedule = s;
    if (rc < 0) {
        o->ok = 0;
        if (r->signal)
            snprintf(o->why, sizeof(o->why), "its worker died (signal %d)", r->signal);
        else
            snprintf(o->why, sizeof(o->why), "its worker died");
        return -1;
    }
    if (!r->ok) {
        char msg[sizeof(r->e.msg)];
        memcpy(msg, r->e.msg, sizeof(msg));
        msg[sizeof(msg) - 1] = 0;
        o->ok = 0;
        snprintf(o->why, sizeof(o->why), "%.290s", msg[0] ? msg : "it failed");
        return -1;
    }
    o->ok = 1;
    o->r = r->r;
    return 0;
}

/* --- plan.json --- */

char *eng_plan_json(const struct eng_plan *p)
{
    json_t *j = json_pack(
        "{s:i,s:s,s:s,s:I,s:I,s:I,s:I,s:b,s:f,s:f,s:I}", "version", 1, "home", p->home, "base",
        p->base, "first", (json_int_t)p->first, "last", (json_int_t)p->last, "start",
        (json_int_t)p->start, "horizon", (json_int_t)p->horizon, "vary_seed", p->vary_seed,
        "timeout_s", p->timeout_s, "spin_limit_s", p->spin_limit_s, "jobs", (json_int_t)p->jobs);
    if (!j)
        return NULL;
    if (p->kernel)
        json_object_set_new(j, "kernel", json_string(p->kernel));
    if (p->init)
        json_object_set_new(j, "init", json_string(p->init));
    if (p->again)
        json_object_set_new(j, "again", json_true());
    char *t = json_dumps(j, JSON_SORT_KEYS | JSON_COMPACT);
    json_decref(j);
    return t;
}

static int get_u64(json_t *j, const char *k, uint64_t *v)
{
    json_t *x = json_object_get(j, k);
    if (!json_is_integer(x) || json_integer_value(x) < 0)
        return -1;
    *v = (uint64_t)json_integer_value(x);
    return 0;
}

static int get_num(json_t *j, const char *k, double *v)
{
    json_t *x = json_object_get(j, k);
    if (!json_is_number(x))
        return -1;
    *v = json_number_value(x);
    return *v >= 0 && *v < 1e9 ? 0 : -1;
}

int eng_plan_parse(const char *text, struct eng_plan *p, void **hold, char *err, size_t errlen)
{
    json_error_t je;
    json_t *j = json_loads(text, 0, &je);
    memset(p, 0, sizeof(*p));
    *hold = NULL;
    if (!json_is_object(j)) {
        json_decref(j);
        return fail(err, errlen, "plan.json: not a JSON object (%s)", je.text);
    }
    uint64_t ver = 0, jobs = 0;
    json_t *base = json_object_get(j, "base"), *home = json_object_get(j, "home");
    json_t *kernel = json_object_get(j, "kernel"), *init = json_object_get(j, "init");
    json_t *again = json_object_get(j, "again");
    if (get_u64(j, "version", &ver) || ver != 1 || !json_is_string(base) || !json_is_string(home) ||
        get_u64(j, "first", &p->first) || get_u64(j, "last", &p->last) ||
        get_u64(j, "start", &p->start) || get_u64(j, "horizon", &p->horizon) ||
        get_u64(j, "jobs", &jobs) || !json_is_boolean(json_object_get(j, "vary_seed")) ||
        get_num(j, "timeout_s", &p->timeout_s) || get_num(j, "spin_limit_s", &p->spin_limit_s) ||
        (kernel && !json_is_string(kernel)) || (init && !json_is_string(init)) ||
        (again && !json_is_boolean(again)) || p->first < 1 || p->last < p->first ||
        p->last - p->first >= 100000 || jobs > 100000 || !home_safe_name(json_string_value(base)) ||
        json_string_value(base)[0] == '.') {
        json_decref(j);
        return fail(err, errlen, "plan.json: a field is missing or out of range");
    }
    p->base = json_string_value(base);
    p->home = json_string_value(home);
    p->kernel = kernel ? json_string_value(kernel) : NULL;
    p->init = init ? json_string_value(init) : NULL;
    p->vary_seed = json_is_true(json_object_get(j, "vary_seed"));
    p->again = json_is_true(again);
    p->jobs = (unsigned)jobs;
    *hold = j;
    return 0;
}

/* --- outcome files --- */

int eng_outcome_write(const char *path, const struct eng_outcome *o, char *err, size_t errlen)
{
    json_t *j = json_pack("{s:I,s:b,s:s}", "schedule", (json_int_t)o->schedule, "ok", o->ok,
                          "where", o->where);
    if (!j)
        return fail(err, errlen, "out of memory");
    if (o->ok) {
        const struct rw_result *r = &o->r;
        json_object_set_new(j, "id", json_string(r->id));
        json_object_set_new(j, "outcome", json_integer((json_int_t)r->outcome));
        json_object_set_new(j, "exit_code", json_integer(r->exit_code));
        json_object_set_new(j, "steps", json_integer((json_int_t)r->steps));
        json_object_set_new(j, "output_hash", json_string(r->output_hash));
        json_object_set_new(j, "wall_s", json_real(r->wall_s));
    } else {
        json_object_set_new(j, "why", json_string(o->why));
    }
    char tmp[4200];
    snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid());
    int rc = json_dump_file(j, tmp, JSON_SORT_KEYS | JSON_COMPACT);
    json_decref(j);
    if (rc < 0 || rename(tmp, path) < 0) {
        unlink(tmp);
        return fail(err, errlen, "cannot write %s: %s", path, strerror(errno));
    }
    return 0;
}

static int copy_str(char *dst, size_t n, json_t *x)
{
    if (!json_is_string(x) || strlen(json_string_value(x)) >= n)
        return -1;
    snprintf(dst, n, "%s", json_string_value(x));
    return 0;
}

int eng_outcome_read(const char *path, struct eng_outcome *o, char *err, size_t errlen)
{
    json_error_t je;
    json_t *j = json_load_file(path, 0, &je);
    memset(o, 0, sizeof(*o));
    if (!json_is_object(j)) {
        json_decref(j);
        return fail(err, errlen, "%s: not a JSON object (%s)", path, je.text);
    }
    uint64_t oc = 0, steps = 0;
    json_t *ec = json_object_get(j, "exit_code");
    int bad = get_u64(j, "schedule", &o->schedule) || !json_is_boolean(json_object_get(j, "ok")) ||
              copy_str(o->where, sizeof(o->where), json_object_get(j, "where"));
    o->ok = json_is_true(json_object_get(j, "ok"));
    if (!bad && o->ok) {
        bad =
            copy_str(o->r.id, sizeof(o->r.id), json_object_get(j, "id")) ||
            !home_safe_name(o->r.id) || o->r.id[0] == '.' || get_u64(j, "outcome", &oc) ||
            oc > 255 || !json_is_integer(ec) || get_u64(j, "steps", &steps) ||
            copy_str(o->r.output_hash, sizeof(o->r.output_hash), json_object_get(j, "output_hash"));
        if (!bad) {
            o->r.outcome = (enum rw_outcome)oc;
            o->r.exit_code = (int)json_integer_value(ec);
            o->r.steps = steps;
            get_num(j, "wall_s", &o->r.wall_s);
        }
    } else if (!bad) {
        bad = copy_str(o->why, sizeof(o->why), json_object_get(j, "why"));
    }
    json_decref(j);
    return bad ? fail(err, errlen, "%s: a field is missing or out of range", path) : 0;
}
