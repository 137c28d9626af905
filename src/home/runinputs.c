/*
 * runinputs: see runinputs.h.
 *
 * Invariants:
 *  1. Every byte of the file is covered: the magic, then whole records
 *     whose crc holds; a partial record or a bad crc anywhere is damage,
 *     never "the inputs end here".
 *  2. The file is read once, whole, at most 64 MiB (what a replay reads,
 *     src/run/session.c).
 */
#include "home/runinputs.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "trace/trace.h"
#include "util/bytes.h"
#include "util/check.h"
#include "util/fail.h"
#include "util/hash.h"

#define INPUTS_MAX (64 << 20)

int runinputs_check(const char *path, const char *want, char *why, size_t whylen)
{
    struct stat st;
    FILE *f = fopen(path, "rbe");
    if (!f || fstat(fileno(f), &st) < 0 || st.st_size > INPUTS_MAX) { /* inv. 2 */
        if (f)
            fclose(f);
        util_fail(why, whylen, "its shell session's inputs %s",
                  f ? "are too large" : "are missing");
        return 1;
    }
    size_t n = (size_t)st.st_size, off = 8;
    uint8_t *b = malloc(n ? n : 1);
    hash_ctx *h = b ? hash_new() : NULL;
    if (!h) {
        free(b);
        fclose(f);
        errno = ENOMEM;
        return -1;
    }
    int ok = fread(b, 1, n, f) == n && n >= 8 && !memcmp(b, "RWINPUT1", 8);
    fclose(f);
    while (ok && off < n) { /* inv. 1 */
        uint32_t len = n - off >= 16 ? bytes_get_u32(b + off + 8) : 0;
        ok = len && len <= n - off - 16 &&
             trace_crc32(trace_crc32(0, b + off, 8), b + off + 16, len) ==
                 bytes_get_u32(b + off + 12);
        if (ok) {
            hash_update(h, b + off, 8);
            hash_update(h, b + off + 16, len);
            off += 16 + (size_t)len;
        }
    }
    RW_ASSERT(!ok || off == n);
    hash256 got;
    char hex[65];
    hash_final(h, &got);
    hash_hex(&got, hex);
    free(b);
    if (!ok) {
        util_fail(why, whylen, "its shell session's inputs are damaged (a bad record at byte %zu)",
                  off);
        return 1;
    }
    if (strcmp(hex, want)) {
        util_fail(why, whylen, "its shell session's inputs do not hash to its spec's");
        return 1;
    }
    return 0;
}
