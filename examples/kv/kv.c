/*
 * kv: a small replicated key-value store, the example of docs/faults.md.
 *
 *   kv server NAME PEER...   a node; the first PEER is the primary
 *   kv client PEER...        the workload: writes keys, then reads them back
 *
 * The primary takes PUTs, sends each write to every other peer (REP) and,
 * once each of them has it, answers OK: an acknowledged write is on every
 * node. A backup takes REPs and GETs. The client writes N keys to the first
 * peer that answers, then reads every acknowledged key from each node that
 * answers, and checks with the SDK that each one is there.
 *
 * The bug (built with -DKV_ACK_EARLY, the program `kv`; `kv-fixed` is
 * without it): the primary answers OK first and replicates afterwards, a
 * little later. Without faults every run passes: the writes reach the
 * backups long before the client reads. Kill the primary between its OK and
 * its REP and an acknowledged write exists on no living node: the client's
 * `rewind_always` fails. Only a fault shows it.
 *
 * Protocol: one line per request and per answer over TCP port 7000.
 *   PUT key value   -> OK | ERR not-primary
 *   REP key value   -> OK
 *   GET key         -> VAL value | NONE
 * Keys and values are words of at most 63 bytes.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "rewind.h"

#define KV_PORT 7000
#define KV_MAX 256
#define WORD 64

struct entry {
    char key[WORD], val[WORD];
};

static struct entry table[KV_MAX];
static int nkeys;

static void kv_put(const char *k, const char *v)
{
    for (int i = 0; i < nkeys; i++)
        if (!strcmp(table[i].key, k)) {
            snprintf(table[i].val, WORD, "%s", v);
            return;
        }
    if (nkeys < KV_MAX) {
        snprintf(table[nkeys].key, WORD, "%s", k);
        snprintf(table[nkeys].val, WORD, "%s", v);
        nkeys++;
    }
}

static const char *kv_get(const char *k)
{
    for (int i = 0; i < nkeys; i++)
        if (!strcmp(table[i].key, k))
            return table[i].val;
    return NULL;
}

static void nap_ms(long ms)
{
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

/* A peer that dies or stops mid-request must not hang its partner: every
 * read and write on a connection gives up after a second. */
static void patient(int fd)
{
    struct timeval t = {1, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &t, sizeof t);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &t, sizeof t);
}

/* A connection to host's port, or -1. */
static int dial(const char *host)
{
    struct addrinfo hint = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM}, *ai;
    char port[8];
    snprintf(port, sizeof port, "%d", KV_PORT);
    if (getaddrinfo(host, port, &hint, &ai) != 0)
        return -1;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd >= 0 && connect(fd, ai->ai_addr, ai->ai_addrlen) < 0) {
        close(fd);
        fd = -1;
    }
    freeaddrinfo(ai);
    if (fd >= 0) {
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        patient(fd);
    }
    return fd;
}

/* One line from fd into buf (without the newline); -1 on EOF or error. */
static int read_line(int fd, char *buf, size_t n)
{
    size_t o = 0;
    for (;;) {
        char c;
        ssize_t r = read(fd, &c, 1);
        if (r <= 0)
            return -1;
        if (c == '\n')
            break;
        if (o + 1 < n)
            buf[o++] = c;
    }
    buf[o] = 0;
    return (int)o;
}

static int say(int fd, const char *line)
{
    size_t n = strlen(line);
    return write(fd, line, n) == (ssize_t)n ? 0 : -1;
}

/* Ask host one request; its answer in ans. 0, or -1 if it did not answer. */
static int ask(const char *host, const char *req, char *ans, size_t n)
{
    int fd = dial(host);
    if (fd < 0)
        return -1;
    int rc = say(fd, req) == 0 && read_line(fd, ans, n) >= 0 ? 0 : -1;
    close(fd);
    return rc;
}

/* The primary sends a write to every backup; 0 when each one has it. */
static int replicate(char **peers, int npeers, const char *k, const char *v)
{
    char req[3 * WORD], ans[WORD];
    snprintf(req, sizeof req, "REP %s %s\n", k, v);
    int ok = 0;
    for (int i = 1; i < npeers; i++)
        if (ask(peers[i], req, ans, sizeof ans) == 0 && !strcmp(ans, "OK"))
            ok++;
    return ok == npeers - 1 ? 0 : -1;
}

static void serve_one(int c, const char *self, char **peers, int npeers)
{
    char line[3 * WORD], a[WORD], b[WORD], verb[8];
    if (read_line(c, line, sizeof line) < 0)
        return;
    int n = sscanf(line, "%7s %63s %63s", verb, a, b);
    int primary = !strcmp(self, peers[0]);
    if (n == 3 && !strcmp(verb, "PUT")) {
        if (!primary) {
            say(c, "ERR not-primary\n");
            return;
        }
        kv_put(a, b);
#ifdef KV_ACK_EARLY
        say(c, "OK\n"); /* the bug: acknowledged before any backup has it */
        close(c);
        nap_ms(20);
        replicate(peers, npeers, a, b);
        return;
#else
        say(c, replicate(peers, npeers, a, b) == 0 ? "OK\n" : "ERR replication\n");
#endif
    } else if (n == 3 && !strcmp(verb, "REP")) {
        kv_put(a, b);
        say(c, "OK\n");
    } else if (n == 2 && !strcmp(verb, "GET")) {
        const char *v = kv_get(a);
        char out[2 * WORD];
        snprintf(out, sizeof out, v ? "VAL %s\n" : "NONE\n", v);
        say(c, out);
    } else {
        say(c, "ERR bad-request\n");
    }
}

static int server(const char *self, char **peers, int npeers)
{
    int s = socket(AF_INET, SOCK_STREAM, 0), one = 1;
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(KV_PORT)};
    setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (s < 0 || bind(s, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(s, 16) < 0) {
        fprintf(stderr, "kv %s: cannot listen on %d: %s\n", self, KV_PORT, strerror(errno));
        return 1;
    }
    printf("kv %s: serving (%s)\n", self, !strcmp(self, peers[0]) ? "primary" : "backup");
    fflush(stdout);
    for (;;) {
        int c = accept(s, NULL, NULL);
        if (c < 0)
            continue;
        patient(c);
        serve_one(c, self, peers, npeers);
        close(c);
    }
}

/* The first peer that answers a PUT with OK, within tries rounds; -1 if
 * none. */
static int put_anywhere(char **peers, int npeers, const char *req, int tries)
{
    char ans[WORD];
    for (int t = 0; t < tries; t++) {
        for (int i = 0; i < npeers; i++)
            if (ask(peers[i], req, ans, sizeof ans) == 0 && !strcmp(ans, "OK"))
                return i;
        nap_ms(100); /* the servers are starting, or the primary is gone */
    }
    return -1;
}

static int client(char **peers, int npeers, int writes)
{
    char req[3 * WORD], ans[2 * WORD];
    int acked[KV_MAX], nacked = 0, lost = 0;
    for (int i = 0; i < writes && i < KV_MAX; i++) {
        snprintf(req, sizeof req, "PUT k%d v%d\n", i, i);
        /* The first write waits for the servers to start (5 s); later, a
         * store that takes no write for 0.3 s has lost its primary (a
         * fault): the client stops writing and checks what it has. */
        if (put_anywhere(peers, npeers, req, i == 0 ? 50 : 3) < 0) {
            printf("client: no node takes write %d; stopping\n", i);
            break;
        }
        acked[nacked++] = i;
        nap_ms(5);
    }
    printf("client: %d of %d writes acknowledged\n", nacked, writes);
    nap_ms(500); /* let replication settle */
    int asked = 0;
    for (int p = 0; p < npeers; p++) {
        int missing = 0, answered = 1;
        for (int j = 0; j < nacked && answered; j++) {
            snprintf(req, sizeof req, "GET k%d\n", acked[j]);
            if (ask(peers[p], req, ans, sizeof ans) < 0) {
                answered = 0; /* that node is down: no verdict from it */
                break;
            }
            char want[WORD + 8];
            snprintf(want, sizeof want, "VAL v%d", acked[j]);
            missing += strcmp(ans, want) != 0;
        }
        if (!answered)
            continue;
        asked++;
        printf("client: %s has %d of the %d acknowledged writes\n", peers[p], nacked - missing,
               nacked);
        lost += missing;
        rewind_always(missing == 0, "every acknowledged write is on every living node");
    }
    rewind_sometimes(asked > 0, "some node answers the reads");
    fflush(stdout);
    return lost ? 1 : 0; /* no node answering is no verdict: the sometimes above says so */
}

int main(int argc, char **argv)
{
    if (argc >= 4 && !strcmp(argv[1], "server"))
        return server(argv[2], argv + 3, argc - 3);
    if (argc >= 3 && !strcmp(argv[1], "client"))
        return client(argv + 2, argc - 2, 20);
    fprintf(stderr, "usage: kv server NAME PEER... | kv client PEER...\n");
    return 2;
}
