/* cliutil: see cliutil.h. */
#include "cliutil.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../run/runref.h"
#include "cli.h"

json_t *cli_load_run(const char *ref, char *dir, size_t dirlen)
{
    char err[512];
    if (runref_resolve(cli_home(), ref, dir, dirlen, err, sizeof(err)) < 0) {
        cli_error(1, "%s", err);
        return NULL;
    }
    char path[4200];
    snprintf(path, sizeof(path), "%s/manifest.json", dir);
    json_error_t je;
    json_t *m = json_load_file(path, 0, &je);
    if (!m || !json_is_object(m)) {
        cli_error(1, "run %s: manifest %s is corrupt (%s)", ref, path, je.text);
        json_decref(m);
        return NULL;
    }
    return m;
}

int cli_each_entry(const char *dir, int (*fn)(void *ctx, const struct trace_entry *e), void *ctx)
{
    char path[4200];
    snprintf(path, sizeof(path), "%s/trace", dir);
    struct trace_reader *r = malloc(sizeof(*r));
    if (!r)
        return cli_error(-1, "out of memory");
    int o = trace_open_read(r, path);
    if (o < 0) {
        free(r);
        if (o == -2)
            return cli_error(-1, "%s is not a rewind trace (corrupt or foreign file)", path);
        return cli_error(-1, "cannot read %s: %s", path, strerror(errno));
    }
    struct trace_entry e;
    while (trace_next(r, &e))
        if (fn(ctx, &e))
            break;
    if (r->torn)
        fprintf(stderr, "rewind: warning: trace %s is truncated or corrupt after %llu "
                        "records; showing those\n",
                path, (unsigned long long)r->count);
    trace_close_read(r);
    free(r);
    return 0;
}

int cli_parse_step(const char *s, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || !*s || *end || *s == '-')
        return -1;
    *out = v;
    return 0;
}

/* Bytes >= 0x80 are written as \u00XX (Latin-1): always valid JSON, even
 * for output that is not UTF-8. */
void cli_json_str(const char *s, size_t n)
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
