/*
 * archive: the parts of the archive format both directions use: names and
 * byte order. The format is described in archive.h; export is in
 * archive_export.c, import in archive_import.c.
 */
#include "archive/archive.h"

#include <string.h>

#include "store/store.h"
#include "archive/archive_int.h"

const char *const archive_file_names[ARCH_NFILES] = {"manifest.json", "spec.json", "trace",
                                                     "states", "keyframes"};

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

int archive_is_zero_hash(const hash256 *h)
{
    static hash256 zero;
    static int have;
    if (!have) {
        store_zero_hash(&zero);
        have = 1;
    }
    return memcmp(h, &zero, sizeof(zero)) == 0;
}

void archive_put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

void archive_put64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

uint32_t archive_get32(const uint8_t *p)
{
    uint32_t v = 0;
    for (int i = 3; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

uint64_t archive_get64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}
