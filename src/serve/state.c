/*
 * state: $REWIND_HOME/serve.json, the running server's pid, port and token,
 * so `rewind open` reuses it instead of starting another.
 *
 * Invariants:
 *  1. The file is written whole or not at all (a temporary file renamed),
 *     mode 0600: the token in it grants what the URL grants.
 *  2. A state file is trusted only after the server it names answered
 *     GET /<token>/api/ping on its port with 200: a stale file (a server
 *     killed without cleaning up, a pid reused) is never taken for a live
 *     server.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "serve.h"

void serve_state_path(rw_home *h, char *out, size_t n)
{
    snprintf(out, n, "%s/serve.json", rw_home_path(h));
}

int serve_state_write(const char *path, const struct serve_state *st)
{
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid());
    json_t *o = json_pack("{s:I,s:i,s:s,s:s}", "pid", (json_int_t)st->pid, "port", (int)st->port,
                          "bind", st->bind, "token", st->token);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    int rc = -1;
    if (fd >= 0) {
        rc = json_dumpfd(o, fd, JSON_COMPACT);
        if (close(fd) < 0)
            rc = -1;
        if (rc == 0 && rename(tmp, path) < 0)
            rc = -1;
        if (rc < 0)
            unlink(tmp);
    }
    json_decref(o);
    return rc;
}

int serve_state_read(const char *path, struct serve_state *st)
{
    json_error_t je;
    json_t *o = json_load_file(path, 0, &je);
    if (!o)
        return -1;
    json_t *pid = json_object_get(o, "pid"), *port = json_object_get(o, "port");
    const char *bind = json_string_value(json_object_get(o, "bind"));
    const char *tok = json_string_value(json_object_get(o, "token"));
    int ok = json_is_integer(pid) && json_is_integer(port) && bind && tok &&
             strlen(bind) < sizeof st->bind && strlen(tok) == SERVE_TOKEN_LEN &&
             json_integer_value(port) > 0 && json_integer_value(port) < 65536 &&
             json_integer_value(pid) > 0;
    if (ok) {
        for (const char *p = tok; *p; p++)
            if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
                ok = 0;
    }
    if (ok) {
        st->pid = (long)json_integer_value(pid);
        st->port = (unsigned)json_integer_value(port);
        snprintf(st->bind, sizeof st->bind, "%s", bind);
        memcpy(st->token, tok, SERVE_TOKEN_LEN + 1);
    }
    json_decref(o);
    return ok ? 0 : -1;
}

int serve_state_alive(const struct serve_state *st)
{
    if (kill((pid_t)st->pid, 0) < 0 && errno == ESRCH)
        return 0;
    struct sockaddr_in a4 = {.sin_family = AF_INET, .sin_port = htons((uint16_t)st->port)};
    struct sockaddr_in6 a6 = {.sin6_family = AF_INET6, .sin6_port = htons((uint16_t)st->port)};
    const char *host = st->bind;
    if (!strcmp(host, "0.0.0.0"))
        host = "127.0.0.1";
    if (!strcmp(host, "::"))
        host = "::1";
    int fam = inet_pton(AF_INET, host, &a4.sin_addr) == 1 ? AF_INET : AF_INET6;
    if (fam == AF_INET6 && inet_pton(AF_INET6, host, &a6.sin6_addr) != 1)
        return 0;
    int fd = socket(fam, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return 0;
    int alive = 0;
    if (connect(fd, fam == AF_INET ? (struct sockaddr *)&a4 : (struct sockaddr *)&a6,
                fam == AF_INET ? sizeof a4 : sizeof a6) == 0) {
        char req[200], resp[64] = "";
        int n = snprintf(req, sizeof req, "GET /%s/api/ping HTTP/1.0\r\nHost: localhost\r\n\r\n",
                         st->token);
        if (write(fd, req, (size_t)n) == n) {
            struct pollfd pf = {.fd = fd, .events = POLLIN};
            if (poll(&pf, 1, 3000) == 1 && read(fd, resp, sizeof resp - 1) > 0)
                alive = !strncmp(resp, "HTTP/1.0 200", 12) || !strncmp(resp, "HTTP/1.1 200", 12);
        }
    }
    close(fd);
    return alive;
}
