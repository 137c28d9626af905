/*
 * spec: see spec.h. Canonical form: jansson with JSON_SORT_KEYS |
 * JSON_COMPACT, integers as JSON integers; a field added later must have a
 * default that leaves old ids unchanged or bump "version".
 */

#include "input/spec.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "input/faults.h"
#include "input/nodes.h"
#include "input/patch.h"
#include "util/check.h"
#include "util/hash.h"

static json_t *strv(char **v)
{
    json_t *a = json_array();
    for (size_t i = 0; v && v[i]; i++)
        json_array_append_new(a, json_string(v[i]));
    return a;
}

/* The spec's "faults": {"kinds": K, "rate": N}, and "disk_glob": GLOB only
 * when the kinds have disk or power (faults.h invariant 5), so a spec
 * without them keeps its id. */
static json_t *faults_to_json(const struct sched *p)
{
    char k[64];
    faults_format(p->fault_kinds, k, sizeof(k));
    json_t *f = json_pack("{s:s, s:I}", "kinds", k, "rate", (json_int_t)p->fault_rate);
    if (p->fault_kinds & FAULT_KINDS_GLOB) {
        RW_ASSERT(faults_disk_glob_valid(p->fault_disk_glob)); /* faults.h invariant 5 */
        json_object_set_new(f, "disk_glob", json_string(p->fault_disk_glob));
    }
    return f;
}

char *spec_to_json(const struct run_spec *s)
{
    json_t *o = json_object();
    json_object_set_new(o, "version", json_integer(1));
    json_object_set_new(o, "kernel", json_string(s->kernel_hash));
    json_object_set_new(o, "init", json_string(s->init_hash));
    json_object_set_new(o, "image", json_string(s->image_hash));
    json_object_set_new(o, "argv", strv(s->argv));
    json_object_set_new(o, "env", strv(s->env));
    json_object_set_new(o, "cwd", json_string(s->cwd));
    json_object_set_new(o, "mem_mib", json_integer((json_int_t)s->mem_mib));
    json_object_set_new(o, "seed", json_integer((json_int_t)s->seed));
    json_object_set_new(o, "schedule", json_integer((json_int_t)s->schedule));
    json_object_set_new(o, "quantum_ns", json_integer((json_int_t)s->quantum_ns));
    json_object_set_new(o, "epoch", json_integer((json_int_t)s->epoch_s));
    json_object_set_new(o, "cpu", json_string(s->cpu_model));
    if (s->perturb && s->perturb->n) { /* absent when unperturbed: old ids unchanged */
        json_t *a = json_array();
        for (unsigned i = 0; i < s->perturb->n; i++) {
            const struct sched_segment *g = &s->perturb->seg[i];
            json_t *e = json_array();
            json_array_append_new(e, json_integer((json_int_t)g->schedule));
            json_array_append_new(e, json_integer((json_int_t)g->from));
            json_array_append_new(e, g->until == UINT64_MAX ? json_null()
                                                            : json_integer((json_int_t)g->until));
            json_array_append_new(e, json_integer((json_int_t)g->origin));
            json_array_append_new(e, json_integer((json_int_t)g->horizon));
            if (g->span_from != g->from || g->span_until != g->until) {
                /* a narrowing probe's span (sched.h invariant 3); absent
                 * otherwise, so other runs keep their ids */
                json_array_append_new(e, json_integer((json_int_t)g->span_from));
                json_array_append_new(e, g->span_until == UINT64_MAX
                                             ? json_null()
                                             : json_integer((json_int_t)g->span_until));
            }
            json_array_append_new(a, e);
        }
        json_object_set_new(o, "perturb", a);
    }
    if (s->perturb && s->perturb->fault_kinds) /* docs/faults.md: absent without faults */
        json_object_set_new(o, "faults", faults_to_json(s->perturb));
    if (s->inspect_kind) {
        json_t *i = json_object();
        json_object_set_new(i, "kind", json_string(s->inspect_kind));
        json_object_set_new(i, "pid", json_integer((json_int_t)s->inspect_pid));
        json_object_set_new(i, "at", json_integer((json_int_t)s->inspect_at));
        json_object_set_new(i, "inputs", json_string(s->inputs_hash ? s->inputs_hash : ""));
        json_object_set_new(o, "inspect", i);
    }
    if (s->expect && s->expect[0]) /* absent when none: old ids unchanged */
        json_object_set_new(o, "expect", strv(s->expect));
    if (s->property)
        json_object_set_new(o, "property", json_string(s->property));
    if (s->dirorder_on) /* docs/nix.md: absent unless given, old ids unchanged */
        json_object_set_new(o, "dirorder", json_integer((json_int_t)s->dirorder));
    if (s->track_writes)
        json_object_set_new(o, "track_writes", json_string(s->track_writes));
    if (s->preempt_memory)
        json_object_set_new(o, "preempt", json_string("memory"));
    if (s->cpus > 1)
        json_object_set_new(o, "cpus", json_integer((json_int_t)s->cpus));
    if (s->collect)
        json_object_set_new(o, "collect", json_string(s->collect));
    if (s->nodes && s->nodes[0])
        json_object_set_new(o, "nodes", nodes_to_json(s->nodes, s->restarts));
    if (s->nix_drv)
        json_object_set_new(o, "nix_drv", json_string(s->nix_drv));
    if (s->patch) /* patch.h invariant 1: absent without writes */
        json_object_set_new(o, "gdb_writes", patch_to_json(s->patch));
    if (s->test_holes) /* absent when 0, so ordinary ids never depend on it */
        json_object_set_new(o, "test_holes", json_integer((json_int_t)s->test_holes));
    char *out = json_dumps(o, JSON_SORT_KEYS | JSON_COMPACT | JSON_ENSURE_ASCII);
    json_decref(o);
    return out;
}

void spec_id(const struct run_spec *s, char id[17])
{
    char *j = spec_to_json(s);
    hash256 h;
    hash_buf(j, strlen(j), &h);
    free(j);
    char hex[65];
    hash_hex(&h, hex);
    memcpy(id, hex, 16);
    id[16] = 0;
}

int64_t spec_default_epoch(int64_t t)
{
    return t - (t % 86400);
}

int spec_parse_epoch(const char *s, int64_t *out)
{
    char *end;
    long long v = strtoll(s, &end, 10);
    if (*s && !*end) {
        *out = v;
        return 0;
    }
    struct tm tm;
    memset(&tm, 0, sizeof(tm));
    const char *r = strptime(s, "%Y-%m-%d", &tm);
    if (!r)
        return -1;
    if (*r == 'T' || *r == ' ') {
        r = strptime(r + 1, "%H:%M:%S", &tm);
        if (!r)
            return -1;
    }
    if (*r)
        return -1;
    *out = (int64_t)timegm(&tm);
    return 0;
}

/* The spec's "faults": {"kinds": "kill,pause", "rate": N}, with
 * "disk_glob": GLOB exactly when the kinds have disk or power (faults.h
 * invariant 5), or none. */
static int spec_parse_faults(json_t *spec, struct sched *s)
{
    s->fault_kinds = s->fault_rate = 0;
    s->fault_disk_glob[0] = 0;
    json_t *f = json_object_get(spec, "faults");
    if (!f)
        return 0;
    const char *k = json_string_value(json_object_get(f, "kinds"));
    json_t *r = json_object_get(f, "rate"), *dg = json_object_get(f, "disk_glob");
    const char *g = json_string_value(dg);
    char why[160];
    uint32_t kinds;
    if (!json_is_object(f) || json_object_size(f) != (dg ? 3u : 2u) || !k || !json_is_integer(r) ||
        json_integer_value(r) < 1 || json_integer_value(r) > FAULT_RATE_MAX ||
        faults_parse(k, &kinds, why, sizeof(why)) < 0)
        return -1;
    char canon[64]; /* the spec's form only: another spelling would be another id */
    faults_format(kinds, canon, sizeof(canon));
    int glob = (kinds & FAULT_KINDS_GLOB) != 0;
    if (strcmp(canon, k) || glob != (dg != NULL) || (dg && (!g || !faults_disk_glob_valid(g))))
        return -1;
    s->fault_kinds = kinds; /* only settings read whole */
    s->fault_rate = (uint32_t)json_integer_value(r);
    if (glob)
        snprintf(s->fault_disk_glob, sizeof(s->fault_disk_glob), "%s", g);
    return 0;
}

int spec_parse_perturb(struct json_t *spec, struct sched *s)
{
    s->n = 0;
    if (spec_parse_faults(spec, s) < 0)
        return -1;
    json_t *a = json_object_get((json_t *)spec, "perturb");
    if (!a)
        return 0;
    if (!json_is_array(a) || json_array_size(a) > SCHED_MAX_SEGMENTS)
        return -1;
    size_t i;
    json_t *e;
    json_array_foreach(a, i, e)
    {
        json_t *u = json_array_get(e, 2), *su = json_array_get(e, 6);
        size_t len = json_array_size(e);
        if ((len != 5 && len != 7) || !json_is_integer(json_array_get(e, 0)) ||
            !json_is_integer(json_array_get(e, 1)) || !(json_is_integer(u) || json_is_null(u)) ||
            !json_is_integer(json_array_get(e, 3)) || !json_is_integer(json_array_get(e, 4)) ||
            (len == 7 && (!json_is_integer(json_array_get(e, 5)) ||
                          !(json_is_integer(su) || json_is_null(su)))))
            return -1;
        struct sched_segment *g = &s->seg[s->n++];
        g->schedule = (uint64_t)json_integer_value(json_array_get(e, 0));
        g->from = (uint64_t)json_integer_value(json_array_get(e, 1));
        g->until = json_is_null(u) ? UINT64_MAX : (uint64_t)json_integer_value(u);
        g->origin = (uint64_t)json_integer_value(json_array_get(e, 3));
        g->horizon = (uint64_t)json_integer_value(json_array_get(e, 4));
        g->span_from = len == 7 ? (uint64_t)json_integer_value(json_array_get(e, 5)) : g->from;
        g->span_until = len != 7           ? g->until
                        : json_is_null(su) ? UINT64_MAX
                                           : (uint64_t)json_integer_value(su);
        /* sched.h invariants 2 and 3 (a spec may come from an archive) */
        if (!sched_segment_valid(g) || (s->n > 1 && s->seg[s->n - 2].span_until > g->span_from))
            return -1;
    }
    return 0;
}
