/*
 * nar: Nix archives (NAR) and Nix's base-32, as docs/formats.md ("NAR")
 * describes them: how `rewind nix` hashes a build's outputs the way Nix
 * does (`nix-hash --type sha256 --base32 PATH`).
 */
#ifndef REWIND_NIX_NAR_H
#define REWIND_NIX_NAR_H

#include <stddef.h>
#include <stdint.h>

#include "util/hash.h"

/* One entry of a tree: path relative to the root ("." for the root
 * itself, "a/b" below it), type 'f' (file), 'd' (directory) or 'l'
 * (symlink), exec (a file with an execute bit), data (a file's content or
 * a symlink's target). */
struct nix_node {
    const char *path;
    char type;
    int exec;
    const void *data;
    size_t len;
};

/* Stream the NAR of the tree in v[0..n) to fn (called with consecutive
 * pieces). The tree must hold "." and every parent of every path. 0, or -1
 * (errno EINVAL: a malformed tree). */
int nix_nar_write(const struct nix_node *v, size_t n,
                  void (*fn)(void *ctx, const void *p, size_t len), void *ctx);

/* SHA-256 of the NAR of the tree. 0 or -1 as nix_nar_write. */
int nix_nar_hash(const struct nix_node *v, size_t n, hash256 *out);

/* Nix's base-32 of n bytes (52 characters for SHA-256) + NUL into out
 * (at least (n * 8 - 1) / 5 + 2 bytes). */
void nix_base32(const unsigned char *h, size_t n, char *out);

#endif
