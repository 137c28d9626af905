/* nar_test.c - NAR serialisation and Nix base-32 (src/nix/nar.c) against
 * hashes Nix 2.8 gave for the same trees (`nix-hash --type sha256 [--base32]
 * PATH`, and `nix-store --dump PATH` for the bytes of one file's NAR). */
#include "unit.h"

#include <stdlib.h>
#include <string.h>

#include "nix/nar.h"

struct buf {
    unsigned char b[4096];
    size_t n;
};

static void to_buf(void *ctx, const void *p, size_t len)
{
    struct buf *x = ctx;
    if (x->n + len <= sizeof(x->b))
        memcpy(x->b + x->n, p, len);
    x->n += len;
}

static int hex_is(const hash256 *h, const char *want)
{
    char hex[65];
    hash_hex(h, hex);
    if (strcmp(hex, want))
        fprintf(stderr, "  got  %s\n  want %s\n", hex, want);
    return !strcmp(hex, want);
}

static void test_one_file(void)
{
    struct nix_node f = {".", 'f', 0, "hello\n", 6};
    struct buf b = {.n = 0};
    CHECK(nix_nar_write(&f, 1, to_buf, &b) == 0, "write");
    /* nix-store --dump of a file holding "hello\n": 120 bytes */
    CHECK(b.n == 120, "length");
    CHECK(!memcmp(b.b, "\x0d\0\0\0\0\0\0\0nix-archive-1\0\0\0", 24), "magic, padded");
    CHECK(!memcmp(b.b + 0x58, "\x06\0\0\0\0\0\0\0hello\n\0\0", 16), "contents, padded");
    hash256 h;
    CHECK(nix_nar_hash(&f, 1, &h) == 0, "hash");
    char b32[60];
    nix_base32(h.b, 32, b32);
    CHECK(!strcmp(b32, "04zwf782yjwnh3q6hz5izfd6jyip8kgw6g6yj43fiqhbyhdd0dqw"), "base32 of a file");
}

static void test_tree(void)
{
    /* in an order unlike Nix's: the tree is sorted per directory */
    static const char script[] = "#!/bin/sh\necho hi\n";
    struct nix_node v[] = {
        {"sub/y", 'f', 0, "x", 1},    {"run", 'f', 1, script, sizeof(script) - 1},
        {"a-c/empty", 'f', 0, "", 0}, {".", 'd', 0, NULL, 0},
        {"link", 'l', 0, "f", 1},     {"a", 'f', 0, "123456789", 9},
        {"f", 'f', 0, "hello\n", 6},  {"sub", 'd', 0, NULL, 0},
        {"a-c", 'd', 0, NULL, 0},
    };
    hash256 h;
    CHECK(nix_nar_hash(v, sizeof(v) / sizeof(v[0]), &h) == 0, "hash tree");
    CHECK(hex_is(&h, "95d39a0b9b53e20ff7efee79084db66884241fd82e97e378727f5c4be856b9a4"), "tree");
    char b32[60];
    nix_base32(h.b, 32, b32);
    CHECK(!strcmp(b32, "195ravl4np3zf9wf75rfv0gj9138nr6hhygfxzvhzqjkkc5rmlwm"), "base32 of a tree");
    /* negative twin: one execute bit less is another hash */
    v[1].exec = 0;
    hash256 h2;
    CHECK(nix_nar_hash(v, sizeof(v) / sizeof(v[0]), &h2) == 0 && memcmp(&h, &h2, sizeof(h)),
          "the execute bit is hashed");
}

static void test_malformed(void)
{
    struct nix_node noroot = {"a", 'f', 0, "", 0};
    hash256 h;
    CHECK(nix_nar_hash(&noroot, 1, &h) < 0, "no root");
    struct nix_node dup[] = {{".", 'd', 0, NULL, 0}, {"a", 'f', 0, "", 0}, {"a", 'f', 0, "", 0}};
    CHECK(nix_nar_hash(dup, 3, &h) < 0, "a name twice");
    struct nix_node bad = {".", 'x', 0, NULL, 0};
    CHECK(nix_nar_hash(&bad, 1, &h) < 0, "unknown type");
}

int main(void)
{
    test_one_file();
    test_tree();
    test_malformed();
    return unit_done();
}
