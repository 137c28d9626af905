/*
 * where: GET api/run/REF/where?step=S[&pid=P], the stack of each thread of
 * a process at a step (docs/serve.md), from `rewind where ID S [--pid P]
 * --json` run as a child of this very binary. rw_where boots throwaway
 * machines, and a VM never runs inside the server process (action.c says
 * why), so the child does it; the server checks the request, waits for the
 * child and passes its JSON on.
 *
 * The page asks for a stack when its playhead rests and aborts the fetch
 * when the playhead moves on; the browser then closes the connection, and
 * the child working for a step nobody looks at any more is ended.
 *
 * Invariants:
 *  1. The child's argv holds only the resolved run id and numbers checked
 *     here: the step in 1..the run's steps, the pid (if any) > 0. It is
 *     exec'd directly (no shell).
 *  2. A client that hangs up ends its child: the connection's socket is
 *     watched while the child runs (serve_child_run, child.c invariant 2).
 *  3. At most SERVE_WHERE_RUNNING children run at once; a request waits for
 *     a slot only while its client is still there.
 *  4. At most SERVE_WHERE_CACHE answers are kept, keyed by (id, step, pid):
 *     a stored run never changes, so neither does its stack at a step.
 *  5. What is kept of a child's output is bounded (SERVE_WHERE_OUT, its
 *     stderr SERVE_WHERE_ERR); a longer answer is an error, never cut.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "serve.h"

#define SERVE_WHERE_RUNNING 2
#define SERVE_WHERE_CACHE 32
#define SERVE_WHERE_OUT (4 * 1024 * 1024)
#define SERVE_WHERE_ERR (16 * 1024)

static pthread_mutex_t where_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t where_cond = PTHREAD_COND_INITIALIZER;
static int where_running;

struct cached {
    char id[RW_ID_MAX];
    uint64_t step, pid, used;
    json_t *body; /* NULL: a free slot */
};
static struct cached cache[SERVE_WHERE_CACHE];
static uint64_t cache_clock;

/* A deep copy of the cached answer for (id, step, pid), or NULL. */
static json_t *cache_get(const char *id, uint64_t step, uint64_t pid)
{
    json_t *out = NULL;
    pthread_mutex_lock(&where_lock);
    for (int i = 0; i < SERVE_WHERE_CACHE; i++) {
        struct cached *c = &cache[i];
        if (c->body && c->step == step && c->pid == pid && !strcmp(c->id, id)) {
            c->used = ++cache_clock;
            out = json_deep_copy(c->body);
            break;
        }
    }
    pthread_mutex_unlock(&where_lock);
    return out;
}

/* Keep a copy of body, in the least recently used slot (inv. 4). */
static void cache_put(const char *id, uint64_t step, uint64_t pid, const json_t *body)
{
    pthread_mutex_lock(&where_lock);
    struct cached *v = &cache[0];
    for (int i = 0; i < SERVE_WHERE_CACHE; i++) {
        if (!cache[i].body) {
            v = &cache[i];
            break;
        }
        if (cache[i].used < v->used)
            v = &cache[i];
    }
    json_decref(v->body);
    snprintf(v->id, sizeof v->id, "%s", id);
    v->step = step;
    v->pid = pid;
    v->used = ++cache_clock;
    v->body = json_deep_copy(body);
    pthread_mutex_unlock(&where_lock);
}

/* 1 if the client at the other end of sock has hung up (sock < 0: never). */
static int client_gone(int sock, int wait_ms)
{
    if (sock < 0) {
        if (wait_ms > 0)
            poll(NULL, 0, wait_ms);
        return 0;
    }
    struct pollfd p = {.fd = sock, .events = POLLRDHUP};
    int n = poll(&p, 1, wait_ms);
    return n > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL));
}

/* Take a slot for a child (inv. 3). 0, or -1 if the client went away. */
static int slot_take(int sock)
{
    pthread_mutex_lock(&where_lock);
    while (where_running >= SERVE_WHERE_RUNNING) {
        struct timespec t;
        clock_gettime(CLOCK_REALTIME, &t);
        t.tv_sec += 1;
        pthread_cond_timedwait(&where_cond, &where_lock, &t);
        if (where_running >= SERVE_WHERE_RUNNING && client_gone(sock, 0)) {
            pthread_mutex_unlock(&where_lock);
            return -1;
        }
    }
    where_running++;
    SERVE_ASSERT(where_running <= SERVE_WHERE_RUNNING); /* inv. 3 */
    pthread_mutex_unlock(&where_lock);
    return 0;
}

static void slot_give(void)
{
    pthread_mutex_lock(&where_lock);
    where_running--;
    SERVE_ASSERT(where_running >= 0);
    pthread_cond_signal(&where_cond);
    pthread_mutex_unlock(&where_lock);
}

/* The run ref names and its length (no lock: api.c invariant 1). 0 or -1 with r. */
static int where_run(rw_home *h, const char *ref, char id[RW_ID_MAX], uint64_t *steps,
                     struct serve_reply *r)
{
    if (!serve_ref_ok(ref)) {
        serve_reply_error(r, 400, "not a run reference");
        return -1;
    }
    struct rw_error err;
    struct rw_run_info in;
    int rc = rw_resolve(h, ref, id, &err);
    if (rc == 0)
        rc = rw_run_info(h, id, &in, &err);
    if (rc < 0) {
        serve_reply_error(r, 404, "%s", err.msg);
        return -1;
    }
    int incomplete = in.incomplete;
    *steps = in.steps;
    rw_run_info_free(&in);
    if (incomplete) {
        serve_reply_error(r, 404, "run %s is incomplete (it was killed mid-way)", id);
        return -1;
    }
    return 0;
}

/* The reply for a child that ended with st (serve_child_run's; spawn_errno:
 * errno when it could not start): its JSON object, or NULL with r set to
 * the error in words. */
static json_t *where_answer(int st, int gone, int spawn_errno, struct serve_buf *out,
                            struct serve_buf *err, struct serve_reply *r)
{
    /* the answer of `rewind where --json`, also when it failed (child.c inv. 4) */
    json_t *w = st >= 0 ? serve_child_json(out) : NULL;
    char buf[512];
    const char *line = serve_child_error(w, err, buf, sizeof buf);
    if (json_object_get(w, "error") || gone || st != 0) {
        json_decref(w);
        w = NULL;
    }
    if (gone) {
        serve_reply_error(r, 503, "where: the client went away");
    } else if (st < 0 && spawn_errno == ECANCELED) {
        serve_reply_error(r, 503, "where: the server is stopping");
    } else if (st < 0) {
        serve_reply_error(r, 500, "cannot start rewind where: %s", serve_spawn_error(spawn_errno));
    } else if (st > 128 && st < 128 + 65) { /* killed by a signal */
        const char *sig = sigabbrev_np(st - 128);
        serve_reply_error(r, 500, "rewind where died of SIG%s%s%s", sig ? sig : "?",
                          *line ? ": " : "", line);
    } else if (st == 2) { /* RW_EUSAGE: no such process at the step */
        serve_reply_error(r, 404, "%s", line);
    } else if (st == 124) {
        serve_reply_error(r, 504, "where: %s", line);
    } else if (st != 0) {
        serve_reply_error(r, 500, "where failed (exit %d): %s", st, line);
    } else if (out->total > out->len) { /* inv. 5 */
        serve_reply_error(r, 500, "where: the answer is larger than %d bytes", SERVE_WHERE_OUT);
    } else if (!w) {
        serve_reply_error(r, 500, "where: no JSON object from rewind where%s%s", *line ? ": " : "",
                          line);
    }
    return w;
}

void serve_where_get(rw_home *h, const char *ref, serve_arg_fn arg, void *ctx, int sock,
                     struct serve_reply *r)
{
    r->status = 200;
    r->body = NULL;
    char id[RW_ID_MAX];
    uint64_t steps, step, pid;
    if (where_run(h, ref, id, &steps, r) < 0)
        return;
    if (serve_arg_u64(arg, ctx, "step", 0, &step) < 0 ||
        serve_arg_u64(arg, ctx, "pid", 0, &pid) < 0) {
        serve_reply_error(r, 400, "where: step and pid are numbers");
        return;
    }
    if (step == 0 || pid > UINT32_MAX) {
        serve_reply_error(r, 400, "where: step must be 1..%" PRIu64 " and pid a process id", steps);
        return;
    }
    if (step > steps) {
        serve_reply_error(r, 404, "run %s has %" PRIu64 " steps: there is no step %" PRIu64, id,
                          steps, step);
        return;
    }
    json_t *hit = cache_get(id, step, pid);
    if (hit) {
        json_object_set_new(hit, "cached", json_true());
        r->body = hit;
        return;
    }
    char step_arg[24], pid_arg[24];
    snprintf(step_arg, sizeof step_arg, "%" PRIu64, step);
    snprintf(pid_arg, sizeof pid_arg, "%" PRIu64, pid);
    char *argv[] = {
        "rewind", "where", id, step_arg, "--json", pid ? "--pid" : NULL, pid ? pid_arg : NULL,
        NULL}; /* inv. 1 */
    if (slot_take(sock) < 0) {
        serve_reply_error(r, 503, "where: the client went away");
        return;
    }
    struct serve_buf out, err;
    SERVE_ASSERT(serve_buf_init(&out, SERVE_WHERE_OUT) == 0 &&
                 serve_buf_init(&err, SERVE_WHERE_ERR) == 0);
    err.tail = 1; /* its last line: the words of a failure */
    int gone = 0;
    int st = serve_child_run(argv, sock, &out, &err, &gone);
    int spawn_errno = errno;
    slot_give();
    json_t *w = where_answer(st, gone, spawn_errno, &out, &err, r);
    if (w) {
        json_object_set_new(w, "run", json_string(id));
        cache_put(id, step, pid, w);
        json_object_set_new(w, "cached", json_false());
        r->body = w;
    }
    free(out.p);
    free(err.p);
}
