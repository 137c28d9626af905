/*
 * spec: see spec.h. Canonical form: jansson with JSON_SORT_KEYS |
 * JSON_COMPACT, integers as JSON integers; a field added later must have a
 * default that leaves old ids unchanged or bump "version".
 */

#include "spec.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../util/hash.h"

static json_t *strv(char **v)
{
    json_t *a = json_array();
    for (size_t i = 0; v && v[i]; i++)
        json_array_append_new(a, json_string(v[i]));
    return a;
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
