/*
 * api: the JSON reading API of `rewind serve` (docs/serve.md lists every
 * route), built only on include/rewind.h.
 *
 * Invariants:
 *  1. No lock is held around an rw_ call: the engine is reentrant
 *     (include/rewind.h, docs/architecture.md "Reentrancy") and its reading
 *     API only reads the home, so the request threads of the server read
 *     runs at once, two requests on two runs never wait for each other
 *     (docs/serve.md, "Concurrency"). serve's own shared state has its own
 *     locks (action.c's sessions, where.c's slots and answers).
 *  2. A run reference from a URL is checked by serve_ref_ok before it
 *     reaches rw_resolve, and everything after is the resolved id.
 *  3. A reply's size is bounded whatever the run: lanes give at most
 *     SERVE_EXACT_MAX single events (else per-bucket counts, at most
 *     SERVE_BUCKETS_MAX buckets), the log at most SERVE_LOG_MAX bytes (its
 *     tail), event lists at most SERVE_LIST_MAX entries.
 *  4. Bytes from the guest or a file (an exec's name, an error's words)
 *     become JSON strings only through api_bytes, so a reply is always
 *     valid UTF-8 and no lane or error is dropped for its bytes.
 *  5. Every number from a request or a manifest is range-checked before
 *     arithmetic: a step range's width is taken in 128 bits (from 0 to
 *     2^64 - 1 is a valid range), a manifest's counts are bounded on read
 *     (runinfo.h inv. 3), so no division by a wrapped 0.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serve.h"

#define SERVE_EXACT_MAX 3000
#define SERVE_BUCKETS_MAX 4096
#define SERVE_LOG_MAX (64 * 1024)
#define SERVE_LIST_MAX 2000
#define SERVE_LANES_MAX 512
#define SERVE_FILES_MAX 512

/* Tests only (tests/unit/serve_test.c): called with the resolved run of a
 * run/ route before it is read, on the request's thread. */
#ifndef SERVE_TEST_RUN_HOOK
#define SERVE_TEST_RUN_HOOK(id) ((void)0)
#endif

/* Bytes as a JSON string: UTF-8 as is; UTF-8 cut inside its last
 * character without that part; else each byte as U+00XX (inv. 4). */
static json_t *api_bytes(const void *p, size_t n)
{
    json_t *s = json_stringn(p, n);
    if (s)
        return s;
    for (size_t cut = 1; cut <= 3 && cut <= n; cut++) {
        unsigned char c = ((const unsigned char *)p)[n - cut];
        if (c < 0x80)
            break;       /* an ASCII byte: the damage is not a cut character */
        if (c >= 0xc0) { /* the lead byte of the last character */
            if ((s = json_stringn(p, n - cut)))
                return s;
            break;
        }
    }
    const unsigned char *b = p;
    char *u = malloc(2 * n + 1);
    SERVE_ASSERT(u);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (b[i] < 0x80) {
            u[k++] = (char)b[i];
        } else {
            u[k++] = (char)(0xc0 | (b[i] >> 6));
            u[k++] = (char)(0x80 | (b[i] & 0x3f));
        }
    }
    s = json_stringn(u, k);
    free(u);
    SERVE_ASSERT(s);
    return s;
}

void serve_reply_error(struct serve_reply *r, unsigned status, const char *fmt, ...)
{
    char msg[1200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    r->status = status;
    if (r->body)
        json_decref(r->body);
    /* msg may hold a file's or a child's bytes, cut at any byte (inv. 4) */
    r->body = json_pack("{s:o}", "error", api_bytes(msg, strlen(msg)));
}

int serve_ref_ok(const char *ref)
{
    size_t n = ref ? strlen(ref) : 0;
    if (n == 0 || n > 200 || strstr(ref, ".."))
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = ref[i];
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
              c == '@' || c == '~' || c == '_' || c == '.' || c == '-'))
            return 0;
    }
    return 1;
}

int serve_arg_u64(serve_arg_fn arg, void *ctx, const char *key, uint64_t dflt, uint64_t *out)
{
    const char *v = arg(ctx, key);
    if (!v || !*v) {
        *out = dflt;
        return 0;
    }
    char *end;
    errno = 0;
    unsigned long long x = strtoull(v, &end, 10);
    if (errno || *end || v[0] < '0' || v[0] > '9') /* no sign, no space, no wrap */
        return -1;
    *out = x;
    return 0;
}

/* Resolve ref into id. 0 or -1 with r set. */
static int api_resolve(rw_home *h, const char *ref, char id[RW_ID_MAX], struct serve_reply *r)
{
    struct rw_error err;
    if (!serve_ref_ok(ref)) {
        serve_reply_error(r, 400, "not a run reference");
        return -1;
    }
    if (rw_resolve(h, ref, id, &err) < 0) {
        serve_reply_error(r, 404, "%s", err.msg);
        return -1;
    }
    return 0;
}

static json_t *api_run_json(const struct rw_run_info *in)
{
    json_t *o = json_object();
    json_object_set_new(o, "id", api_bytes(in->id, strlen(in->id)));
    json_object_set_new(o, "outcome", api_bytes(in->outcome, strlen(in->outcome)));
    if (in->incomplete) {
        json_object_set_new(o, "incomplete", json_true());
        return o;
    }
    json_object_set_new(o, "name",
                        in->has_name ? api_bytes(in->name, strlen(in->name)) : json_null());
    json_object_set_new(o, "parent",
                        in->has_parent ? api_bytes(in->parent, strlen(in->parent)) : json_null());
    json_object_set_new(o, "fork_step", json_integer(in->fork_step));
    json_object_set_new(o, "created", json_integer(in->created));
    json_object_set_new(o, "exit_code", json_integer(in->exit_code));
    json_object_set_new(o, "steps", json_integer((json_int_t)in->steps));
    json_object_set_new(o, "events", json_integer((json_int_t)in->events));
    json_object_set_new(o, "virtual_ns", json_integer(in->virtual_ns));
    json_object_set_new(o, "seed", json_integer(in->seed));
    json_object_set_new(o, "command", api_bytes(in->command, strlen(in->command)));
    return o;
}

struct runs_ctx {
    rw_home *h;
    json_t *a;
};

/* The schedules of a run's perturbation segments (spec "perturb": [[schedule,
 * from, until, ...], ...]) and, for an inspection (a shell session), its
 * kind (spec "inspect": {"kind": ...}). */
static void run_spec_facts(rw_home *h, const char *id, json_t *o)
{
    struct rw_run_info in;
    struct rw_error err;
    if (rw_run_info(h, id, &in, &err) < 0)
        return;
    json_t *spec = in.spec_json ? json_loads(in.spec_json, 0, NULL) : NULL;
    json_t *sched = json_array();
    json_t *seg;
    size_t i;
    json_array_foreach(json_object_get(spec, "perturb"), i, seg)
    {
        json_t *n = json_array_get(seg, 0);
        if (json_is_integer(n))
            json_array_append(sched, n);
    }
    json_object_set_new(o, "schedules", sched);
    const char *kind = json_string_value(json_object_get(json_object_get(spec, "inspect"), "kind"));
    json_object_set_new(o, "session", kind ? api_bytes(kind, strlen(kind)) : json_null());
    json_decref(spec);
    rw_run_info_free(&in);
}

static int runs_cb(void *ctx, const struct rw_run_info *info, const struct rw_error *why)
{
    struct runs_ctx *c = ctx;
    if (!info) {
        json_array_append_new(
            c->a, json_pack("{s:o}", "unreadable", api_bytes(why->msg, strlen(why->msg))));
        return 0;
    }
    json_t *o = api_run_json(info);
    if (!info->incomplete)
        run_spec_facts(c->h, info->id, o);
    json_array_append_new(c->a, o);
    return 0;
}

/* A stored check, for the tree: shown under its schedule 0 run. */
static int checks_cb(void *ctx, const struct rw_check_info *c)
{
    json_array_append_new(
        ctx,
        json_pack("{s:s,s:s,s:I,s:I,s:I,s:I,s:I,s:b,s:b,s:I,s:s,s:s}", "id", c->id, "base", c->base,
                  "created", (json_int_t)c->created, "first", (json_int_t)c->first, "schedules",
                  (json_int_t)c->schedules, "tried", (json_int_t)c->tried, "failures",
                  (json_int_t)c->failures, "found", c->found, "narrowed", c->narrowed, "schedule",
                  (json_int_t)c->schedule, "failing", c->failing, "deciding", c->deciding));
    return 0;
}

static void api_runs(rw_home *h, struct serve_reply *r)
{
    struct rw_error err;
    json_t *a = json_array(), *checks = json_array();
    struct runs_ctx c = {h, a};
    if (rw_runs_list(h, NULL, runs_cb, &c, &err) < 0 ||
        rw_checks_list(h, checks_cb, checks, &err) < 0) {
        json_decref(a);
        json_decref(checks);
        serve_reply_error(r, 500, "%s", err.msg);
        return;
    }
    r->body = json_pack("{s:o,s:o}", "runs", a, "checks", checks);
}

static void api_run(rw_home *h, const char *id, struct serve_reply *r)
{
    struct rw_run_info in;
    struct rw_error err;
    if (rw_run_info(h, id, &in, &err) < 0) {
        serve_reply_error(r, 404, "%s", err.msg);
        return;
    }
    json_t *o = api_run_json(&in);
    json_t *spec = in.spec_json ? json_loads(in.spec_json, 0, NULL) : NULL;
    json_object_set_new(o, "spec", spec ? spec : json_null());
    rw_run_info_free(&in);
    r->body = o;
}

/* ---- summary: the lanes of a whole run and its notable events ---- */

struct lane {
    uint32_t pid, tid;
    uint64_t first, last, count;
    char name[64];
    char end[64];
    char node[17]; /* docs/faults.md: its process's node, or "" */
};

struct lanes_ctx;
static int lanes_cb(void *ctx, const struct rw_event *ev);

struct summary {
    struct lane lanes[SERVE_LANES_MAX];
    int n;
    json_t *marks;          /* exec, exit, signal, assert, mark: at most SERVE_LIST_MAX */
    struct lanes_ctx *view; /* the whole run's buckets, or NULL */
    uint64_t count, last_step;
};

static struct lane *lane_of(struct summary *s, uint32_t pid, uint32_t tid)
{
    for (int i = 0; i < s->n; i++)
        if (s->lanes[i].tid == tid && s->lanes[i].pid == pid)
            return &s->lanes[i];
    if (s->n == SERVE_LANES_MAX)
        return NULL;
    struct lane *l = &s->lanes[s->n++];
    memset(l, 0, sizeof *l);
    l->pid = pid;
    l->tid = tid;
    /* a thread takes its process's name until it execs */
    for (int i = 0; i < s->n - 1; i++)
        if (s->lanes[i].pid == pid) {
            memcpy(l->name, s->lanes[i].name, sizeof l->name);
            break;
        }
    return l;
}

static json_t *event_json(const struct rw_event *ev, int words)
{
    json_t *o =
        json_pack("{s:I,s:I,s:s,s:i,s:i}", "i", (json_int_t)ev->index, "step", (json_int_t)ev->step,
                  "kind", ev->kind_name, "pid", (int)ev->pid, "tid", (int)ev->tid);
    if (ev->node) /* docs/faults.md: the node of the event's process */
        json_object_set_new(o, "node", json_string(ev->node));
    if (words) {
        char line[600];
        rw_event_describe(ev, line, sizeof line);
        if (!strcmp(ev->kind_name, "signal")) {
            /* the signal's name, from the wait-status words of its number */
            char w[64];
            rw_wait_status_text(ev->aux & 0x7f, w, sizeof w);
            const char *nm = strstr(w, "SIG");
            if (nm) {
                size_t n = strcspn(nm, " ");
                size_t k = strlen(line);
                snprintf(line + k, sizeof line - k, " (%.*s)", (int)n, nm);
            }
        }
        json_object_set_new(o, "text", api_bytes(line, strlen(line)));
    }
    return o;
}

static int is_notable(const struct rw_event *ev)
{
    const char *k = ev->kind_name;
    return !strcmp(k, "exec") || !strcmp(k, "exit") || !strcmp(k, "signal") ||
           !strcmp(k, "assert") || !strcmp(k, "mark") || !strcmp(k, "fault");
}

static int summary_cb(void *ctx, const struct rw_event *ev)
{
    struct summary *s = ctx;
    s->count++;
    s->last_step = ev->step;
    if (s->view)
        lanes_cb(s->view, ev);
    if (!ev->pid && !ev->tid)
        return 0; /* kernel console and init messages: no lane */
    struct lane *l = lane_of(s, ev->pid, ev->tid);
    if (l) {
        if (!l->count)
            l->first = ev->step;
        l->last = ev->step;
        l->count++;
        if (ev->node && !l->node[0])
            snprintf(l->node, sizeof l->node, "%s", ev->node);
        if (!strcmp(ev->kind_name, "exec") && ev->payload_len) {
            /* payload: path NUL argv...: the name is the path's last part */
            size_t n = strnlen((const char *)ev->payload, ev->payload_len);
            const char *p = (const char *)ev->payload, *slash = memrchr(p, '/', n);
            if (slash) {
                n -= (size_t)(slash + 1 - p);
                p = slash + 1;
            }
            snprintf(l->name, sizeof l->name, "%.*s", (int)n, p);
        }
        if (!strcmp(ev->kind_name, "exit"))
            rw_wait_status_text(ev->aux, l->end, sizeof l->end);
    }
    if (is_notable(ev) && json_array_size(s->marks) < SERVE_LIST_MAX)
        json_array_append_new(s->marks, event_json(ev, 1));
    return 0;
}

/* ---- lanes: the events of [from, to] as single events or per-bucket counts ---- */

struct lanes_ctx {
    uint64_t from, to, nb;
    json_t *exact;   /* NULL once more than SERVE_EXACT_MAX */
    json_t *buckets; /* "pid/tid" -> {bucket: [count, kinds mask]} */
    uint64_t count;
};

static int lanes_cb(void *ctx, const struct rw_event *ev)
{
    struct lanes_ctx *c = ctx;
    if (ev->step < c->from || ev->step > c->to)
        return 0; /* a trace longer than its manifest says */
    c->count++;
    if (c->exact) {
        if (json_array_size(c->exact) < SERVE_EXACT_MAX) {
            json_array_append_new(c->exact, event_json(ev, 0));
        } else {
            json_decref(c->exact);
            c->exact = NULL;
        }
    }
    char key[32], bk[24];
    snprintf(key, sizeof key, "%u/%u", ev->pid, ev->tid);
    /* [from, to] may be the whole of uint64: its width + 1 is taken in 128
     * bits, never wrapped to 0 (inv. 5) */
    unsigned __int128 span = (unsigned __int128)(c->to - c->from) + 1;
    uint64_t b = (uint64_t)((unsigned __int128)(ev->step - c->from) * c->nb / span);
    SERVE_ASSERT(b < c->nb);
    snprintf(bk, sizeof bk, "%" PRIu64, b);
    json_t *lane = json_object_get(c->buckets, key);
    if (!lane) {
        lane = json_object();
        json_object_set_new(c->buckets, key, lane);
    }
    json_t *cell = json_object_get(lane, bk);
    if (!cell) {
        cell = json_pack("[i,i]", 0, 0);
        json_object_set_new(lane, bk, cell);
    }
    json_array_set_new(cell, 0, json_integer(json_integer_value(json_array_get(cell, 0)) + 1));
    json_array_set_new(cell, 1,
                       json_integer(json_integer_value(json_array_get(cell, 1)) |
                                    (1 << (ev->kind < 31 ? ev->kind : 31))));
    return 0;
}

static void api_lanes(rw_home *h, const char *id, serve_arg_fn arg, void *ctx,
                      struct serve_reply *r)
{
    struct lanes_ctx c = {0};
    if (serve_arg_u64(arg, ctx, "from", 0, &c.from) < 0 ||
        serve_arg_u64(arg, ctx, "to", 0, &c.to) < 0 ||
        serve_arg_u64(arg, ctx, "n", 1000, &c.nb) < 0 || c.to < c.from || c.nb == 0 ||
        c.nb > SERVE_BUCKETS_MAX) {
        serve_reply_error(r, 400, "lanes: from, to (from <= to) and n (1..%d) are numbers",
                          SERVE_BUCKETS_MAX);
        return;
    }
    if (c.to - c.from < c.nb - 1) /* fewer steps than buckets (inv. 5) */
        c.nb = c.to - c.from + 1;
    c.exact = json_array();
    c.buckets = json_object();
    struct rw_event_query q = RW_EVENTS_ALL;
    q.from = c.from;
    q.to = c.to;
    struct rw_error err;
    if (rw_events(h, id, &q, lanes_cb, &c, NULL, &err) < 0) {
        json_decref(c.exact);
        json_decref(c.buckets);
        serve_reply_error(r, 404, "%s", err.msg);
        return;
    }
    r->body = json_pack("{s:I,s:I,s:I,s:I,s:o,s:o}", "from", (json_int_t)c.from, "to",
                        (json_int_t)c.to, "n", (json_int_t)c.nb, "count", (json_int_t)c.count,
                        "buckets", c.buckets, "exact", c.exact ? c.exact : json_null());
}

/* The summary, and with n the whole run's lanes in n buckets from the same
 * pass over the trace (the page's first paint needs both). */
static void api_summary(rw_home *h, const char *id, serve_arg_fn arg, void *ctx,
                        struct serve_reply *r)
{
    uint64_t nb;
    if (serve_arg_u64(arg, ctx, "n", 0, &nb) < 0 || nb > SERVE_BUCKETS_MAX) {
        serve_reply_error(r, 400, "summary: n (0..%d) is a number", SERVE_BUCKETS_MAX);
        return;
    }
    struct summary *s = calloc(1, sizeof *s);
    SERVE_ASSERT(s);
    struct rw_error err;
    struct rw_event_query q = RW_EVENTS_ALL;
    struct rw_trace_status st;
    struct rw_run_info in;
    if (rw_run_info(h, id, &in, &err) < 0) {
        serve_reply_error(r, 404, "%s", err.msg);
        free(s);
        return;
    }
    struct lanes_ctx view = {.from = 0, .to = in.steps ? in.steps : 1, .nb = nb};
    if (nb) {
        if (view.to - view.from < view.nb - 1) /* inv. 5 */
            view.nb = view.to - view.from + 1;
        view.exact = json_array();
        view.buckets = json_object();
        s->view = &view;
    }
    s->marks = json_array();
    if (rw_events(h, id, &q, summary_cb, s, &st, &err) < 0) {
        serve_reply_error(r, 404, "%s", err.msg);
        json_decref(s->marks);
        json_decref(view.exact);
        json_decref(view.buckets);
        rw_run_info_free(&in);
        free(s);
        return;
    }
    json_t *lanes = json_array();
    for (int i = 0; i < s->n; i++) {
        struct lane *l = &s->lanes[i];
        json_t *o = json_pack("{s:i,s:i,s:I,s:I,s:I,s:o,s:s}", "pid", (int)l->pid, "tid",
                              (int)l->tid, "first", (json_int_t)l->first, "last",
                              (json_int_t)l->last, "count", (json_int_t)l->count, "name",
                              api_bytes(l->name, strlen(l->name)), "end", l->end);
        if (o && l->node[0])
            json_object_set_new(o, "node", json_string(l->node));
        json_array_append_new(lanes, o);
    }
    r->body = json_pack("{s:o,s:I,s:I,s:o,s:o,s:b}", "run", api_run_json(&in), "steps",
                        (json_int_t)(in.steps > s->last_step ? in.steps : s->last_step), "events",
                        (json_int_t)s->count, "lanes", lanes, "marks", s->marks, "torn", st.torn);
    if (nb)
        json_object_set_new(r->body, "view",
                            json_pack("{s:I,s:I,s:I,s:I,s:o,s:o}", "from", (json_int_t)view.from,
                                      "to", (json_int_t)view.to, "n", (json_int_t)view.nb, "count",
                                      (json_int_t)view.count, "buckets", view.buckets, "exact",
                                      view.exact ? view.exact : json_null()));
    rw_run_info_free(&in);
    free(s);
}

/* ---- events: described, in a step range ---- */

struct list_ctx {
    json_t *a;
    uint64_t limit;
    int more;
};

static int list_cb(void *ctx, const struct rw_event *ev)
{
    struct list_ctx *c = ctx;
    if (json_array_size(c->a) >= c->limit) {
        c->more = 1;
        return 1;
    }
    json_array_append_new(c->a, event_json(ev, 1));
    return 0;
}

static void api_events(rw_home *h, const char *id, serve_arg_fn arg, void *ctx,
                       struct serve_reply *r)
{
    struct rw_event_query q = RW_EVENTS_ALL;
    struct list_ctx c = {.a = NULL};
    if (serve_arg_u64(arg, ctx, "from", 0, &q.from) < 0 ||
        serve_arg_u64(arg, ctx, "to", UINT64_MAX, &q.to) < 0 ||
        serve_arg_u64(arg, ctx, "first", 0, &q.first_index) < 0 ||
        serve_arg_u64(arg, ctx, "last", UINT64_MAX, &q.last_index) < 0 ||
        serve_arg_u64(arg, ctx, "limit", 200, &c.limit) < 0 || c.limit > SERVE_LIST_MAX) {
        serve_reply_error(r, 400, "events: from, to, first, last, limit (<= %d) are numbers",
                          SERVE_LIST_MAX);
        return;
    }
    c.a = json_array();
    struct rw_error err;
    if (rw_events(h, id, &q, list_cb, &c, NULL, &err) < 0) {
        json_decref(c.a);
        serve_reply_error(r, 404, "%s", err.msg);
        return;
    }
    r->body = json_pack("{s:o,s:b}", "events", c.a, "more", c.more);
}

/* ---- nav: the step of the previous or next event (of one thread) ---- */

struct nav_ctx {
    uint64_t step;
    int next, have_tid;
    uint32_t tid;
    int found;
    uint64_t at;
};

static int nav_cb(void *ctx, const struct rw_event *ev)
{
    struct nav_ctx *c = ctx;
    if (c->have_tid && ev->tid != c->tid)
        return 0;
    if (c->next) {
        if (ev->step > c->step) {
            c->found = 1;
            c->at = ev->step;
            return 1;
        }
        return 0;
    }
    if (ev->step >= c->step)
        return 1;
    c->found = 1;
    c->at = ev->step;
    return 0;
}

static void api_nav(rw_home *h, const char *id, serve_arg_fn arg, void *ctx, struct serve_reply *r)
{
    struct nav_ctx c = {0};
    uint64_t tid;
    const char *dir = arg(ctx, "dir");
    if (serve_arg_u64(arg, ctx, "step", 0, &c.step) < 0 ||
        serve_arg_u64(arg, ctx, "tid", 0, &tid) < 0 || !dir ||
        (strcmp(dir, "next") && strcmp(dir, "prev")) || tid > UINT32_MAX) {
        serve_reply_error(r, 400, "nav: step, dir (next or prev), tid");
        return;
    }
    c.next = !strcmp(dir, "next");
    c.have_tid = arg(ctx, "tid") && *arg(ctx, "tid");
    c.tid = (uint32_t)tid;
    struct rw_event_query q = RW_EVENTS_ALL;
    if (c.next)
        q.from = c.step + 1;
    else
        q.to = c.step;
    struct rw_error err;
    if (rw_events(h, id, &q, nav_cb, &c, NULL, &err) < 0) {
        serve_reply_error(r, 404, "%s", err.msg);
        return;
    }
    r->body = c.found ? json_pack("{s:I}", "step", (json_int_t)c.at) : json_pack("{s:n}", "step");
}

/* ---- at: what the playhead shows ---- */

struct at_ctx {
    uint64_t step;
    json_t *here;                     /* events at step */
    struct rw_event last;             /* the last event before it (has_last), its payload */
    char last_kind[RW_KIND_NAME_MAX]; /* last's kind name if unknown */
    char last_node[17];               /* last's node, copied (ev->node lives in the callback) */
    uint8_t last_payload[4096];       /* copied (cut): described once, at the end */
    int has_last;
    json_t *files; /* path -> {state, step} */
    char *log;
    size_t log_len; /* bytes kept (a ring of the last SERVE_LOG_MAX) */
    uint64_t log_total;
};

/* The log's last SERVE_LOG_MAX bytes, kept in a ring: log_total (mod
 * SERVE_LOG_MAX) is where the next byte goes. */
static void log_add(struct at_ctx *c, const uint8_t *p, size_t n)
{
    if (n > SERVE_LOG_MAX) {
        c->log_total += n - SERVE_LOG_MAX;
        p += n - SERVE_LOG_MAX;
        n = SERVE_LOG_MAX;
    }
    size_t at = (size_t)(c->log_total % SERVE_LOG_MAX);
    size_t first = n < SERVE_LOG_MAX - at ? n : SERVE_LOG_MAX - at;
    memcpy(c->log + at, p, first);
    memcpy(c->log, p + first, n - first);
    c->log_total += n;
    c->log_len = c->log_total < SERVE_LOG_MAX ? (size_t)c->log_total : SERVE_LOG_MAX;
    SERVE_ASSERT(c->log_len <= SERVE_LOG_MAX);
}

/* The ring in order into out (c->log_len bytes). */
static void log_linear(const struct at_ctx *c, char *out)
{
    size_t at = (size_t)(c->log_total % SERVE_LOG_MAX);
    if (c->log_total <= SERVE_LOG_MAX) {
        memcpy(out, c->log, c->log_len);
        return;
    }
    memcpy(out, c->log + at, SERVE_LOG_MAX - at);
    memcpy(out + (SERVE_LOG_MAX - at), c->log, at);
}

/* A tail of a log that was cut may start inside a UTF-8 character. */
static size_t utf8_skip_cont(const char *p, size_t n)
{
    size_t i = 0;
    while (i < n && i < 3 && ((unsigned char)p[i] & 0xc0) == 0x80)
        i++;
    return i;
}

static void file_set(struct at_ctx *c, const uint8_t *p, size_t n, const char *state, uint64_t step)
{
    n = strnlen((const char *)p, n);
    if (n == 0 || n > 1024)
        return;
    json_t *key = api_bytes(p, n);
    const char *k = json_string_value(key);
    if (json_object_get(c->files, k) || json_object_size(c->files) < SERVE_FILES_MAX)
        json_object_set_new(c->files, k,
                            json_pack("{s:s,s:I}", "state", state, "step", (json_int_t)step));
    json_decref(key);
}

static int at_cb(void *ctx, const struct rw_event *ev)
{
    struct at_ctx *c = ctx;
    const char *k = ev->kind_name;
    if (ev->step == c->step) {
        if (json_array_size(c->here) < 64)
            json_array_append_new(c->here, event_json(ev, 1));
    } else {
        c->last = *ev;
        c->last.payload_len =
            ev->payload_len < sizeof c->last_payload ? ev->payload_len : sizeof c->last_payload;
        memcpy(c->last_payload, ev->payload, c->last.payload_len);
        c->last.payload = c->last_payload;
        c->last.kind_name = rw_event_kind_name(ev->kind, c->last_kind); /* kept, unlike ev's */
        snprintf(c->last_node, sizeof c->last_node, "%s", ev->node ? ev->node : "");
        c->last.node = ev->node ? c->last_node : NULL;
        c->has_last = 1;
    }
    if (!strcmp(k, "output"))
        log_add(c, ev->payload, ev->payload_len);
    else if (!strcmp(k, "open") && (ev->aux & 03)) /* O_WRONLY or O_RDWR */
        file_set(c, ev->payload, ev->payload_len, "written", ev->step);
    else if (!strcmp(k, "unlink"))
        file_set(c, ev->payload, ev->payload_len, "removed", ev->step);
    else if (!strcmp(k, "rename") && ev->payload_len) {
        size_t n = strnlen((const char *)ev->payload, ev->payload_len);
        file_set(c, ev->payload, n, "renamed", ev->step);
        if (n + 1 < ev->payload_len)
            file_set(c, ev->payload + n + 1, ev->payload_len - n - 1, "written", ev->step);
    }
    return 0;
}

static int ps_cb(void *ctx, const struct rw_proc *p)
{
    json_t *o =
        json_pack("{s:i,s:i,s:i,s:i,s:o}", "pid", (int)p->pid, "ppid", (int)p->ppid, "threads",
                  p->threads, "depth", p->depth, "argv", api_bytes(p->argv, strlen(p->argv)));
    if (o && p->node[0]) /* docs/faults.md */
        json_object_set_new(o, "node", json_string(p->node));
    json_array_append_new(ctx, o);
    return 0;
}

static void api_at(rw_home *h, const char *id, serve_arg_fn arg, void *ctx, struct serve_reply *r)
{
    struct at_ctx c = {0};
    if (serve_arg_u64(arg, ctx, "step", 0, &c.step) < 0) {
        serve_reply_error(r, 400, "at: step is a number");
        return;
    }
    c.here = json_array();
    c.files = json_object();
    c.log = malloc(SERVE_LOG_MAX);
    SERVE_ASSERT(c.log);
    json_t *ps = json_array();
    struct rw_event_query q = RW_EVENTS_ALL;
    q.to = c.step;
    struct rw_error err;
    if (rw_events(h, id, &q, at_cb, &c, NULL, &err) < 0 ||
        rw_ps(h, id, c.step, ps_cb, ps, NULL, &err) < 0) {
        json_decref(c.here);
        json_decref(c.files);
        json_decref(ps);
        free(c.log);
        serve_reply_error(r, 404, "%s", err.msg);
        return;
    }
    char *lin = malloc(SERVE_LOG_MAX);
    SERVE_ASSERT(lin);
    log_linear(&c, lin);
    size_t skip = c.log_total > SERVE_LOG_MAX ? utf8_skip_cont(lin, c.log_len) : 0;
    r->body = json_pack("{s:I,s:o,s:o,s:o,s:I,s:o,s:o}", "step", (json_int_t)c.step, "here", c.here,
                        "before", c.has_last ? event_json(&c.last, 1) : json_null(), "log",
                        api_bytes(lin + skip, c.log_len - skip), "log_total",
                        (json_int_t)c.log_total, "ps", ps, "files", c.files);
    free(lin);
    free(c.log);
}

/* ---- diff: where two runs part, in words ---- */

struct one_ctx {
    json_t *ev;
};

static int one_cb(void *ctx, const struct rw_event *ev)
{
    struct one_ctx *c = ctx;
    c->ev = event_json(ev, 1);
    return 1;
}

static json_t *event_at_index(rw_home *h, const char *id, uint64_t index)
{
    struct rw_event_query q = RW_EVENTS_ALL;
    q.first_index = q.last_index = index;
    struct one_ctx c = {0};
    struct rw_error err;
    if (rw_events(h, id, &q, one_cb, &c, NULL, &err) < 0)
        return json_null();
    return c.ev ? c.ev : json_null();
}

static void api_diff(rw_home *h, serve_arg_fn arg, void *ctx, struct serve_reply *r)
{
    char a[RW_ID_MAX], b[RW_ID_MAX];
    if (api_resolve(h, arg(ctx, "a"), a, r) < 0 || api_resolve(h, arg(ctx, "b"), b, r) < 0)
        return;
    struct rw_diff d;
    struct rw_error err;
    if (rw_diff(h, a, b, &d, &err) < 0) {
        serve_reply_error(r, 404, "%s", err.msg);
        return;
    }
    char words[800];
    json_t *ea = json_null(), *eb = json_null();
    if (d.identical) {
        snprintf(words, sizeof words, "The runs are identical: %" PRIu64 " equal events.",
                 d.common);
    } else {
        ea = event_at_index(h, a, d.event);
        eb = event_at_index(h, b, d.event);
        const char *ta = json_string_value(json_object_get(ea, "text"));
        const char *tb = json_string_value(json_object_get(eb, "text"));
        snprintf(words, sizeof words,
                 "The runs agree for %" PRIu64 " events and part at event %" PRIu64
                 ": %s at step %" PRIu64 " in %s, %s at step %" PRIu64 " in %s.",
                 d.common, d.event, ta ? ta : "(its trace has ended)", d.step_a, a,
                 tb ? tb : "(its trace has ended)", d.step_b, b);
    }
    r->body = json_pack("{s:s,s:s,s:b,s:I,s:I,s:I,s:I,s:o,s:o,s:s}", "a", a, "b", b, "identical",
                        d.identical, "common", (json_int_t)d.common, "event", (json_int_t)d.event,
                        "step_a", (json_int_t)d.step_a, "step_b", (json_int_t)d.step_b, "event_a",
                        ea, "event_b", eb, "words", words);
}

void serve_api_get(rw_home *h, const char *path, serve_arg_fn arg, void *ctx, struct serve_reply *r)
{
    r->status = 200;
    r->body = NULL;
    if (!strcmp(path, "ping")) { /* no lock: invariant 1 */
        r->body = json_pack("{s:b}", "ok", 1);
    } else if (!strcmp(path, "runs")) {
        api_runs(h, r);
    } else if (!strcmp(path, "diff")) {
        api_diff(h, arg, ctx, r);
    } else if (!strncmp(path, "run/", 4)) {
        char ref[256], id[RW_ID_MAX];
        const char *rest = path + 4, *slash = strchr(rest, '/');
        size_t n = slash ? (size_t)(slash - rest) : strlen(rest);
        const char *what = slash ? slash + 1 : "";
        if (n >= sizeof ref) {
            serve_reply_error(r, 400, "not a run reference");
        } else {
            memcpy(ref, rest, n);
            ref[n] = 0;
            if (api_resolve(h, ref, id, r) == 0) {
                SERVE_TEST_RUN_HOOK(id);
                if (!*what)
                    api_run(h, id, r);
                else if (!strcmp(what, "summary"))
                    api_summary(h, id, arg, ctx, r);
                else if (!strcmp(what, "lanes"))
                    api_lanes(h, id, arg, ctx, r);
                else if (!strcmp(what, "events"))
                    api_events(h, id, arg, ctx, r);
                else if (!strcmp(what, "nav"))
                    api_nav(h, id, arg, ctx, r);
                else if (!strcmp(what, "at"))
                    api_at(h, id, arg, ctx, r);
                else
                    serve_reply_error(r, 404, "no such route");
            }
        }
    } else {
        serve_reply_error(r, 404, "no such route");
    }
    SERVE_ASSERT(r->body);
}
