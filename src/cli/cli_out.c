/* cli_out: the CLI's lines on stderr, never blocked past --timeout or
 * SIGINT (the abort flag of cli_abort_on_signals), error lines, sizes in
 * words, text made safe for a terminal and JSON (cli_tty: valid UTF-8, no
 * control character; every error line goes through it) (declared in
 * cli.h). It uses nothing else of src/cli, so every other file of it may
 * use it. */

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include "cli.h"

static volatile sig_atomic_t abort_flag;

static void on_abort_signal(int sig)
{
    (void)sig;
    abort_flag = 1;
    rw_interrupt();
}

volatile sig_atomic_t *cli_abort_on_signals(double timeout_s)
{
    struct sigaction sa = {.sa_handler = on_abort_signal};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGALRM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL); /* a closed terminal: the same clean end */
    signal(SIGPIPE, SIG_IGN);
    if (timeout_s > 0) {
        struct itimerval it = {0};
        it.it_value.tv_sec = (time_t)timeout_s;
        it.it_value.tv_usec = (suseconds_t)((timeout_s - (double)(time_t)timeout_s) * 1e6);
        setitimer(ITIMER_REAL, &it, NULL);
    }
    return &abort_flag;
}

/* Write n bytes to fd, unbuffered. A reader that stops reading (a full
 * pipe) must not keep the run past --timeout or SIGINT: wait in poll slices
 * and write at most a pipe buffer at once, so no write blocks for long, and
 * once the abort flag is set, drop what fd cannot take now. A closed pipe
 * (SIGPIPE ignored) drops the rest. */
void cli_out_all(int fd, const char *b, size_t n)
{
    while (n > 0) {
        struct pollfd pf = {.fd = fd, .events = POLLOUT};
        int r = poll(&pf, 1, abort_flag ? 0 : 200);
        if (r == 0 && abort_flag)
            return;
        if (r < 0 && errno != EINTR)
            return;
        if (r <= 0)
            continue;
        ssize_t w = write(fd, b, n < 4096 ? n : 4096);
        if (w < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (w <= 0)
            return;
        b += w;
        n -= (size_t)w;
    }
}

/* The length of the valid UTF-8 character at u (RFC 3629: no overlong
 * form, no surrogate, at most U+10FFFF), or 0. */
static size_t utf8_char(const unsigned char *u)
{
    if (u[0] < 0x80)
        return 1;
    size_t n = u[0] >= 0xc2 && u[0] <= 0xdf   ? 2
               : u[0] >= 0xe0 && u[0] <= 0xef ? 3
               : u[0] >= 0xf0 && u[0] <= 0xf4 ? 4
                                              : 0;
    for (size_t i = 1; i < n; i++)
        if ((u[i] & 0xc0) != 0x80)
            return 0;
    if ((u[0] == 0xe0 && u[1] < 0xa0) || (u[0] == 0xed && u[1] > 0x9f) ||
        (u[0] == 0xf0 && u[1] < 0x90) || (u[0] == 0xf4 && u[1] > 0x8f))
        return 0;
    return n;
}

size_t cli_safe_text(const char *s, char *b, size_t n)
{
    size_t o = 0;
    const unsigned char *u = (const unsigned char *)(s ? s : "");
    for (size_t i = 0; u[i] && o + 1 < n;) {
        size_t k = utf8_char(u + i);
        int control =
            k == 1 ? u[i] < 0x20 || u[i] == 0x7f : k == 2 && u[i] == 0xc2 && u[i + 1] <= 0x9f;
        if (!k || control) { /* a control (C0, DEL, C1) or a byte of no character */
            b[o++] = '?';
            i += k ? k : 1;
        } else if (o + k < n) {
            memcpy(b + o, u + i, k);
            o += k;
            i += k;
        } else {
            break; /* cut at a character's start, never inside one */
        }
    }
    b[o] = 0;
    return o;
}

const char *cli_tty(const char *s)
{
    static _Thread_local char buf[8][4096];
    static _Thread_local unsigned k;
    char *b = buf[k++ % 8];
    cli_safe_text(s, b, sizeof(buf[0]));
    return b;
}

void cli_vsay(const char *fmt, va_list ap)
{
    char raw[2048], line[2048];
    vsnprintf(raw, sizeof(raw), fmt, ap);
    /* one line of text whatever a message quotes (a file's bytes, a name
     * from an archive): no control character, valid UTF-8 (cli_tty) */
    int n = snprintf(line, sizeof(line), "rewind: ");
    size_t len = (size_t)n + cli_safe_text(raw, line + n, sizeof(line) - (size_t)n - 1);
    line[len++] = '\n';
    fflush(stdout);
    cli_out_all(2, line, len);
}

void cli_say(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cli_vsay(fmt, ap);
    va_end(ap);
}

const char *cli_bytes_text(uint64_t b, char *buf, size_t n)
{
    static const char *unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = (double)b;
    int u = 0;
    while (v >= 1024 && u < 4) {
        v /= 1024;
        u++;
    }
    if (u == 0)
        snprintf(buf, n, "%" PRIu64 " B", b);
    else
        snprintf(buf, n, "%.1f %s", v, unit[u]);
    return buf;
}

int cli_error(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cli_vsay(fmt, ap); /* never blocked past --timeout (cli_out_all) */
    va_end(ap);
    return code;
}
