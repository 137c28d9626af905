/*
 * reentrant_test: the engine's reentrancy invariants (docs/architecture.md,
 * "Reentrancy") as a rule on its sources: no function-local static object
 * that is not const, and no file-scope static variable but the kinds
 * invariant 2 allows (set once under pthread_once or a mutex, signal-handler
 * flags, atomic counters) and the few named below, each with its reason.
 * Reads the .c and .h files of each engine folder of src/ from the top of
 * the tree (make's tests run there); skipped elsewhere.
 */
#include <dirent.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unit.h"

static const char *const engine_dirs[] = {"util",    "input", "vmm",   "image",
                                          "home",    "trace", "store", "archive",
                                          "explore", "run",   "nix",   "guestos"};

/* file, what the line holds: the static state invariant 2 names. */
static const struct {
    const char *file, *what;
} allowed[] = {
    {"src/util/failpoint.c", "armed"},          /* set by a constructor, before main */
    {"src/util/crc.c", "table_32"},             /* filled once (pthread_once) */
    {"src/run/api.c", "run_kernel_beside"},     /* filled once (pthread_once) */
    {"src/guestos/elfsym.c", "elf_ok"},         /* set once (pthread_once) */
    {"src/vmm/snapshot.c", "msr_"},             /* learned once under msr_lock */
    {"src/run/debug.c", "static int on = -1;"}, /* tf_log: left to the machine-loop work */
};

/* Types whose static objects are allowed anywhere (invariant 2). */
static const char *const allowed_types[] = {"volatile sig_atomic_t", "pthread_once_t",
                                            "pthread_mutex_t", "pthread_cond_t", "atomic_"};

static int is_allowed(const char *file, const char *line)
{
    for (size_t i = 0; i < sizeof allowed_types / sizeof allowed_types[0]; i++)
        if (strstr(line, allowed_types[i]))
            return 1;
    for (size_t i = 0; i < sizeof allowed / sizeof allowed[0]; i++)
        if (!strcmp(file, allowed[i].file) && strstr(line, allowed[i].what))
            return 1;
    return 0;
}

/* 1 if line declares a static object that is not const: indented (in a
 * function), or at file scope and not a function (no '(' before '=' or
 * the end). */
static int static_object(const regex_t *local, const regex_t *global, const char *line)
{
    if (strstr(line, "static const") || strstr(line, "static inline") || strstr(line, "*const "))
        return 0; /* a constant, or a function */
    if (!regexec(local, line, 0, NULL, 0))
        return 1;
    if (regexec(global, line, 0, NULL, 0))
        return 0;
    const char *eq = strchr(line, '=');
    const char *paren = strchr(line, '(');
    return !paren || (eq && eq < paren);
}

static int check_file(const char *path, const regex_t *local, const regex_t *global,
                      char *first_bad, size_t n)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    char line[1024];
    int bad = 0;
    while (fgets(line, sizeof line, f)) {
        if (!static_object(local, global, line) || is_allowed(path, line))
            continue;
        if (!bad++ && !first_bad[0])
            snprintf(first_bad, n, "%.200s: %.900s", path, line);
    }
    fclose(f);
    return bad;
}

int main(void)
{
    DIR *top = opendir("src/run");
    if (!top) {
        SKIP("not at the top of the tree (no src/run)");
        return unit_done();
    }
    closedir(top);
    regex_t local, global;
    /* static, a type word: "static int x", "static char *p" (const and
     * inline are left out by static_object) */
    CHECK(regcomp(&local, "^[ \t]+static[ \t]+(volatile[ \t]+)?(struct[ \t]+)?[a-z_0-9]+[ \t*]",
                  REG_EXTENDED | REG_NOSUB) == 0 &&
              regcomp(&global, "^static[ \t]+(volatile[ \t]+)?(struct[ \t]+)?[a-z_0-9]+[ \t*]",
                      REG_EXTENDED | REG_NOSUB) == 0,
          "the patterns");
    int bad = 0, files = 0;
    char first[1200] = "";
    for (size_t d = 0; d < sizeof engine_dirs / sizeof engine_dirs[0]; d++) {
        char dir[64];
        snprintf(dir, sizeof dir, "src/%s", engine_dirs[d]);
        DIR *dp = opendir(dir);
        if (!dp)
            continue;
        struct dirent *e;
        while ((e = readdir(dp))) {
            size_t l = strlen(e->d_name);
            if (l < 3 || e->d_name[l - 2] != '.' ||
                (e->d_name[l - 1] != 'c' && e->d_name[l - 1] != 'h'))
                continue;
            char path[512];
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            files++;
            bad += check_file(path, &local, &global, first, sizeof first);
        }
        closedir(dp);
    }
    CHECK(files > 50, "the engine's files were read");
    CHECK(bad == 0, first[0] ? first : "no static object that is not const or allowed");

    /* the rule itself: it sees a static buffer in a function and at file scope */
    CHECK(static_object(&local, &global, "    static char buf[32];\n") &&
              static_object(&local, &global, "static struct snap s;\n") &&
              static_object(&local, &global, "static int n = f(1);\n"),
          "a static buffer is seen");
    CHECK(!static_object(&local, &global, "    static const char *names[] = {\n") &&
              !static_object(&local, &global, "static int f(int x)\n") &&
              !static_object(&local, &global, "static inline int g(void);\n"),
          "const tables and functions are not");
    regfree(&local);
    regfree(&global);
    return unit_done();
}
