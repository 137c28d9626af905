/*
 * session: see session.h.
 */
#include "util/fail.h"
#include "run/session.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

#include "trace/trace.h"

#define fail util_fail
#define BATCH_QUIET_MS 5

volatile sig_atomic_t session_winch = 1; /* the first delivery says the size */
volatile sig_atomic_t session_end_input;

int session_open_live(struct session *s, int fd, const char *path, char *err, size_t errlen)
{
    memset(s, 0, sizeof(*s));
    s->fd = fd;
    s->log = fopen(path, "wbe");
    s->hash = hash_new();
    if (!s->log || !s->hash || fwrite("RWINPUT1", 8, 1, s->log) != 1) {
        char hex[65];
        int e = errno;
        session_close(s, hex);
        return fail(err, errlen, "cannot write %s: %s", path, strerror(e));
    }
    return 0;
}

int session_open_replay(struct session *s, const char *path, char *err, size_t errlen)
{
    memset(s, 0, sizeof(*s));
    s->fd = -1;
    s->hash = hash_new();
    FILE *f = fopen(path, "rbe");
    struct stat st;
    if (!f || fstat(fileno(f), &st) < 0 || st.st_size < 8 || st.st_size > (64 << 20)) {
        char hex[65];
        if (f)
            fclose(f);
        session_close(s, hex);
        return fail(err, errlen, "cannot read the session's inputs %s", path);
    }
    s->rec = malloc((size_t)st.st_size);
    s->rec_len = (size_t)st.st_size;
    int ok = s->rec && s->hash && fread(s->rec, 1, s->rec_len, f) == s->rec_len &&
             !memcmp(s->rec, "RWINPUT1", 8);
    fclose(f);
    if (!ok) {
        char hex[65];
        session_close(s, hex);
        return fail(err, errlen, "%s is not a session inputs file", path);
    }
    s->rec_off = 8;
    return 0;
}

static void frame(struct session *s, uint8_t type, const void *data, uint16_t n)
{
    struct rewind_input_frame h = {.type = type, .len = n};
    memcpy(s->buf + s->len, &h, sizeof(h));
    if (n)
        memcpy(s->buf + s->len + sizeof(h), data, n);
    s->len += sizeof(h) + n;
}

/* Read what the user typed (waiting up to timeout_ms; -1 forever) into
 * DATA frames; a resize becomes a WINSIZE frame, end of input an EOF frame. */
static void gather(struct session *s, int timeout_ms)
{
    const size_t hdr = sizeof(struct rewind_input_frame);
    const size_t room_for_winsize = hdr + 4;
    for (;;) {
        if (s->abort && *s->abort)
            return;
        if (session_winch && s->len + room_for_winsize <= sizeof(s->buf)) {
            struct winsize ws;
            session_winch = 0;
            if (ioctl(s->fd, TIOCGWINSZ, &ws) == 0 || ioctl(1, TIOCGWINSZ, &ws) == 0) {
                uint16_t rc[2] = {ws.ws_row, ws.ws_col};
                frame(s, REWIND_INPUT_WINSIZE, rc, sizeof(rc));
            }
        }
        /* Keep room for one more frame header, a byte, and a resize. */
        if (s->eof || s->len + hdr + 1 + room_for_winsize > sizeof(s->buf))
            return;
        if (session_end_input) { /* SIGINT: end the input as at end of file */
            frame(s, REWIND_INPUT_EOF, NULL, 0);
            s->eof = 1;
            return;
        }
        /* Wait in slices so that an abort (SIGTERM, --timeout) is seen. */
        int slice = timeout_ms < 0 || timeout_ms > 200 ? 200 : timeout_ms;
        struct pollfd pf = {.fd = s->fd, .events = POLLIN};
        int r = poll(&pf, 1, slice);
        if (r < 0 && errno == EINTR)
            continue; /* a resize: loop to frame it */
        if (r == 0 && timeout_ms < 0)
            continue; /* no timer armed: the guest waits for the user */
        if (r <= 0)
            return;
        uint8_t tmp[REWIND_SHARED_INPUT_MAX];
        size_t room = sizeof(s->buf) - s->len - hdr - room_for_winsize;
        ssize_t n = read(s->fd, tmp, room < sizeof(tmp) ? room : sizeof(tmp));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            frame(s, REWIND_INPUT_EOF, NULL, 0);
            s->eof = 1;
            return;
        }
        frame(s, REWIND_INPUT_DATA, tmp, (uint16_t)n);
        timeout_ms = BATCH_QUIET_MS; /* coalesce until the user pauses */
    }
}

static int log_delivery(struct session *s, uint64_t step, const uint8_t *b, uint32_t n)
{
    uint8_t le[8];
    for (int i = 0; i < 8; i++)
        le[i] = (uint8_t)(step >> (8 * i));
    uint32_t crc = trace_crc32(trace_crc32(0, le, 8), b, n);
    hash_update(s->hash, le, 8);
    hash_update(s->hash, b, n);
    if (fwrite(le, 8, 1, s->log) != 1 || fwrite(&n, 4, 1, s->log) != 1 ||
        fwrite(&crc, 4, 1, s->log) != 1 || fwrite(b, 1, n, s->log) != n || fflush(s->log) != 0)
        s->failed = 1;
    return 0;
}

static int replay_next(struct session *s, struct platform *p)
{
    if (s->rec_len - s->rec_off < 16)
        return 0;
    uint64_t step;
    uint32_t n, crc;
    memcpy(&step, s->rec + s->rec_off, 8);
    memcpy(&n, s->rec + s->rec_off + 8, 4);
    memcpy(&crc, s->rec + s->rec_off + 12, 4);
    if (step != p->step)
        return 0;
    const uint8_t *b = s->rec + s->rec_off + 16;
    if (n == 0 || n > REWIND_SHARED_INPUT_MAX || n > s->rec_len - s->rec_off - 16 ||
        trace_crc32(trace_crc32(0, s->rec + s->rec_off, 8), b, n) != crc) {
        s->rec_off = s->rec_len; /* torn or corrupt: no more input */
        return 0;
    }
    if (platform_input(p, b, n) != n)
        return 0;
    hash_update(s->hash, s->rec + s->rec_off, 8);
    hash_update(s->hash, b, n);
    s->rec_off += 16 + n;
    s->deliveries++;
    return 1;
}

int session_on_idle(struct session *s, struct platform *p)
{
    if (s->fd < 0)
        return replay_next(s, p);
    if (!s->len)
        gather(s, p->timer_armed ? 0 : -1);
    if (!s->len)
        return 0;
    size_t took = platform_input(p, s->buf, s->len);
    if (took != s->len)
        return 0; /* the guest has not taken the last batch: try at a later idle */
    log_delivery(s, p->step, s->buf, (uint32_t)s->len);
    s->len = 0;
    s->deliveries++;
    return 1;
}

int session_close(struct session *s, char hex[65])
{
    int rc = s->failed ? -1 : 0;
    if (s->log) {
        if (fflush(s->log) != 0 || fsync(fileno(s->log)) != 0)
            rc = -1;
        fclose(s->log);
    }
    hash256 h;
    if (s->hash)
        hash_final(s->hash, &h);
    else
        memset(&h, 0, sizeof(h));
    hash_hex(&h, hex);
    free(s->rec);
    memset(s, 0, sizeof(*s));
    s->fd = -1;
    return rc;
}
