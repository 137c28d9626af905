/* cli_read: see cli_read.h. */
#include "cli_read.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"

/* The home of the reading commands: opened once, on first use, closed by
 * main when the command returns. */
static rw_home *home;

rw_home *cli_read_home(void)
{
    struct rw_error err;
    if (!home && rw_home_open(NULL, &home, &err) < 0) {
        cli_read_fail(1, &err);
        home = NULL;
    }
    return home;
}

void cli_read_home_close(void)
{
    rw_home_close(home);
    home = NULL;
}

int cli_read_run(const char *ref, struct rw_run_info *info)
{
    struct rw_error err;
    rw_home *h = cli_read_home();
    if (!h)
        return -1;
    if (rw_run_info(h, ref, info, &err) < 0)
        return cli_read_fail(-1, &err);
    return 0;
}

int cli_read_trace(const char *ref, int json, const char *head, cli_read_trace_fn read, void *ctx)
{
    struct rw_run_info run;
    if (cli_read_run(ref, &run) < 0)
        return 1;
    rw_run_info_free(&run);
    struct rw_trace_status st;
    struct rw_error err;
    if (json)
        putchar('[');
    else if (head)
        fputs(head, stdout);
    int rc = read(cli_read_home(), run.dir, ctx, &st, &err);
    if (rc < 0)
        cli_read_fail(1, &err);
    else
        cli_read_torn(&st);
    if (json)
        puts("]");
    return rc < 0 ? 1 : 0;
}

/* A number of seconds: a whole decimal number, from 1 ms to 30 days ("10min"
 * or "1e300" is refused, not read as 10 s or as no limit at all). */
int cli_read_seconds(const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !isfinite(v) || v < 0.001 || v > 30.0 * 86400)
        return -1;
    *out = v;
    return 0;
}

int cli_read_step(const char *s, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || !*s || *end || *s == '-')
        return -1;
    *out = v;
    return 0;
}

void cli_read_json_str(const char *s, size_t n)
{
    putchar('"');
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\')
            printf("\\%c", c);
        else if (c == '\n')
            fputs("\\n", stdout);
        else if (c < 0x20 || c >= 0x7f)
            printf("\\u%04x", c);
        else
            putchar(c);
    }
    putchar('"');
}

void cli_read_torn(const struct rw_trace_status *st)
{
    if (st->torn)
        fprintf(stderr,
                "rewind: warning: trace %s is truncated or corrupt after %llu records; showing "
                "those\n",
                st->path, (unsigned long long)st->records);
}

int cli_read_fail(int code, const struct rw_error *err)
{
    return cli_error(code, "%s", err->msg);
}
