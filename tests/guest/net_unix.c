/* net_unix: unix-domain sockets between processes of the job.
 *
 *  - a stream socketpair: parent and forked child exchange messages;
 *  - a datagram socketpair: message boundaries are kept;
 *  - a named stream socket in /tmp: a server and a forked client, which
 *    also passes an open pipe's read end to the server (SCM_RIGHTS);
 *  - an abstract-namespace datagram socket.
 * One line per part; exit 0 only if every part worked.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

static void die(const char *what)
{
    fprintf(stderr, "net_unix: %s: %s\n", what, strerror(errno));
    exit(1);
}

static int reap(pid_t kid)
{
    int st;
    return waitpid(kid, &st, 0) == kid && WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

static int stream_pair(void)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0)
        die("socketpair stream");
    pid_t kid = fork();
    if (kid < 0)
        die("fork");
    if (kid == 0) {
        close(sv[0]);
        char buf[64];
        for (int i = 0; i < 50; i++) {
            ssize_t r = read(sv[1], buf, sizeof(buf));
            if (r <= 0)
                _exit(1);
            for (ssize_t k = 0; k < r; k++)
                buf[k] = (char)(buf[k] + 1);
            if (write(sv[1], buf, (size_t)r) != r)
                _exit(1);
        }
        _exit(0);
    }
    close(sv[1]);
    int ok = 1;
    for (int i = 0; i < 50 && ok; i++) {
        char msg[32], want[32], got[32];
        int n = snprintf(msg, sizeof(msg), "ping %d", i);
        for (int k = 0; k < n; k++)
            want[k] = (char)(msg[k] + 1);
        if (write(sv[0], msg, (size_t)n) != n)
            die("write");
        ssize_t have = 0, r;
        while (have < n && (r = read(sv[0], got + have, (size_t)(n - have))) > 0)
            have += r;
        ok = have == n && memcmp(got, want, (size_t)n) == 0;
    }
    close(sv[0]);
    ok &= reap(kid);
    printf("unix stream pair: 50 round trips %s\n", ok ? "ok" : "FAILED");
    return !ok;
}

static int dgram_pair(void)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_DGRAM, 0, sv) < 0)
        die("socketpair dgram");
    int ok = 1;
    for (int i = 1; i <= 5; i++) {
        char m[8];
        memset(m, 'a' + i, sizeof(m));
        if (send(sv[0], m, (size_t)i, 0) != i)
            die("send");
    }
    for (int i = 1; i <= 5; i++) {
        char m[16];
        ssize_t r = recv(sv[1], m, sizeof(m), 0);
        ok &= r == i && m[0] == 'a' + i;
    }
    close(sv[0]);
    close(sv[1]);
    printf("unix datagram pair: boundaries %s\n", ok ? "kept" : "LOST");
    return !ok;
}

static int named_stream(void)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    snprintf(a.sun_path, sizeof(a.sun_path), "/tmp/net_unix.sock");
    unlink(a.sun_path);
    int ls = socket(AF_UNIX, SOCK_STREAM, 0);
    if (ls < 0 || bind(ls, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(ls, 1) < 0)
        die("named socket");
    pid_t kid = fork();
    if (kid < 0)
        die("fork");
    if (kid == 0) {
        int s = socket(AF_UNIX, SOCK_STREAM, 0);
        if (s < 0 || connect(s, (struct sockaddr *)&a, sizeof(a)) < 0)
            _exit(1);
        int p[2];
        if (pipe(p) < 0 || write(p[1], "through a passed fd", 19) != 19)
            _exit(1);
        close(p[1]);
        char data = 'F';
        struct iovec iov = {.iov_base = &data, .iov_len = 1};
        union {
            struct cmsghdr h;
            char buf[CMSG_SPACE(sizeof(int))];
        } c;
        memset(&c, 0, sizeof(c));
        struct msghdr mh = {.msg_iov = &iov,
                            .msg_iovlen = 1,
                            .msg_control = c.buf,
                            .msg_controllen = sizeof(c.buf)};
        struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
        cm->cmsg_level = SOL_SOCKET;
        cm->cmsg_type = SCM_RIGHTS;
        cm->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(cm), &p[0], sizeof(int));
        _exit(sendmsg(s, &mh, 0) == 1 ? 0 : 1);
    }
    int s = accept(ls, NULL, NULL);
    if (s < 0)
        die("accept");
    char data = 0;
    struct iovec iov = {.iov_base = &data, .iov_len = 1};
    union {
        struct cmsghdr h;
        char buf[CMSG_SPACE(sizeof(int))];
    } c;
    struct msghdr mh = {
        .msg_iov = &iov, .msg_iovlen = 1, .msg_control = c.buf, .msg_controllen = sizeof(c.buf)};
    int ok = recvmsg(s, &mh, 0) == 1 && data == 'F';
    struct cmsghdr *cm = ok ? CMSG_FIRSTHDR(&mh) : NULL;
    char text[32] = {0};
    if (cm && cm->cmsg_type == SCM_RIGHTS) {
        int fd;
        memcpy(&fd, CMSG_DATA(cm), sizeof(int));
        ok = read(fd, text, sizeof(text) - 1) == 19;
        close(fd);
    } else {
        ok = 0;
    }
    close(s);
    close(ls);
    unlink(a.sun_path);
    ok &= reap(kid);
    printf("unix named stream %s: passed fd reads '%s' %s\n", a.sun_path, text,
           ok ? "ok" : "FAILED");
    return !ok;
}

static int abstract_dgram(void)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    const char name[] = "\0rewind-net-test";
    memcpy(a.sun_path, name, sizeof(name) - 1);
    socklen_t len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + sizeof(name) - 1);
    int srv = socket(AF_UNIX, SOCK_DGRAM, 0);
    if (srv < 0 || bind(srv, (struct sockaddr *)&a, len) < 0)
        die("abstract bind");
    pid_t kid = fork();
    if (kid < 0)
        die("fork");
    if (kid == 0) {
        int s = socket(AF_UNIX, SOCK_DGRAM, 0);
        _exit(s >= 0 && sendto(s, "hello", 5, 0, (struct sockaddr *)&a, len) == 5 ? 0 : 1);
    }
    char buf[16] = {0};
    int ok = recv(srv, buf, sizeof(buf) - 1, 0) == 5 && strcmp(buf, "hello") == 0;
    close(srv);
    ok &= reap(kid);
    printf("unix abstract datagram: '%s' %s\n", buf, ok ? "ok" : "FAILED");
    return !ok;
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    int bad = stream_pair();
    bad |= dgram_pair();
    bad |= named_stream();
    bad |= abstract_dgram();
    return bad;
}
