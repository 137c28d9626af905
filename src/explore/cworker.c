/*
 * cworker: see cworker.h.
 */
#include "explore/cworker.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "util/check.h"
#include "util/fail.h"
#include "util/io.h"

volatile sig_atomic_t cworker_abort;
static volatile sig_atomic_t cworker_term;

static void on_signal(int sig)
{
    cworker_abort = 1;
    if (sig != SIGALRM)
        cworker_term = 1;
    rw_interrupt();
}

static void set_alarm(double t)
{
    struct itimerval it;
    memset(&it, 0, sizeof(it));
    if (t > 0) {
        it.it_value.tv_sec = (time_t)t;
        it.it_value.tv_usec = (suseconds_t)((t - (double)(time_t)t) * 1e6);
        if (!it.it_value.tv_sec && !it.it_value.tv_usec)
            it.it_value.tv_usec = 1000;
    }
    setitimer(ITIMER_REAL, &it, NULL);
}

static void worker_main(const struct cworker_fns *f, int fd)
{
    struct sigaction sa = {.sa_handler = on_signal};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGALRM, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    sigset_t all;
    sigemptyset(&all);
    sigaddset(&all, SIGALRM);
    sigaddset(&all, SIGTERM);
    sigaddset(&all, SIGINT);
    sigprocmask(SIG_UNBLOCK, &all, NULL); /* blocked by start() until the handlers were set */
    struct cworker_task t;
    struct cworker_result msg; /* not static: the engine is reentrant */
    /* a task given is always answered: after a stop (SIGTERM, SIGINT)
     * every task ends at once (as timeout); the worker exits at EOF */
    while (io_read_full(fd, &t, sizeof(t)) == (ssize_t)sizeof(t)) {
        cworker_abort = cworker_term;
        set_alarm(f->limit_s); /* invariant 1 */
        memset(&msg, 0, sizeof(msg));
        msg.ok = f->run(f->ctx, &t, &msg.r, &msg.e) == 0;
        set_alarm(0);
        if (io_write_all(fd, &msg, sizeof(msg)) < 0 || !msg.ok || f->one_shot) /* invariant 2 */
            break;
    }
    if (f->fini)
        f->fini(f->ctx);
    _exit(0);
}

void cworker_open(struct cworker_pool *p, unsigned n, const struct cworker_fns *f)
{
    memset(p, 0, sizeof(*p));
    p->n = n < 1 ? 1 : n > CWORKER_MAX ? CWORKER_MAX : n;
    p->fns = *f;
    for (unsigned i = 0; i < CWORKER_MAX; i++)
        p->w[i].fd = -1;
}

/* Close the slot's socket and wait for its worker: its wait status. */
static int reap_slot(struct cworker *w)
{
    int st = 0;
    if (w->fd >= 0)
        close(w->fd);
    w->fd = -1;
    if (w->pid > 0) /* invariant 4 */
        while (waitpid(w->pid, &st, 0) < 0 && errno == EINTR)
            ;
    w->pid = 0;
    w->busy = 0;
    return st;
}

static int start(struct cworker_pool *p, unsigned slot, char *err, size_t errlen)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
        return util_fail(err, errlen, "socketpair: %s", strerror(errno));
    fflush(stdout);
    fflush(stderr);
    sigset_t all, old;
    sigemptyset(&all);
    sigaddset(&all, SIGALRM);
    sigaddset(&all, SIGTERM);
    sigaddset(&all, SIGINT);
    sigprocmask(SIG_BLOCK, &all, &old); /* until the worker has its handlers */
    pid_t pid = fork();
    if (pid != 0)
        sigprocmask(SIG_SETMASK, &old, NULL);
    if (pid < 0) {
        close(sv[0]);
        close(sv[1]);
        return util_fail(err, errlen, "fork: %s", strerror(errno));
    }
    if (pid == 0) {
        close(sv[0]);
        for (unsigned i = 0; i < CWORKER_MAX; i++) /* invariant 3 */
            if (p->w[i].fd >= 0)
                close(p->w[i].fd);
        worker_main(&p->fns, sv[1]);
    }
    close(sv[1]);
    p->w[slot].pid = pid;
    p->w[slot].fd = sv[0];
    return 0;
}

int cworker_submit(struct cworker_pool *p, const struct cworker_task *t, char *err, size_t errlen)
{
    unsigned slot = 0;
    while (slot < p->n && p->w[slot].busy)
        slot++;
    if (slot == p->n)
        return util_fail(err, errlen, "no free worker");
    struct cworker *w = &p->w[slot];
    for (int attempt = 0; attempt < 2; attempt++) {
        if (!w->pid && start(p, slot, err, errlen) < 0)
            return -1;
        /* MSG_NOSIGNAL: a worker that died idle is an error here, not SIGPIPE */
        if (send(w->fd, t, sizeof(*t), MSG_NOSIGNAL) == (ssize_t)sizeof(*t)) {
            w->busy = 1;
            w->task = *t;
            return 0;
        }
        reap_slot(w); /* it died while idle: fork another */
    }
    return util_fail(err, errlen, "cannot give a task to a worker: %s", strerror(errno));
}

unsigned cworker_busy(const struct cworker_pool *p)
{
    unsigned n = 0;
    for (unsigned i = 0; i < p->n; i++)
        n += p->w[i].busy != 0;
    return n;
}

int cworker_wait(struct cworker_pool *p, volatile sig_atomic_t *abort, struct cworker_result *r,
                 struct cworker_task *t)
{
    return cworker_wait_for(p, abort, -1, r, t);
}

int cworker_wait_for(struct cworker_pool *p, volatile sig_atomic_t *abort, int timeout_ms,
                     struct cworker_result *r, struct cworker_task *t)
{
    struct pollfd fds[CWORKER_MAX];
    unsigned idx[CWORKER_MAX];
    for (;;) {
        unsigned n = 0;
        for (unsigned i = 0; i < p->n; i++)
            if (p->w[i].busy) {
                fds[n] = (struct pollfd){.fd = p->w[i].fd, .events = POLLIN};
                idx[n++] = i;
            }
        if (!n)
            return -2;
        if (abort && *abort && !p->killed) {
            p->killed = 1;
            for (unsigned i = 0; i < p->n; i++)
                if (p->w[i].busy && p->w[i].pid > 0)
                    kill(p->w[i].pid, SIGTERM);
        }
        int pr = poll(fds, n, timeout_ms >= 0 && timeout_ms < 200 ? timeout_ms : 200);
        if (pr <= 0 && timeout_ms >= 0)
            return -3;
        if (pr <= 0)
            continue; /* timeout or EINTR: look at the abort flag again */
        for (unsigned k = 0; k < n; k++) {
            if (!fds[k].revents)
                continue;
            struct cworker *w = &p->w[idx[k]];
            *t = w->task;
            ssize_t got = io_read_full(w->fd, r, sizeof(*r));
            w->busy = 0;
            if (got != (ssize_t)sizeof(*r)) {
                memset(r, 0, sizeof(*r));
                int st = reap_slot(w);
                r->signal = WIFSIGNALED(st) ? WTERMSIG(st) : 0;
                return -1;
            }
            if (!r->ok || p->killed || p->fns.one_shot) /* invariant 2; a stopped worker ends */
                reap_slot(w);
            return 0;
        }
    }
}

void cworker_kill(struct cworker_pool *p)
{
    for (unsigned i = 0; i < CWORKER_MAX; i++)
        if (p->w[i].busy && p->w[i].pid > 0) {
            kill(p->w[i].pid, SIGKILL);
            reap_slot(&p->w[i]);
        }
}

void cworker_close(struct cworker_pool *p)
{
    for (unsigned i = 0; i < CWORKER_MAX; i++) {
        if (p->w[i].fd >= 0) {
            close(p->w[i].fd); /* EOF: an idle worker exits */
            p->w[i].fd = -1;
        }
        if (p->w[i].busy && p->w[i].pid > 0)
            kill(p->w[i].pid, SIGTERM);
    }
    for (unsigned i = 0; i < CWORKER_MAX; i++)
        reap_slot(&p->w[i]);
}
