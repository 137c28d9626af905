/* checkrec: see checkrec.h. */
#include "explore/checkrec.h"

#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "util/homepath.h"
#include "util/check.h"
#include "util/fail.h"
#include "util/hash.h"
#include "util/io.h"

#define fail util_fail

static json_t *side(const struct rw_check_side *s)
{
    json_t *o = json_pack("{s:s,s:s,s:i,s:I}", "id", s->id, "outcome", s->outcome, "exit_code",
                          s->exit_code, "steps", (json_int_t)s->steps);
    if (o && s->props_failed)
        json_object_set_new(o, "fails", json_string(s->why));
    return o;
}

int checkrec_save(const char *home, const struct checkrec_opts *o,
                  const struct rw_check_report *rep, char (*runs)[RW_ID_MAX], size_t nruns,
                  char id[RW_ID_MAX], char *err, size_t errlen)
{
    /* invariant 1: the id hashes what was checked */
    json_t *what = json_pack("{s:s,s:I,s:I,s:b,s:b}", "base", o->base, "start",
                             (json_int_t)o->start, "schedules", (json_int_t)o->schedules,
                             "keep_going", o->keep_going, "vary_seed", o->vary_seed);
    /* a range (--schedules A..B) is part of what was checked; 1..N keeps the
       ids of checks recorded before ranges existed */
    if (what && o->first > 1)
        json_object_set_new(what, "first", json_integer((json_int_t)o->first));
    char *canon = what ? json_dumps(what, JSON_SORT_KEYS | JSON_COMPACT) : NULL;
    if (!canon) {
        json_decref(what);
        return fail(err, errlen, "out of memory");
    }
    hash256 h;
    char hex[65];
    hash_buf(canon, strlen(canon), &h);
    free(canon);
    hash_hex(&h, hex);
    snprintf(id, RW_ID_MAX, "%.16s", hex);
    json_t *r = json_object();
    json_object_set_new(r, "id", json_string(id));
    json_object_set_new(r, "created", json_integer((json_int_t)time(NULL)));
    json_object_update(r, what);
    json_decref(what);
    json_object_set_new(r, "from", json_boolean(o->from));
    json_object_set_new(r, "judged_by_properties", json_boolean(rep->judged));
    json_object_set_new(r, "tried", json_integer((json_int_t)rep->tried));
    json_object_set_new(r, "failures", json_integer((json_int_t)rep->failures));
    json_object_set_new(r, "timeouts", json_integer((json_int_t)rep->timeouts));
    json_object_set_new(r, "rerun", json_integer((json_int_t)rep->rerun));
    json_object_set_new(r, "diverged", json_integer((json_int_t)rep->diverged));
    json_object_set_new(r, "failure_interval95", json_pack("[f,f]", rep->fail_lo, rep->fail_hi));
    json_object_set_new(r, "schedule0", side(&rep->base));
    json_object_set_new(r, "found", json_boolean(rep->found));
    json_object_set_new(r, "unmet", json_integer((json_int_t)rep->unmet));
    if (rep->found) {
        json_object_set_new(r, "schedule", json_integer((json_int_t)rep->schedule));
        json_object_set_new(r, "failing", side(&rep->failing));
        json_object_set_new(r, "narrowed", json_boolean(rep->narrowed));
        if (rep->narrowed) {
            json_object_set_new(r, "deciding_step", json_integer((json_int_t)rep->deciding_step));
            json_object_set_new(r, "perturbation", json_string(rep->deciding_what));
            json_object_set_new(r, "deciding_fault", json_boolean(rep->deciding_fault));
            json_object_set_new(r, "passing_run", side(&rep->pass_run));
            json_object_set_new(r, "failing_run", side(&rep->fail_run));
        }
    }
    json_t *ps = json_array();
    for (int i = 0; i < rep->nprops; i++) {
        const struct rw_check_prop *p = &rep->props[i];
        json_t *e =
            json_pack("{s:s,s:I,s:I,s:I}", "property", p->what, "reached", (json_int_t)p->reached,
                      "passed", (json_int_t)p->passed, "failed", (json_int_t)p->failed);
        if (e) {
            json_object_set_new(e, "kind",
                                json_string(p->sdk_kind < 0
                                                ? "property"
                                                : rw_sdk_kind_name((enum rw_sdk_kind)p->sdk_kind)));
            json_object_set_new(e, "unmet", json_boolean(p->unmet));
        }
        if (e && p->first_fail[0]) {
            json_object_set_new(e, "first_failing_run", json_string(p->first_fail));
            json_object_set_new(e, "first_failing_schedule",
                                json_integer((json_int_t)p->first_fail_schedule));
            json_object_set_new(e, "first_failing_step",
                                json_integer((json_int_t)p->first_fail_step));
        }
        json_array_append_new(ps, e);
    }
    json_object_set_new(r, "properties", ps);
    json_t *rs = json_array();
    for (size_t i = 0; i < nruns; i++)
        json_array_append_new(rs, json_string(runs[i]));
    json_object_set_new(r, "runs", rs);
    char *text = json_dumps(r, JSON_INDENT(1) | JSON_SORT_KEYS);
    json_decref(r);
    char dir[4200], path[4200];
    int rc = -1;
    if (!text)
        return fail(err, errlen, "out of memory");
    if (home_path(dir, sizeof(dir), home, HOME_CHECKS, NULL, NULL) < 0 ||
        home_path(path, sizeof(path), home, HOME_CHECKS, id, NULL) < 0)
        fail(err, errlen, "bad home path");
    else if (mkdir(dir, 0755) < 0 && errno != EEXIST)
        fail(err, errlen, "cannot make %s: %s", dir, strerror(errno));
    else if (io_write_file_atomic(path, text, strlen(text)) < 0) /* invariant 2 */
        fail(err, errlen, "cannot write %s: %s", path, strerror(errno));
    else
        rc = 0;
    free(text);
    return rc;
}

/* Load and check one record (invariant 3); NULL if unusable. */
static json_t *load(const char *home, const char *id)
{
    char path[4200];
    json_error_t je;
    if (home_path(path, sizeof(path), home, HOME_CHECKS, id, NULL) < 0)
        return NULL;
    json_t *r = json_load_file(path, 0, &je);
    if (!r || !json_is_object(r) || !json_is_string(json_object_get(r, "id")) ||
        strcmp(json_string_value(json_object_get(r, "id")), id) ||
        !json_is_string(json_object_get(r, "base")) ||
        !json_is_integer(json_object_get(r, "created")) ||
        !json_is_array(json_object_get(r, "runs"))) {
        json_decref(r);
        return NULL;
    }
    return r;
}

static uint64_t u(json_t *r, const char *k)
{
    json_int_t v = json_integer_value(json_object_get(r, k));
    return v < 0 ? 0 : (uint64_t)v;
}

static int is_id(const char *s)
{
    size_t n = strlen(s);
    if (n != 16)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
            return 0;
    return 1;
}

/* The ids of the records under checks/ (malloc'd array of 17-byte ids). */
static size_t ids_of(const char *home, char (**out)[17])
{
    char dir[4200];
    *out = NULL;
    DIR *d = home_path(dir, sizeof(dir), home, HOME_CHECKS, NULL, NULL) == 0 ? opendir(dir) : NULL;
    if (!d)
        return 0;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t l = strlen(e->d_name);
        if (l != 21 || strcmp(e->d_name + 16, ".json"))
            continue;
        char id[17];
        memcpy(id, e->d_name, 16);
        id[16] = 0;
        if (!is_id(id))
            continue;
        if (n == cap) {
            char(*nb)[17] = realloc(*out, (cap = cap ? cap * 2 : 16) * sizeof(**out));
            if (!nb)
                break;
            *out = nb;
        }
        memcpy((*out)[n++], id, 17);
    }
    closedir(d);
    return n;
}

struct entry {
    json_t *r;
    int64_t created;
};

static int newest_first(const void *a, const void *b)
{
    const struct entry *x = a, *y = b;
    if (x->created != y->created)
        return x->created < y->created ? 1 : -1;
    return strcmp(json_string_value(json_object_get(x->r, "id")),
                  json_string_value(json_object_get(y->r, "id")));
}

int rw_checks_list(rw_home *h, int (*fn)(void *ctx, const struct rw_check_info *c), void *ctx,
                   struct rw_error *err)
{
    char(*ids)[17];
    size_t n = ids_of(rw_home_path(h), &ids), m = 0;
    struct entry *es = calloc(n + 1, sizeof(*es));
    if (!es) {
        free(ids);
        err->code = RW_EINTERNAL;
        snprintf(err->msg, sizeof(err->msg), "out of memory");
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        if ((es[m].r = load(rw_home_path(h), ids[i])))
            es[m].created = json_integer_value(json_object_get(es[m].r, "created")), m++;
    free(ids);
    qsort(es, m, sizeof(*es), newest_first);
    int rc = 0;
    for (size_t i = 0; i < m && rc == 0; i++) {
        json_t *r = es[i].r, *runs = json_object_get(r, "runs");
        struct rw_check_info c;
        memset(&c, 0, sizeof(c));
        snprintf(c.id, sizeof(c.id), "%s", json_string_value(json_object_get(r, "id")));
        snprintf(c.base, sizeof(c.base), "%s", json_string_value(json_object_get(r, "base")));
        c.created = es[i].created;
        c.start = u(r, "start");
        c.schedules = u(r, "schedules");
        c.first = u(r, "first") ? u(r, "first") : 1; /* absent: 1..N (invariant 1) */
        c.tried = u(r, "tried");
        c.failures = u(r, "failures");
        c.found = json_is_true(json_object_get(r, "found"));
        c.unmet = u(r, "unmet");
        c.narrowed = json_is_true(json_object_get(r, "narrowed"));
        c.judged = json_is_true(json_object_get(r, "judged_by_properties"));
        c.schedule = u(r, "schedule");
        const char *f = json_string_value(json_object_get(json_object_get(r, "failing"), "id"));
        snprintf(c.failing, sizeof(c.failing), "%s", f ? f : "");
        if (c.narrowed)
            snprintf(c.deciding, sizeof(c.deciding), "%llu",
                     (unsigned long long)u(r, "deciding_step"));
        size_t nr = json_array_size(runs);
        const char **rv = calloc(nr + 1, sizeof(char *));
        for (size_t k = 0; rv && k < nr; k++) {
            const char *s = json_string_value(json_array_get(runs, k));
            rv[k] = s ? s : "";
        }
        c.runs = rv;
        c.nruns = rv ? nr : 0;
        rc = fn(ctx, &c);
        free(rv);
    }
    for (size_t i = 0; i < m; i++)
        json_decref(es[i].r);
    free(es);
    return rc ? rc : (int)m;
}

int rw_check_record(rw_home *h, const char *ref, char **json, struct rw_error *err)
{
    char(*ids)[17];
    size_t n = ids_of(rw_home_path(h), &ids), hit = 0, l = strlen(ref);
    const char *id = NULL;
    *json = NULL;
    for (size_t i = 0; l >= 4 && i < n; i++)
        if (!strncmp(ids[i], ref, l)) {
            hit++;
            id = ids[i];
        }
    err->code = RW_EUSAGE;
    if (hit != 1) {
        snprintf(err->msg, sizeof(err->msg), hit ? "check %s is ambiguous" : "no check %s", ref);
        free(ids);
        return -1;
    }
    json_t *r = load(rw_home_path(h), id);
    if (!r) {
        snprintf(err->msg, sizeof(err->msg), "check %s: its record is unreadable or corrupt", id);
        free(ids);
        return -1;
    }
    free(ids);
    *json = json_dumps(r, JSON_INDENT(1) | JSON_SORT_KEYS);
    json_decref(r);
    if (!*json) {
        err->code = RW_EINTERNAL;
        snprintf(err->msg, sizeof(err->msg), "out of memory");
        return -1;
    }
    return 0;
}
