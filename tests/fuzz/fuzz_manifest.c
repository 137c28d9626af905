/*
 * fuzz_manifest: manifest and spec parsing: a run's info through the
 * Reading API (src/home/runinfo.c, src/home/runref.c), the listing and the
 * family tree, the `rewind run` line rebuilt from the spec, and the spec
 * turned back into run options for replay (run_stored_load in
 * src/run/api.c, spec_parse_perturb in src/input/spec.c).
 *
 * Input: "<manifest.json>\0<spec.json>" (no NUL: the same text for both),
 * written to runs/r of a scratch home that holds one image
 * (images/<IMAGE>.erofs) and a fake kernel and init.
 *
 * Invariants:
 *  1. Whatever the text, every reader returns 0 or -1 (no crash, no
 *     sanitizer report); a run whose manifest is refused is refused with a
 *     message.
 */
#include <jansson.h>

#include "fuzz.h"
#include "rewind.h"
#include "run/ctx.h"
#include "run/modes.h"
#include "input/spec.h"
#include "util/check.h"

#define IMAGE "aa00000000000000000000000000000000000000000000000000000000000000"

static int listed(void *ctx, const struct rw_run_info *info, const struct rw_error *why)
{
    (void)info;
    (void)why;
    (*(int *)ctx)++;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char home[512], p[700], kernel[600], init[600];
    fuzz_run_file(home, sizeof(home), "manifest.json", NULL, 0, p, sizeof(p));
    snprintf(p, sizeof(p), "%s/images", home);
    io_mkdir_p(p);
    snprintf(p, sizeof(p), "%s/images/%s.erofs", home, IMAGE);
    fuzz_write(p, "root", 4);
    snprintf(kernel, sizeof(kernel), "%s/kernel", home);
    fuzz_write(kernel, "kernel", 6);
    snprintf(init, sizeof(init), "%s/init", home);
    fuzz_write(init, "init", 4);

    const uint8_t *nul = memchr(data, 0, size);
    size_t mlen = nul ? (size_t)(nul - data) : size;
    const uint8_t *spec = nul ? nul + 1 : data;
    size_t slen = nul ? size - mlen - 1 : size;
    fuzz_run_file(home, sizeof(home), "manifest.json", data, mlen, p, sizeof(p));
    fuzz_run_file(home, sizeof(home), "spec.json", spec, slen, p, sizeof(p));

    rw_home *h;
    struct rw_error err;
    if (rw_home_open(home, &h, &err) == 0) {
        struct rw_run_info info;
        memset(&info, 0, sizeof(info));
        if (rw_run_info(h, "r", &info, &err) == 0)
            rw_run_info_free(&info);
        else
            RW_ASSERT(err.msg[0] != '\0');
        int n = 0;
        struct rw_run_filter f = {0};
        rw_runs_list(h, &f, listed, &n, &err);
        char root[RW_ID_MAX];
        rw_forks(h, "r", root, listed, &n, &err);
        char *line = NULL;
        int exact = 0;
        if (rw_command_line(h, "r", &line, &exact, &err) == 0)
            free(line);
        rw_home_close(h);
    }
    struct run_stored st;
    if (run_stored_load(home, "r", kernel, init, &st, &err) == 0)
        run_stored_free(&st);

    json_t *j = json_loadb((const char *)spec, slen, 0, NULL);
    if (j) {
        struct sched s;
        memset(&s, 0, sizeof(s));
        if (spec_parse_perturb(j, &s) == 0) {
            s.seed = 42;
            for (uint64_t step = 0; step < 64; step++)
                sched_decide(&s, step * 977, (int)(step & 1));
        }
        json_decref(j);
    }
    fuzz_clear("home");
    return 0;
}
