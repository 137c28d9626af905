/*
 * fuzz_archive: archive import (src/archive/archive_import.c): every entry
 * is bounds-checked, staged, verified and, only if all of it holds,
 * committed to the home.
 *
 * Input: the bytes of an archive file, imported into an empty scratch home.
 * So that mutations get past the END checksum (SHA-256 of everything before
 * the END entry, and the entry count) to the checks and the commit behind
 * it, an input of even size has its END entry, if the entry chain reaches
 * one, rewritten with the right count and hash first; odd sizes go in as
 * they are.
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
#include "util/bytes.h"
#include "util/check.h"
#include "util/hash.h"

#define HEADER 80 /* archive_int.h: ARCH_HEADER_SIZE, ARCH_ENTRY_SIZE, ARCH_END */
#define ENTRY 16
#define END_KIND 5
#define END_LEN 40

/* Rewrite the END entry of buf (n bytes) to match what precedes it. */
static void fix_end(uint8_t *buf, size_t n)
{
    uint64_t off = HEADER, count = 0;
    while (off + ENTRY <= n) {
        uint32_t kind = bytes_get_u32(buf + off), nl = bytes_get_u32(buf + off + 4);
        uint64_t len = bytes_get_u64(buf + off + 8);
        if (kind == END_KIND) {
            if (len == END_LEN && off + ENTRY + END_LEN <= n) {
                hash256 h;
                hash_buf(buf, off, &h);
                bytes_put_u64(buf + off + ENTRY, count);
                memcpy(buf + off + ENTRY + 8, h.b, 32);
            }
            return;
        }
        if (len > n || off + ENTRY + nl + len > n)
            return;
        off += ENTRY + nl + len;
        count++;
    }
}

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
    io_mkdir_p(home);
    if (size % 2 == 0 && size > HEADER) {
        uint8_t *copy = malloc(size);
        if (!copy)
            abort();
        memcpy(copy, data, size);
        fix_end(copy, size);
        fuzz_write(in, copy, size);
        free(copy);
    } else {
        fuzz_write(in, data, size);
    }
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
