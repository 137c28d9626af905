/*
 * slurm: `--via slurm`, the engine of engine.h on a Slurm cluster
 * (docs/distributed.md). start publishes into a directory of the share
 * (--share, default $REWIND_HOME/slurm):
 *   base.rwa    schedule 0 as a replayable export (its pages, each once,
 *               its image): what every task imports into a home of its own
 *   plan.json   the plan (eng_plan_json)
 *   task.sh     the batch script: `rewind check-task DIR $SLURM_ARRAY_TASK_ID`
 * and submits one job array of T = min(jobs, N) tasks; task k runs the
 * schedules first+k, first+k+T, ... (slurm_task.c) and writes, per
 * schedule, out/S.rwa (the run, a plain export) then out/S.json (its
 * outcome, renamed into place last). next gathers out/ as files appear,
 * imports each run and delivers it; squeue says which tasks ended.
 *
 * Invariants:
 *  1. A schedule is delivered only from its out/S.json, after its run
 *     was imported (engine.h invariant 3); each at most once (a bitmap).
 *  2. A task that ended (any final state, or gone from squeue) or is
 *     held (it would wait forever for a `scontrol release`: "launch failed
 *     requeued held", JobHeldUser, REQUEUE_HOLD, ...; slurm_state_class)
 *     with schedules of its slice undelivered is submitted once more (the
 *     retry skips the schedules whose outcome is in out/); after its
 *     second end they are delivered as lost. A held attempt is scancelled
 *     first, so it cannot run later. Before deciding, out/ is read once
 *     more (a task writes its files before it ends).
 *  3. cancel scancels every job this engine submitted (first and retries);
 *     nothing is submitted after it.
 *  4. Every external command runs with a wall limit (SLURM_CMD_TIMEOUT_S);
 *     its failure is one line naming the command and its last error line.
 *  5. A run already in the home (an earlier check of the same spec: a
 *     run's id is its spec's hash) is not imported again (its manifest,
 *     with its wall times, differs); the schedule is delivered when the
 *     task's run ended as the stored one did (outcome, exit code, steps),
 *     and as one that could not run otherwise. Except: a stored run cut by
 *     a wall-clock limit is replaced by a complete one of its spec
 *     (replace_cut), as run/ctx.c replaces it.
 *  6. Every job id submitted is appended to DIR/jobs (fsync'd) before it
 *     is waited on: a submitter killed without a chance to cancel (SIGKILL,
 *     the OOM killer) leaves `scancel $(cat DIR/jobs)` to its user.
 *  7. Before a task's missing schedules are retried or lost, each one's
 *     out/S.json is looked up by name (a shared filesystem's directory
 *     listing may lag the files other nodes wrote).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "explore/engine.h"
#include "explore/slurm.h"
#include "util/check.h"
#include "util/fail.h"
#include "util/io.h"
#include "util/spawn.h"

#define fail util_fail
#define SLURM_CMD_TIMEOUT_S 60.0
#define SLURM_MAX_TASKS 10000
#define SLURM_MAX_ARGS 64
#define SLURM_GONE_GRACE_S 60.0
#define SQUEUE_OUT_MAX (1 << 20) /* bytes of squeue's answer read */

static double mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int slurm_find_tool(const char *name, char *path, size_t n)
{
    const char *pv = getenv("PATH");
    if (!pv || !*pv)
        pv = "/usr/local/bin:/usr/bin:/bin";
    while (*pv) {
        const char *c = strchr(pv, ':');
        size_t len = c ? (size_t)(c - pv) : strlen(pv);
        if (len && (size_t)snprintf(path, n, "%.*s/%s", (int)len, pv, name) < n &&
            access(path, X_OK) == 0)
            return 0;
        if (!c)
            break;
        pv = c + 1;
    }
    return -1;
}

/* Run argv (argv[0] found in PATH) with its stdout into out and the last
 * line of its stderr into errl; invariant 4. Its exit status, or -1 when
 * it could not run or was killed by the wall limit. */
int slurm_cmd(char *const argv[], char *out, size_t outlen, char *errl, size_t errlen)
{
    int po[2], pe[2];
    if (outlen)
        out[0] = 0;
    errl[0] = 0;
    if (pipe2(po, O_CLOEXEC) < 0)
        return -1;
    if (pipe2(pe, O_CLOEXEC) < 0) {
        close(po[0]);
        close(po[1]);
        return -1;
    }
    pid_t pid;
    int rc = spawn_start(argv, NULL, SPAWN_NULL, po[1], pe[1], &pid);
    int spawn_errno = errno;
    close(po[1]);
    close(pe[1]);
    if (rc < 0) { /* as a shell says it, with a shell's status */
        close(po[0]);
        close(pe[0]);
        snprintf(errl, errlen, "%s: %s", argv[0], strerror(spawn_errno));
        return spawn_errno == EAGAIN || spawn_errno == ENOMEM ? -1 : 127;
    }
    char ebuf[4096];
    size_t on = 0, en = 0;
    int open_fds = 2, killed = 0;
    double t0 = mono();
    struct pollfd pf[2] = {{.fd = po[0], .events = POLLIN}, {.fd = pe[0], .events = POLLIN}};
    while (open_fds) {
        int k = poll(pf, 2, 200);
        if (mono() - t0 > SLURM_CMD_TIMEOUT_S && !killed) {
            kill(pid, SIGKILL);
            killed = 1;
        }
        if (k <= 0)
            continue;
        for (int i = 0; i < 2; i++) {
            if (pf[i].fd < 0 || !(pf[i].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            char tmp[1024];
            ssize_t r = read(pf[i].fd, tmp, sizeof(tmp));
            if (r <= 0) {
                if (r < 0 && errno == EINTR)
                    continue;
                close(pf[i].fd);
                pf[i].fd = -1;
                open_fds--;
                continue;
            }
            if (i == 0 && outlen) {
                size_t c = (size_t)r < outlen - 1 - on ? (size_t)r : outlen - 1 - on;
                memcpy(out + on, tmp, c);
                on += c;
                out[on] = 0;
            } else if (i == 1) {
                if (en + (size_t)r >= sizeof(ebuf)) { /* keep the tail */
                    size_t keep = sizeof(ebuf) / 2;
                    memmove(ebuf, ebuf + en - (en < keep ? en : keep), en < keep ? en : keep);
                    en = en < keep ? en : keep;
                }
                size_t c = (size_t)r < sizeof(ebuf) - 1 - en ? (size_t)r : sizeof(ebuf) - 1 - en;
                memcpy(ebuf + en, tmp, c);
                en += c;
            }
        }
    }
    int st = 0;
    if (spawn_wait(pid, &st) < 0)
        st = 127 << 8;
    ebuf[en] = 0;
    while (en && (ebuf[en - 1] == '\n' || ebuf[en - 1] == ' '))
        ebuf[--en] = 0;
    const char *last = strrchr(ebuf, '\n');
    snprintf(errl, errlen, "%s", last ? last + 1 : ebuf);
    if (killed) {
        snprintf(errl, errlen, "no answer in %.0f s", SLURM_CMD_TIMEOUT_S);
        return -1;
    }
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int spreflight(char *err, size_t errlen)
{
    char path[PATH_MAX], out[256], el[400];
    const char *tools[] = {"sbatch", "squeue", "scancel"};
    for (size_t i = 0; i < sizeof(tools) / sizeof(tools[0]); i++)
        if (slurm_find_tool(tools[i], path, sizeof(path)) < 0)
            return fail(err, errlen,
                        "--via slurm: %s not found in PATH (install Slurm's client commands, "
                        "Debian's slurm-client, or use --via local)",
                        tools[i]);
    char *ping[] = {"sinfo", "-h", "-o", "%P", NULL};
    if (slurm_find_tool("sinfo", path, sizeof(path)) == 0 &&
        slurm_cmd(ping, out, sizeof(out), el, sizeof(el)) != 0)
        return fail(err, errlen, "--via slurm: the Slurm controller does not answer (sinfo: %s)",
                    el[0] ? el : "failed");
    return 0;
}

/* --- what squeue says of a task (invariant 2) --- */

/* Slurm's job states, long and short forms (squeue(1), JOB STATE CODES). */
static const struct {
    const char *name, *code;
    enum slurm_tstate cls;
} slurm_states[] = {
    {"PENDING", "PD", SLURM_T_ACTIVE},     {"RUNNING", "R", SLURM_T_ACTIVE},
    {"CONFIGURING", "CF", SLURM_T_ACTIVE}, {"COMPLETING", "CG", SLURM_T_ACTIVE},
    {"SUSPENDED", "S", SLURM_T_ACTIVE},    {"STOPPED", "ST", SLURM_T_ACTIVE},
    {"REQUEUED", "RQ", SLURM_T_ACTIVE},    {"REQUEUE_FED", "RF", SLURM_T_ACTIVE},
    {"RESIZING", "RS", SLURM_T_ACTIVE},    {"SIGNALING", "SI", SLURM_T_ACTIVE},
    {"STAGE_OUT", "SO", SLURM_T_ACTIVE},   {"BOOT_FAIL", "BF", SLURM_T_ENDED},
    {"CANCELLED", "CA", SLURM_T_ENDED},    {"COMPLETED", "CD", SLURM_T_ENDED},
    {"DEADLINE", "DL", SLURM_T_ENDED},     {"FAILED", "F", SLURM_T_ENDED},
    {"NODE_FAIL", "NF", SLURM_T_ENDED},    {"OUT_OF_MEMORY", "OOM", SLURM_T_ENDED},
    {"PREEMPTED", "PR", SLURM_T_ENDED},    {"TIMEOUT", "TO", SLURM_T_ENDED},
    {"REVOKED", "RV", SLURM_T_ENDED},      {"REQUEUE_HOLD", "RH", SLURM_T_HELD},
    {"SPECIAL_EXIT", "SE", SLURM_T_HELD},  {"RESV_DEL_HOLD", "RD", SLURM_T_HELD},
};

static int has_word_ci(const char *s, const char *w)
{
    size_t n = strlen(w);
    for (; *s; s++)
        if (!strncasecmp(s, w, n))
            return 1;
    return 0;
}

enum slurm_tstate slurm_state_class(const char *state, const char *reason)
{
    /* sacct writes "CANCELLED by UID": the state is the first word */
    size_t n = strcspn(state, " +");
    for (size_t i = 0; i < sizeof(slurm_states) / sizeof(slurm_states[0]); i++) {
        if ((strlen(slurm_states[i].name) != n || strncmp(state, slurm_states[i].name, n)) &&
            (strlen(slurm_states[i].code) != n || strncmp(state, slurm_states[i].code, n)))
            continue;
        enum slurm_tstate c = slurm_states[i].cls;
        /* A pending job with priority 0 is held: "launch failed requeued
         * held", JobHeldUser, JobHeldAdmin, "job requeued in held state";
         * one whose dependency can never be met will not run either. */
        if (c == SLURM_T_ACTIVE && !strcmp(slurm_states[i].name, "PENDING") && reason &&
            (has_word_ci(reason, "held") || has_word_ci(reason, "DependencyNeverSatisfied")))
            c = SLURM_T_HELD;
        return c;
    }
    return SLURM_T_UNKNOWN;
}

int slurm_parse_line(const char *line, struct slurm_line *l)
{
    memset(l, 0, sizeof(*l));
    const char *f[5];
    size_t len[5];
    const char *q = line;
    for (int i = 0; i < 5; i++) {
        f[i] = q;
        /* the reason is the rest of the line: it may hold anything */
        len[i] = i == 4 ? strcspn(q, "\n") : strcspn(q, "|\n");
        if (i < 4 && q[len[i]] != '|')
            return -1;
        q += len[i] + 1;
    }
    char idx[64], *end;
    if (len[1] == 0 || len[1] >= sizeof(idx) || len[2] == 0 || len[2] >= sizeof(l->state))
        return -1;
    memcpy(idx, f[1], len[1]);
    idx[len[1]] = 0;
    /* %i is ARRAYJOB_INDEX for an array task (one line each with -r) */
    char *us = strchr(idx, '_');
    if (!us || us == idx || !us[1])
        return -1;
    *us = 0;
    errno = 0;
    l->array_job = strtoull(idx, &end, 10);
    if (*end || errno || idx[0] == '-')
        return -1;
    l->index = strtoull(us + 1, &end, 10);
    if (*end || errno || us[1] == '-' || l->index >= SLURM_MAX_TASKS)
        return -1;
    snprintf(l->state, sizeof(l->state), "%.*s", (int)len[2], f[2]);
    if (len[3] && !(len[3] == 6 && !strncmp(f[3], "(null)", 6)))
        snprintf(l->node, sizeof(l->node), "%.*s", (int)len[3], f[3]);
    snprintf(l->reason, sizeof(l->reason), "%.*s", (int)len[4], f[4]);
    return 0;
}

/* --- the engine --- */

struct task {
    uint64_t job;    /* the job of its current attempt */
    int array_index; /* its index in that job's array */
    int attempts;    /* 1 or 2 */
    double submitted;
    int seen;        /* squeue listed it since its last submit */
    int ended;       /* its current attempt ended or is held */
    int held;        /* ... held: scancel it before it is left */
    int unknown;     /* said once: its state is not one slurm_state_class knows */
    char node[64];   /* where it last ran */
    char state[192]; /* its last state (and reason, when held) */
};

struct slurm {
    char dir[PATH_MAX];
    rw_home *h;
    uint64_t ntasks, n; /* tasks, schedules */
    struct task *tasks;
    unsigned char *got; /* delivered, by schedule - first (invariant 1) */
    uint64_t delivered;
    uint64_t *pending; /* found in out/, not yet delivered */
    size_t npending;
    uint64_t *lost; /* lost schedules to deliver */
    size_t nlost;
    uint64_t jobs[2 * SLURM_MAX_TASKS + 1];
    size_t njobs;
    double last_poll;
    uint64_t poll_from; /* the task the next squeue starts from */
    int cancelled;
    char args[1024];
};

static int mkdir_p(const char *path, char *err, size_t errlen)
{
    if (io_mkdir_p(path) < 0)
        return fail(err, errlen, "cannot create %s: %s", path, strerror(errno));
    return 0;
}

static int write_text(const char *path, const char *text, int mode, char *err, size_t errlen)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return fail(err, errlen, "cannot write %s: %s", path, strerror(errno));
    int bad = fputs(text, f) < 0;
    if (fclose(f) != 0) /* closed either way: never twice */
        bad = 1;
    if (bad)
        return fail(err, errlen, "cannot write %s: %s", path, strerror(errno));
    chmod(path, (mode_t)mode);
    return 0;
}

/* sbatch the array indexes spec ("0-7" or "3"): the job id in *job. */
static int submit(struct slurm *s, const char *spec, uint64_t *job, char *err, size_t errlen)
{
    if (s->cancelled)
        return fail(err, errlen, "cancelled");
    char arr[64], outp[PATH_MAX + 32], script[PATH_MAX + 16], argsbuf[1024];
    snprintf(arr, sizeof(arr), "--array=%s", spec);
    snprintf(outp, sizeof(outp), "--output=%s/log/task-%%a.out", s->dir);
    snprintf(script, sizeof(script), "%s/task.sh", s->dir);
    char *argv[SLURM_MAX_ARGS + 8];
    int n = 0;
    argv[n++] = "sbatch";
    argv[n++] = "--parsable";
    argv[n++] = "--job-name=rewind-check";
    argv[n++] = "--open-mode=append";
    argv[n++] = arr;
    argv[n++] = outp;
    snprintf(argsbuf, sizeof(argsbuf), "%s", s->args);
    for (char *save = NULL, *t = strtok_r(argsbuf, " \t", &save); t;
         t = strtok_r(NULL, " \t", &save)) {
        if (n >= SLURM_MAX_ARGS + 6)
            return fail(err, errlen, "--slurm-args: more than %d arguments", SLURM_MAX_ARGS);
        argv[n++] = t;
    }
    argv[n++] = script;
    argv[n] = NULL;
    char out[256], el[400];
    int rc = slurm_cmd(argv, out, sizeof(out), el, sizeof(el));
    char *end;
    unsigned long long id = strtoull(out, &end, 10);
    if (rc != 0 || end == out || (*end && *end != ';' && *end != '\n'))
        return fail(err, errlen, "--via slurm: sbatch failed: %s", el[0] ? el : "no job id");
    RW_ASSERT(s->njobs < sizeof(s->jobs) / sizeof(s->jobs[0]));
    s->jobs[s->njobs++] = id;
    *job = id;
    /* invariant 6: on disk before anything waits on the job */
    char jobs[PATH_MAX + 8], line[32];
    snprintf(jobs, sizeof(jobs), "%s/jobs", s->dir);
    int fd = open(jobs, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    int len = snprintf(line, sizeof(line), "%llu\n", id);
    if (fd < 0 || write(fd, line, (size_t)len) != len || fsync(fd) < 0) {
        if (fd >= 0)
            close(fd);
        return fail(err, errlen, "--via slurm: cannot note job %llu in %s (scancel it): %s", id,
                    jobs, strerror(errno));
    }
    close(fd);
    return 0;
}

static int sstart(struct eng *e, char *err, size_t errlen)
{
    struct slurm *s = calloc(1, sizeof(*s));
    if (!s)
        return fail(err, errlen, "out of memory");
    e->priv = s;
    const struct eng_plan *p = &e->plan;
    s->n = p->last - p->first + 1;
    s->ntasks = p->jobs ? p->jobs : 1;
    if (s->ntasks > s->n)
        s->ntasks = s->n;
    if (s->ntasks > SLURM_MAX_TASKS)
        s->ntasks = SLURM_MAX_TASKS;
    snprintf(s->args, sizeof(s->args), "%s", p->args ? p->args : "");
    s->tasks = calloc(s->ntasks, sizeof(*s->tasks));
    s->got = calloc(s->n, 1);
    s->pending = calloc(s->n, sizeof(*s->pending));
    s->lost = calloc(s->n, sizeof(*s->lost));
    if (!s->tasks || !s->got || !s->pending || !s->lost)
        return fail(err, errlen, "out of memory");
    char share[PATH_MAX];
    if (p->share)
        snprintf(share, sizeof(share), "%s", p->share);
    else
        snprintf(share, sizeof(share), "%s/slurm", p->home);
    if (mkdir_p(share, err, errlen) < 0)
        return -1;
    char real[PATH_MAX];
    if (!realpath(share, real))
        return fail(err, errlen, "--share %s: %s", share, strerror(errno));
    if (strchr(real, '\'') || strlen(real) > PATH_MAX - 200)
        return fail(err, errlen, "--share %s: a path with a quote or too long", real);
    char again[32] = ""; /* a rerun's plan is its one schedule (check.c invariant 7) */
    if (p->again)
        snprintf(again, sizeof(again), "-again-%llu", (unsigned long long)p->first);
    snprintf(s->dir, sizeof(s->dir), "%.3800s/check-%.64s-%lld-%d%s", real, p->base,
             (long long)time(NULL), (int)getpid(), again);
    char sub[PATH_MAX + 16];
    const char *subs[] = {"", "/out", "/log", "/work"};
    for (size_t i = 0; i < 4; i++) {
        snprintf(sub, sizeof(sub), "%s%s", s->dir, subs[i]);
        if (mkdir_p(sub, err, errlen) < 0)
            return -1;
    }
    struct rw_error re;
    if (rw_home_open(p->home, &s->h, &re) < 0)
        return fail(err, errlen, "%s", re.msg);
    /* What every task needs: the base run, replayable (pages once each). */
    char path[PATH_MAX + 32];
    snprintf(path, sizeof(path), "%s/base.rwa", s->dir);
    struct rw_archive_stats ast;
    if (rw_export(s->h, p->base, RW_EXPORT_REPLAYABLE, path, &ast, &re) < 0)
        return fail(err, errlen, "--via slurm: publishing run %s: %s", p->base, re.msg);
    struct eng_plan tp = *p;
    tp.jobs = (unsigned)s->ntasks;
    char *pj = eng_plan_json(&tp);
    if (!pj)
        return fail(err, errlen, "out of memory");
    snprintf(path, sizeof(path), "%s/plan.json", s->dir);
    int rc = write_text(path, pj, 0644, err, errlen);
    free(pj);
    if (rc < 0)
        return -1;
    char self[PATH_MAX];
    const char *bin = getenv("REWIND_BIN");
    if (bin && *bin) {
        snprintf(self, sizeof(self), "%s", bin);
    } else {
        ssize_t k = readlink("/proc/self/exe", self, sizeof(self) - 1);
        if (k <= 0)
            return fail(err, errlen, "cannot find this program (/proc/self/exe)");
        self[k] = 0;
    }
    if (strchr(self, '\''))
        return fail(err, errlen, "the path of rewind has a quote: %s", self);
    char script[2 * PATH_MAX + 200];
    snprintf(script, sizeof(script),
             "#!/bin/sh\n# a task of rewind check --via slurm (docs/distributed.md)\n"
             "exec '%s' check-task '%s' \"${SLURM_ARRAY_TASK_ID:-0}\"\n",
             self, s->dir);
    snprintf(path, sizeof(path), "%s/task.sh", s->dir);
    if (write_text(path, script, 0755, err, errlen) < 0)
        return -1;
    char spec[64];
    snprintf(spec, sizeof(spec), "0-%llu", (unsigned long long)(s->ntasks - 1));
    uint64_t job;
    if (submit(s, spec, &job, err, errlen) < 0)
        return -1;
    fprintf(stderr, "rewind: check: job %llu, %llu tasks, in %s (its jobs: %s/jobs)\n",
            (unsigned long long)job, (unsigned long long)s->ntasks, s->dir, s->dir);
    double t = mono();
    for (uint64_t k = 0; k < s->ntasks; k++)
        s->tasks[k] =
            (struct task){.job = job, .array_index = (int)k, .attempts = 1, .submitted = t};
    return 0;
}

/* Read out/: every outcome not yet delivered goes to pending. */
static void scan(struct eng *e)
{
    struct slurm *s = e->priv;
    char path[PATH_MAX + 16];
    snprintf(path, sizeof(path), "%s/out", s->dir);
    DIR *d = opendir(path);
    if (!d)
        return;
    struct dirent *de;
    while ((de = readdir(d))) {
        char *end;
        unsigned long long v = strtoull(de->d_name, &end, 10);
        if (end == de->d_name || strcmp(end, ".json") || v < e->plan.first || v > e->plan.last)
            continue;
        uint64_t i = v - e->plan.first;
        if (s->got[i])
            continue;
        s->got[i] = 1; /* invariant 1 */
        s->pending[s->npending++] = v;
    }
    closedir(d);
}

static uint64_t task_of(const struct eng *e, const struct slurm *s, uint64_t sched)
{
    return (sched - e->plan.first) % s->ntasks;
}

/* squeue: the state of every task's current attempt (invariant 2). */
static int poll_tasks(struct eng *e, char *err, size_t errlen)
{
    struct slurm *s = e->priv;
    char jl[2048] = "";
    size_t o = 0;
    /* Only the jobs of tasks not settled (squeue refuses a purged job id),
     * as many as one command line takes, from where the last poll stopped:
     * a task whose job is not asked about this time is not judged (inv. 2). */
    unsigned char *queried = calloc(s->ntasks, 1);
    uint64_t asked[256];
    size_t nasked = 0;
    if (!queried)
        return fail(err, errlen, "out of memory");
    uint64_t i = 0;
    for (; i < s->ntasks; i++) {
        uint64_t k = (s->poll_from + i) % s->ntasks;
        const struct task *t = &s->tasks[k];
        if (t->attempts > 2)
            continue;
        size_t a = 0;
        while (a < nasked && asked[a] != t->job)
            a++;
        if (a == nasked) {
            if (nasked == sizeof(asked) / sizeof(asked[0]) || o > sizeof(jl) - 32)
                break;
            asked[nasked++] = t->job;
            o += (size_t)snprintf(jl + o, sizeof(jl) - o, "%s%llu", o ? "," : "",
                                  (unsigned long long)t->job);
        }
        queried[k] = 1;
    }
    s->poll_from = (s->poll_from + i) % s->ntasks;
    if (!o) {
        free(queried);
        return 0;
    }
    char *argv[] = {"squeue", "-h", "-r", "-t", "all", "-j", jl, "-o", "%A|%i|%T|%N|%r", NULL};
    char *out = malloc(SQUEUE_OUT_MAX); /* not static: the engine is reentrant */
    if (!out) {
        free(queried);
        return fail(err, errlen, "out of memory");
    }
    char el[400];
    int rc = slurm_cmd(argv, out, SQUEUE_OUT_MAX, el, sizeof(el));
    if (rc != 0 && strstr(el, "Invalid job id"))
        out[0] = 0; /* purged: gone, as below */
    else if (rc != 0) {
        free(queried);
        free(out);
        return fail(err, errlen, "--via slurm: squeue failed: %s", el[0] ? el : "no output");
    }
    for (uint64_t k = 0; k < s->ntasks; k++)
        s->tasks[k].ended = s->tasks[k].held = 0;
    int *listed = calloc(s->ntasks, sizeof(int));
    if (!listed) {
        free(queried);
        free(out);
        return fail(err, errlen, "out of memory");
    }
    for (char *save = NULL, *line = strtok_r(out, "\n", &save); line;
         line = strtok_r(NULL, "\n", &save)) {
        struct slurm_line l;
        if (slurm_parse_line(line, &l) < 0)
            continue;
        for (uint64_t k = 0; k < s->ntasks; k++) {
            struct task *t = &s->tasks[k];
            if (t->job != l.array_job || (unsigned long long)t->array_index != l.index)
                continue;
            listed[k] = 1;
            t->seen = 1;
            if (l.node[0])
                snprintf(t->node, sizeof(t->node), "%s", l.node);
            enum slurm_tstate c = slurm_state_class(l.state, l.reason);
            t->ended = c == SLURM_T_ENDED || c == SLURM_T_HELD;
            t->held = c == SLURM_T_HELD;
            if (t->held)
                snprintf(t->state, sizeof(t->state), "%s, %s", l.state, l.reason);
            else
                snprintf(t->state, sizeof(t->state), "%s", l.state);
            if (c == SLURM_T_UNKNOWN && !t->unknown) {
                t->unknown = 1; /* waited on, as a running one; --timeout bounds it */
                fprintf(stderr,
                        "rewind: check: task %llu is in a Slurm state this rewind does not "
                        "know (%s, %s): waiting on it\n",
                        (unsigned long long)k, l.state, l.reason);
            }
        }
    }
    double now = mono();
    for (uint64_t k = 0; k < s->ntasks; k++) {
        struct task *t = &s->tasks[k];
        if (queried[k] && !listed[k] && (t->seen || now - t->submitted > SLURM_GONE_GRACE_S)) {
            t->ended = 1; /* gone from squeue */
            snprintf(t->state, sizeof(t->state), "gone");
        }
    }
    free(listed);
    free(queried);
    free(out);
    return 0;
}

/* scancel one attempt of a task (JOB_INDEX). */
static void cancel_task(const struct task *t)
{
    char id[64], el[200];
    snprintf(id, sizeof(id), "%llu_%d", (unsigned long long)t->job, t->array_index);
    char *argv[] = {"scancel", id, NULL};
    slurm_cmd(argv, NULL, 0, el, sizeof(el));
}

/* After a poll: retry or give up on tasks that ended (or are held) with work left. */
static int settle(struct eng *e, char *err, size_t errlen)
{
    struct slurm *s = e->priv;
    const struct eng_plan *p = &e->plan;
    scan(e); /* invariant 2: a task writes its files before it ends */
    for (uint64_t k = 0; k < s->ntasks; k++) {
        struct task *t = &s->tasks[k];
        if (!t->ended || t->attempts > 2)
            continue;
        if (t->held)
            cancel_task(t); /* invariant 2: it must not run later */
        int left = 0;
        for (uint64_t sc = p->first + k; sc <= p->last; sc += s->ntasks) {
            if (s->got[sc - p->first])
                continue;
            char path[PATH_MAX + 64];
            struct stat sb;
            snprintf(path, sizeof(path), "%s/out/%llu.json", s->dir, (unsigned long long)sc);
            if (stat(path, &sb) == 0) { /* invariant 7 */
                s->got[sc - p->first] = 1;
                s->pending[s->npending++] = sc;
                continue;
            }
            left++;
        }
        if (!left) {
            t->attempts = 3; /* done with it */
            continue;
        }
        if (t->attempts == 1) {
            char spec[32];
            snprintf(spec, sizeof(spec), "%llu", (unsigned long long)k);
            uint64_t job;
            if (submit(s, spec, &job, err, errlen) < 0)
                return -1;
            fprintf(stderr,
                    "rewind: check: task %llu %s (%s%s%s) with %d schedules left: "
                    "submitted again as job %llu\n",
                    (unsigned long long)k, t->held ? "held" : "ended", t->state,
                    t->node[0] ? " on " : "", t->node, left, (unsigned long long)job);
            *t = (struct task){
                .job = job, .array_index = (int)k, .attempts = 2, .submitted = mono()};
            continue;
        }
        fprintf(stderr, "rewind: check: task %llu %s again (%s%s%s): %d schedules lost\n",
                (unsigned long long)k, t->held ? "held" : "ended", t->state,
                t->node[0] ? " on " : "", t->node, left);
        for (uint64_t sc = p->first + k; sc <= p->last; sc += s->ntasks)
            if (!s->got[sc - p->first]) {
                s->got[sc - p->first] = 1;
                s->lost[s->nlost++] = sc;
            }
        t->attempts = 3;
    }
    return 0;
}

/* Invariant 5's exception: the run here was cut by a wall-clock limit
 * (spin, timeout, limit: its end is the host's time) and this one, of the
 * same spec, is complete (check.c invariant 7 runs a cut schedule again):
 * the cut one is removed so the complete one is imported, as run/ctx.c
 * replaces a cut run. 1 if removed. */
static int replace_cut(struct slurm *s, const struct eng_outcome *out,
                       const struct rw_run_info *have)
{
    const enum rw_outcome o = out->r.outcome;
    int stored_cut =
        !have->incomplete && (!strcmp(have->outcome, "spin") || !strcmp(have->outcome, "timeout") ||
                              !strcmp(have->outcome, "limit"));
    if (!stored_cut || o == RW_SPIN || o == RW_TIMEOUT || o == RW_LIMIT)
        return 0;
    const char *ref = out->r.id;
    struct rw_error re;
    return rw_remove(s->h, &ref, 1, 0, NULL, NULL, &re) == 0;
}

static int deliver_one(struct eng *e, uint64_t sc, struct eng_outcome *out)
{
    struct slurm *s = e->priv;
    char path[PATH_MAX + 64], why[300];
    snprintf(path, sizeof(path), "%s/out/%llu.json", s->dir, (unsigned long long)sc);
    if (eng_outcome_read(path, out, why, sizeof(why)) < 0 || out->schedule != sc) {
        memset(out, 0, sizeof(*out));
        out->schedule = sc;
        snprintf(out->why, sizeof(out->why), "its outcome file: %.250s", why);
        return 1;
    }
    struct rw_run_info have;
    struct rw_error ie;
    int here = out->ok && rw_run_info(s->h, out->r.id, &have, &ie) == 0;
    if (here && replace_cut(s, out, &have)) {
        rw_run_info_free(&have); /* removed: the complete run is imported below */
        here = 0;
    }
    if (here) {
        /* Invariant 5: the run is here already (an earlier check of the
         * same spec in this home): the same spec must end the same way. */
        int same = !have.incomplete && !strcmp(have.outcome, rw_outcome_word(out->r.outcome)) &&
                   have.exit_code == out->r.exit_code && have.steps == out->r.steps;
        rw_run_info_free(&have);
        if (!same) {
            out->ok = 0;
            snprintf(out->why, sizeof(out->why),
                     "its run %s ended otherwise than the run of the same spec already here",
                     out->r.id);
        }
        snprintf(path, sizeof(path), "%s/out/%llu.rwa", s->dir, (unsigned long long)sc);
        unlink(path);
        return 1;
    }
    if (out->ok) {
        snprintf(path, sizeof(path), "%s/out/%llu.rwa", s->dir, (unsigned long long)sc);
        struct rw_archive_stats st;
        struct rw_error re;
        if (rw_import(s->h, path, &st, &re) < 0) {
            out->ok = 0;
            snprintf(out->why, sizeof(out->why), "importing its run %s: %.200s", out->r.id, re.msg);
        } else if (strcmp(st.run, out->r.id)) {
            out->ok = 0;
            snprintf(out->why, sizeof(out->why),
                     "its archive holds run %.40s, its outcome names %.40s", st.run, out->r.id);
        }
        unlink(path);
    }
    return 1;
}

static int snext(struct eng *e, struct eng_outcome *out, volatile sig_atomic_t *abort, char *err,
                 size_t errlen)
{
    struct slurm *s = e->priv;
    for (;;) {
        if (*abort && !s->cancelled)
            e->ops->cancel(e);
        if (s->npending)
            return deliver_one(e, s->pending[--s->npending], out);
        if (s->nlost) {
            uint64_t sc = s->lost[--s->nlost];
            const struct task *t = &s->tasks[task_of(e, s, sc)];
            out->schedule = sc;
            out->lost = 1;
            snprintf(out->where, sizeof(out->where), "%.30s task %llu", t->node[0] ? t->node : "?",
                     (unsigned long long)task_of(e, s, sc));
            snprintf(out->why, sizeof(out->why), "its task died or was held twice (last %s)",
                     t->state);
            return 1;
        }
        if (s->cancelled)
            return 0;
        scan(e);
        if (s->npending)
            continue;
        uint64_t done = 0;
        for (uint64_t i = 0; i < s->n; i++)
            done += s->got[i];
        if (done == s->n)
            return 0;
        if (mono() - s->last_poll >= 1.0) {
            s->last_poll = mono();
            if (poll_tasks(e, err, errlen) < 0 || settle(e, err, errlen) < 0)
                return -1;
            continue;
        }
        struct timespec ts = {0, 100 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
}

static void scancel_all(struct slurm *s)
{
    for (size_t i = 0; i < s->njobs; i++) {
        char id[32], el[200];
        snprintf(id, sizeof(id), "%llu", (unsigned long long)s->jobs[i]);
        char *argv[] = {"scancel", id, NULL};
        slurm_cmd(argv, NULL, 0, el, sizeof(el));
    }
}

static void scancel_eng(struct eng *e)
{
    struct slurm *s = e->priv;
    if (!s || s->cancelled)
        return;
    s->cancelled = 1; /* invariant 3 */
    scancel_all(s);
}

static void sclose(struct eng *e)
{
    struct slurm *s = e->priv;
    if (!s)
        return;
    if (s->dir[0]) {
        char path[PATH_MAX + 32];
        snprintf(path, sizeof(path), "%s/base.rwa", s->dir);
        unlink(path); /* the share keeps plan, outcomes and logs, not the pages */
    }
    rw_home_close(s->h);
    free(s->tasks);
    free(s->got);
    free(s->pending);
    free(s->lost);
    free(s);
    e->priv = NULL;
}

const struct eng_ops eng_slurm_ops = {
    .name = "slurm",
    .preflight = spreflight,
    .start = sstart,
    .next = snext,
    .cancel = scancel_eng,
    .close = sclose,
};
