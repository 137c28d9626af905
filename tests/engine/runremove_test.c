/* runremove_test: `rewind remove` can name a killed (incomplete) run by its
 * staging directory ".<id>.<pid>", also beside a complete run of the same id
 * (a replacement killed after its swap leaves exactly that): by id, the
 * complete run is meant; by directory, the killed one, and only it goes. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "rewind.h"
#include "runfix.h"
#include "unit.h"

#define RUN_X "abcd000000000001"
#define KILLED_X "." RUN_X ".4242"
#define RUN_Y "abcd000000000002"
#define KILLED_Y "." RUN_Y ".77"

static char home[64];

static int exists(const char *dir)
{
    char p[4300];
    snprintf(p, sizeof(p), "%s/runs/%s", home, dir);
    return access(p, F_OK) == 0;
}

static int removed_n;
static void on_removed(void *ctx, const char *id, const char *path, int ok)
{
    (void)ctx;
    (void)id;
    (void)path;
    removed_n += ok;
}

int main(void)
{
    snprintf(home, sizeof(home), "/tmp/runremove_test.%d", (int)getpid());
    rundir_remove_tree(home);
    char img[65];
    CHECK(fix_image(home, "root", img) == 0, "fixture image");
    CHECK(fix_run(home, RUN_X, img, NULL, 0, NULL, 0, 0) == 0 &&
              fix_run(home, KILLED_X, img, NULL, 0, NULL, 0, 0) == 0 &&
              fix_run(home, KILLED_Y, img, NULL, 0, NULL, 0, 0) == 0,
          "fixture runs");
    rw_home *h = NULL;
    struct rw_error err;
    CHECK(rw_home_open(home, &h, &err) == 0 && h, "open the home");
    if (!h)
        return unit_done();
    char id[RW_ID_MAX];
    CHECK(rw_resolve(h, RUN_X, id, &err) == 0 && !strcmp(id, RUN_X), "the id is the complete run");
    CHECK(rw_resolve(h, KILLED_X, id, &err) == 0 && !strcmp(id, KILLED_X),
          "the staging directory names the killed run beside it");
    CHECK(rw_resolve(h, RUN_Y, id, &err) == 0 && !strcmp(id, KILLED_Y),
          "alone, a killed run is named by its id too");
    CHECK(rw_resolve(h, "." RUN_X ".1", id, &err) < 0, "another pid names nothing");

    const char *k[] = {KILLED_X};
    removed_n = 0;
    CHECK(rw_remove(h, k, 1, 0, on_removed, NULL, &err) == 0 && removed_n == 1, "remove .ID.PID");
    CHECK(!exists(KILLED_X) && exists(RUN_X), "only the killed run went");
    const char *y[] = {RUN_Y};
    CHECK(rw_remove(h, y, 1, 0, on_removed, NULL, &err) == 0 && !exists(KILLED_Y),
          "a lone killed run goes by its id");
    const char *x[] = {RUN_X};
    CHECK(rw_remove(h, x, 1, 0, on_removed, NULL, &err) == 0 && !exists(RUN_X),
          "the complete run goes by its id");

    rw_home_close(h);
    (void)fix_snapshot; /* runfix.h helpers this test does not need */
    (void)fix_put_pages;
    (void)fix_page_readable;
    rundir_remove_tree(home);
    return unit_done();
}
