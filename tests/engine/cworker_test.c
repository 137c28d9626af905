/* cworker_test: the check worker pool runs every task once in a long-lived
 * worker (the same process for consecutive tasks of one slot), returns each
 * result with its task, ends a task at its wall limit (the abort flag),
 * reports a worker that died and forks another for the next task, and
 * leaves no process behind when closed; a one_shot pool (a cold check)
 * forks a fresh worker for each task. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "explore/cworker.h"
#include "unit.h"

/* Task kinds by schedule: 1000+: sleep until aborted; 2000: die; 2001:
 * killed by a signal; 3000: fail; else echo. The result's steps carry the worker's pid. */
static int run(void *ctx, const struct cworker_task *t, struct rw_result *r, struct rw_error *e)
{
    (void)ctx;
    r->steps = (uint64_t)getpid();
    r->exit_code = (int)(t->schedule * 2);
    r->virt_ns = t->from + t->until;
    if (t->schedule >= 1000 && t->schedule < 2000) {
        while (!cworker_abort) {
            struct timespec ts = {0, 5000000};
            nanosleep(&ts, NULL);
        }
        r->outcome = RW_TIMEOUT;
    }
    if (t->schedule == 2000)
        _exit(9);
    if (t->schedule == 2001)
        raise(SIGKILL);
    if (t->schedule == 3000) {
        snprintf(e->msg, sizeof(e->msg), "task failed on purpose");
        return -1;
    }
    return 0;
}

static void test_pool(void)
{
    struct cworker_pool p;
    struct cworker_fns f = {.run = run, .limit_s = 0.5};
    cworker_open(&p, 2, &f);
    char err[200];
    int seen[11] = {0};
    uint64_t pid_of_slot_tasks[11] = {0};
    uint64_t next = 1;
    while (next <= 10 || cworker_busy(&p)) {
        while (next <= 10 && cworker_busy(&p) < 2) {
            struct cworker_task t = {.schedule = next, .from = next, .until = 100};
            CHECK(cworker_submit(&p, &t, err, sizeof(err)) == 0, "submit");
            next++;
        }
        struct cworker_result r;
        struct cworker_task t;
        int rc = cworker_wait(&p, NULL, &r, &t);
        CHECK(rc == 0 && r.ok, "a task ran");
        if (rc != 0 || t.schedule < 1 || t.schedule > 10)
            break;
        seen[t.schedule]++;
        CHECK(r.r.exit_code == (int)(t.schedule * 2) && r.r.virt_ns == t.schedule + 100,
              "the result is the task's");
        pid_of_slot_tasks[t.schedule] = r.r.steps;
    }
    int once = 1, pids = 0;
    for (int i = 1; i <= 10; i++) {
        once &= seen[i] == 1;
        int fresh = 1;
        for (int j = 1; j < i; j++)
            fresh &= pid_of_slot_tasks[j] != pid_of_slot_tasks[i];
        pids += fresh;
    }
    CHECK(once, "every task ran once");
    CHECK(pids == 2, "two workers ran the ten tasks (long-lived, not one per task)");

    /* a wall limit: the task ends (timeout), the worker stays */
    struct cworker_task slow = {.schedule = 1000};
    CHECK(cworker_submit(&p, &slow, err, sizeof(err)) == 0, "submit slow");
    struct cworker_result r;
    struct cworker_task t;
    time_t t0 = time(NULL);
    CHECK(cworker_wait(&p, NULL, &r, &t) == 0 && r.ok && r.r.outcome == RW_TIMEOUT,
          "a task past its wall limit ends by the abort flag");
    CHECK(time(NULL) - t0 < 10, "and soon");

    /* a worker that dies: reported, and the next task still runs */
    struct cworker_task die = {.schedule = 2000};
    CHECK(cworker_submit(&p, &die, err, sizeof(err)) == 0, "submit die");
    CHECK(cworker_wait(&p, NULL, &r, &t) == -1 && t.schedule == 2000 && !r.e.msg[0],
          "a dead worker is reported with its task");
    struct cworker_task fl = {.schedule = 3000};
    CHECK(cworker_submit(&p, &fl, err, sizeof(err)) == 0, "submit fail");
    CHECK(cworker_wait(&p, NULL, &r, &t) == 0 && !r.ok && strstr(r.e.msg, "on purpose"),
          "a failed task says why");
    for (int i = 0; i < 3; i++) {
        struct cworker_task ok = {.schedule = 7};
        CHECK(cworker_submit(&p, &ok, err, sizeof(err)) == 0, "submit after deaths");
        CHECK(cworker_wait(&p, NULL, &r, &t) == 0 && r.ok && t.schedule == 7,
              "tasks run after a worker died or failed");
    }
    CHECK(cworker_wait(&p, NULL, &r, &t) == -2, "nothing busy");

    /* abort: busy workers are stopped */
    volatile sig_atomic_t abort_now = 1;
    struct cworker_task s2 = {.schedule = 1500};
    CHECK(cworker_submit(&p, &s2, err, sizeof(err)) == 0, "submit slow 2");
    int arc = cworker_wait(&p, &abort_now, &r, &t);
    CHECK(arc == 0 && r.r.outcome == RW_TIMEOUT, "abort stops a busy worker");
    cworker_close(&p);
    errno = 0;
    CHECK(waitpid(-1, NULL, WNOHANG) < 0 && errno == ECHILD, "no worker left behind");
}

/* A one_shot pool (a cold check): a fresh worker for each task, forked
 * when the task is given, so it sees the caller's state of that moment. */
static int cold_gen;

static int run_cold(void *ctx, const struct cworker_task *t, struct rw_result *r,
                    struct rw_error *e)
{
    (void)ctx;
    (void)e;
    r->steps = (uint64_t)getpid();
    r->exit_code = cold_gen;
    r->virt_ns = t->seed_add + (uint64_t)t->record;
    return 0;
}

static void test_one_shot(void)
{
    struct cworker_pool p;
    struct cworker_fns f = {.run = run_cold, .limit_s = 5, .one_shot = 1};
    cworker_open(&p, 2, &f);
    char err[200];
    uint64_t pids[6] = {0};
    int fresh = 1, state = 1;
    for (int i = 0; i < 6; i++) {
        cold_gen = 100 + i; /* the caller's state when the task is given */
        struct cworker_task t = {.schedule = (uint64_t)i + 1, .record = 1, .seed_add = 40};
        CHECK(cworker_submit(&p, &t, err, sizeof(err)) == 0, "submit one-shot");
        struct cworker_result r;
        struct cworker_task back;
        CHECK(cworker_wait(&p, NULL, &r, &back) == 0 && r.ok && back.schedule == t.schedule &&
                  r.r.virt_ns == 41,
              "a one-shot task ran, with its fields");
        state &= r.r.exit_code == 100 + i;
        pids[i] = r.r.steps;
        for (int j = 0; j < i; j++)
            fresh &= pids[j] != pids[i];
    }
    CHECK(fresh, "one worker per task");

    /* an engine's pool: a bounded wait, a death's signal, a cancel */
    struct cworker_result r;
    struct cworker_task back;
    f.run = run;
    cworker_open(&p, 2, &f);
    struct cworker_task slow = {.schedule = 1001}, die = {.schedule = 2000};
    CHECK(cworker_submit(&p, &slow, err, sizeof(err)) == 0, "submit slow one-shot");
    CHECK(cworker_wait_for(&p, NULL, 50, &r, &back) == -3, "nothing back within 50 ms");
    CHECK(cworker_submit(&p, &die, err, sizeof(err)) == 0, "submit die one-shot");
    int rc = -3;
    for (int i = 0; i < 100 && rc == -3; i++)
        rc = cworker_wait_for(&p, NULL, 50, &r, &back);
    CHECK(rc == -1 && back.schedule == 2000 && r.signal == 0 && !r.e.msg[0],
          "a worker that exited without answering: died, no signal");
    struct cworker_task killed = {.schedule = 2001};
    CHECK(cworker_submit(&p, &killed, err, sizeof(err)) == 0, "submit killed one-shot");
    for (rc = -3; rc == -3;)
        rc = cworker_wait_for(&p, NULL, 50, &r, &back);
    CHECK(rc == -1 && back.schedule == 2001 && r.signal == SIGKILL,
          "a worker a signal ended: its signal");
    cworker_kill(&p);
    CHECK(cworker_busy(&p) == 0 && cworker_wait_for(&p, NULL, 50, &r, &back) == -2,
          "a cancel drops the busy task, unanswered");
    CHECK(state, "each forked when its task was given");
    cworker_close(&p);
    errno = 0;
    CHECK(waitpid(-1, NULL, WNOHANG) < 0 && errno == ECHILD, "every one-shot worker reaped");
}

int main(void)
{
    test_pool();
    test_one_shot();
    return unit_done();
}
