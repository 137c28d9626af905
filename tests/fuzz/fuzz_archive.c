/*
 * fuzz_archive: archive import (src/archive/archive_import.c): every entry
 * is bounds-checked, staged, verified and, only if all of it holds,
 * committed to the home.
 *
 * Input: the bytes of an archive file, imported into an empty scratch home.
 *
 * Invariants:
 *  1. Whatever the bytes, import returns 0 or -1 with a message (no crash,
 *     no sanitizer report, no leak).
 *  2. A refused import adds no run: runs/ holds nothing afterwards
 *     (staging directories included).
 */
#include <dirent.h>

#include "archive/archive.h"
#include "fuzz.h"
#include "util/check.h"

static int entries(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    closedir(d);
    return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char home[512], in[512], runs[600];
    fuzz_path(home, sizeof(home), "home");
    fuzz_path(in, sizeof(in), "in.rwa");
    rundir_mkdirs(home);
    fuzz_write(in, data, size);
    struct archive_stats st;
    char err[1024] = "";
    int rc = archive_import(home, in, &st, err, sizeof(err));
    snprintf(runs, sizeof(runs), "%s/runs", home);
    if (rc < 0) {
        RW_ASSERT(err[0] != '\0');
        RW_ASSERT(entries(runs) == 0);
    }
    fuzz_clear("home");
    fuzz_clear("in.rwa");
    return 0;
}
