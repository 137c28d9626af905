/*
 * cmd_cat: `rewind cat RUN STEP PATH [--pid P]`: the file PATH as it was at
 * STEP, as process P (default: the job) saw it through its root and cwd.
 * The file is read inside a throwaway fork of RUN: restored from the
 * keyframe before STEP, run to STEP, every process frozen, an inspector
 * reads the file; then the fork is dropped. Exit 3 if PATH did not exist.
 * --json: the file's head in one JSON object on stdout (docs/serve.md,
 * "Answers"); at most CAT_JSON_MAX bytes of it are kept, all are counted.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "rewind.h"

#define CAT_JSON_MAX (1024 * 1024)

/* --json: the file's bytes (RW_STDOUT) kept here, the rest as cli_stdio_json. */
struct cat_capture {
    char *p;
    size_t len;
    uint64_t total;
};

static void cat_output(void *ctx, enum rw_stream s, const void *buf, size_t n)
{
    struct cat_capture *c = ctx;
    if (s != RW_STDOUT) {
        cli_stdio_json.output(cli_stdio_json.ctx, s, buf, n);
        return;
    }
    c->total += n;
    size_t k = CAT_JSON_MAX - c->len < n ? CAT_JSON_MAX - c->len : n;
    memcpy(c->p + c->len, buf, k);
    c->len += k;
}

/* The answer: content a JSON string when the head is UTF-8, else null. */
static void cat_answer(const struct cat_capture *c, const char *path, uint64_t step,
                       const struct rw_result *r)
{
    json_t *content = json_stringn(c->p, c->len);
    cli_json_answer(json_pack("{s:s,s:I,s:i,s:I,s:b,s:b,s:o}", "path", path, "step",
                              (json_int_t)step, "status", r->inspect_status, "size",
                              (json_int_t)c->total, "truncated", c->total > c->len, "binary",
                              content == NULL, "content", content ? content : json_null()));
}

static void help(void)
{
    puts("usage: rewind cat RUN STEP PATH [--pid P] [--timeout S] [--json]\n\n"
         "Print the file PATH as it was at STEP of RUN, as process P (default: the\n"
         "job) saw it, through its root and working directory. Read in a throwaway\n"
         "fork of the run; nothing stored changes. Exit 3 if PATH did not exist.\n\n"
         "  --timeout S      give up after S seconds of wall time (default 600; exit 124)\n"
         "  --max-trace MB, --max-disk MB   disk limits of the fork (see rewind run)\n"
         "  --json           one JSON object on stdout: the file's first MiB as text\n"
         "                   (content; null if it is not UTF-8: binary), its size");
}

int cmd_cat(int argc, char **argv)
{
    struct rw_options o;
    uint64_t step;
    static const struct cli_derived d = {"cat", "pid,timeout,max-trace,max-disk", 3,
                                         "RUN STEP PATH", help};
    rw_home *h;
    int json;
    int ex = cli_start(argc, argv, &d, &o, &step, &h, &json);
    if (ex >= 0)
        return ex;
    const char *path = argv[optind + 2];
    struct cat_capture cap = {0};
    if (json) {
        cap.p = malloc(CAT_JSON_MAX);
        if (!cap.p) {
            rw_home_close(h);
            return cli_error(RW_EINTERNAL, "out of memory");
        }
        o.observer = (struct rw_observer){cat_output, &cap, cli_stdio_json.progress};
    }
    struct rw_result r;
    struct rw_error err;
    int rc = rw_cat(h, argv[optind], step, path, &o, &r, &err);
    rw_home_close(h);
    if (rc < 0) {
        free(cap.p);
        return cli_fail_json(&err, json); /* the README's codes: 2 usage, 120 no KVM, ... */
    }
    fflush(stdout);
    if (r.inspect_status == 3) {
        free(cap.p);
        err.code = 3;
        snprintf(err.msg, sizeof err.msg, "%s did not exist at step %llu%s", path,
                 (unsigned long long)step, o.pid ? " (for that process)" : "");
        return cli_fail_json(&err, json);
    }
    if (json)
        cat_answer(&cap, path, step, &r);
    free(cap.p);
    return r.inspect_status;
}
