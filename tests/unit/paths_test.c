/*
 * paths_test: home_path builds every path under a home (src/util/homepath.h)
 * and refuses names that would leave their folder (its invariant 2).
 */
#include <errno.h>
#include <string.h>

#include "util/homepath.h"
#include "unit.h"

static int is(const char *got, const char *want)
{
    return strcmp(got, want) == 0;
}

int main(void)
{
    char p[64];
    CHECK(home_path(p, sizeof(p), "/h", HOME_ROOT, NULL, NULL) == 0 && is(p, "/h"), "the home");
    CHECK(home_path(p, sizeof(p), "/h", HOME_RUNS, NULL, NULL) == 0 && is(p, "/h/runs"), "runs/");
    CHECK(home_path(p, sizeof(p), "/h", HOME_RUNS, "abc", NULL) == 0 && is(p, "/h/runs/abc"),
          "a run's directory");
    CHECK(home_path(p, sizeof(p), "/h", HOME_RUNS, "abc", "trace") == 0 &&
              is(p, "/h/runs/abc/trace"),
          "a run's file");
    CHECK(home_path(p, sizeof(p), "/h", HOME_RUNS, ".abc.12", "spec.json") == 0 &&
              is(p, "/h/runs/.abc.12/spec.json"),
          "a staging directory's file");
    CHECK(home_path(p, sizeof(p), "/h", HOME_IMAGES, NULL, NULL) == 0 && is(p, "/h/images"),
          "images/");
    CHECK(home_path(p, sizeof(p), "/h", HOME_IMAGES, "ff", NULL) == 0 &&
              is(p, "/h/images/ff.erofs"),
          "an image");
    CHECK(home_path(p, sizeof(p), "/h", HOME_STORE, NULL, NULL) == 0 && is(p, "/h/store"),
          "store/");
    CHECK(home_path(p, sizeof(p), "/h", HOME_LOCK, NULL, NULL) == 0 && is(p, "/h/gc.lock"),
          "the lock");

    /* Invariant 2: nothing read from a manifest, spec or archive leaves its folder. */
    const char *bad[] = {"", ".", "..", "../x", "a/b", "/abs"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        errno = 0;
        CHECK(home_path(p, sizeof(p), "/h", HOME_RUNS, bad[i], NULL) == -1 && errno == EINVAL,
              "an unsafe run name is refused");
        errno = 0;
        CHECK(home_path(p, sizeof(p), "/h", HOME_RUNS, "abc", bad[i]) == -1 && errno == EINVAL,
              "an unsafe file name is refused");
        errno = 0;
        CHECK(home_path(p, sizeof(p), "/h", HOME_IMAGES, bad[i], NULL) == -1 && errno == EINVAL,
              "an unsafe image name is refused");
        CHECK(!home_safe_name(bad[i]), "home_safe_name refuses it");
    }
    CHECK(home_safe_name("0123abcd~1"), "a kept divergent run's name is safe");
    CHECK(home_path(p, sizeof(p), "/h", HOME_LOCK, NULL, "x") == -1, "a file under the lock");

    /* A path that does not fit is an error, never a truncated path. */
    char small[12];
    errno = 0;
    CHECK(home_path(small, sizeof(small), "/h", HOME_RUNS, "abcdef", NULL) == -1 &&
              errno == ENAMETOOLONG,
          "too long for the buffer");
    return unit_done();
}
