/* runinfo: see runinfo.h. */
#include "home/runinfo.h"
#include "home/runnames.h"

#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/apierr.h"
#include "util/homepath.h"
#include "home/runref.h"
#include "util/check.h"

static void str(json_t *o, const char *key, char *out, size_t n)
{
    const char *v = json_string_value(json_object_get(o, key));
    snprintf(out, n, "%s", v ? v : "");
}

static int64_t num(json_t *o, const char *key)
{
    return (int64_t)json_integer_value(json_object_get(o, key));
}

/* A count (steps, events, keyframes): a manifest is untrusted (an archive
 * wrote it), so a negative or huge value reads as 0, never as a number
 * that wraps a reader's arithmetic (docs/reliability.md, "Numbers"). */
static uint64_t count(json_t *o, const char *key)
{
    int64_t v = num(o, key);
    return v < 0 || (uint64_t)v > RUNINFO_COUNT_MAX ? 0 : (uint64_t)v;
}

/* The spec's argv joined by spaces, cut at n - 1 bytes. */
static void argv_text(json_t *spec, char *out, size_t n)
{
    json_t *a = json_object_get(spec, "argv");
    size_t i, o = 0;
    json_t *v;
    out[0] = 0;
    json_array_foreach(a, i, v)
    {
        o += (size_t)snprintf(out + o, o < n ? n - o : 0, "%s%s", i ? " " : "",
                              json_string_value(v) ? json_string_value(v) : "");
        if (o >= n)
            break;
    }
}

static void fill(json_t *m, struct rw_run_info *in)
{
    const char *nm = json_string_value(json_object_get(m, "name"));
    const char *par = json_string_value(json_object_get(m, "parent"));
    in->has_name = nm != NULL;
    snprintf(in->name, sizeof(in->name), "%s", nm ? nm : "");
    json_t *names = runnames_of(m); /* every name given keeps resolving */
    size_t k, at = 0;
    json_t *x;
    in->names[0] = 0;
    json_array_foreach(names, k, x)
    {
        int w = snprintf(in->names + at, sizeof(in->names) - at, "%s\n", json_string_value(x));
        if (w < 0 || (size_t)w >= sizeof(in->names) - at) {
            in->names[at] = 0; /* only whole names */
            break;
        }
        at += (size_t)w;
    }
    json_decref(names);
    in->has_parent = par != NULL;
    snprintf(in->parent, sizeof(in->parent), "%s", par ? par : "");
    json_t *fs = json_object_get(m, "fork_step");
    in->has_fork_step = fs != NULL;
    in->fork_step = (int64_t)json_integer_value(fs ? fs : json_object_get(m, "from_step"));
    in->created = num(m, "created");
    str(m, "outcome", in->outcome, sizeof(in->outcome));
    in->exit_code = num(m, "exit_code");
    in->steps = count(m, "steps");
    in->events = count(m, "events");
    in->virtual_ns = num(m, "virtual_ns");
    in->keyframes = count(m, "keyframes");
    in->keyframe_every = count(m, "keyframe_every");
    str(m, "trace_hash", in->trace_hash, sizeof(in->trace_hash));
    str(m, "ram_hash", in->ram_hash, sizeof(in->ram_hash));
    json_t *spec = json_object_get(m, "spec");
    str(spec, "kernel", in->kernel, sizeof(in->kernel));
    str(spec, "init", in->init, sizeof(in->init));
    str(spec, "image", in->image, sizeof(in->image));
    str(spec, "cpu", in->cpu, sizeof(in->cpu));
    str(spec, "cwd", in->cwd, sizeof(in->cwd));
    in->mem_mib = num(spec, "mem_mib");
    in->seed = num(spec, "seed");
    in->epoch = num(spec, "epoch");
    in->quantum_ns = num(spec, "quantum_ns");
    argv_text(spec, in->command, sizeof(in->command));
}

int runinfo_load(const char *home, const char *dir, const char *ref, int raw,
                 struct rw_run_info *info, struct rw_error *err)
{
    RW_ASSERT(home && dir && ref && info);
    memset(info, 0, sizeof(*info));
    char path[PATH_MAX + 64];
    if (strlen(dir) >= sizeof(info->dir) ||
        home_path(info->path, sizeof(info->path), home, HOME_RUNS, dir, NULL) < 0 ||
        home_path(path, sizeof(path), home, HOME_RUNS, dir, "manifest.json") < 0)
        return apierr_set(err, RW_EUSAGE, "run %s: bad run directory name", ref);
    snprintf(info->dir, sizeof(info->dir), "%s", dir);
    snprintf(info->id, sizeof(info->id), "%s", dir);
    json_error_t je;
    je.text[0] = 0;
    json_t *m = json_load_file(path, 0, &je);
    if (!m || !json_is_object(m)) {
        json_decref(m);
        return apierr_set(err, RW_EINTERNAL, "run %s: manifest %s is corrupt (%s)", ref, path,
                          je.text);
    }
    fill(m, info);
    if (raw) {
        info->manifest_json = json_dumps(m, JSON_SORT_KEYS | JSON_INDENT(2));
        /* a spec that is not an object (a file on disk is untrusted) is shown
         * as absent: json_dumps refuses a bare value, which is no lack of memory */
        json_t *spec = json_object_get(m, "spec");
        if (!json_is_object(spec))
            spec = NULL;
        info->spec_json = spec ? json_dumps(spec, JSON_SORT_KEYS | JSON_COMPACT) : NULL;
        if (!info->manifest_json || (spec && !info->spec_json)) {
            json_decref(m);
            rw_run_info_free(info);
            return apierr_set(err, RW_EINTERNAL, "run %s: out of memory", ref);
        }
    }
    json_decref(m);
    return 0;
}

int runinfo_resolve(const char *home, const char *ref, char dirname[RW_ID_MAX],
                    struct rw_error *err)
{
    char dir[PATH_MAX], msg[512];
    if (runref_resolve(home, ref, dir, sizeof(dir), msg, sizeof(msg)) < 0)
        return apierr_set(err, RW_EUSAGE, "%s", msg);
    const char *base = strrchr(dir, '/');
    base = base ? base + 1 : dir;
    if (strlen(base) >= RW_ID_MAX || !home_safe_name(base))
        return apierr_set(err, RW_EINTERNAL, "run directory name too long: %s", base);
    memcpy(dirname, base, strlen(base) + 1);
    return 0;
}

int rw_run_info(rw_home *h, const char *ref, struct rw_run_info *info, struct rw_error *err)
{
    char dir[RW_ID_MAX];
    memset(info, 0, sizeof(*info));
    if (runinfo_resolve(rw_home_path(h), ref, dir, err) < 0)
        return -1;
    return runinfo_load(rw_home_path(h), dir, ref, 1, info, err);
}

void rw_run_info_free(struct rw_run_info *info)
{
    if (!info)
        return;
    free(info->manifest_json);
    free(info->spec_json);
    info->manifest_json = info->spec_json = NULL;
}

int rw_resolve(rw_home *h, const char *ref, char id[RW_ID_MAX], struct rw_error *err)
{
    RW_ASSERT(h && ref && id);
    return runinfo_resolve(rw_home_path(h), ref, id, err);
}
