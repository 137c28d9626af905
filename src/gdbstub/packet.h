/* packet: the GDB remote protocol's framing over a connection (one socket,
 * or a pipe each way: `target remote | rewind gdb --stdio`) ("$data#cs", the '+' acknowledgement, '}' escapes, 0x03 interrupts).
 * docs/debugging.md. */
#ifndef REWIND_GDBSTUB_PACKET_H
#define REWIND_GDBSTUB_PACKET_H

#include <stddef.h>

#define GDBS_PACKET_MAX 16384

struct gdbs_conn {
    int fd;     /* read from */
    int wfd;    /* written to (fd itself for a socket) */
    int no_ack; /* after QStartNoAckMode */
    char in[GDBS_PACKET_MAX + 1];
    size_t len; /* of the packet in `in` (unescaped, NUL-terminated) */
    unsigned char buf[4096];
    size_t bpos, bend;
};

/* Read the next packet into c->in (a lone 0x03 is returned as "\x03").
 * 1 got one, 0 the peer closed, -1 an error or a packet too long. */
int gdbs_recv(struct gdbs_conn *c);
/* Send data (n bytes; escaped as needed) as one packet, waiting for its
 * '+' unless no_ack. 0 or -1. */
int gdbs_send(struct gdbs_conn *c, const char *data, size_t n);
/* gdbs_send of a NUL-terminated string. */
int gdbs_sends(struct gdbs_conn *c, const char *s);

/* Hex helpers: value of a hex digit (-1 if not), n bytes of b as hex
 * into out (2n + 1 bytes), and hex text to bytes (count, -1 bad). */
int gdbs_hexval(int ch);
void gdbs_tohex(const unsigned char *b, size_t n, char *out);
long gdbs_fromhex(const char *s, size_t slen, unsigned char *out, size_t max);

#endif
