/* net_tcp: TCP over the loopback device, IPv4 (127.0.0.1) and IPv6 (::1).
 *
 * For each family a server listens on an ephemeral port and CLIENTS forked
 * clients connect at once; each sends BYTES bytes of a pattern of its own,
 * closes its half, and checks the server's reply (the byte count and FNV-1a
 * hash of what the server got). The server takes the connections in accept
 * order and prints one line each: the ports come from the guest's seeded RNG
 * and the order from the schedule, so the whole output is a fingerprint of
 * the run (docs/networking.md). Exit 0 only if every transfer matched.
 *
 * Usage: net_tcp [4|6]...   (default: both)
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define CLIENTS 3
#define BYTES (96 * 1024 + 17)

union addr {
    struct sockaddr sa;
    struct sockaddr_in in4;
    struct sockaddr_in6 in6;
};

static void die(const char *what)
{
    fprintf(stderr, "net_tcp: %s: %s\n", what, strerror(errno));
    exit(1);
}

static uint32_t fnv(uint32_t h, const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 16777619u;
    return h;
}

static unsigned char pattern(int client, size_t i)
{
    return (unsigned char)(i * 31 + (size_t)client * 7 + (i >> 9));
}

static int port_of(const union addr *a)
{
    return ntohs(a->sa.sa_family == AF_INET ? a->in4.sin_port : a->in6.sin6_port);
}

static void client(const union addr *srv, socklen_t len, int me)
{
    int s = socket(srv->sa.sa_family, SOCK_STREAM, 0);
    if (s < 0 || connect(s, &srv->sa, len) < 0)
        die("client connect");
    unsigned char buf[4096];
    uint32_t h = 2166136261u;
    for (size_t off = 0; off < BYTES;) {
        size_t n = BYTES - off < sizeof(buf) ? BYTES - off : sizeof(buf);
        for (size_t i = 0; i < n; i++)
            buf[i] = pattern(me, off + i);
        h = fnv(h, buf, n);
        ssize_t w = write(s, buf, n);
        if (w <= 0)
            die("client write");
        off += (size_t)w;
    }
    shutdown(s, SHUT_WR);
    char reply[64] = {0}, want[64];
    size_t got = 0;
    ssize_t r;
    while (got < sizeof(reply) - 1 && (r = read(s, reply + got, sizeof(reply) - 1 - got)) > 0)
        got += (size_t)r;
    snprintf(want, sizeof(want), "%d %08x", BYTES, h);
    if (strcmp(reply, want) != 0) {
        fprintf(stderr, "net_tcp: client %d: reply '%s', expected '%s'\n", me, reply, want);
        exit(1);
    }
    close(s);
    exit(0);
}

static int run(int family)
{
    const char *name = family == AF_INET ? "127.0.0.1" : "::1";
    union addr a = {0};
    socklen_t len;
    if (family == AF_INET) {
        a.in4.sin_family = AF_INET;
        inet_pton(AF_INET, name, &a.in4.sin_addr);
        len = sizeof(a.in4);
    } else {
        a.in6.sin6_family = AF_INET6;
        inet_pton(AF_INET6, name, &a.in6.sin6_addr);
        len = sizeof(a.in6);
    }
    int ls = socket(family, SOCK_STREAM, 0);
    if (ls < 0)
        die("socket");
    if (bind(ls, &a.sa, len) < 0)
        die(family == AF_INET ? "bind 127.0.0.1" : "bind ::1");
    if (listen(ls, CLIENTS) < 0 || getsockname(ls, &a.sa, &len) < 0)
        die("listen");
    printf("tcp%c %s port %d listening\n", family == AF_INET ? '4' : '6', name, port_of(&a));

    pid_t kids[CLIENTS];
    for (int c = 0; c < CLIENTS; c++) {
        kids[c] = fork();
        if (kids[c] < 0)
            die("fork");
        if (kids[c] == 0) {
            close(ls);
            client(&a, len, c);
        }
    }
    int bad = 0;
    for (int c = 0; c < CLIENTS; c++) {
        union addr peer;
        socklen_t pl = sizeof(peer);
        int s = accept(ls, &peer.sa, &pl);
        if (s < 0)
            die("accept");
        static unsigned char buf[8192];
        uint32_t h = 2166136261u;
        size_t total = 0;
        ssize_t r;
        while ((r = read(s, buf, sizeof(buf))) > 0) {
            h = fnv(h, buf, (size_t)r);
            total += (size_t)r;
        }
        if (r < 0)
            die("server read");
        char reply[64];
        int n = snprintf(reply, sizeof(reply), "%zu %08x", total, h);
        if (write(s, reply, (size_t)n) != n)
            die("server write");
        close(s);
        printf("  connection %d from port %d: %zu bytes, hash %08x\n", c, port_of(&peer), total, h);
    }
    close(ls);
    for (int c = 0; c < CLIENTS; c++) {
        int st;
        if (waitpid(kids[c], &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
            bad = 1;
    }
    printf("tcp%c %s %s\n", family == AF_INET ? '4' : '6', name, bad ? "FAILED" : "ok");
    return bad;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    int bad = 0;
    if (argc < 2) {
        bad |= run(AF_INET);
        bad |= run(AF_INET6);
    }
    for (int i = 1; i < argc; i++)
        bad |= run(strcmp(argv[i], "6") == 0 ? AF_INET6 : AF_INET);
    return bad;
}
