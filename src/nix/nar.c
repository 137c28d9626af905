/*
 * nar: see nar.h. Written from the description in docs/formats.md.
 *
 * Invariants:
 *  1. Every string is its length as u64 little-endian, its bytes, then zero
 *     bytes up to a multiple of 8.
 *  2. A directory's entries are written sorted by name (bytewise), each
 *     once; an entry's children are found by their path prefix, so the
 *     input order does not matter.
 *  3. Recursion depth is bounded by NAR_DEPTH_MAX (a malformed tree fails).
 */
#include "nix/nar.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/bytes.h"
#include "util/check.h"

#define NAR_DEPTH_MAX 256

struct out {
    void (*fn)(void *ctx, const void *p, size_t len);
    void *ctx;
};

static void put_bytes(struct out *o, const void *p, size_t n)
{
    static const unsigned char zero[8];
    unsigned char len[8];
    bytes_put_u64(len, (uint64_t)n);
    o->fn(o->ctx, len, 8);
    if (n)
        o->fn(o->ctx, p, n);
    if (n % 8)
        o->fn(o->ctx, zero, 8 - n % 8); /* invariant 1 */
}

static void put_str(struct out *o, const char *s)
{
    put_bytes(o, s, strlen(s));
}

/* The name of v's path if it is a direct child of dir ("." for the root),
 * else NULL. */
static const char *child_name(const char *dir, const char *path)
{
    if (!strcmp(path, "."))
        return NULL;
    if (!strcmp(dir, "."))
        return strchr(path, '/') ? NULL : path;
    size_t l = strlen(dir);
    if (strncmp(path, dir, l) || path[l] != '/' || strchr(path + l + 1, '/') || !path[l + 1])
        return NULL;
    return path + l + 1;
}

struct kid {
    const char *name;
    size_t index;
};

static int by_name(const void *a, const void *b)
{
    return strcmp(((const struct kid *)a)->name, ((const struct kid *)b)->name);
}

static int node(struct out *o, const struct nix_node *v, size_t n, size_t at, int depth)
{
    const struct nix_node *x = &v[at];
    if (depth > NAR_DEPTH_MAX) { /* invariant 3 */
        errno = EINVAL;
        return -1;
    }
    put_str(o, "(");
    put_str(o, "type");
    if (x->type == 'f') {
        put_str(o, "regular");
        if (x->exec) {
            put_str(o, "executable");
            put_str(o, "");
        }
        put_str(o, "contents");
        put_bytes(o, x->data, x->len);
    } else if (x->type == 'l') {
        put_str(o, "symlink");
        put_str(o, "target");
        put_bytes(o, x->data, x->len);
    } else if (x->type == 'd') {
        put_str(o, "directory");
        size_t nk = 0;
        struct kid *k = malloc((n ? n : 1) * sizeof(*k));
        if (!k)
            return -1;
        for (size_t i = 0; i < n; i++) {
            const char *nm = child_name(x->path, v[i].path);
            if (nm)
                k[nk++] = (struct kid){nm, i};
        }
        qsort(k, nk, sizeof(*k), by_name); /* invariant 2 */
        for (size_t i = 0; i < nk; i++) {
            if (i && !strcmp(k[i].name, k[i - 1].name)) {
                free(k);
                errno = EINVAL;
                return -1;
            }
            put_str(o, "entry");
            put_str(o, "(");
            put_str(o, "name");
            put_str(o, k[i].name);
            put_str(o, "node");
            if (node(o, v, n, k[i].index, depth + 1) < 0) {
                free(k);
                return -1;
            }
            put_str(o, ")");
        }
        free(k);
    } else {
        errno = EINVAL;
        return -1;
    }
    put_str(o, ")");
    return 0;
}

int nix_nar_write(const struct nix_node *v, size_t n,
                  void (*fn)(void *ctx, const void *p, size_t len), void *ctx)
{
    RW_ASSERT(fn && (v || !n));
    size_t root = n;
    for (size_t i = 0; i < n; i++)
        if (!strcmp(v[i].path, "."))
            root = i;
    if (root == n) {
        errno = EINVAL;
        return -1;
    }
    struct out o = {fn, ctx};
    put_str(&o, "nix-archive-1");
    return node(&o, v, n, root, 0);
}

static void to_hash(void *ctx, const void *p, size_t len)
{
    hash_update(ctx, p, len);
}

int nix_nar_hash(const struct nix_node *v, size_t n, hash256 *out)
{
    hash_ctx *c = hash_new();
    if (!c)
        return -1;
    int rc = nix_nar_write(v, n, to_hash, c);
    hash_final(c, out);
    return rc;
}

void nix_base32(const unsigned char *h, size_t n, char *out)
{
    static const char chars[] = "0123456789abcdfghijklmnpqrsvwxyz";
    size_t len = (n * 8 - 1) / 5 + 1, o = 0;
    for (size_t k = len; k-- > 0;) {
        size_t b = k * 5, i = b / 8, j = b % 8;
        unsigned c = (unsigned)(h[i] >> j);
        if (i + 1 < n)
            c |= (unsigned)h[i + 1] << (8 - j);
        out[o++] = chars[c & 0x1f];
    }
    out[o] = 0;
}
