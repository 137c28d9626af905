/* netprobe: UDP round trips that show what a net fault does to a link
 * (docs/faults.md, "Net faults").
 *
 *   netprobe serve PORT            echo every datagram back, forever
 *   netprobe probe HOST PORT N MS  send datagrams 1..N, one every MS ms of
 *                                  (virtual) time, each carrying its number
 *                                  and send time; print "echo SEQ RTT_US" for
 *                                  every answer, as it comes (a lost one is
 *                                  missing, a duplicate shows twice, a
 *                                  reordered one out of order); wait 1 s
 *                                  after the last send for stragglers, then
 *                                  print "sent N" and exit 0.
 *   netprobe probe HOST PORT N MS LABEL
 *                                  the same, each answer's line begun with
 *                                  LABEL and a space (several probes to one
 *                                  output stay apart).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

struct probe {
    uint32_t seq;
    uint64_t sent_ns;
};

static void die(const char *what)
{
    fprintf(stderr, "netprobe: %s: %s\n", what, strerror(errno));
    exit(1);
}

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static void __attribute__((noreturn)) serve(int port)
{
    int s = socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof(a)) < 0)
        die("bind");
    for (;;) {
        char buf[256];
        struct sockaddr_in from;
        socklen_t fl = sizeof(from);
        ssize_t n = recvfrom(s, buf, sizeof(buf), 0, (struct sockaddr *)&from, &fl);
        if (n < 0 && errno != EINTR)
            die("recvfrom");
        if (n > 0)
            sendto(s, buf, (size_t)n, 0, (struct sockaddr *)&from, fl);
    }
}

/* Print every answer waiting, until deadline (ns). */
static void answers(int s, uint64_t deadline, const char *label)
{
    for (;;) {
        uint64_t t = now_ns();
        if (t >= deadline)
            return;
        struct pollfd p = {.fd = s, .events = POLLIN};
        int ms = (int)((deadline - t + 999999) / 1000000);
        if (poll(&p, 1, ms) <= 0)
            continue;
        struct probe pr;
        if (recv(s, &pr, sizeof(pr), 0) != (ssize_t)sizeof(pr))
            continue;
        printf("%s%secho %u %llu\n", label, *label ? " " : "", pr.seq,
               (unsigned long long)((now_ns() - pr.sent_ns) / 1000));
        fflush(stdout);
    }
}

static int probe(const char *host, const char *port, int n, int ms, const char *label)
{
    struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_DGRAM}, *ai;
    if (getaddrinfo(host, port, &hints, &ai) != 0) {
        fprintf(stderr, "netprobe: cannot resolve %s\n", host);
        return 1;
    }
    int s = socket(AF_INET, SOCK_DGRAM, 0);
    if (s < 0 || connect(s, ai->ai_addr, ai->ai_addrlen) < 0)
        die("connect");
    uint64_t next = now_ns();
    for (int i = 1; i <= n; i++) {
        struct probe pr = {(uint32_t)i, now_ns()};
        /* a split or partition may answer with an unreachable */
        if (send(s, &pr, sizeof(pr), 0) < 0 && errno != ECONNREFUSED && errno != EHOSTUNREACH &&
            errno != ENETUNREACH)
            die("send");
        next += (uint64_t)ms * 1000000ull;
        answers(s, next, label);
    }
    answers(s, now_ns() + 1000000000ull, label);
    printf("sent %d\n", n);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "serve"))
        serve(atoi(argv[2]));
    if ((argc == 6 || argc == 7) && !strcmp(argv[1], "probe"))
        return probe(argv[2], argv[3], atoi(argv[4]), atoi(argv[5]), argc == 7 ? argv[6] : "");
    fprintf(stderr, "usage: netprobe serve PORT | netprobe probe HOST PORT N MS [LABEL]\n");
    return 2;
}
