/*
 * homepath: see homepath.h.
 */
#include "util/homepath.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "util/check.h"

int home_safe_name(const char *s)
{
    return s && *s && strcmp(s, ".") && strcmp(s, "..") && !strchr(s, '/');
}

int home_stage_name(char *out, size_t n, const char *prefix)
{
    uint32_t r = 0;
    if (getrandom(&r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r) {
        struct timespec t; /* no entropy yet: the clock still differs between processes */
        clock_gettime(CLOCK_MONOTONIC, &t);
        r = (uint32_t)t.tv_nsec ^ (uint32_t)t.tv_sec * 2654435761u;
    }
    int k = snprintf(out, n, "%s.%d.%08x", prefix, (int)getpid(), r);
    return k < 0 || (size_t)k >= n ? -1 : 0;
}

int home_path(char *out, size_t outlen, const char *home, enum home_place place, const char *name,
              const char *file)
{
    static const char *const folder[] = {
        [HOME_ROOT] = NULL,       [HOME_RUNS] = "runs",    [HOME_IMAGES] = "images",
        [HOME_STORE] = "store",   [HOME_LOCK] = "gc.lock", [HOME_IMGINDEX] = "images/index",
        [HOME_CHECKS] = "checks",
    };
    RW_ASSERT(home && out && (unsigned)place <= HOME_CHECKS);
    if ((name && !home_safe_name(name)) || (file && !home_safe_name(file)) ||
        (file && !name && place != HOME_STORE && place != HOME_ROOT)) {
        errno = EINVAL;
        return -1;
    }
    int n;
    const char *f = folder[place];
    if (place == HOME_IMAGES && name)
        n = snprintf(out, outlen, "%s/images/%s.erofs", home, name);
    else if (place == HOME_CHECKS && name)
        n = snprintf(out, outlen, "%s/checks/%s.json", home, name);
    else if (!f)
        n = snprintf(out, outlen, "%s%s%s", home, file ? "/" : "", file ? file : "");
    else if (place == HOME_STORE)
        n = snprintf(out, outlen, "%s/store%s%s", home, file ? "/" : "", file ? file : "");
    else
        n = snprintf(out, outlen, "%s/%s%s%s%s%s", home, f, name ? "/" : "", name ? name : "",
                     file ? "/" : "", file ? file : "");
    if (n < 0 || (size_t)n >= outlen) {
        errno = ENAMETOOLONG;
        return -1;
    }
    return 0;
}
