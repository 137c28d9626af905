/* rungc_test: gc keeps every page a run's keyframes name (killed runs
 * included) and every image a run names, frees the rest, changes nothing in
 * a dry run or when a keyframes file is unreadable, keeps all images when a
 * spec is unreadable, and refuses to run while the home lock is held. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <utime.h>
#include <unistd.h>

#include "home/homelock.h"
#include "home/rungc.h"
#include "runfix.h"
#include "unit.h"

static char home[64];

static int exists(const char *rel)
{
    char p[4200];
    snprintf(p, sizeof(p), "%s/%s", home, rel);
    return access(p, F_OK) == 0;
}

static void image_path(char *out, size_t n, const char *hex)
{
    snprintf(out, n, "%s/images/%s.erofs", home, hex);
}

static int all_readable(const hash256 *h, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!fix_page_readable(home, &h[i]))
            return 0;
    return 1;
}

static int none_readable(const hash256 *h, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (fix_page_readable(home, &h[i]))
            return 0;
    return 1;
}

int main(void)
{
    char err[512], p[4300], img1[65], img2[65], img3[65];
    struct rungc_stats st;
    snprintf(home, sizeof(home), "/tmp/rungc_test.%d", (int)getpid());
    rundir_remove_tree(home);

    /* no store, no runs: fine, and no store is created */
    CHECK(rungc_run(home, 0, 0, &st, err, sizeof(err)) == 0, "gc of an empty home");
    CHECK(st.no_store && !exists("store"), "no store created");

    hash256 a[6], b[5], s[4], k[3];
    CHECK(fix_put_pages(home, 1000, 6, a) == 0, "pages a");
    CHECK(fix_put_pages(home, 2000, 5, b) == 0, "pages b");
    CHECK(fix_put_pages(home, 3000, 4, s) == 0, "pages s");
    CHECK(fix_put_pages(home, 4000, 3, k) == 0, "pages k");
    hash256 run1[10], run2[9];
    memcpy(run1, a, sizeof(a)), memcpy(run1 + 6, s, sizeof(s));
    memcpy(run2, b, sizeof(b)), memcpy(run2 + 5, s, sizeof(s));
    CHECK(fix_image(home, "image one", img1) == 0 && fix_image(home, "image two", img2) == 0 &&
              fix_image(home, "image three", img3) == 0,
          "images");
    CHECK(fix_run(home, "run1", img1, NULL, 0, run1, 10, 3) == 0, "run1");
    CHECK(fix_run(home, "run2", img2, NULL, 0, run2, 9, 2) == 0, "run2");
    CHECK(fix_run(home, ".killed.999", img1, NULL, 0, k, 3, 1) == 0, "a killed run");
    /* its keyframes file torn mid-record: the whole record before still counts */
    snprintf(p, sizeof(p), "%s/runs/.killed.999/keyframes", home);
    FILE *f = fopen(p, "ab");
    CHECK(f && fwrite("KFRMjunk", 1, 8, f) == 8 && fclose(f) == 0, "tear the killed run");

    /* stray temp files: an old one goes, a fresh one stays */
    snprintf(p, sizeof(p), "%s/images/%s.erofs.tmp.123", home, img3);
    CHECK(fix_write(p, "x", 1) == 0, "old temp");
    struct utimbuf old = {time(NULL) - 7200, time(NULL) - 7200};
    utime(p, &old);
    snprintf(p, sizeof(p), "%s/images/.tmp-img-abc", home);
    CHECK(fix_write(p, "y", 1) == 0, "fresh temp");
    snprintf(p, sizeof(p), "%s/runs/.import.4242", home);
    CHECK(io_mkdir_p(p) == 0, "abandoned import");

    /* while the lock is held shared (a run in flight) gc does not run */
    int lock = homelock_take(home, 0, 0, err, sizeof(err));
    CHECK(lock >= 0, "take the lock shared");
    CHECK(rungc_run(home, 0, 0, &st, err, sizeof(err)) < 0, "gc refuses while a run holds the lock");
    CHECK(rungc_run(home, 1, 0, &st, err, sizeof(err)) == 0, "a dry run does not wait");
    homelock_release(lock);

    /* remove run2: its own pages and image are dead */
    snprintf(p, sizeof(p), "%s/runs/run2", home);
    CHECK(rundir_remove_tree(p) == 0, "remove run2");
    char *before = fix_snapshot(home);
    CHECK(rungc_run(home, 1, 0, &st, err, sizeof(err)) == 0, "dry run");
    char *after = fix_snapshot(home);
    CHECK(before && after && !strcmp(before, after), "a dry run changes nothing");
    free(before);
    free(after);
    CHECK(st.dead_pages == 5 && st.live_pages == 13, "dry run counts pages");
    CHECK(st.dead_images == 2 && st.live_images == 1, "dry run counts images");

    CHECK(rungc_run(home, 0, 0, &st, err, sizeof(err)) == 0, "gc");
    CHECK(st.runs == 2 && st.killed_runs == 1, "runs counted");
    CHECK(st.dead_pages == 5 && st.live_pages == 13, "gc counts pages");
    CHECK(st.bytes_after < st.bytes_before, "gc frees pack bytes");
    CHECK(st.dead_image_bytes == strlen("image two") + strlen("image three"),
          "gc counts the dead images' bytes");
    CHECK(none_readable(b, 5), "run2's own pages are gone");
    CHECK(all_readable(a, 6) && all_readable(s, 4), "run1's pages (shared ones too) stay");
    CHECK(all_readable(k, 3), "the killed run's pages stay");
    image_path(p, sizeof(p), img1);
    CHECK(access(p, F_OK) == 0, "run1's image stays");
    image_path(p, sizeof(p), img2);
    CHECK(access(p, F_OK) != 0, "run2's image is gone");
    image_path(p, sizeof(p), img3);
    CHECK(access(p, F_OK) != 0, "an image no run names is gone");
    CHECK(st.temp_files == 1, "one old temp removed");
    CHECK(exists("images/.tmp-img-abc"), "a fresh temp stays");
    CHECK(!exists("runs/.import.4242") && st.imports == 1, "abandoned import removed");

    /* an unreadable spec keeps every image */
    CHECK(fix_image(home, "image four", img3) == 0, "image four");
    CHECK(fix_run(home, "run3", img1, NULL, 0, NULL, 0, 0) == 0, "run3");
    snprintf(p, sizeof(p), "%s/runs/run3/spec.json", home);
    CHECK(fix_write(p, "{corrupt", 8) == 0, "corrupt run3's spec");
    CHECK(rungc_run(home, 0, 0, &st, err, sizeof(err)) == 0, "gc with a corrupt spec");
    image_path(p, sizeof(p), img3);
    CHECK(access(p, F_OK) == 0 && st.images_kept && !strcmp(st.unreadable_run, "run3"),
          "every image kept");

    /* an unreadable keyframes file stops gc before it deletes anything */
    snprintf(p, sizeof(p), "%s/runs/run3/keyframes", home);
    CHECK(fix_write(p, "not a keyframes file, not at all.", 33) == 0, "bad keyframes");
    snprintf(p, sizeof(p), "%s/runs/run1", home);
    CHECK(rundir_remove_tree(p) == 0, "remove run1");
    CHECK(rungc_run(home, 0, 0, &st, err, sizeof(err)) < 0 && strstr(err, "run3"),
          "gc refuses with an unreadable keyframes file");
    CHECK(all_readable(a, 6), "nothing deleted");

    rundir_remove_tree(home);
    return unit_done();
}
