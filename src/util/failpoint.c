/* failpoint: see failpoint.h. Compiled to nothing but a declaration
 * without RW_FAILPOINTS (failpoint.h invariant 1). */
#include "util/failpoint.h"

#ifdef RW_FAILPOINTS

#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/check.h"

/* The linker defines these around the section every RW_FAILPOINT site adds
 * its name to (invariant 2); weak, so a build with no site links (none). */
extern const char *const __start_rw_failpoints[] __attribute__((weak, visibility("hidden")));
extern const char *const __stop_rw_failpoints[] __attribute__((weak, visibility("hidden")));

static char armed[128]; /* the NAME of REWIND_FAILPOINT, "" if none */
static unsigned long armed_k = 1;
static atomic_ulong hits;
static const char *count_path;

static int by_name(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* REWIND_FAILPOINT=list: every name once, sorted. */
static void list_and_exit(void)
{
    size_t n = __start_rw_failpoints ? (size_t)(__stop_rw_failpoints - __start_rw_failpoints) : 0;
    const char **v = malloc((n ? n : 1) * sizeof(*v));
    if (!v)
        _exit(1);
    if (n)
        memcpy(v, __start_rw_failpoints, n * sizeof(*v));
    qsort(v, n, sizeof(*v), by_name);
    for (size_t i = 0; i < n; i++)
        if (i == 0 || strcmp(v[i], v[i - 1]))
            printf("%s\n", v[i]);
    fflush(stdout);
    _exit(0);
}

__attribute__((constructor)) static void failpoint_setup(void)
{
    count_path = getenv("REWIND_FAILPOINT_COUNT");
    const char *e = getenv("REWIND_FAILPOINT");
    if (!e || !*e)
        return;
    if (!strcmp(e, "list"))
        list_and_exit();
    const char *colon = strchr(e, ':');
    size_t n = colon ? (size_t)(colon - e) : strlen(e);
    if (n >= sizeof(armed)) {
        fprintf(stderr, "rewind: REWIND_FAILPOINT name too long\n");
        _exit(2);
    }
    memcpy(armed, e, n);
    armed[n] = 0;
    if (colon) {
        char *end;
        armed_k = strtoul(colon + 1, &end, 10);
        if (*end || armed_k == 0) {
            fprintf(stderr, "rewind: REWIND_FAILPOINT=%s: K must be a positive count\n", e);
            _exit(2);
        }
    }
}

void failpoint_hit(const char *name)
{
    if (count_path) {
        FILE *f = fopen(count_path, "ae");
        if (f) {
            fprintf(f, "%s\n", name);
            fclose(f);
        }
    }
    if (!armed[0] || strcmp(name, armed))
        return;
    if (atomic_fetch_add(&hits, 1) + 1 == armed_k) {
        kill(getpid(), SIGKILL);
        _exit(137); /* not reached */
    }
}

#else
typedef int failpoint_unused; /* ISO C: a translation unit declares something */
#endif
