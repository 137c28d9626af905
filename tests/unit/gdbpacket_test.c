/*
 * gdbpacket_test: the GDB remote protocol's framing (src/gdbstub/packet.c,
 * a front end's module, compiled in here): checksums, '+' and '-', '}'
 * escapes both ways, a lone 0x03, a packet too long, hex helpers.
 */
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "gdbstub/packet.c"
#include "unit.h"

static void put(int fd, const char *s)
{
    if (write(fd, s, strlen(s)) != (ssize_t)strlen(s))
        CHECK(0, "write");
}

int main(void)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0)
        return 1;
    static struct gdbs_conn c;
    c.fd = c.wfd = sv[0];
    char ack[8] = {0};

    /* a good packet is acknowledged and returned */
    put(sv[1], "$qSupported#37");
    CHECK(gdbs_recv(&c) == 1 && !strcmp(c.in, "qSupported"), "packet");
    CHECK(read(sv[1], ack, 1) == 1 && ack[0] == '+', "acked");
    /* a bad checksum gets '-', then the good copy is returned */
    put(sv[1], "$g#00$g#67");
    CHECK(gdbs_recv(&c) == 1 && !strcmp(c.in, "g"), "resent packet");
    CHECK(read(sv[1], ack, 2) == 2 && ack[0] == '-' && ack[1] == '+', "nak then ack");
    /* escapes: "}\x03" is '#' (0x23) */
    put(sv[1], "$a}\x03"
               "b#");
    {
        unsigned sum = 'a' + '}' + 0x03 + 'b';
        char cs[3];
        snprintf(cs, sizeof(cs), "%02x", sum & 0xff);
        put(sv[1], cs);
    }
    CHECK(gdbs_recv(&c) == 1 && !strcmp(c.in, "a#b"), "escaped byte");
    CHECK(read(sv[1], ack, 1) == 1 && ack[0] == '+', "acked 2");
    /* an interrupt */
    put(sv[1], "\x03");
    CHECK(gdbs_recv(&c) == 1 && c.in[0] == 0x03, "interrupt");
    /* sending escapes '$', '#', '}' and '*' and waits for '+' */
    put(sv[1], "+");
    CHECK(gdbs_sends(&c, "x$y") == 0, "send");
    char out[32] = {0};
    ssize_t n = read(sv[1], out, sizeof(out) - 1);
    CHECK(n > 0 && !strncmp(out, "$x}\x04y#", 6), "escaped on the wire");
    /* no-ack mode: nothing waited for */
    c.no_ack = 1;
    CHECK(gdbs_sends(&c, "OK") == 0, "no ack");
    n = read(sv[1], out, sizeof(out) - 1);
    CHECK(n == 6 && !strncmp(out, "$OK#9a", 6), "OK checksum");
    /* a packet longer than the buffer is refused, not overflowed */
    put(sv[1], "$");
    static char big[GDBS_PACKET_MAX + 10];
    memset(big, 'a', sizeof(big) - 1);
    put(sv[1], big);
    put(sv[1], "#00");
    CHECK(gdbs_recv(&c) == -1, "too long");
    /* the peer closing */
    close(sv[1]);
    c.bpos = c.bend = 0;
    CHECK(gdbs_recv(&c) == 0, "closed");
    close(sv[0]);

    /* two pipes (`target remote | rewind gdb --stdio`): packets read from
     * one, acknowledgements and replies written to the other, never back */
    int in[2], out2[2];
    if (pipe(in) < 0 || pipe(out2) < 0)
        return 1;
    static struct gdbs_conn p;
    p.fd = in[0];
    p.wfd = out2[1];
    put(in[1], "$qSupported#37");
    CHECK(gdbs_recv(&p) == 1 && !strcmp(p.in, "qSupported"), "pipe: packet");
    CHECK(read(out2[0], ack, 1) == 1 && ack[0] == '+', "pipe: acked on the other pipe");
    put(in[1], "+");
    CHECK(gdbs_sends(&p, "OK") == 0, "pipe: send waits for '+' on the read pipe");
    n = read(out2[0], out, sizeof(out) - 1);
    CHECK(n == 6 && !strncmp(out, "$OK#9a", 6), "pipe: reply on the write pipe");
    close(in[1]);
    CHECK(gdbs_recv(&p) == 0, "pipe: closed");
    close(in[0]);
    close(out2[0]);
    close(out2[1]);

    unsigned char b[4];
    char hx[9];
    gdbs_tohex((const unsigned char *)"\x01\xab\xff\x00", 4, hx);
    CHECK(!strcmp(hx, "01abff00"), "tohex");
    CHECK(gdbs_fromhex("01abFF00", 8, b, 4) == 4 && b[1] == 0xab && b[2] == 0xff, "fromhex");
    CHECK(gdbs_fromhex("0g", 2, b, 4) == -1, "bad hex");
    CHECK(gdbs_fromhex("010203040506", 12, b, 4) == -1, "too many bytes");
    return unit_done();
}
