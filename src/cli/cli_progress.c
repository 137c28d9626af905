/*
 * cli_progress: the progress line of a long preparation step on a terminal:
 * "rewind: hashing 123.4 MiB / 400.0 MiB  85.2 MiB/s  ETA 3 s", one line
 * rewritten in place (carriage return) at most CLI_PROGRESS_HZ times a
 * second and cleared when the step ends. Quiet when stderr is not a
 * terminal: logs and pipes get nothing.
 *
 * Invariants:
 *  1. Nothing is written unless stderr is a tty.
 *  2. A line drawn is always cleared when its step ends (what == NULL), so
 *     the job's output never lands after a half line.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "rewind_check.h"

#define CLI_PROGRESS_HZ 8

static struct {
    int tty;       /* -1 unknown, 0 no, 1 yes */
    int drawn;     /* a line is on the screen */
    char what[64]; /* the step being shown */
    double start, last;
} pg = {.tty = -1};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The progress line for what at done/total after elapsed seconds, into out. */
void cli_progress_line(char *out, size_t n, const char *what, uint64_t done, uint64_t total,
                       double elapsed)
{
    char d[32], t[32], r[32];
    cli_bytes_text(done, d, sizeof(d));
    cli_bytes_text(total, t, sizeof(t));
    double rate = elapsed > 0 ? (double)done / elapsed : 0;
    cli_bytes_text((uint64_t)rate, r, sizeof(r));
    if (rate > 0 && done < total) {
        double eta = (double)(total - done) / rate;
        snprintf(out, n, "rewind: %s %s / %s  %s/s  ETA %.0f s", what, d, t, r, eta + 0.5);
    } else {
        snprintf(out, n, "rewind: %s %s / %s  %s/s", what, d, t, r);
    }
}

void cli_progress(void *ctx, const char *what, uint64_t done, uint64_t total)
{
    (void)ctx;
    if (pg.tty < 0)
        pg.tty = isatty(2) ? 1 : 0;
    if (!pg.tty) /* invariant 1 */
        return;
    double t = now_s();
    if (!what) {
        if (pg.drawn)
            fputs("\r\033[K", stderr); /* invariant 2 */
        pg.drawn = 0;
        pg.what[0] = 0;
        return;
    }
    if (strncmp(pg.what, what, sizeof(pg.what) - 1)) {
        snprintf(pg.what, sizeof(pg.what), "%s", what);
        pg.start = t;
        pg.last = 0;
    }
    if (t - pg.last < 1.0 / CLI_PROGRESS_HZ && done < total)
        return;
    pg.last = t;
    char line[200];
    cli_progress_line(line, sizeof(line), what, done, total, t - pg.start);
    fprintf(stderr, "\r%s\033[K", line);
    fflush(stderr);
    pg.drawn = 1;
    RW_ASSERT(pg.drawn && pg.what[0]); /* invariant 2: cleared by the NULL call */
}
