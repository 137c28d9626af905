/*
 * collect: the files a run kept with --collect PATH (docs/nix.md), as
 * rw_collect_list and rw_collect_read in include/rewind.h.
 *
 * rewind-init reports PATH after the job as marks in the trace (the format
 * is at serve_collect in guest/init/init.c). On first use the marks are
 * read back, each file's bytes are cut into 4 KiB pages put in the page
 * store (so a file two runs share costs nothing twice), and
 * runs/<id>/collect.json names them; gc keeps those pages alive
 * (src/home/rungc.c).
 *
 * Invariants:
 *  1. The guest is untrusted: a relative path with "..", a leading '/', an
 *     empty component or a control byte is dropped; a file's content is at
 *     most COLLECT_FILE_MAX bytes, all of them at most COLLECT_TOTAL_MAX,
 *     and the entries at most COLLECT_ENTRIES_MAX.
 *  2. collect.json is written once, whole (temp file, fsync, rename), after
 *     its pages are synced, under the home lock (shared), so gc never sees
 *     it name a page the store does not hold.
 *  3. A page read back is verified by the store (store_get re-hashes it), and
 *     a file read back must have the SHA-256 collect.json names.
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/apierr.h"
#include "home/homelock.h"
#include "util/homepath.h"
#include "rewind.h"
#include "store/store.h"
#include "trace/trace.h"
#include "util/check.h"
#include "util/hash.h"

#define COLLECT_FILE_MAX (256ull << 20)
#define COLLECT_TOTAL_MAX (1ull << 30)
#define COLLECT_ENTRIES_MAX 100000
#define PAGE 4096

#define TAG_HEAD "rewind-init:collect\n"
#define TAG_DATA "rewind-init:collect-data\n"
#define TAG_END "rewind-init:collect-end\n"

struct centry {
    struct rw_collected info;
    unsigned char *data;
    size_t len, cap;
    int dropped; /* invariant 1 */
};

struct cset {
    struct centry *e;
    size_t n, cap;
    uint64_t total;
    char status[256];
    int ended;
};

static int has_tag(const struct trace_entry *t, const char *tag)
{
    size_t l = strlen(tag);
    return t->rec.kind == REWIND_REC_MARK && t->payload_len >= l && !memcmp(t->payload, tag, l);
}

/* Invariant 1: a relative path that stays inside PATH. */
static int rel_ok(const char *p)
{
    if (!strcmp(p, "."))
        return 1;
    if (!*p || *p == '/')
        return 0;
    for (const char *s = p; *s; s++)
        if ((unsigned char)*s < 32 || *s == 127)
            return 0;
    const char *c = p;
    while (*c) {
        const char *e = strchr(c, '/');
        size_t l = e ? (size_t)(e - c) : strlen(c);
        if (!l || (l == 1 && c[0] == '.') || (l == 2 && c[0] == '.' && c[1] == '.'))
            return 0;
        c += l + (e ? 1 : 0);
        if (e && !*c)
            return 0;
    }
    return 1;
}

static int add_head(struct cset *s, const unsigned char *p, size_t n)
{
    char line[1200];
    if (n >= sizeof(line) || s->n >= COLLECT_ENTRIES_MAX)
        return 0;
    memcpy(line, p, n);
    line[n] = 0;
    char t;
    unsigned mode;
    unsigned long long size;
    int off = 0;
    if (sscanf(line, "%c %o %llu %n", &t, &mode, &size, &off) != 3 || !off ||
        (t != 'f' && t != 'd' && t != 'l'))
        return 0;
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 64;
        struct centry *e = realloc(s->e, cap * sizeof(*e));
        if (!e)
            return -1;
        s->e = e;
        s->cap = cap;
    }
    struct centry *e = &s->e[s->n++];
    memset(e, 0, sizeof(*e));
    e->info.type = t;
    e->info.mode = mode & 07777;
    e->info.size = size;
    snprintf(e->info.path, sizeof(e->info.path), "%s", line + off);
    e->dropped = !rel_ok(e->info.path) || strlen(line + off) >= sizeof(e->info.path);
    return 0;
}

static int add_data(struct cset *s, const unsigned char *p, size_t n)
{
    if (!s->n)
        return 0;
    struct centry *e = &s->e[s->n - 1];
    if (e->info.type == 'd' || e->dropped)
        return 0;
    if (e->len + n > COLLECT_FILE_MAX || s->total + n > COLLECT_TOTAL_MAX) {
        e->dropped = 1; /* invariant 1 */
        snprintf(s->status, sizeof(s->status), "too large");
        return 0;
    }
    if (e->len + n > e->cap) {
        size_t cap = e->cap ? e->cap : 4096;
        while (cap < e->len + n)
            cap *= 2;
        unsigned char *d = realloc(e->data, cap);
        if (!d)
            return -1;
        e->data = d;
        e->cap = cap;
    }
    memcpy(e->data + e->len, p, n);
    e->len += n;
    s->total += n;
    return 0;
}

static void cset_free(struct cset *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->e[i].data);
    free(s->e);
}

static int by_path(const void *a, const void *b)
{
    return strcmp(((const struct centry *)a)->info.path, ((const struct centry *)b)->info.path);
}

/* Read the collect marks of the trace at path into s. 1: the run collected,
 * 0: it has no collect marks, -1: error (err set). */
static int read_marks(const char *path, struct cset *s, struct rw_error *err)
{
    struct trace_reader r;
    if (trace_open_read(&r, path) != 0)
        return apierr_set(err, RW_EUSAGE, "cannot read the trace %s", path);
    struct trace_entry t;
    int any = 0, rc = 0;
    while (rc == 0 && trace_next(&r, &t) == 1) {
        if (has_tag(&t, TAG_HEAD)) {
            any = 1;
            rc = add_head(s, t.payload + strlen(TAG_HEAD), t.payload_len - strlen(TAG_HEAD));
        } else if (has_tag(&t, TAG_DATA)) {
            rc = add_data(s, t.payload + strlen(TAG_DATA), t.payload_len - strlen(TAG_DATA));
        } else if (has_tag(&t, TAG_END)) {
            any = 1;
            size_t l = t.payload_len - strlen(TAG_END);
            if (l >= sizeof(s->status))
                l = sizeof(s->status) - 1;
            if (!s->status[0] || !strcmp(s->status, "ok")) {
                memcpy(s->status, t.payload + strlen(TAG_END), l);
                s->status[l] = 0;
                for (size_t i = 0; i < l; i++)
                    if ((unsigned char)s->status[i] < 32)
                        s->status[i] = ' ';
            }
            s->ended = 1;
        }
    }
    trace_close_read(&r);
    if (rc < 0)
        return apierr_set(err, RW_EINTERNAL, "out of memory reading the collected files");
    if (any && !s->ended)
        snprintf(s->status, sizeof(s->status), "the run ended before its files were collected");
    return any;
}

static int write_json(const char *path, json_t *o)
{
    char tmp[PATH_MAX];
    if (snprintf(tmp, sizeof(tmp), "%s.%ld.tmp", path, (long)getpid()) >= (int)sizeof(tmp))
        return -1;
    if (json_dump_file(o, tmp, JSON_INDENT(1) | JSON_SORT_KEYS) != 0)
        return -1;
    int fd = open(tmp, O_RDONLY);
    if (fd < 0 || fsync(fd) != 0) {
        if (fd >= 0)
            close(fd);
        unlink(tmp);
        return -1;
    }
    close(fd);
    if (rename(tmp, path) != 0) {
        unlink(tmp);
        return -1;
    }
    return 0;
}

/* Build runs/<id>/collect.json from the trace (invariant 2). */
static int build(rw_home *h, const char *id, const char *jpath, struct rw_error *err)
{
    const char *home = rw_home_path(h);
    char tpath[PATH_MAX], spath[PATH_MAX], why[300];
    if (home_path(tpath, sizeof(tpath), home, HOME_RUNS, id, "trace") < 0 ||
        home_path(spath, sizeof(spath), home, HOME_STORE, NULL, NULL) < 0)
        return apierr_set(err, RW_EUSAGE, "run %s: path too long", id);
    struct cset s;
    memset(&s, 0, sizeof(s));
    int any = read_marks(tpath, &s, err);
    if (any <= 0) {
        cset_free(&s);
        return any < 0 ? -1
                       : apierr_set(err, RW_EUSAGE,
                                    "run %s collected no files (run it with --collect PATH)", id);
    }
    qsort(s.e, s.n, sizeof(*s.e), by_path);
    int lock = homelock_take(home, 0, 1, why, sizeof(why));
    if (lock < 0) {
        cset_free(&s);
        return apierr_set(err, RW_EINTERNAL, "%s", why);
    }
    struct store *st = NULL;
    int rc = -1;
    json_t *files = json_array();
    unsigned char *page = malloc(PAGE);
    if (!page || store_open(spath, &st, why, sizeof(why)) < 0) {
        apierr_set(err, RW_EINTERNAL, "%s", page ? why : "out of memory");
        goto out;
    }
    for (size_t i = 0; i < s.n; i++) {
        struct centry *e = &s.e[i];
        if (e->dropped || (i && !strcmp(e->info.path, s.e[i - 1].info.path)))
            continue;
        json_t *f = json_object();
        json_t *pages = json_array();
        hash256 hh;
        hash_buf(e->data ? (const void *)e->data : "", e->len, &hh);
        char hex[65];
        hash_hex(&hh, hex);
        for (size_t off = 0; e->info.type != 'd' && off < e->len; off += PAGE) {
            size_t k = e->len - off < PAGE ? e->len - off : PAGE;
            memset(page, 0, PAGE);
            memcpy(page, e->data + off, k);
            hash256 ph;
            char phex[65];
            if (store_put(st, page, &ph) < 0) {
                json_decref(f);
                json_decref(pages);
                apierr_set(err, RW_EINTERNAL, "cannot put a page in the store: %s",
                           strerror(errno));
                goto out;
            }
            hash_hex(&ph, phex);
            json_array_append_new(pages, json_string(phex));
        }
        char type[2] = {e->info.type, 0};
        json_object_set_new(f, "path", json_string(e->info.path));
        json_object_set_new(f, "type", json_string(type));
        json_object_set_new(f, "mode", json_integer(e->info.mode));
        json_object_set_new(f, "size", json_integer((json_int_t)e->len));
        json_object_set_new(f, "sha256", json_string(hex));
        json_object_set_new(f, "pages", pages);
        json_array_append_new(files, f);
    }
    if (store_sync(st) < 0) {
        apierr_set(err, RW_EINTERNAL, "cannot sync the page store");
        goto out;
    }
    json_t *o = json_object();
    json_object_set_new(o, "version", json_integer(1));
    json_object_set_new(o, "status", json_string(s.status[0] ? s.status : "ok"));
    json_object_set(o, "files", files);
    int w = write_json(jpath, o);
    json_decref(o);
    if (w < 0) {
        apierr_set(err, RW_EINTERNAL, "cannot write %s: %s", jpath, strerror(errno));
        goto out;
    }
    rc = 0;
out:
    json_decref(files);
    free(page);
    store_close(st);
    homelock_release(lock);
    cset_free(&s);
    return rc;
}

/* collect.json of run id, built if missing; a new reference or NULL. */
static json_t *load(rw_home *h, const char *id, struct rw_error *err)
{
    char jpath[PATH_MAX];
    if (home_path(jpath, sizeof(jpath), rw_home_path(h), HOME_RUNS, id, "collect.json") < 0) {
        apierr_set(err, RW_EUSAGE, "run %s: path too long", id);
        return NULL;
    }
    if (access(jpath, F_OK) != 0 && build(h, id, jpath, err) < 0)
        return NULL;
    json_error_t je;
    json_t *o = json_load_file(jpath, 0, &je);
    if (!json_is_object(o) || !json_is_array(json_object_get(o, "files"))) {
        json_decref(o);
        apierr_set(err, RW_EINTERNAL, "run %s: %s is corrupt", id, jpath);
        return NULL;
    }
    return o;
}

static int info_of(json_t *f, struct rw_collected *c)
{
    const char *p = json_string_value(json_object_get(f, "path"));
    const char *t = json_string_value(json_object_get(f, "type"));
    const char *x = json_string_value(json_object_get(f, "sha256"));
    if (!p || !t || !x || strlen(p) >= sizeof(c->path) || strlen(x) != 64 || !rel_ok(p) ||
        (strcmp(t, "f") && strcmp(t, "d") && strcmp(t, "l")))
        return -1;
    memset(c, 0, sizeof(*c));
    snprintf(c->path, sizeof(c->path), "%s", p);
    c->type = t[0];
    c->mode = (unsigned)json_integer_value(json_object_get(f, "mode")) & 07777;
    c->size = (uint64_t)json_integer_value(json_object_get(f, "size"));
    memcpy(c->sha256, x, 65);
    return 0;
}

int rw_collect_list(rw_home *h, const char *id, struct rw_collected **out, size_t *n, char *status,
                    size_t statuslen, struct rw_error *err)
{
    RW_ASSERT(h && id && out && n);
    *out = NULL;
    *n = 0;
    json_t *o = load(h, id, err);
    if (!o)
        return -1;
    json_t *files = json_object_get(o, "files");
    size_t cnt = json_array_size(files), i;
    struct rw_collected *v = calloc(cnt ? cnt : 1, sizeof(*v));
    if (!v) {
        json_decref(o);
        return apierr_set(err, RW_EINTERNAL, "out of memory");
    }
    json_t *f;
    json_array_foreach(files, i, f)
    {
        if (info_of(f, &v[i]) < 0) {
            free(v);
            json_decref(o);
            return apierr_set(err, RW_EINTERNAL, "run %s: collect.json is corrupt", id);
        }
    }
    if (status && statuslen) {
        const char *st = json_string_value(json_object_get(o, "status"));
        snprintf(status, statuslen, "%s", st ? st : "?");
    }
    json_decref(o);
    *out = v;
    *n = cnt;
    return 0;
}

static int hex_to_hash(const char *x, hash256 *h)
{
    if (!x || strlen(x) != 64)
        return -1;
    for (int i = 0; i < 32; i++) {
        unsigned v;
        if (sscanf(x + 2 * i, "%2x", &v) != 1)
            return -1;
        h->b[i] = (unsigned char)v;
    }
    return 0;
}

int rw_collect_read(rw_home *h, const char *id, const char *path, void **data, size_t *len,
                    struct rw_error *err)
{
    RW_ASSERT(h && id && path && data && len);
    *data = NULL;
    *len = 0;
    json_t *o = load(h, id, err);
    if (!o)
        return -1;
    json_t *files = json_object_get(o, "files"), *f, *found = NULL;
    size_t i;
    json_array_foreach(files, i, f)
    {
        const char *p = json_string_value(json_object_get(f, "path"));
        if (p && !strcmp(p, path))
            found = f;
    }
    struct rw_collected c;
    if (!found || info_of(found, &c) < 0) {
        json_decref(o);
        return apierr_set(err, RW_EUSAGE, "run %s collected no file %s", id, path);
    }
    json_t *pages = json_object_get(found, "pages");
    size_t np = json_array_size(pages);
    if (c.size > COLLECT_FILE_MAX || np != (c.size + PAGE - 1) / PAGE) {
        json_decref(o);
        return apierr_set(err, RW_EINTERNAL, "run %s: collect.json is corrupt at %s", id, path);
    }
    char spath[PATH_MAX], why[300];
    struct store *st = NULL;
    unsigned char *buf = malloc(np * PAGE + 1);
    if (!buf || home_path(spath, sizeof(spath), rw_home_path(h), HOME_STORE, NULL, NULL) < 0 ||
        store_open(spath, &st, why, sizeof(why)) < 0) {
        free(buf);
        json_decref(o);
        return apierr_set(err, RW_EINTERNAL, "cannot open the page store");
    }
    int rc = 0;
    json_array_foreach(pages, i, f)
    {
        hash256 ph;
        if (hex_to_hash(json_string_value(f), &ph) < 0 || store_get(st, &ph, buf + i * PAGE) < 0) {
            rc = apierr_set(err, RW_EINTERNAL, "run %s: page %zu of %s is missing or corrupt", id,
                            i, path);
            break;
        }
    }
    store_close(st);
    hash256 want, got;
    if (rc == 0) { /* invariant 3 */
        hash_buf(buf, c.size, &got);
        if (hex_to_hash(c.sha256, &want) < 0 || memcmp(&want, &got, sizeof(got)))
            rc = apierr_set(err, RW_EINTERNAL, "run %s: %s does not have its SHA-256", id, path);
    }
    json_decref(o);
    if (rc < 0) {
        free(buf);
        return -1;
    }
    *data = buf;
    *len = c.size;
    return 0;
}

int rw_diff_range(const unsigned char *a, size_t la, const unsigned char *b, size_t lb,
                  uint64_t *first, uint64_t *last)
{
    size_t m = la < lb ? la : lb, i = 0;
    while (i < m && a[i] == b[i])
        i++;
    if (i == m && la == lb)
        return 0;
    *first = i;
    if (la != lb) {
        *last = (la > lb ? la : lb) - 1;
        return 1;
    }
    size_t j = la;
    while (j > i && a[j - 1] == b[j - 1])
        j--;
    *last = j - 1;
    return 1;
}
