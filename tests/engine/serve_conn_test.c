/*
 * serve_conn_test: finding 10 of issue 27: idle connections that never
 * send a request (no token) must not make every other request wait. It
 * starts build/rewind serve on a fixture home (runfix.h), opens
 * SERVE_IDLE idle connections, and asks for the run list on one more with
 * a 10-s deadline. (Run from the top of the tree; skipped without
 * build/rewind.)
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
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "runfix.h"
#include "unit.h"

#define SERVE_IDLE 200

static int connect_to(unsigned port)
{
    int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    if (s >= 0 && connect(s, (struct sockaddr *)&a, sizeof a) < 0) {
        close(s);
        return -1;
    }
    return s;
}

int main(void)
{
    (void)fix_put_pages, (void)fix_snapshot, (void)fix_page_readable;
    if (access("build/rewind", X_OK) != 0) {
        SKIP("build/rewind is not built (run from the top of the tree)");
        return unit_done();
    }
    char home[64], img[65];
    snprintf(home, sizeof home, "/tmp/serve_conn_test.%d", (int)getpid());
    rundir_remove_tree(home);
    CHECK(fix_image(home, "root", img) == 0 &&
              fix_run(home, "aaaa000000000001", img, NULL, 0, NULL, 0, 0) == 0,
          "fixture home");
    int out[2];
    CHECK(pipe(out) == 0, "pipe");
    pid_t pid = fork();
    if (pid == 0) {
        dup2(out[1], 1);
        close(out[0]);
        int null = open("/dev/null", O_WRONLY);
        dup2(null, 2);
        setenv("REWIND_HOME", home, 1);
        execl("build/rewind", "rewind", "serve", "--port", "0", (char *)NULL);
        _exit(127);
    }
    close(out[1]);
    char url[256] = "";
    FILE *f = fdopen(out[0], "r");
    if (!f || !fgets(url, sizeof url, f))
        url[0] = 0;
    unsigned port = 0;
    char token[128] = "";
    CHECK(sscanf(url, "http://127.0.0.1:%u/%127[0-9a-f]/", &port, token) == 2, url);
    int idle[SERVE_IDLE], n = 0;
    for (int i = 0; i < SERVE_IDLE && port; i++)
        if ((idle[n] = connect_to(port)) >= 0)
            n++;
    CHECK(n == SERVE_IDLE, "idle connections opened");
    usleep(300 * 1000);
    int s = port ? connect_to(port) : -1;
    char req[512], resp[4096] = "";
    snprintf(req, sizeof req, "GET /%s/api/runs HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
             token);
    size_t got = 0;
    if (s >= 0 && write(s, req, strlen(req)) == (ssize_t)strlen(req)) {
        struct pollfd p = {.fd = s, .events = POLLIN};
        time_t until = time(NULL) + 10;
        while (got < sizeof resp - 1 && time(NULL) < until && poll(&p, 1, 1000) >= 0) {
            if (!(p.revents & (POLLIN | POLLHUP)))
                continue;
            ssize_t k = read(s, resp + got, sizeof resp - 1 - got);
            if (k <= 0)
                break;
            got += (size_t)k;
        }
    }
    resp[got] = 0;
    CHECK(!strncmp(resp, "HTTP/1.1 200", 12) && strstr(resp, "aaaa000000000001"),
          "a request is answered while many idle connections are open");
    if (strncmp(resp, "HTTP/1.1 200", 12))
        fprintf(stderr, "  answer: %.200s\n", resp);
    if (s >= 0)
        close(s);
    for (int i = 0; i < n; i++)
        close(idle[i]);
    if (pid > 0) {
        kill(pid, SIGTERM);
        waitpid(pid, NULL, 0);
    }
    if (f)
        fclose(f);
    rundir_remove_tree(home);
    return unit_done();
}
