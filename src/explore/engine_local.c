/*
 * engine_local: `--via local`, the engine of engine.h on this machine. Up
 * to plan.jobs schedules run at once, each in a child process of its own
 * (eng_child_spawn: a VM per process), in the caller's home; an outcome is
 * delivered when its child has written its result and exited.
 *
 * Invariants:
 *  1. At most min(plan.jobs, ENG_LOCAL_MAX) children run at once; every
 *     child spawned is waited for (by next, or by close after SIGKILL).
 *  2. After cancel no child is spawned and none runs: the running ones are
 *     killed and reaped, their schedules not delivered (engine.h
 *     invariant 4).
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "explore/engine.h"
#include "util/check.h"
#include "util/fail.h"

#define ENG_LOCAL_MAX 64

struct local {
    pid_t pid[ENG_LOCAL_MAX];
    int fd[ENG_LOCAL_MAX];
    uint64_t sched[ENG_LOCAL_MAX];
    unsigned running, jobs;
    uint64_t next;
    int cancelled;
};

static int lstart(struct eng *e, char *err, size_t errlen)
{
    struct local *l = calloc(1, sizeof(*l));
    if (!l)
        return util_fail(err, errlen, "out of memory");
    l->jobs = e->plan.jobs ? e->plan.jobs : 1;
    if (l->jobs > ENG_LOCAL_MAX)
        l->jobs = ENG_LOCAL_MAX;
    l->next = e->plan.first;
    e->priv = l;
    return 0;
}

static void lcancel(struct eng *e)
{
    struct local *l = e->priv;
    if (!l || l->cancelled)
        return;
    l->cancelled = 1; /* invariant 2 */
    for (unsigned i = 0; i < ENG_LOCAL_MAX; i++)
        if (l->pid[i]) {
            kill(l->pid[i], SIGKILL);
            while (waitpid(l->pid[i], NULL, 0) < 0 && errno == EINTR)
                ;
            close(l->fd[i]);
            l->pid[i] = 0;
            l->running--;
        }
}

static int lnext(struct eng *e, struct eng_outcome *out, volatile sig_atomic_t *abort, char *err,
                 size_t errlen)
{
    struct local *l = e->priv;
    for (;;) {
        if (*abort)
            lcancel(e);
        while (!l->cancelled && l->running < l->jobs && l->next <= e->plan.last) {
            unsigned slot = 0;
            while (l->pid[slot])
                slot++;
            RW_ASSERT(slot < l->jobs); /* invariant 1 */
            if (eng_child_spawn(e->plan.home, &e->plan, l->next, &l->pid[slot], &l->fd[slot], err,
                                errlen) < 0)
                return -1;
            l->sched[slot] = l->next++;
            l->running++;
        }
        if (!l->running)
            return 0;
        struct pollfd pf[ENG_LOCAL_MAX];
        unsigned map[ENG_LOCAL_MAX], n = 0;
        for (unsigned i = 0; i < ENG_LOCAL_MAX; i++)
            if (l->pid[i]) {
                pf[n] = (struct pollfd){.fd = l->fd[i], .events = POLLIN};
                map[n++] = i;
            }
        int k = poll(pf, n, 200);
        if (k < 0 && errno != EINTR)
            return util_fail(err, errlen, "poll: %s", strerror(errno));
        for (unsigned j = 0; k > 0 && j < n; j++) {
            if (!(pf[j].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            unsigned i = map[j];
            int st = 0;
            while (waitpid(l->pid[i], &st, 0) < 0 && errno == EINTR)
                ;
            eng_child_reap(l->pid[i], l->fd[i], st, l->sched[i], out);
            snprintf(out->where, sizeof(out->where), "local");
            l->pid[i] = 0;
            l->running--;
            return 1;
        }
    }
}

static void lclose(struct eng *e)
{
    struct local *l = e->priv;
    if (!l)
        return;
    for (unsigned i = 0; i < ENG_LOCAL_MAX; i++)
        if (l->pid[i]) { /* invariant 1 */
            kill(l->pid[i], SIGKILL);
            while (waitpid(l->pid[i], NULL, 0) < 0 && errno == EINTR)
                ;
            close(l->fd[i]);
        }
    free(l);
    e->priv = NULL;
}

const struct eng_ops eng_local_ops = {
    .name = "local",
    .preflight = NULL,
    .start = lstart,
    .next = lnext,
    .cancel = lcancel,
    .close = lclose,
};
