/*
 * repro: K builds of one command with varied inputs (rw_repro in
 * include/rewind.h; `rewind repro`, docs/nix.md). Build k is the command's
 * run config with variation k: seed + k, directory order k (build 0 keeps
 * the filesystems' own order) and epoch + k * RW_VARY_EPOCH_STEP, each as
 * asked. The analysis of the builds is here too, so `rewind repro` only
 * parses and prints: where the builds collect and track writes
 * (rw_repro_paths), whether they ended alike (rw_repro_ended_alike), and
 * which collected entries differ from build 1's, where their bytes first
 * and last differ (rw_repro_compare); the CLI blames each first differing
 * byte with rw_blame (src/trace/writes.c).
 *
 * Invariants:
 *  1. Build k's spec differs from build 0's only by the variation asked
 *     for, so a difference between their outputs is due to it (or to a
 *     schedule the builds share).
 *  2. Every build is a stored run (rw_record), named by its spec; a build
 *     that cannot run stops the repro with its error.
 *  3. rw_repro_compare walks two path-sorted lists (rw_collect_list) once:
 *     every entry of either is either matched (same type and SHA-256) or
 *     reported once, as '+', '-' or '~'.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/apierr.h"
#include "rewind.h"
#include "util/check.h"

void rw_repro_config_init(struct rw_repro_config *c)
{
    memset(c, 0, sizeof(*c));
    rw_run_config_init(&c->run);
    c->builds = 2;
    c->vary_seed = c->vary_dirorder = c->vary_epoch = 1;
}

int rw_repro(rw_home *h, const struct rw_repro_config *c, struct rw_repro_build *b,
             struct rw_error *err)
{
    RW_ASSERT(h && c && b);
    if (c->builds < 2 || c->builds > RW_REPRO_MAX)
        return apierr_set(err, RW_EUSAGE, "--builds must be from 2 to %d", RW_REPRO_MAX);
    if (!c->run.collect)
        return apierr_set(err, RW_EUSAGE, "repro needs --collect PATH: the outputs to compare");
    for (uint64_t k = 0; k < c->builds; k++) {
        struct rw_run_config r = c->run; /* invariant 1 */
        if (c->vary_seed)
            r.seed += k;
        if (c->vary_dirorder && k) {
            r.dirorder_on = 1;
            r.dirorder = c->run.dirorder_on ? c->run.dirorder + k : k;
        }
        if (c->vary_epoch)
            r.epoch_s += (int64_t)k * RW_VARY_EPOCH_STEP;
        r.name = NULL;
        struct rw_repro_build *x = &b[k];
        memset(x, 0, sizeof(*x));
        x->seed = r.seed;
        x->dirorder_on = r.dirorder_on;
        x->dirorder = r.dirorder;
        x->epoch_s = r.epoch_s;
        if (c->progress) {
            char line[300];
            snprintf(line, sizeof(line),
                     "repro: build %llu of %llu (seed %llu, dirorder %lld, epoch %lld)",
                     (unsigned long long)k + 1, (unsigned long long)c->builds,
                     (unsigned long long)r.seed, r.dirorder_on ? (long long)r.dirorder : -1LL,
                     (long long)r.epoch_s);
            c->progress(c->progress_ctx, line);
        }
        struct rw_result res;
        if (rw_record(h, &r, &res, err) < 0) /* invariant 2 */
            return -1;
        snprintf(x->id, sizeof(x->id), "%s", res.id);
        x->exit_code = res.exit_code;
        x->outcome = res.outcome;
        if (c->abort && *c->abort)
            return apierr_set(err, RW_EINTERNAL, "interrupted");
    }
    return 0;
}

/* base joined with rel ("." is base itself), as the guest names it. */
static void repro_guest_path(const char *base, const char *rel, char *out, size_t n)
{
    if (!strcmp(rel, "."))
        snprintf(out, n, "%s", base);
    else
        snprintf(out, n, "%s%s%s", base, base[strlen(base) - 1] == '/' ? "" : "/", rel);
}

void rw_repro_paths(struct rw_repro_config *c, const char *nix_out, char *base, size_t bn,
                    char *glob, size_t gn)
{
    RW_ASSERT(c && c->run.collect && base && glob);
    /* a derivation's output is a directory or one file: both match OUT* */
    if (nix_out && !c->run.track_writes) {
        snprintf(glob, gn, "%s*", nix_out);
        c->run.track_writes = glob;
    }
    if (c->run.collect[0] == '/')
        snprintf(base, bn, "%s", c->run.collect);
    else
        snprintf(base, bn, "%s%s%s", c->run.cwd,
                 c->run.cwd[strlen(c->run.cwd) - 1] == '/' ? "" : "/", c->run.collect);
    if (!c->run.track_writes) {
        snprintf(glob, gn, "%s%s*", base, base[strlen(base) - 1] == '/' ? "" : "/");
        c->run.track_writes = glob;
    }
}

int rw_repro_ended_alike(const struct rw_repro_build *b, uint64_t builds)
{
    for (uint64_t k = 1; k < builds; k++)
        if (b[k].outcome != b[0].outcome || b[k].exit_code != b[0].exit_code)
            return 0;
    return 1;
}

/* One entry differing between build 1 (a) and build k (e; either NULL when
 * the other build lacks it): its bytes read when both are regular files. */
static void repro_report(rw_home *h, const struct rw_repro_build *b, uint64_t k, const char *base,
                         const struct rw_collected *a, const struct rw_collected *e,
                         struct rw_repro_diff *d)
{
    struct rw_error err; /* an unreadable file is reported without its range */
    void *da = NULL, *dk = NULL;
    memset(d, 0, sizeof(*d));
    d->build = k;
    repro_guest_path(base, a ? a->path : e->path, d->path, sizeof(d->path));
    d->change = !a ? '+' : !e ? '-' : '~';
    d->ranged = a && e && a->type == 'f' && e->type == 'f' &&
                rw_collect_read(h, b[0].id, a->path, &da, &d->len0, &err) == 0 &&
                rw_collect_read(h, b[k].id, e->path, &dk, &d->lenk, &err) == 0 &&
                rw_diff_range(da, d->len0, dk, d->lenk, &d->first, &d->last);
    d->data0 = da;
    d->datak = dk;
}

/* Build k's entries vk against build 1's v0 (invariant 3). */
static long repro_compare_one(rw_home *h, const struct rw_repro_build *b, uint64_t k,
                              const char *base, const struct rw_collected *v0, size_t n0,
                              const struct rw_collected *vk, size_t nk,
                              void (*fn)(void *ctx, const struct rw_repro_diff *d), void *ctx)
{
    struct rw_repro_diff d;
    long n = 0;
    size_t x = 0, y = 0;
    while (x < n0 || y < nk) {
        int cmp = x >= n0 ? 1 : y >= nk ? -1 : strcmp(v0[x].path, vk[y].path);
        const struct rw_collected *a = cmp <= 0 ? &v0[x] : NULL, *e = cmp >= 0 ? &vk[y] : NULL;
        x += cmp <= 0;
        y += cmp >= 0;
        if (a && e && a->type == e->type && !strcmp(a->sha256, e->sha256))
            continue;
        repro_report(h, b, k, base, a, e, &d);
        fn(ctx, &d);
        free((void *)d.data0);
        free((void *)d.datak);
        n++;
    }
    return n;
}

long rw_repro_compare(rw_home *h, const struct rw_repro_build *b, uint64_t builds, const char *base,
                      void (*fn)(void *ctx, const struct rw_repro_diff *d), void *ctx,
                      struct rw_error *err)
{
    RW_ASSERT(h && b && base && fn);
    struct rw_collected *v0 = NULL;
    size_t n0 = 0;
    char status[256];
    if (rw_collect_list(h, b[0].id, &v0, &n0, status, sizeof(status), err) < 0)
        return -1;
    long n = 0;
    for (uint64_t k = 1; k < builds; k++) {
        struct rw_collected *vk = NULL;
        size_t nk = 0;
        if (rw_collect_list(h, b[k].id, &vk, &nk, status, sizeof(status), err) < 0) {
            n = -2;
            break;
        }
        n += repro_compare_one(h, b, k, base, v0, n0, vk, nk, fn, ctx);
        free(vk);
    }
    free(v0);
    return n;
}
