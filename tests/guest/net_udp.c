/* net_udp: UDP over the loopback device, IPv4 (127.0.0.1) and IPv6 (::1).
 *
 * For each family a server binds an ephemeral port and a forked client
 * sends DATAGRAMS datagrams of sizes from 1 byte to 8 KiB, each answered by
 * the server with the datagram reversed before the next is sent (so none is
 * dropped for want of buffer space); the client checks every answer. Then
 * the client sends "end". One line per
 * family with the ports (from the guest's seeded RNG) and the totals;
 * exit 0 only if every datagram came back right.
 *
 * Usage: net_udp [4|6]...   (default: both)
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define DATAGRAMS 100
#define MAXLEN 9000

union addr {
    struct sockaddr sa;
    struct sockaddr_in in4;
    struct sockaddr_in6 in6;
};

static void die(const char *what)
{
    fprintf(stderr, "net_udp: %s: %s\n", what, strerror(errno));
    exit(1);
}

static int port_of(const union addr *a)
{
    return ntohs(a->sa.sa_family == AF_INET ? a->in4.sin_port : a->in6.sin6_port);
}

static size_t size_of(int i)
{
    return 1 + (size_t)i * (size_t)i * 83 % 8192;
}

static void client(const union addr *srv, socklen_t len)
{
    int s = socket(srv->sa.sa_family, SOCK_DGRAM, 0);
    if (s < 0 || connect(s, &srv->sa, len) < 0)
        die("client connect");
    static unsigned char out[MAXLEN], in[MAXLEN];
    for (int i = 0; i < DATAGRAMS; i++) {
        size_t n = size_of(i);
        for (size_t k = 0; k < n; k++)
            out[k] = (unsigned char)(i + k * 13);
        if (send(s, out, n, 0) != (ssize_t)n)
            die("client send");
        ssize_t r = recv(s, in, sizeof(in), 0);
        if (r != (ssize_t)n) {
            fprintf(stderr, "net_udp: datagram %d: %zd bytes back, sent %zu\n", i, r, n);
            exit(1);
        }
        for (size_t k = 0; k < n; k++)
            if (in[k] != out[n - 1 - k]) {
                fprintf(stderr, "net_udp: datagram %d: byte %zu differs\n", i, k);
                exit(1);
            }
    }
    if (send(s, "end", 3, 0) != 3)
        die("client send end");
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
    int s = socket(family, SOCK_DGRAM, 0);
    if (s < 0)
        die("socket");
    if (bind(s, &a.sa, len) < 0)
        die(family == AF_INET ? "bind 127.0.0.1" : "bind ::1");
    if (getsockname(s, &a.sa, &len) < 0)
        die("getsockname");
    pid_t kid = fork();
    if (kid < 0)
        die("fork");
    if (kid == 0) {
        close(s);
        client(&a, len);
    }
    static unsigned char buf[MAXLEN], rev[MAXLEN];
    size_t total = 0;
    int count = 0, from = -1;
    for (;;) {
        union addr peer;
        socklen_t pl = sizeof(peer);
        ssize_t r = recvfrom(s, buf, sizeof(buf), 0, &peer.sa, &pl);
        if (r < 0)
            die("recvfrom");
        if (r == 3 && memcmp(buf, "end", 3) == 0)
            break;
        from = port_of(&peer);
        for (ssize_t k = 0; k < r; k++)
            rev[k] = buf[r - 1 - k];
        if (sendto(s, rev, (size_t)r, 0, &peer.sa, pl) != r)
            die("sendto");
        total += (size_t)r;
        count++;
    }
    close(s);
    int st, bad = waitpid(kid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0;
    bad |= count != DATAGRAMS;
    printf("udp%c %s port %d from port %d: %d datagrams, %zu bytes %s\n",
           family == AF_INET ? '4' : '6', name, port_of(&a), from, count, total,
           bad ? "FAILED" : "ok");
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
