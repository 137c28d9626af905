/*
 * slurm_task: `rewind check-task DIR K` (rw_check_task), one task of a
 * check's job array (slurm.c describes DIR). It imports DIR/base.rwa into
 * a home of its own (DIR/work/tK.ATTEMPT/home), runs its slice of the
 * schedules (first+K, first+K+T, ...) one by one, each in a worker process
 * of its own (a one_shot cworker pool running eng_task_one, the same code
 * as a local check), and for each writes
 * out/S.rwa (the run, a plain export) then out/S.json (its outcome).
 *
 * Invariants:
 *  1. out/S.json is renamed into place after out/S.rwa is complete: an
 *     outcome file names a run that can be imported (slurm.c invariant 1).
 *  2. A schedule whose out/S.json exists is not run again (a retried task
 *     continues where the first attempt stopped).
 *  3. SIGTERM (scancel) stops the running schedule and the task; nothing
 *     is written for a schedule that did not end.
 *  4. DIR's files are untrusted: the plan is checked (eng_plan_parse) and
 *     K must be below its number of tasks.
 */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#include "explore/engine.h"
#include "util/apierr.h"
#include "util/fail.h"
#include "util/io.h"

static volatile sig_atomic_t task_stop;

static void on_stop(int sig)
{
    (void)sig;
    task_stop = 1;
}

static int rm_one(const char *p, const struct stat *sb, int flag, struct FTW *f)
{
    (void)sb;
    (void)flag;
    (void)f;
    remove(p);
    return 0;
}

static int task_err(struct rw_error *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static int task_err(struct rw_error *err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    err->code = RW_EINTERNAL;
    vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
    va_end(ap);
    return -1;
}

/* Schedule s in the pool's one worker, then out/S.rwa and out/S.json
 * (invariant 1), unless out/S.json is there (invariant 2). 0, 1 when a
 * signal stopped it (invariant 3: nothing written), or -1 with err. */
static int task_schedule(struct cworker_pool *pool, rw_home *h, const char *dir, const char *node,
                         uint64_t k, uint64_t s, struct rw_error *err)
{
    char jp[PATH_MAX + 32], ap[PATH_MAX + 32], why[400];
    snprintf(jp, sizeof(jp), "%s/out/%llu.json", dir, (unsigned long long)s);
    snprintf(ap, sizeof(ap), "%s/out/%llu.rwa", dir, (unsigned long long)s);
    if (access(jp, F_OK) == 0) /* invariant 2 */
        return 0;
    struct cworker_task t = {.schedule = s};
    if (cworker_submit(pool, &t, why, sizeof(why)) < 0)
        return task_err(err, "%s", why);
    struct cworker_result r;
    struct eng_outcome o;
    memset(&o, 0, sizeof(o));
    int rc = cworker_wait(pool, &task_stop, &r, &t); /* invariant 3: SIGTERM on a stop */
    eng_outcome_of(rc, &r, s, &o);
    if (task_stop)
        return 1;
    snprintf(o.where, sizeof(o.where), "%.30s task %llu", node, (unsigned long long)k);
    if (o.ok) {
        struct rw_archive_stats xs;
        struct rw_error xe;
        if (rw_export(h, o.r.id, 0, ap, &xs, &xe) < 0) { /* invariant 1 */
            o.ok = 0;
            snprintf(o.why, sizeof(o.why), "exporting run %s: %.200s", o.r.id, xe.msg);
        }
    }
    if (eng_outcome_write(jp, &o, why, sizeof(why)) < 0)
        return task_err(err, "%s", why);
    fprintf(stderr, "rewind: check-task %llu: schedule %llu: %s %s\n", (unsigned long long)k,
            (unsigned long long)s,
            o.ok ? o.r.id : "could not run:", o.ok ? rw_outcome_word(o.r.outcome) : o.why);
    return 0;
}

int rw_check_task(const char *dir, uint64_t k, struct rw_error *err)
{
    memset(err, 0, sizeof(*err));
    char path[PATH_MAX], why[400];
    snprintf(path, sizeof(path), "%s/plan.json", dir);
    size_t len;
    char *text = io_read_file(path, 1 << 20, &len);
    if (!text)
        return task_err(err, "cannot read %s: %s", path, strerror(errno));
    struct eng_plan p;
    void *hold;
    int rc = eng_plan_parse(text, &p, &hold, why, sizeof(why));
    free(text);
    if (rc < 0)
        return task_err(err, "%s", why);
    if (k >= p.jobs) { /* invariant 4 */
        json_decref(hold);
        err->code = RW_EUSAGE;
        snprintf(err->msg, sizeof(err->msg), "task %llu is not a task of this check (it has %u)",
                 (unsigned long long)k, p.jobs);
        return -1;
    }
    struct sigaction sa = {.sa_handler = on_stop};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    const char *node = getenv("SLURMD_NODENAME");
    char host[64] = "";
    if (!node || !*node) {
        gethostname(host, sizeof(host) - 1);
        node = host;
    }
    const char *jobid = getenv("SLURM_JOB_ID");
    char work[PATH_MAX], home[PATH_MAX + 8];
    snprintf(work, sizeof(work), "%s/work/t%llu.%s", dir, (unsigned long long)k,
             jobid && *jobid ? jobid : "x");
    snprintf(home, sizeof(home), "%s/home", work);
    nftw(work, rm_one, 16, FTW_DEPTH | FTW_PHYS);
    if (mkdir(work, 0755) < 0 && errno != EEXIST) {
        json_decref(hold);
        return task_err(err, "cannot create %s: %s", work, strerror(errno));
    }
    /* For tests and operators: which process is this task. */
    char pidf[PATH_MAX + 16], pidt[32];
    snprintf(pidf, sizeof(pidf), "%s/work/t%llu.pid", dir, (unsigned long long)k);
    snprintf(pidt, sizeof(pidt), "%d\n", (int)getpid());
    FILE *pf = fopen(pidf, "w");
    if (pf) {
        fputs(pidt, pf);
        fclose(pf);
    }
    rw_home *h = NULL;
    struct rw_archive_stats st;
    struct cworker_pool pool; /* one worker at a time; it reads p when forked */
    struct cworker_fns f = {
        .run = eng_worker_run, .ctx = &p, .limit_s = eng_timeout_s(&p), .one_shot = 1};
    cworker_open(&pool, 1, &f);
    rc = -1;
    if (rw_home_open(home, &h, err) < 0)
        goto out;
    snprintf(path, sizeof(path), "%s/base.rwa", dir);
    if (rw_import(h, path, &st, err) < 0)
        goto out;
    if (strcmp(st.run, p.base)) {
        task_err(err, "base.rwa holds run %s, the plan names %s", st.run, p.base);
        goto out;
    }
    p.home = rw_home_path(h);
    fprintf(stderr, "rewind: check-task %llu on %s: base %s imported (%llu pages)\n",
            (unsigned long long)k, node, st.run, (unsigned long long)st.pages);
    for (uint64_t s = p.first + k; s <= p.last && !task_stop; s += p.jobs) {
        int sr = task_schedule(&pool, h, dir, node, k, s, err);
        if (sr < 0)
            goto out;
        if (sr > 0)
            break;
    }
    rc = task_stop ? task_err(err, "stopped by a signal") : 0;
out:
    cworker_close(&pool);
    rw_home_close(h);
    nftw(work, rm_one, 16, FTW_DEPTH | FTW_PHYS);
    json_decref(hold);
    return rc;
}
