/*
 * rungc: see rungc.h for what is live and what is removed.
 *
 * Steps, all under the home lock (exclusive; shared for a dry run):
 *  1. drop abandoned runs/.import.<pid>/ directories (not in a dry run);
 *  2. walk runs/: collect the page hashes of every keyframes file (sorted,
 *     unique) and the image hashes of every manifest and spec;
 *  3. store_gc with "is in the page set" as is_live (skipped when there is no
 *     store directory: nothing to collect, and none is created);
 *  4. unlink images/<hex>.erofs not in the image set, unless a run's spec was
 *     unreadable; unlink stray temp files older than an hour.
 * Step 2 failing (a keyframes file unreadable, out of memory) ends the gc
 * before anything is deleted.
 */
#include "home/rungc.h"

#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "store/store.h"
#include "util/fail.h"
#include "util/hashvec.h"
#include "util/failpoint.h"
#include "home/homelock.h"
#include "trace/keyframe.h"
#include "util/homepath.h"
#include "home/rundir.h"

#define TEMP_AGE_S 3600

struct live {
    struct hashvec pages;
    char (*images)[65];
    size_t nimages, icap;
};

static void add_page(void *ctx, const hash256 *h)
{
    hashvec_add(&((struct live *)ctx)->pages, h);
}

static int is_live_page(void *ctx, const hash256 *h)
{
    return hashvec_has(&((struct live *)ctx)->pages, h);
}

static int is_hex64(const char *s)
{
    size_t i = 0;
    for (; s[i]; i++)
        if (i >= 64 || !((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
            return 0;
    return i == 64;
}

static int add_image(struct live *l, const char *hex)
{
    if (!hex || !is_hex64(hex))
        return 0;
    if (l->nimages == l->icap) {
        size_t nc = l->icap ? l->icap * 2 : 64;
        char(*nv)[65] = realloc(l->images, nc * sizeof(*nv));
        if (!nv)
            return -1;
        l->images = nv;
        l->icap = nc;
    }
    memcpy(l->images[l->nimages++], hex, 65);
    return 0;
}

static int image_live(const struct live *l, const char *hex)
{
    for (size_t i = 0; i < l->nimages; i++)
        if (!strcmp(l->images[i], hex))
            return 1;
    return 0;
}

/* The image a run's JSON file names: 0 (added or none), 1 unreadable, -1 oom. */
static int images_of_file(struct live *l, const char *path, int manifest)
{
    if (access(path, F_OK) != 0)
        return errno == ENOENT ? 0 : 1;
    json_error_t je;
    json_t *j = json_load_file(path, 0, &je);
    if (!json_is_object(j)) {
        json_decref(j);
        return 1;
    }
    json_t *spec = manifest ? json_object_get(j, "spec") : j;
    int rc = add_image(l, json_string_value(json_object_get(spec, "image")));
    json_decref(j);
    return rc;
}

/* The pages of runs/<name>/collect.json (src/run/collect.c) are live too.
 * 0 (also when there is none) or -1 (unreadable: nothing is collected). */
static int collected_pages(const char *home, const char *name, struct live *l)
{
    char p[PATH_MAX];
    if (home_path(p, sizeof(p), home, HOME_RUNS, name, "collect.json") < 0)
        return -1;
    if (access(p, F_OK) != 0)
        return errno == ENOENT ? 0 : -1;
    json_error_t je;
    json_t *o = json_load_file(p, 0, &je), *f, *pg;
    if (!json_is_object(o)) {
        json_decref(o);
        return -1;
    }
    size_t i, k;
    json_array_foreach(json_object_get(o, "files"), i, f)
    {
        json_array_foreach(json_object_get(f, "pages"), k, pg)
        {
            const char *x = json_string_value(pg);
            hash256 h;
            int ok = x && strlen(x) == 64;
            for (int b = 0; ok && b < 32; b++) {
                unsigned v;
                ok = sscanf(x + 2 * b, "%2x", &v) == 1;
                h.b[b] = (unsigned char)v;
            }
            if (!ok) {
                json_decref(o);
                return -1;
            }
            add_page(l, &h);
        }
    }
    json_decref(o);
    return 0;
}

/* An import's staging, or what a killed replacement or remove left
 * (".<stage>.old", rundir.c, runremove.c inv. 3): debris once gc holds the
 * home lock exclusively, since every writer holds it shared. */
static int is_import_dir(const char *name)
{
    size_t n = strlen(name);
    return !strncmp(name, ".import.", 8) ||
           (name[0] == '.' && n > 4 && !strcmp(name + n - 4, ".old"));
}

/* Read one run directory into l. */
static int read_run(const char *home, const char *name, struct live *l, struct rungc_stats *st,
                    char *err, size_t errlen)
{
    char p[PATH_MAX];
    st->runs++;
    if (name[0] == '.')
        st->killed_runs++;
    if (home_path(p, sizeof(p), home, HOME_RUNS, name, "keyframes") < 0)
        return util_fail(err, errlen, "cannot read run %s: %s; nothing was collected", name,
                         strerror(errno));
    if (access(p, F_OK) == 0) {
        errno = 0;
        if (kf_each_page(p, add_page, l) < 0)
            return util_fail(err, errlen,
                             "cannot read the keyframes of run %s (%s); nothing was "
                             "collected",
                             name, errno ? strerror(errno) : "not a keyframes file");
    } else if (errno != ENOENT) {
        return util_fail(err, errlen, "cannot read %s: %s; nothing was collected", p,
                         strerror(errno));
    }
    if (collected_pages(home, name, l) < 0)
        return util_fail(err, errlen,
                         "cannot read the collected files of run %s; nothing was "
                         "collected",
                         name);
    if (l->pages.oom)
        return util_fail(err, errlen, "out of memory reading the keyframes; nothing was collected");
    static const char *files[] = {"manifest.json", "spec.json"};
    for (int i = 0; i < 2; i++) {
        int r = home_path(p, sizeof(p), home, HOME_RUNS, name, files[i]) < 0
                    ? 1
                    : images_of_file(l, p, i == 0);
        if (r < 0)
            return util_fail(err, errlen, "out of memory; nothing was collected");
        if (r > 0 && !st->images_kept) {
            st->images_kept = 1;
            snprintf(st->unreadable_run, sizeof(st->unreadable_run), "%s", name);
        }
    }
    return 0;
}

static int is_dir(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
}

static int walk_runs(const char *home, int dry_run, struct live *l, struct rungc_stats *st,
                     char *err, size_t errlen)
{
    char runs[PATH_MAX], p[PATH_MAX];
    if (home_path(runs, sizeof(runs), home, HOME_RUNS, NULL, NULL) < 0)
        return util_fail(err, errlen, "cannot read %s/runs: %s", home, strerror(errno));
    DIR *d = opendir(runs);
    if (!d)
        return errno == ENOENT
                   ? 0
                   : util_fail(err, errlen, "cannot read %s: %s", runs, strerror(errno));
    struct dirent *e;
    int rc = 0;
    while (rc == 0 && (e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        if (home_path(p, sizeof(p), home, HOME_RUNS, e->d_name, NULL) < 0 || !is_dir(p))
            continue;
        if (is_import_dir(e->d_name)) {
            st->imports++;
            if (!dry_run)
                rundir_remove_tree(p);
            continue;
        }
        rc = read_run(home, e->d_name, l, st, err, errlen);
    }
    closedir(d);
    return rc;
}

static int collect_pages(const char *home, int dry_run, struct live *l, struct rungc_stats *st,
                         char *err, size_t errlen)
{
    char dir[PATH_MAX], why[512];
    if (home_path(dir, sizeof(dir), home, HOME_STORE, NULL, NULL) < 0 || !is_dir(dir)) {
        st->no_store = 1;
        return 0;
    }
    struct store *s;
    if (store_open(dir, &s, why, sizeof(why)) < 0)
        return util_fail(err, errlen, "cannot open the page store: %s", why);
    struct store_gc_stats g;
    int rc = store_gc(s, is_live_page, l, dry_run, &g, why, sizeof(why));
    store_close(s);
    if (rc < 0)
        return util_fail(err, errlen, "page store gc failed: %s", why);
    st->live_pages = g.live_pages;
    st->dead_pages = g.dead_pages;
    st->corrupt_pages = g.corrupt_pages;
    st->bytes_before = g.bytes_before;
    st->bytes_after = g.bytes_after;
    return 0;
}

static int is_temp_name(const char *n)
{
    return !strncmp(n, ".tmp-", 5) || strstr(n, ".tmp.") != NULL;
}

/* One entry of images/: a dead image or an old stray temp file goes. */
static void sweep_image_entry(const char *dir, const char *name, const struct live *l, int dry_run,
                              struct rungc_stats *st)
{
    char p[4600];
    struct stat sb;
    snprintf(p, sizeof(p), "%s/%s", dir, name);
    if (lstat(p, &sb) < 0 || !S_ISREG(sb.st_mode))
        return;
    size_t n = strlen(name);
    if (is_temp_name(name)) {
        RW_FAILPOINT("rungc.unlink_temp");
        if (time(NULL) - sb.st_mtime < TEMP_AGE_S || (!dry_run && unlink(p) < 0))
            return;
        st->temp_files++;
        st->temp_bytes += (uint64_t)sb.st_size;
        return;
    }
    if (n != 70 || strcmp(name + 64, ".erofs"))
        return;
    char hex[65];
    memcpy(hex, name, 64);
    hex[64] = 0;
    if (!is_hex64(hex))
        return;
    if (image_live(l, hex)) {
        st->live_images++;
        return;
    }
    RW_FAILPOINT("rungc.unlink_image");
    if (st->images_kept || (!dry_run && unlink(p) < 0)) {
        st->live_images++;
        return;
    }
    if (st->dead_images < RUNGC_MAX_NAMES)
        memcpy(st->dead_image_names[st->dead_images], hex, 65);
    st->dead_images++;
    st->dead_image_bytes += (uint64_t)sb.st_size;
}

static void sweep_images(const char *home, const struct live *l, int dry_run,
                         struct rungc_stats *st)
{
    char dir[PATH_MAX];
    if (home_path(dir, sizeof(dir), home, HOME_IMAGES, NULL, NULL) < 0)
        return;
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)))
        sweep_image_entry(dir, e->d_name, l, dry_run, st);
    closedir(d);
}

int rungc_run(const char *home, int dry_run, int wait, struct rungc_stats *st, char *err,
              size_t errlen)
{
    memset(st, 0, sizeof(*st));
    int lock = homelock_take(home, !dry_run, wait, err, errlen);
    if (lock < 0)
        return -1;
    struct live l = {0};
    int rc = walk_runs(home, dry_run, &l, st, err, errlen);
    if (rc == 0) {
        hashvec_sort_unique(&l.pages);
        rc = collect_pages(home, dry_run, &l, st, err, errlen);
    }
    if (rc == 0)
        sweep_images(home, &l, dry_run, st);
    if (rc == 0 && !dry_run) { /* cached keyframes (src/run/kfcache.c): derived, dropped */
        char root[PATH_MAX], frames[PATH_MAX + 16];
        if (home_path(root, sizeof(root), home, HOME_ROOT, NULL, NULL) == 0 &&
            snprintf(frames, sizeof(frames), "%s/cache/frames", root) < (int)sizeof(frames))
            rundir_remove_tree(frames);
    }
    hashvec_free(&l.pages);
    free(l.images);
    homelock_release(lock);
    return rc;
}
