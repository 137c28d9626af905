/*
 * action: what `rewind serve` runs a VM for (fork, cat, shell), each as a
 * child process of this very binary running the CLI command of the same
 * name with --json (`rewind fork --json`, `rewind cat --json`, `rewind
 * shell --json`): a VM that fails or runs long cannot take the server down,
 * the server never runs two VMs in one process, and a page's shell is fed
 * exactly as `rewind shell` is (its standard input is the rendezvous
 * input). What a child did is read from its JSON answer on stdout, never
 * from its words on stderr (child.c invariant 4).
 *
 * Invariants:
 *  1. A child's argv is built only from resolved run ids, numbers, and a
 *     guest path that is absolute, holds no ".." and no NUL; it is exec'd
 *     directly (no shell), so nothing in a request is interpreted.
 *  2. What is kept of a child's output is bounded: SERVE_CAT_ANSWER for
 *     cat's answer (the file's first MiB, `rewind cat --json`),
 *     SERVE_ANSWER_MAX for another answer, SERVE_SHELL_MAX (the tail, with
 *     its offset) for a shell session's bytes.
 *  3. At most SERVE_SESSIONS shell sessions live at once; a session's pid
 *     is waited for exactly once (by its reader thread).
 *  4. A child is spawned only while the file the server was started from
 *     is still the one it runs (same path, inode, size and mtime): once it
 *     was replaced, a child would run another program under the server's
 *     name, and under the test host's 9p share (docs/serve.md, "Tests")
 *     a mix of both that dies of SIGSEGV. The request then fails saying so.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "serve.h"

extern char **environ;

#define SERVE_CAT_ANSWER (8 * 1024 * 1024) /* 1 MiB of content, escaped (up to 6x) */
#define SERVE_ANSWER_MAX (64 * 1024)
#define SERVE_ERR_MAX (16 * 1024)
#define SERVE_SHELL_MAX (512 * 1024)
#define SERVE_SESSIONS 8

/* Resolve the ref in body[key] (no lock: api.c invariant 1). 0 or -1 with r set. */
static int body_run(rw_home *h, json_t *body, const char *key, char id[RW_ID_MAX],
                    struct serve_reply *r)
{
    const char *ref = json_string_value(json_object_get(body, key));
    if (!ref || !serve_ref_ok(ref)) {
        serve_reply_error(r, 400, "'%s' is not a run reference", key);
        return -1;
    }
    struct rw_error err;
    if (rw_resolve(h, ref, id, &err) < 0) {
        serve_reply_error(r, 404, "%s", err.msg);
        return -1;
    }
    return 0;
}

static int body_u64(json_t *body, const char *key, int required, uint64_t *out,
                    struct serve_reply *r)
{
    json_t *v = json_object_get(body, key);
    if (!v && !required) {
        *out = 0;
        return 0;
    }
    if (!json_is_integer(v) || json_integer_value(v) < 0) {
        serve_reply_error(r, 400, "'%s' must be a number >= 0", key);
        return -1;
    }
    *out = (uint64_t)json_integer_value(v);
    return 0;
}

/* What every action names: a resolved run, a step and, for some, one more
 * number (cat's pid, fork's schedule), each also as an argv word. */
struct target {
    char id[RW_ID_MAX];
    uint64_t step, num;
    char step_arg[24], num_arg[24];
};

/* body["run"], body["step"] and (unless num_key is NULL) body[num_key] into
 * t. 0 or -1 with r set. */
static int body_target(rw_home *h, json_t *body, const char *num_key, int num_required,
                       struct target *t, struct serve_reply *r)
{
    t->num = 0;
    if (body_run(h, body, "run", t->id, r) < 0 || body_u64(body, "step", 1, &t->step, r) < 0 ||
        (num_key && body_u64(body, num_key, num_required, &t->num, r) < 0))
        return -1;
    snprintf(t->step_arg, sizeof t->step_arg, "%" PRIu64, t->step);
    snprintf(t->num_arg, sizeof t->num_arg, "%" PRIu64, t->num);
    return 0;
}

/* A child's stdout (the head, up to out_cap bytes), stderr (its head), its
 * answer (the JSON object of its stdout, or NULL) and the words of its
 * failure (the answer's "error", else stderr's last line, valid UTF-8). */
struct capture {
    struct serve_buf out, err;
    int status; /* serve_child_run's */
    json_t *answer;
    const char *why;
    char why_buf[512];
};

static void capture_run(char *const argv[], size_t out_cap, struct capture *c)
{
    SERVE_ASSERT(serve_buf_init(&c->out, out_cap) == 0 &&
                 serve_buf_init(&c->err, SERVE_ERR_MAX) == 0);
    c->err.tail = 1; /* its last line: the words of a failure */
    int gone;        /* no socket is watched: a fork goes on when its page closes */
    c->status = serve_child_run(argv, -1, &c->out, &c->err, &gone);
    c->answer = NULL;
    if (c->status < 0) { /* the reason it could not start, as its error line */
        const char *why = errno == ECANCELED ? "the server is stopping" : serve_spawn_error(errno);
        serve_buf_add(&c->err, "\n", 1);
        serve_buf_add(&c->err, why, strlen(why));
    } else {
        c->answer = serve_child_json(&c->out); /* child.c inv. 4 */
    }
    c->why = serve_child_error(c->answer, &c->err, c->why_buf, sizeof c->why_buf);
}

static void capture_free(struct capture *c)
{
    json_decref(c->answer);
    free(c->out.p);
    free(c->err.p);
}

static void act_cat(rw_home *h, json_t *body, struct serve_reply *r)
{
    struct target t;
    if (body_target(h, body, "pid", 0, &t, r) < 0)
        return;
    json_t *jp = json_object_get(body, "path");
    const char *path = json_string_value(jp);
    if (!path || path[0] != '/' || strstr(path, "..") || strlen(path) != json_string_length(jp) ||
        strlen(path) > 1024) { /* inv. 1 */
        serve_reply_error(r, 403, "the path must be absolute, without '..'");
        return;
    }
    char *argv[] = {
        "rewind",  "cat", t.id, t.step_arg, (char *)path, "--json", t.num ? "--pid" : NULL,
        t.num_arg, NULL};
    struct capture c;
    capture_run(argv, SERVE_CAT_ANSWER, &c);
    json_t *content = json_object_get(c.answer, "content"),
           *size = json_object_get(c.answer, "size");
    if (c.status == 0 && (json_is_string(content) || json_is_null(content)) &&
        json_is_integer(size)) {
        r->body = json_pack("{s:s,s:I,s:s,s:O,s:b,s:b,s:I}", "run", t.id, "step",
                            (json_int_t)t.step, "path", path, "content", content, "binary",
                            json_is_true(json_object_get(c.answer, "binary")), "truncated",
                            json_is_true(json_object_get(c.answer, "truncated")), "size",
                            json_integer_value(size));
        r->status = 200;
    } else if (c.status == 3) {
        serve_reply_error(r, 404, "%s did not exist at step %" PRIu64, path, t.step);
    } else {
        serve_reply_error(r, 500, "cat failed (exit %d): %s", c.status, c.why);
    }
    capture_free(&c);
}

static void act_fork(rw_home *h, json_t *body, struct serve_reply *r)
{
    struct target t;
    if (body_target(h, body, "schedule", 1, &t, r) < 0)
        return;
    char *argv[] = {"rewind", "fork", t.id, t.step_arg, "--schedule", t.num_arg, "--json", NULL};
    struct capture c;
    capture_run(argv, SERVE_ANSWER_MAX, &c);
    /* its answer: {"id": the new run, ..., "summary": its closing line} */
    const char *newid = json_string_value(json_object_get(c.answer, "id"));
    const char *line = json_string_value(json_object_get(c.answer, "summary"));
    if (newid && serve_ref_ok(newid) && line) {
        r->body = json_pack("{s:s,s:s,s:I,s:I,s:i,s:s}", "id", newid, "parent", t.id, "step",
                            (json_int_t)t.step, "schedule", (json_int_t)t.num, "exit", c.status,
                            "line", line);
        r->status = 200;
    } else {
        serve_reply_error(r, 500, "fork failed (exit %d): %s", c.status, c.why);
    }
    capture_free(&c);
}

/* ---- shell sessions ---- */

struct session {
    int used;
    char sid[33];
    pid_t pid;
    int in_fd, out_fd; /* out_fd: the session's bytes (the child's stderr) */
    int ans_fd;        /* the child's stdout: its JSON answer at the end */
    char *ring;        /* the last SERVE_SHELL_MAX bytes of output */
    uint64_t total;
    int ended, status;
    char run[RW_ID_MAX];
    pthread_t reader;
};

static pthread_mutex_t sess_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t sess_cond = PTHREAD_COND_INITIALIZER;
static struct session sessions[SERVE_SESSIONS];

/* Read the session's bytes into its ring and the child's answer into ans
 * until both pipes end. */
static void reader_drain(struct session *se, struct serve_buf *ans)
{
    char tmp[8192];
    struct pollfd pf[2] = {{.fd = se->out_fd, .events = POLLIN},
                           {.fd = se->ans_fd, .events = POLLIN}};
    int open_fds = 2;
    while (open_fds) {
        if (poll(pf, 2, -1) < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        for (int i = 0; i < 2; i++) {
            if (pf[i].fd < 0 || !pf[i].revents)
                continue;
            ssize_t n = read(pf[i].fd, tmp, sizeof tmp);
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0) {
                pf[i].fd = -1;
                open_fds--;
            } else if (i == 1) {
                serve_buf_add(ans, tmp, (size_t)n);
            } else {
                pthread_mutex_lock(&sess_lock);
                for (ssize_t k = 0; k < n; k++)
                    se->ring[(se->total + (uint64_t)k) % SERVE_SHELL_MAX] = tmp[k];
                se->total += (uint64_t)n;
                pthread_cond_broadcast(&sess_cond);
                pthread_mutex_unlock(&sess_lock);
            }
        }
    }
}

static void *reader_main(void *arg)
{
    struct session *se = arg;
    struct serve_buf ans;
    SERVE_ASSERT(serve_buf_init(&ans, SERVE_ANSWER_MAX) == 0);
    reader_drain(se, &ans);
    int st;
    if (rw_spawn_wait(se->pid, &st, 1, NULL) < 0)
        st = RW_EINTERNAL << 8; /* not our child: cannot be */
    /* the run the session was kept as: its answer's "id" (child.c inv. 4) */
    json_t *a = serve_child_json(&ans);
    const char *kept = json_string_value(json_object_get(a, "id"));
    pthread_mutex_lock(&sess_lock);
    se->ended = 1;
    se->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    if (kept && serve_ref_ok(kept) && strlen(kept) < sizeof se->run)
        snprintf(se->run, sizeof se->run, "%s", kept);
    json_decref(a);
    free(ans.p);
    close(se->out_fd);
    close(se->ans_fd);
    if (se->in_fd >= 0)
        close(se->in_fd);
    se->in_fd = -1;
    pthread_cond_broadcast(&sess_cond);
    pthread_mutex_unlock(&sess_lock);
    return NULL;
}

static struct session *session_find(const char *sid)
{
    for (int i = 0; i < SERVE_SESSIONS; i++)
        if (sessions[i].used && !strcmp(sessions[i].sid, sid))
            return &sessions[i];
    return NULL;
}

/* Take sess_lock and find session sid; if there is none, the lock is
 * released, r says so and NULL is returned. */
static struct session *session_lock_find(const char *sid, struct serve_reply *r)
{
    pthread_mutex_lock(&sess_lock);
    struct session *se = session_find(sid);
    if (!se) {
        pthread_mutex_unlock(&sess_lock);
        serve_reply_error(r, 404, "no such shell session");
    }
    return se;
}

static void act_shell_start(rw_home *h, json_t *body, struct serve_reply *r)
{
    struct target t;
    if (body_target(h, body, NULL, 0, &t, r) < 0)
        return;
    pthread_mutex_lock(&sess_lock);
    struct session *se = NULL;
    for (int i = 0; i < SERVE_SESSIONS && !se; i++)
        if (!sessions[i].used)
            se = &sessions[i];
    if (!se)
        for (int i = 0; i < SERVE_SESSIONS && !se; i++)
            if (sessions[i].ended) { /* reuse the slot of an ended session */
                pthread_join(sessions[i].reader, NULL);
                free(sessions[i].ring);
                se = &sessions[i];
            }
    if (!se) { /* inv. 3 */
        pthread_mutex_unlock(&sess_lock);
        serve_reply_error(r, 429, "%d shell sessions are open already", SERVE_SESSIONS);
        return;
    }
    memset(se, 0, sizeof *se);
    int pin[2];
    if (pipe2(pin, O_CLOEXEC) < 0) {
        pthread_mutex_unlock(&sess_lock);
        serve_reply_error(r, 500, "pipe: %s", strerror(errno));
        return;
    }
    char *argv[] = {"rewind", "shell", t.id, t.step_arg, "--json", NULL};
    int out, ans;
    pid_t pid = serve_spawn(argv, pin[0], &ans, &out); /* stdout: the answer */
    close(pin[0]);
    if (pid < 0) {
        close(pin[1]);
        pthread_mutex_unlock(&sess_lock);
        serve_reply_error(r, 500, "cannot start rewind shell: %s", serve_spawn_error(errno));
        return;
    }
    unsigned char raw[16];
    if (getrandom(raw, sizeof raw, 0) != (ssize_t)sizeof raw)
        memset(raw, 0, sizeof raw);
    for (int i = 0; i < 16; i++)
        snprintf(se->sid + 2 * i, 3, "%02x", raw[i]);
    se->used = 1;
    se->pid = pid;
    se->in_fd = pin[1];
    se->out_fd = out;
    se->ans_fd = ans;
    se->ring = malloc(SERVE_SHELL_MAX);
    SERVE_ASSERT(se->ring);
    pthread_create(&se->reader, NULL, reader_main, se);
    r->body =
        json_pack("{s:s,s:s,s:I}", "session", se->sid, "run", t.id, "step", (json_int_t)t.step);
    r->status = 200;
    pthread_mutex_unlock(&sess_lock);
}

static void act_shell_input(const char *sid, json_t *body, struct serve_reply *r)
{
    json_t *jd = json_object_get(body, "data");
    const char *data = json_string_value(jd);
    int close_in = json_is_true(json_object_get(body, "close"));
    struct session *se = session_lock_find(sid, r);
    if (!se)
        return;
    int fd = se->in_fd >= 0 ? dup(se->in_fd) : -1;
    if (close_in && se->in_fd >= 0) {
        close(se->in_fd);
        se->in_fd = -1;
    }
    pthread_mutex_unlock(&sess_lock);
    size_t n = data ? json_string_length(jd) : 0, off = 0;
    while (fd >= 0 && off < n) {
        ssize_t w = write(fd, data + off, n - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            break;
        off += (size_t)w;
    }
    if (fd >= 0)
        close(fd);
    r->body = json_pack("{s:I}", "written", (json_int_t)off);
    r->status = 200;
}

void serve_shell_get(const char *sid, serve_arg_fn arg, void *ctx, struct serve_reply *r)
{
    uint64_t from;
    if (serve_arg_u64(arg, ctx, "from", 0, &from) < 0) {
        serve_reply_error(r, 400, "from: not a number");
        return;
    }
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 2; /* long poll: wait up to 2 s for output */
    struct session *se = session_lock_find(sid, r);
    if (!se)
        return;
    while (se->total <= from && !se->ended)
        if (pthread_cond_timedwait(&sess_cond, &sess_lock, &until) == ETIMEDOUT)
            break;
    uint64_t start = from;
    if (start > se->total)
        start = se->total;
    if (se->total - start > SERVE_SHELL_MAX)
        start = se->total - SERVE_SHELL_MAX; /* inv. 2: older output is gone */
    size_t n = (size_t)(se->total - start);
    char *b = malloc(n + 1);
    SERVE_ASSERT(b);
    for (size_t i = 0; i < n; i++)
        b[i] = se->ring[(start + i) % SERVE_SHELL_MAX];
    /* a UTF-8 character cut by the read waits for its other bytes */
    if (!se->ended) {
        size_t k = n, back = 0;
        while (k > 0 && back < 3 && ((unsigned char)b[k - 1] & 0xc0) == 0x80) {
            k--;
            back++;
        }
        if (k > 0) {
            unsigned char lead = (unsigned char)b[k - 1];
            size_t need = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
            if (need > back + 1)
                n = k - 1;
        }
    }
    json_t *data = json_stringn(b, n);
    if (!data) { /* not UTF-8 (or cut inside a character): bytes as Latin-1 */
        char *u = malloc(2 * n + 1);
        SERVE_ASSERT(u);
        size_t k = 0;
        for (size_t i = 0; i < n; i++) {
            unsigned char c = (unsigned char)b[i];
            if (c < 0x80) {
                u[k++] = (char)c;
            } else {
                u[k++] = (char)(0xc0 | (c >> 6));
                u[k++] = (char)(0x80 | (c & 0x3f));
            }
        }
        data = json_stringn(u, k);
        free(u);
    }
    free(b);
    r->body = json_pack("{s:o,s:I,s:I,s:b,s:i,s:s}", "data", data, "from", (json_int_t)start,
                        "next", (json_int_t)(start + n), "ended", se->ended, "status", se->status,
                        "run", se->run);
    r->status = 200;
    pthread_mutex_unlock(&sess_lock);
}

void serve_action_shutdown(void)
{
    pthread_mutex_lock(&sess_lock);
    for (int i = 0; i < SERVE_SESSIONS; i++)
        if (sessions[i].used && !sessions[i].ended)
            kill(sessions[i].pid, SIGTERM);
    pthread_mutex_unlock(&sess_lock);
}

void serve_action_post(rw_home *h, const char *path, json_t *body, struct serve_reply *r)
{
    r->status = 200;
    r->body = NULL;
    json_t *empty = NULL;
    if (!body)
        body = empty = json_object();
    if (!strcmp(path, "cat"))
        act_cat(h, body, r);
    else if (!strcmp(path, "fork"))
        act_fork(h, body, r);
    else if (!strcmp(path, "shell"))
        act_shell_start(h, body, r);
    else if (!strncmp(path, "shell/", 6))
        act_shell_input(path + 6, body, r);
    else
        serve_reply_error(r, 404, "no such route");
    json_decref(empty);
    SERVE_ASSERT(r->body);
}
