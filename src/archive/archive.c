/*
 * archive: the parts of the archive format both directions use: names and
 * hashes. The format is described in archive.h; export is in
 * archive_export.c, import in archive_import.c. Byte order is util/bytes.h.
 *
 * Invariants:
 *  1. A run name archive_valid_run_name accepts is one safe path component
 *     (home_safe_name), so no name from an archive leaves runs/.
 */
#include "archive/archive.h"

#include <string.h>

#include "archive/archive_int.h"
#include "util/homepath.h"
#include "store/store.h"
#include "util/check.h"

const char *const archive_file_names[ARCH_NFILES] = {
    "manifest.json", "spec.json", "trace", "states", "keyframes", "inputs"};

int archive_valid_run_name(const char *name)
{
    size_t n = strlen(name);
    if (n == 0 || n > ARCHIVE_NAME_MAX || name[0] == '.')
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = name[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '.' || c == '~' || c == '-'))
            return 0;
    }
    RW_ASSERT(home_safe_name(name)); /* invariant 1 */
    return 1;
}

int archive_file_index(const char *name)
{
    for (int i = 0; i < ARCH_NFILES; i++)
        if (!strcmp(name, archive_file_names[i]))
            return i;
    return -1;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1;
}

int archive_parse_hex(const char *s, size_t n, hash256 *h)
{
    if (n != 64)
        return -1;
    for (size_t i = 0; i < 32; i++) {
        int hi = hexval(s[2 * i]), lo = hexval(s[2 * i + 1]);
        if (hi < 0 || lo < 0)
            return -1;
        h->b[i] = (unsigned char)(hi << 4 | lo);
    }
    return 0;
}
