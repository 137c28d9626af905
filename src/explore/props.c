/* props: see props.h. */
#include "explore/props.h"

#include <jansson.h>
#include <math.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/homepath.h"
#include "input/expect.h"
#include "trace/trace.h"
#include "util/check.h"
#include "util/fail.h"

#define fail util_fail

#define TAG_OUT "rewind-init:property-output\n"
#define TAG_EXIT "rewind-init:property-exit\n"
#define TAG_FILE "rewind-init:file:"
#define TAG_MISSING "rewind-init:file-missing:"

/* A growing byte buffer, capped at PROPS_OUTPUT_MAX (invariant 3). */
struct text {
    char *b;
    size_t n, cap;
    int found; /* a record for it was seen */
};

static void text_add(struct text *t, const uint8_t *p, size_t n)
{
    t->found = 1;
    if (t->n + n > PROPS_OUTPUT_MAX)
        n = PROPS_OUTPUT_MAX - t->n;
    if (t->n + n + 1 > t->cap) {
        size_t cap = (t->n + n + 1) * 2;
        char *nb = realloc(t->b, cap);
        if (!nb)
            return;
        t->b = nb;
        t->cap = cap;
    }
    memcpy(t->b + t->n, p, n);
    t->n += n;
}

/* NUL-terminated for regexec; a NUL inside becomes '\n'. */
static const char *text_str(struct text *t)
{
    text_add(t, (const uint8_t *)"", 0);
    if (!t->b)
        return "";
    for (size_t i = 0; i < t->n; i++)
        if (!t->b[i])
            t->b[i] = '\n';
    t->b[t->n] = 0;
    return t->b;
}

static int matches(const char *ere, struct text *t)
{
    regex_t re;
    char why[8];
    if (expect_regcomp(&re, ere, why, sizeof(why)) < 0)
        return 0;
    int m = regexec(&re, text_str(t), 0, NULL, 0) == 0;
    regfree(&re);
    return m;
}

static int has_tag(const struct trace_entry *e, const char *tag)
{
    size_t l = strlen(tag);
    return e->payload_len >= l && !memcmp(e->payload, tag, l);
}

/* "rewind-init:file:I\n": I, or -1 (bad or out of [0, nfiles)). */
static long file_index(const struct trace_entry *e, const char *tag, size_t nfiles, size_t *skip)
{
    size_t l = strlen(tag), i = l;
    long v = 0;
    while (i < e->payload_len && i < l + 6 && e->payload[i] >= '0' && e->payload[i] <= '9')
        v = v * 10 + (e->payload[i++] - '0');
    if (i == l || i >= e->payload_len || e->payload[i] != '\n' || (size_t)v >= nfiles)
        return -1;
    *skip = i + 1;
    return v;
}

/* What the judge reads from a run's trace in one pass (props_read). */
struct props_seen {
    size_t nfiles;    /* file: properties, in the spec's order */
    int want_output;  /* an output~ property: keep the job's output */
    struct text out;  /* the job's output */
    struct text pout; /* the property command's output */
    long pexit;       /* its exit status, -1 if it did not run */
    uint64_t exit_step, last;
    struct text *files;   /* each file: property's file content */
    char (*missing)[200]; /* or why it could not be read */
    uint64_t *file_step;  /* the step it was read at */
};

/* One of rewind-init's marks (pid 1, invariant 2). */
static void props_mark(struct props_seen *ps, const struct trace_entry *e)
{
    size_t skip = 0;
    long fi;
    if (has_tag(e, TAG_OUT)) {
        text_add(&ps->pout, e->payload + strlen(TAG_OUT), e->payload_len - strlen(TAG_OUT));
    } else if (has_tag(e, TAG_EXIT)) {
        char num[16];
        size_t l = e->payload_len - strlen(TAG_EXIT);
        snprintf(num, sizeof(num), "%.*s", (int)(l < 15 ? l : 15),
                 (const char *)e->payload + strlen(TAG_EXIT));
        ps->pexit = strtol(num, NULL, 10);
        ps->exit_step = e->step;
    } else if ((fi = file_index(e, TAG_FILE, ps->nfiles, &skip)) >= 0) {
        text_add(&ps->files[fi], e->payload + skip, e->payload_len - skip);
        ps->file_step[fi] = e->step;
    } else if ((fi = file_index(e, TAG_MISSING, ps->nfiles, &skip)) >= 0) {
        snprintf(ps->missing[fi], sizeof(ps->missing[fi]), "%.*s", (int)(e->payload_len - skip),
                 (const char *)e->payload + skip);
        ps->file_step[fi] = e->step;
        ps->files[fi].found = 1;
    }
}

/* Read the trace once: the output, and rewind-init's marks. 0, or -1 with
 * err. */
static int props_read(const char *home, const char *name, struct props_seen *ps, char *err,
                      size_t errlen)
{
    char path[4200];
    struct trace_reader r;
    ps->pexit = -1;
    ps->files = calloc(ps->nfiles + 1, sizeof(struct text));
    ps->missing = calloc(ps->nfiles + 1, sizeof(*ps->missing));
    ps->file_step = calloc(ps->nfiles + 1, sizeof(uint64_t));
    if (!ps->files || !ps->missing || !ps->file_step)
        return fail(err, errlen, "out of memory");
    if (home_path(path, sizeof(path), home, HOME_RUNS, name, "trace") < 0 ||
        trace_open_read(&r, path) != 0)
        return fail(err, errlen, "run %s has no readable trace", name);
    struct trace_entry e;
    while (trace_next(&r, &e) == 1) {
        ps->last = e.step;
        if (e.rec.kind == REWIND_REC_OUTPUT && ps->want_output)
            text_add(&ps->out, e.payload, e.payload_len);
        else if (e.rec.kind == REWIND_REC_MARK && e.rec.pid == 1) /* invariant 2 */
            props_mark(ps, &e);
    }
    trace_close_read(&r);
    return 0;
}

static void props_free(struct props_seen *ps)
{
    for (size_t i = 0; ps->files && i < ps->nfiles; i++)
        free(ps->files[i].b);
    free(ps->files);
    free(ps->missing);
    free(ps->file_step);
    free(ps->out.b);
    free(ps->pout.b);
}

/* The verdict on file: property s, the fi-th of the spec. */
static void props_file(const struct props_seen *ps, size_t fi, const char *s,
                       struct rw_prop_verdict *pv)
{
    struct text *t = &ps->files[fi];
    const char *ere = strchr(s + 5, '~') + 1;
    pv->reached = t->found;
    if (t->found)
        pv->step = ps->file_step[fi];
    if (!t->found)
        snprintf(pv->detail, sizeof(pv->detail), "not read (the run ended before)");
    else if (ps->missing[fi][0])
        snprintf(pv->detail, sizeof(pv->detail), "cannot read it: %s", ps->missing[fi]);
    else
        pv->passed = matches(ere, t);
    if (t->found && !ps->missing[fi][0])
        snprintf(pv->detail, sizeof(pv->detail), "%s in %zu bytes",
                 pv->passed ? "matches" : "no match", t->n);
}

/* The verdict on exit=, outcome= or output~ property s. */
static void props_end(struct props_seen *ps, const char *outcome, json_int_t code, const char *s,
                      struct rw_prop_verdict *pv)
{
    int exited = outcome && !strcmp(outcome, "exited");
    if (!strncmp(s, "exit=", 5)) {
        pv->passed = exited && code == strtol(s + 5, NULL, 10);
        if (exited)
            snprintf(pv->detail, sizeof(pv->detail), "exit %d", (int)code);
        else
            snprintf(pv->detail, sizeof(pv->detail), "%s", outcome ? outcome : "no outcome");
    } else if (!strncmp(s, "outcome=", 8)) {
        pv->passed = outcome && !strcmp(outcome, s + 8);
        snprintf(pv->detail, sizeof(pv->detail), "%s", outcome ? outcome : "no outcome");
    } else {
        pv->passed = matches(s + 7, &ps->out);
        snprintf(pv->detail, sizeof(pv->detail), "%s in %zu bytes of output",
                 pv->passed ? "matches" : "no match", ps->out.n);
    }
}

/* The verdict on the --property command (its exit status and output). */
static void props_command(struct props_seen *ps, const char *cmd, uint64_t steps,
                          struct rw_prop_verdict *pv)
{
    memset(pv, 0, sizeof(*pv));
    snprintf(pv->what, sizeof(pv->what), "property: %s", cmd);
    pv->reached = ps->pexit >= 0;
    pv->passed = ps->pexit == 0;
    pv->step = ps->pexit >= 0 ? ps->exit_step : steps;
    if (ps->pexit < 0)
        snprintf(pv->detail, sizeof(pv->detail), "did not run (the run ended before)");
    else
        snprintf(pv->detail, sizeof(pv->detail), "exit %ld%s%.*s", ps->pexit,
                 ps->pout.n ? ", output: " : "", (int)(ps->pout.n < 120 ? ps->pout.n : 120),
                 text_str(&ps->pout));
    for (char *c = pv->detail; *c; c++)
        if (*c == '\n')
            *c = ' ';
}

/* The spec's --expect properties checked (each valid), counted into ps. 0,
 * or -1 with err. */
static int props_count(const char *name, json_t *ex, size_t nex, struct props_seen *ps, char *err,
                       size_t errlen)
{
    char why[200];
    for (size_t i = 0; i < nex; i++) {
        const char *s = json_string_value(json_array_get(ex, i));
        if (!s || expect_valid(s, why, sizeof(why)) < 0)
            return fail(err, errlen, "run %s: its spec has a bad property", name);
        ps->nfiles += !strncmp(s, "file:", 5);
        ps->want_output |= !strncmp(s, "output~", 7);
    }
    return 0;
}

int explore_props_judge(const char *home, const char *name, struct rw_prop_verdict *v, int max,
                        int *n, char *err, size_t errlen)
{
    char path[4200];
    json_error_t je;
    *n = 0;
    if (home_path(path, sizeof(path), home, HOME_RUNS, name, "manifest.json") < 0)
        return fail(err, errlen, "bad run name %s", name);
    json_t *m = json_load_file(path, 0, &je);
    if (!m)
        return fail(err, errlen, "run %s has no readable manifest", name);
    json_t *spec = json_object_get(m, "spec");
    json_t *ex = json_object_get(spec, "expect");
    json_t *pr = json_object_get(spec, "property");
    const char *outcome = json_string_value(json_object_get(m, "outcome"));
    json_int_t code = json_integer_value(json_object_get(m, "exit_code"));
    uint64_t steps = (uint64_t)json_integer_value(json_object_get(m, "steps"));
    size_t nex = json_is_array(ex) ? json_array_size(ex) : 0, fi = 0;
    struct props_seen ps = {0};
    int rc = -1;
    if (props_count(name, ex, nex, &ps, err, errlen) < 0)
        goto out;
    rc = 0;
    if ((!nex && !json_is_string(pr)) || (rc = props_read(home, name, &ps, err, errlen)) < 0)
        goto out;
    if (steps > ps.last + 1 || !steps)
        steps = ps.last; /* the manifest's steps is untrusted */
    for (size_t i = 0; i < nex && *n < max; i++) {
        const char *s = json_string_value(json_array_get(ex, i));
        struct rw_prop_verdict *pv = &v[(*n)++];
        memset(pv, 0, sizeof(*pv));
        snprintf(pv->what, sizeof(pv->what), "%s", s);
        pv->step = steps;
        pv->reached = 1;
        if (!strncmp(s, "file:", 5))
            props_file(&ps, fi++, s, pv);
        else
            props_end(&ps, outcome, code, s, pv);
    }
    if (json_is_string(pr) && *n < max)
        props_command(&ps, json_string_value(pr), steps, &v[(*n)++]);
out:
    props_free(&ps);
    json_decref(m);
    return rc;
}

uint64_t explore_trace_last_step(const char *home, const char *name)
{
    char path[4200];
    struct trace_reader r;
    if (home_path(path, sizeof(path), home, HOME_RUNS, name, "trace") < 0 ||
        trace_open_read(&r, path) != 0)
        return 0;
    struct trace_entry e;
    uint64_t last = 0;
    while (trace_next(&r, &e) == 1)
        if (e.step > last)
            last = e.step;
    trace_close_read(&r);
    return last;
}

void explore_wilson(uint64_t k, uint64_t n, double *lo, double *hi)
{
    RW_ASSERT(k <= n);
    if (!n) {
        *lo = 0;
        *hi = 1;
        return;
    }
    const double z = 1.959963984540054, z2 = z * z;
    double dn = (double)n, p = (double)k / dn;
    double den = 1 + z2 / dn, mid = (p + z2 / (2 * dn)) / den;
    double half = z * sqrt(p * (1 - p) / dn + z2 / (4 * dn * dn)) / den;
    *lo = mid - half < 0 ? 0 : mid - half;
    *hi = mid + half > 1 ? 1 : mid + half;
}

int rw_props_judge(rw_home *h, const char *ref, struct rw_prop_verdict *v, int max, int *n,
                   struct rw_error *err)
{
    char name[RW_ID_MAX];
    if (rw_resolve(h, ref, name, err) < 0)
        return -1;
    if (explore_props_judge(rw_home_path(h), name, v, max, n, err->msg, sizeof(err->msg)) < 0) {
        err->code = RW_EINTERNAL;
        return -1;
    }
    return 0;
}
