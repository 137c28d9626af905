/*
 * http: the server of `rewind serve` on libmicrohttpd: the token, the
 * routes, the embedded page (docs/serve.md).
 *
 * Invariants:
 *  1. Every request's path starts with /<token>/ (compared in constant
 *     time); any other request is answered 403 and nothing else happens.
 *  2. A path holding ".." (after MHD's %-decoding) is answered 403 before
 *     routing, whatever it names.
 *  3. A POST also needs the token in the X-Rewind-Token header (a page of
 *     another origin cannot set it) and is answered 403 in read-only mode.
 *  4. Only the embedded assets and the API are served: no path of a request
 *     is ever opened as a file.
 *  5. A request body is at most SERVE_BODY_MAX bytes (413 after).
 *  6. Up to SERVE_CONN_MAX connections are served at once (issue 27, 10:
 *     70 idle connections with no token used to take all 64 and make every
 *     other request wait up to the 300-s idle timeout).
 *  7. A connection is "waiting" from its accept, and again after each
 *     request, until a whole request header with the token arrives: it is
 *     closed after SERVE_WAIT_S without a byte (libmicrohttpd's timeout),
 *     SERVE_WAIT_S after it began waiting however it trickles (the header
 *     deadline), and, the oldest first, whenever more than SERVE_WAIT_MAX
 *     connections wait. So waiting connections never hold more than
 *     SERVE_WAIT_MAX of the SERVE_CONN_MAX slots, and a client with the
 *     token always finds one (issue 27, 10: a few slow or idle clients
 *     cannot exhaust the server). Only a request with the token gets the
 *     long timeout (SERVE_REQ_S) an action needs.
 */
#include <arpa/inet.h>
#include <pthread.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "mhd.h"
#include "serve.h"

#define SERVE_BODY_MAX (64 * 1024)
/* inv. 6: idle connections a few slow clients hold (a thread each) leave
 * room for everyone else */
#define SERVE_CONN_MAX 1024
/* inv. 7: a browser sends a header in milliseconds; a long action (fork,
 * cat) holds its connection as long as it runs, and libmicrohttpd counts
 * that time against the timeout, so a request with the token gets 300 s */
#define SERVE_WAIT_S 10
#define SERVE_WAIT_MAX 256
#define SERVE_REQ_S 300

/* One connection (inv. 7), in serve's table: the slot is the connection's
 * socket context. */
enum conn_state { CONN_FREE, CONN_WAITING, CONN_SERVING, CONN_CUT };
struct conn {
    enum conn_state state;
    int fd;
    struct timespec since; /* CONN_WAITING: when it began waiting */
};

struct server {
    rw_home *home;
    const struct serve_opts *o;
    char token[SERVE_TOKEN_LEN + 1];
    pthread_mutex_t mu; /* conns */
    struct conn conns[SERVE_CONN_MAX];
};

/* libmicrohttpd's functions (mhd.c), set by serve_run before the daemon and
 * its threads start, and never changed after */
static const struct serve_mhd *mhd;

struct request {
    int is_post;
    char *body;
    size_t len;
    int too_big;
};

static int token_eq(const char *a, const char *b, size_t n)
{
    unsigned char d = 0;
    for (size_t i = 0; i < n; i++)
        d |= (unsigned char)(a[i] ^ b[i]);
    return d == 0;
}

static double mono_s(const struct timespec *t)
{
    return (double)t->tv_sec + (double)t->tv_nsec / 1e9;
}

/* inv. 7: cut a waiting connection (its thread sees the end of its socket
 * and closes it; libmicrohttpd closes the fd only after telling conn_notify,
 * which takes mu, so the fd is still this connection's). Under s->mu. */
static void conn_cut(struct conn *k)
{
    SERVE_ASSERT(k->state == CONN_WAITING);
    shutdown(k->fd, SHUT_RDWR);
    k->state = CONN_CUT;
}

/* inv. 7, at every accept: cut the connections that waited SERVE_WAIT_S,
 * then the oldest waiting ones while more than SERVE_WAIT_MAX wait. */
static void conns_sweep(struct server *s, const struct timespec *now)
{
    size_t waiting = 0;
    for (size_t i = 0; i < SERVE_CONN_MAX; i++) {
        struct conn *k = &s->conns[i];
        if (k->state == CONN_WAITING && mono_s(now) - mono_s(&k->since) >= SERVE_WAIT_S)
            conn_cut(k);
        waiting += k->state == CONN_WAITING;
    }
    while (waiting > SERVE_WAIT_MAX) {
        struct conn *old = NULL;
        for (size_t i = 0; i < SERVE_CONN_MAX; i++)
            if (s->conns[i].state == CONN_WAITING &&
                (!old || mono_s(&s->conns[i].since) < mono_s(&old->since)))
                old = &s->conns[i];
        conn_cut(old);
        waiting--;
    }
}

static void conn_notify(void *cls, struct MHD_Connection *c, void **socket_context,
                        enum MHD_ConnectionNotificationCode code)
{
    struct server *s = cls;
    pthread_mutex_lock(&s->mu);
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        conns_sweep(s, &now);
        const union MHD_ConnectionInfo *ci =
            mhd->get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
        struct conn *k = NULL;
        for (size_t i = 0; i < SERVE_CONN_MAX && !k; i++)
            if (s->conns[i].state == CONN_FREE)
                k = &s->conns[i];
        /* inv. 6: libmicrohttpd accepts at most SERVE_CONN_MAX */
        SERVE_ASSERT(k && ci);
        *k = (struct conn){.state = CONN_WAITING, .fd = ci->connect_fd, .since = now};
        *socket_context = k;
    } else if (*socket_context) {
        ((struct conn *)*socket_context)->state = CONN_FREE;
        *socket_context = NULL;
    }
    pthread_mutex_unlock(&s->mu);
}

/* inv. 7: the connection of c waits again (to), or serves a request with
 * the token; and its libmicrohttpd timeout follows. */
static void conn_set(struct server *s, struct MHD_Connection *c, enum conn_state to)
{
    const union MHD_ConnectionInfo *ci =
        mhd->get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    struct conn *k = ci ? ci->socket_context : NULL;
    if (!k)
        return;
    pthread_mutex_lock(&s->mu);
    if (k->state != CONN_CUT) {
        k->state = to;
        clock_gettime(CLOCK_MONOTONIC, &k->since);
    }
    pthread_mutex_unlock(&s->mu);
    mhd->set_connection_option(c, MHD_CONNECTION_OPTION_TIMEOUT,
                               (unsigned)(to == CONN_SERVING ? SERVE_REQ_S : SERVE_WAIT_S));
}

static enum MHD_Result send_bytes(struct MHD_Connection *c, unsigned status, const char *type,
                                  const void *data, size_t len, int copy)
{
    struct MHD_Response *resp = mhd->create_response_from_buffer(
        len, (void *)data, copy ? MHD_RESPMEM_MUST_COPY : MHD_RESPMEM_PERSISTENT);
    if (!resp)
        return MHD_NO;
    mhd->add_response_header(resp, "Content-Type", type);
    mhd->add_response_header(resp, "Cache-Control", "no-store");
    mhd->add_response_header(resp, "X-Content-Type-Options", "nosniff");
    mhd->add_response_header(resp, "Referrer-Policy", "no-referrer");
    mhd->add_response_header(resp, "Content-Security-Policy",
                             "default-src 'self'; style-src 'self' 'unsafe-inline'; "
                             "img-src 'self' data:; frame-ancestors 'none'");
    enum MHD_Result ok = mhd->queue_response(c, status, resp);
    mhd->destroy_response(resp);
    return ok;
}

static enum MHD_Result send_json(struct MHD_Connection *c, struct serve_reply *r)
{
    char *s = json_dumps(r->body, JSON_COMPACT);
    json_decref(r->body);
    r->body = NULL;
    SERVE_ASSERT(s);
    enum MHD_Result ok = send_bytes(c, r->status, "application/json", s, strlen(s), 1);
    free(s);
    return ok;
}

static enum MHD_Result send_error(struct MHD_Connection *c, unsigned status, const char *msg)
{
    struct serve_reply r = {0};
    serve_reply_error(&r, status, "%s", msg);
    return send_json(c, &r);
}

static const char *query_arg(void *ctx, const char *key)
{
    return mhd->lookup_connection_value(ctx, MHD_GET_ARGUMENT_KIND, key);
}

static enum MHD_Result send_asset(struct MHD_Connection *c, const char *path)
{
    if (!*path)
        path = "index.html";
    for (size_t i = 0; i < serve_nassets; i++)
        if (!strcmp(serve_assets[i].path, path))
            return send_bytes(c, 200, serve_assets[i].type, serve_assets[i].data,
                              serve_assets[i].len, 0);
    return send_error(c, 404, "no such file");
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url,
                              const char *method, const char *version, const char *upload,
                              size_t *upload_size, void **con_cls)
{
    (void)version;
    struct server *s = cls;
    struct request *rq = *con_cls;
    if (!rq) {
        rq = calloc(1, sizeof *rq);
        if (!rq)
            return MHD_NO;
        rq->is_post = !strcmp(method, "POST");
        *con_cls = rq;
        /* inv. 7: a whole header with the token: no longer waiting */
        size_t tl = strlen(s->token);
        if (url[0] == '/' && strlen(url) >= tl + 1 && token_eq(url + 1, s->token, tl))
            conn_set(s, c, CONN_SERVING);
        return MHD_YES; /* headers seen; the body (if any) comes next */
    }
    if (*upload_size) {
        if (rq->len + *upload_size > SERVE_BODY_MAX) {
            rq->too_big = 1;
        } else if (!rq->too_big) {
            char *b = realloc(rq->body, rq->len + *upload_size + 1);
            if (!b)
                return MHD_NO;
            rq->body = b;
            memcpy(b + rq->len, upload, *upload_size);
            rq->len += *upload_size;
            b[rq->len] = 0;
        }
        *upload_size = 0;
        return MHD_YES;
    }
    /* inv. 1: the token first */
    size_t tl = strlen(s->token);
    if (url[0] != '/' || strlen(url) < tl + 1 || !token_eq(url + 1, s->token, tl) ||
        (url[tl + 1] != '/' && url[tl + 1] != 0))
        return send_error(c, 403, "forbidden: this URL lacks the server's token");
    if (url[tl + 1] == 0) { /* /<token>: the page is at /<token>/ */
        struct MHD_Response *resp = mhd->create_response_from_buffer(0, "", MHD_RESPMEM_PERSISTENT);
        char loc[SERVE_TOKEN_LEN + 3];
        snprintf(loc, sizeof loc, "/%s/", s->token);
        mhd->add_response_header(resp, "Location", loc);
        enum MHD_Result ok = mhd->queue_response(c, 302, resp);
        mhd->destroy_response(resp);
        return ok;
    }
    const char *path = url + tl + 2;
    if (strstr(path, "..") || path[0] == '/') /* inv. 2 */
        return send_error(c, 403, "forbidden: '..' or an absolute path");
    if (rq->too_big)
        return send_error(c, 413, "request body too large");
    if (rq->is_post) {
        const char *hdr = mhd->lookup_connection_value(c, MHD_HEADER_KIND, "X-Rewind-Token");
        if (!hdr || strlen(hdr) != tl || !token_eq(hdr, s->token, tl)) /* inv. 3 */
            return send_error(c, 403, "forbidden: a POST needs the X-Rewind-Token header");
        if (s->o->read_only)
            return send_error(c, 403, "forbidden: the server is read-only (--read-only)");
        if (strncmp(path, "api/", 4))
            return send_error(c, 404, "no such route");
        json_t *body = NULL;
        if (rq->len) {
            json_error_t je;
            body = json_loadb(rq->body, rq->len, 0, &je);
            if (!body || !json_is_object(body)) {
                json_decref(body);
                return send_error(c, 400, "the body is not a JSON object");
            }
        }
        struct serve_reply r = {0};
        serve_action_post(s->home, path + 4, body, &r);
        json_decref(body);
        return send_json(c, &r);
    }
    if (strcmp(method, "GET") && strcmp(method, "HEAD"))
        return send_error(c, 405, "method not allowed");
    if (!strncmp(path, "api/shell/", 10)) {
        struct serve_reply r = {0};
        serve_shell_get(path + 10, query_arg, c, &r);
        return send_json(c, &r);
    }
    const char *wslash = !strncmp(path, "api/run/", 8) ? strchr(path + 8, '/') : NULL;
    if (wslash && !strcmp(wslash, "/where")) { /* where.c: a VM in a child */
        struct serve_reply r = {0};
        char ref[256];
        size_t n = (size_t)(wslash - (path + 8));
        if (n >= sizeof ref)
            return send_error(c, 400, "not a run reference");
        memcpy(ref, path + 8, n);
        ref[n] = 0;
        const union MHD_ConnectionInfo *ci =
            mhd->get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
        serve_where_get(s->home, ref, query_arg, c, ci ? ci->connect_fd : -1, &r);
        return send_json(c, &r);
    }
    if (!strncmp(path, "api/", 4)) {
        struct serve_reply r = {0};
        serve_api_get(s->home, path + 4, query_arg, c, &r);
        return send_json(c, &r);
    }
    return send_asset(c, path);
}

static void done(void *cls, struct MHD_Connection *c, void **con_cls,
                 enum MHD_RequestTerminationCode toe)
{
    (void)toe;
    struct request *rq = *con_cls;
    if (rq) {
        free(rq->body);
        free(rq);
    }
    *con_cls = NULL;
    conn_set(cls, c, CONN_WAITING); /* inv. 7: for the next request, if any */
}

/* inv. 6: a descriptor for every connection serve may hold, if the hard
 * limit allows (a soft limit of 1,024 would end accepting first). */
static void raise_nofile(void)
{
    struct rlimit rl;
    rlim_t want = SERVE_CONN_MAX + 128;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < want) {
        rl.rlim_cur = rl.rlim_max < want ? rl.rlim_max : want;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
}

int serve_run(rw_home *h, const struct serve_opts *o)
{
    struct server s = {.home = h, .o = o, .mu = PTHREAD_MUTEX_INITIALIZER};
    char why[512];
    mhd = serve_mhd_load(SERVE_MHD_SONAME, why, sizeof why);
    if (!mhd) {
        fprintf(stderr, "rewind: serve: %s\n", why);
        return 125;
    }
    raise_nofile();
    /* the children (action.c) use this home whatever the caller's env said */
    setenv("REWIND_HOME", rw_home_path(h), 1);
    serve_spawn_init();
    unsigned char raw[SERVE_TOKEN_LEN / 2];
    if (getrandom(raw, sizeof raw, 0) != (ssize_t)sizeof raw) {
        fprintf(stderr, "rewind: serve: no random bytes for the token: %s\n", strerror(errno));
        return 125;
    }
    for (size_t i = 0; i < sizeof raw; i++)
        snprintf(s.token + 2 * i, 3, "%02x", raw[i]);

    struct sockaddr_in a4 = {.sin_family = AF_INET, .sin_port = htons((uint16_t)o->port)};
    struct sockaddr_in6 a6 = {.sin6_family = AF_INET6, .sin6_port = htons((uint16_t)o->port)};
    const struct sockaddr *sa;
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION |
                     MHD_USE_ERROR_LOG |
                     MHD_USE_POLL; /* poll, not select: socket numbers past FD_SETSIZE (inv. 6) */
    if (inet_pton(AF_INET, o->bind, &a4.sin_addr) == 1) {
        sa = (const struct sockaddr *)&a4;
    } else if (inet_pton(AF_INET6, o->bind, &a6.sin6_addr) == 1) {
        sa = (const struct sockaddr *)&a6;
        flags |= MHD_USE_IPv6;
    } else {
        fprintf(stderr, "rewind: serve: --bind %s is not an IPv4 or IPv6 address\n", o->bind);
        return 2;
    }
    /* the signals end the server: blocked here so every thread inherits it */
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    signal(SIGPIPE, SIG_IGN);

    struct MHD_Daemon *d =
        mhd->start_daemon(flags, (uint16_t)o->port, NULL, NULL, handle, &s, MHD_OPTION_SOCK_ADDR,
                          sa, MHD_OPTION_NOTIFY_COMPLETED, done, &s, MHD_OPTION_NOTIFY_CONNECTION,
                          conn_notify, &s, MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)SERVE_WAIT_S,
                          MHD_OPTION_CONNECTION_LIMIT, (unsigned)SERVE_CONN_MAX, MHD_OPTION_END);
    if (!d) {
        fprintf(stderr, "rewind: serve: cannot listen on %s port %u: %s\n", o->bind, o->port,
                strerror(errno));
        return 1;
    }
    const union MHD_DaemonInfo *di = mhd->get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
    unsigned port = di ? di->port : o->port;
    struct serve_state st = {.pid = (long)getpid(), .port = port};
    snprintf(st.bind, sizeof st.bind, "%s", o->bind);
    memcpy(st.token, s.token, sizeof st.token);
    if (o->state && serve_state_write(o->state, &st) < 0)
        fprintf(stderr, "rewind: serve: cannot write %s: %s\n", o->state, strerror(errno));
    const char *host = strchr(o->bind, ':') ? "[%s]" : "%s";
    char hb[80];
    snprintf(hb, sizeof hb, host, o->bind);
    printf("http://%s:%u/%s/\n", hb, port, s.token);
    fflush(stdout);
    fprintf(stderr, "rewind: serving %s%s (Ctrl-C stops)\n", rw_home_path(h),
            o->read_only ? " read-only" : "");
    int sig = 0;
    sigwait(&set, &sig);
    fprintf(stderr, "rewind: serve: stopping\n");
    if (o->state) {
        struct serve_state now;
        if (serve_state_read(o->state, &now) == 0 && now.pid == st.pid)
            unlink(o->state);
    }
    serve_action_shutdown();
    serve_child_shutdown();
    mhd->stop_daemon(d);
    return 0;
}
