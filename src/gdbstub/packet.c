/*
 * packet: see packet.h.
 *
 * Invariants:
 *  1. A packet longer than GDBS_PACKET_MAX is refused (-1), never
 *     written past c->in.
 *  2. A packet with a bad checksum is answered '-' and not returned (the
 *     peer sends it again).
 */
#include "packet.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int getc_conn(struct gdbs_conn *c)
{
    if (c->bpos == c->bend) {
        ssize_t r;
        do
            r = read(c->fd, c->buf, sizeof(c->buf));
        while (r < 0 && errno == EINTR);
        if (r <= 0)
            return r == 0 ? -2 : -1;
        c->bpos = 0;
        c->bend = (size_t)r;
    }
    return c->buf[c->bpos++];
}

static int write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

int gdbs_hexval(int ch)
{
    if (ch >= '0' && ch <= '9')
        return ch - '0';
    if (ch >= 'a' && ch <= 'f')
        return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F')
        return ch - 'A' + 10;
    return -1;
}

void gdbs_tohex(const unsigned char *b, size_t n, char *out)
{
    static const char d[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = d[b[i] >> 4];
        out[2 * i + 1] = d[b[i] & 15];
    }
    out[2 * n] = 0;
}

long gdbs_fromhex(const char *s, size_t slen, unsigned char *out, size_t max)
{
    if (slen % 2 || slen / 2 > max)
        return -1;
    for (size_t i = 0; i < slen / 2; i++) {
        int h = gdbs_hexval(s[2 * i]), l = gdbs_hexval(s[2 * i + 1]);
        if (h < 0 || l < 0)
            return -1;
        out[i] = (unsigned char)(h << 4 | l);
    }
    return (long)(slen / 2);
}

int gdbs_recv(struct gdbs_conn *c)
{
    for (;;) {
        int ch;
        do {
            ch = getc_conn(c);
            if (ch == -2)
                return 0;
            if (ch < 0)
                return -1;
            if (ch == 0x03) {
                c->in[0] = 0x03;
                c->in[1] = 0;
                c->len = 1;
                return 1;
            }
        } while (ch != '$');
        size_t n = 0;
        unsigned sum = 0;
        int esc = 0, bad = 0;
        for (;;) {
            ch = getc_conn(c);
            if (ch < 0)
                return ch == -2 ? 0 : -1;
            if (ch == '#')
                break;
            sum += (unsigned)ch;
            if (esc) {
                ch ^= 0x20;
                esc = 0;
            } else if (ch == '}') {
                esc = 1;
                continue;
            }
            if (n >= GDBS_PACKET_MAX) { /* invariant 1 */
                bad = 1;
                continue;
            }
            c->in[n++] = (char)ch;
        }
        int h = getc_conn(c), l = getc_conn(c);
        if (h < 0 || l < 0)
            return h == -2 || l == -2 ? 0 : -1;
        if (bad)
            return -1;
        c->in[n] = 0;
        c->len = n;
        int hv = gdbs_hexval(h), lv = gdbs_hexval(l);
        if (!c->no_ack) {
            int ok = hv >= 0 && lv >= 0 && (unsigned)(hv << 4 | lv) == (sum & 0xff);
            if (write_all(c->wfd, ok ? "+" : "-", 1) < 0)
                return -1;
            if (!ok) /* invariant 2 */
                continue;
        }
        return 1;
    }
}

int gdbs_send(struct gdbs_conn *c, const char *data, size_t n)
{
    static char out[2 * GDBS_PACKET_MAX + 8];
    size_t k = 0;
    unsigned sum = 0;
    out[k++] = '$';
    for (size_t i = 0; i < n && k + 6 < sizeof(out); i++) {
        char ch = data[i];
        if (ch == '$' || ch == '#' || ch == '}' || ch == '*') {
            out[k++] = '}';
            sum += '}';
            ch ^= 0x20;
        }
        out[k++] = ch;
        sum += (unsigned char)ch;
    }
    k += (size_t)snprintf(out + k, 4, "#%02x", sum & 0xff);
    for (int tries = 0; tries < 5; tries++) {
        if (write_all(c->wfd, out, k) < 0)
            return -1;
        if (c->no_ack)
            return 0;
        int ch;
        do
            ch = getc_conn(c);
        while (ch >= 0 && ch != '+' && ch != '-');
        if (ch < 0)
            return -1;
        if (ch == '+')
            return 0;
    }
    return -1;
}

int gdbs_sends(struct gdbs_conn *c, const char *s)
{
    return gdbs_send(c, s, strlen(s));
}
