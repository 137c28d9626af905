/* net_resolve: `localhost` resolves, and to addresses that work.
 *
 * Resolves NAME (default localhost) with getaddrinfo for each family
 * (unspecified, IPv4, IPv6), prints the addresses in the resolver's order,
 * then for every address listens on it and connects to it over TCP.
 * A static glibc program resolves through the NSS "files" module built into
 * libc (glibc 2.34 and later): /etc/hosts and /etc/nsswitch.conf of the root
 * (rewind-init provides both when the root has none; docs/networking.md).
 * Exit 0 only if every family resolved and every address took a connection.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int try_connect(const struct addrinfo *ai)
{
    int ls = socket(ai->ai_family, SOCK_STREAM, 0);
    int ok = ls >= 0 && bind(ls, ai->ai_addr, ai->ai_addrlen) == 0 && listen(ls, 1) == 0;
    struct sockaddr_storage a;
    socklen_t len = sizeof(a);
    ok = ok && getsockname(ls, (struct sockaddr *)&a, &len) == 0;
    int c = ok ? socket(ai->ai_family, SOCK_STREAM, 0) : -1;
    ok = ok && c >= 0 && connect(c, (struct sockaddr *)&a, len) == 0;
    int s = ok ? accept(ls, NULL, NULL) : -1;
    ok = ok && s >= 0 && write(c, "x", 1) == 1;
    char b = 0;
    ok = ok && read(s, &b, 1) == 1 && b == 'x';
    if (!ok)
        fprintf(stderr, "net_resolve: connect failed: %s\n", strerror(errno));
    if (s >= 0)
        close(s);
    if (c >= 0)
        close(c);
    if (ls >= 0)
        close(ls);
    return ok;
}

static int resolve(const char *name, int family, const char *label)
{
    struct addrinfo hints = {.ai_family = family, .ai_socktype = SOCK_STREAM}, *res;
    int e = getaddrinfo(name, "0", &hints, &res);
    if (e != 0) {
        printf("%s %s: %s FAILED\n", label, name, gai_strerror(e));
        return 1;
    }
    int bad = 0;
    printf("%s %s:", label, name);
    for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
        char text[INET6_ADDRSTRLEN] = "?";
        const void *p = ai->ai_family == AF_INET
                            ? (const void *)&((struct sockaddr_in *)ai->ai_addr)->sin_addr
                            : (const void *)&((struct sockaddr_in6 *)ai->ai_addr)->sin6_addr;
        inet_ntop(ai->ai_family, p, text, sizeof(text));
        int ok = try_connect(ai);
        bad |= !ok;
        printf(" %s%s", text, ok ? "" : "(no connection)");
    }
    printf("%s\n", bad ? " FAILED" : " ok");
    freeaddrinfo(res);
    return bad;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    const char *name = argc > 1 ? argv[1] : "localhost";
    int bad = resolve(name, AF_UNSPEC, "any");
    bad |= resolve(name, AF_INET, "ipv4");
    bad |= resolve(name, AF_INET6, "ipv6");
    return bad;
}
