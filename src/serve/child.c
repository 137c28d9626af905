/*
 * child: run a child of this binary (serve_spawn) to its end with its
 * stdout and stderr captured, for action.c (cat, fork) and where.c (where).
 * The one place the server waits on a child that is not a shell session.
 *
 * Invariants:
 *  1. What is kept of a child's output is bounded by its buffer's cap: the
 *     head is kept (the tail, for a buffer with tail set: a stderr, whose
 *     last line is what matters), the rest only counted (total); the kept
 *     bytes are always NUL-terminated (the buffer holds cap + 1 bytes).
 *  2. A client that hangs up (sock >= 0) ends its child: the child is sent
 *     SIGTERM (its own abort path), SIGKILL after SERVE_CHILD_GRACE seconds,
 *     and waited for.
 *  3. After serve_child_shutdown, every running child is ended as in 2 and
 *     no new child starts: the server's Ctrl-C never waits on a long fork
 *     or cat (MHD_stop_daemon joins the connection threads that wait here).
 *  4. A child's result is read only from the JSON object on its stdout
 *     (its command's --json answer: docs/serve.md, "Answers"), parsed by
 *     jansson; its stderr is never parsed. At most its last line becomes
 *     the words of an error, made valid UTF-8 first, so a child whose stderr
 *     is huge or binary cannot change a result or break a reply.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "serve.h"

#define SERVE_CHILD_GRACE 10 /* seconds from SIGTERM to SIGKILL */

static volatile sig_atomic_t child_shutting; /* inv. 3 */

int serve_buf_init(struct serve_buf *b, size_t cap)
{
    *b = (struct serve_buf){.p = malloc(cap + 1), .cap = cap};
    if (!b->p)
        return -1;
    b->p[0] = 0;
    return 0;
}

void serve_buf_add(struct serve_buf *b, const char *p, size_t n)
{
    if (b->tail && b->len + n > b->cap) { /* inv. 1: the last cap bytes */
        if (n >= b->cap) {
            p += n - b->cap;
            b->total += n - b->cap;
            n = b->cap;
            b->len = 0;
        } else {
            size_t drop = b->len + n - b->cap;
            memmove(b->p, b->p + drop, b->len - drop);
            b->len -= drop;
        }
    }
    b->total += n;
    size_t k = b->cap - b->len < n ? b->cap - b->len : n;
    memcpy(b->p + b->len, p, k);
    b->len += k;
    b->p[b->len] = 0; /* inv. 1 */
    SERVE_ASSERT(b->len <= b->cap);
}

json_t *serve_child_json(const struct serve_buf *out)
{
    if (out->total > out->len) /* cut: not the whole answer (inv. 4) */
        return NULL;
    json_error_t je;
    json_t *a = json_loadb(out->p, out->len, 0, &je);
    if (a && !json_is_object(a)) {
        json_decref(a);
        a = NULL;
    }
    return a;
}

void serve_child_err_line(const struct serve_buf *err, char *line, size_t n)
{
    SERVE_ASSERT(n > 0);
    size_t end = err->len;
    while (end && (err->p[end - 1] == '\n' || err->p[end - 1] == '\r'))
        end--;
    size_t start = end;
    while (start && err->p[start - 1] != '\n')
        start--;
    if (end - start >= 8 && !memcmp(err->p + start, "rewind: ", 8))
        start += 8;
    size_t k = end - start < n - 1 ? end - start : n - 1;
    memcpy(line, err->p + start, k);
    line[k] = 0;
    json_t *s = json_stringn(line, k);
    if (!s) /* not UTF-8 (or cut inside a character): other bytes as '?' (inv. 4) */
        for (size_t i = 0; i < k; i++)
            if ((unsigned char)line[i] >= 0x80)
                line[i] = '?';
    json_decref(s);
    for (size_t i = 0; i < k; i++)
        if (line[i] == 0)
            line[i] = '?';
}

const char *serve_child_error(json_t *answer, const struct serve_buf *err, char *buf, size_t n)
{
    const char *e = json_string_value(json_object_get(answer, "error"));
    if (e && *e) {
        snprintf(buf, n, "%s", e);
        size_t k = strlen(buf);
        json_t *s;
        while (k > 0 && !(s = json_stringn(buf, k))) /* cut inside a character */
            buf[--k] = 0;
        if (k > 0)
            json_decref(s);
        return buf;
    }
    serve_child_err_line(err, buf, n);
    return buf;
}

void serve_child_shutdown(void)
{
    child_shutting = 1;
}

int serve_child_run(char *const argv[], int sock, struct serve_buf *out, struct serve_buf *err,
                    int *gone)
{
    *gone = 0;
    if (child_shutting) { /* inv. 3 */
        errno = ECANCELED;
        return -1;
    }
    int fo, fe;
    pid_t pid = serve_spawn(argv, -1, &fo, &fe);
    if (pid < 0)
        return -1;
    struct pollfd pf[3] = {{.fd = fo, .events = POLLIN},
                           {.fd = fe, .events = POLLIN},
                           {.fd = sock, .events = POLLRDHUP}};
    int open_fds = 2, termed = 0, waited_s = 0;
    char tmp[65536];
    while (open_fds) {
        if (!termed && child_shutting) { /* inv. 3 */
            kill(pid, SIGTERM);
            termed = 1;
        }
        int n = poll(pf, 3, 1000);
        if (n < 0 && errno != EINTR)
            break;
        if (n <= 0) {
            if (termed && ++waited_s == SERVE_CHILD_GRACE)
                kill(pid, SIGKILL); /* inv. 2: it did not stop on SIGTERM */
            continue;
        }
        if (pf[2].fd >= 0 && (pf[2].revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL))) {
            *gone = 1;
            if (!termed)
                kill(pid, SIGTERM); /* inv. 2 */
            termed = 1;
            pf[2].fd = -1;
        }
        for (int i = 0; i < 2; i++) {
            if (pf[i].fd < 0 || !pf[i].revents)
                continue;
            ssize_t k = read(pf[i].fd, tmp, sizeof tmp);
            if (k > 0) {
                serve_buf_add(i ? err : out, tmp, (size_t)k);
            } else if (k == 0 || errno != EINTR) {
                close(pf[i].fd);
                pf[i].fd = -1;
                open_fds--;
            }
        }
    }
    for (int i = 0; i < 2; i++)
        if (pf[i].fd >= 0)
            close(pf[i].fd);
    int st;
    if (rw_spawn_wait(pid, &st, 1, NULL) < 0)
        return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}
