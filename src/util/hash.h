/* hash.h - SHA-256 content hashing (libcrypto EVP). */
#ifndef REWIND_UTIL_HASH_H
#define REWIND_UTIL_HASH_H

#include <stddef.h>

typedef struct {
    unsigned char b[32];
} hash256;

typedef struct hash_ctx hash_ctx;

/* Compute the SHA-256 of the n bytes at p into *out (aborts only if libcrypto itself fails). */
void hash_buf(const void *p, size_t n, hash256 *out);

/* Stream the file at path through SHA-256 into *out; returns 0, or -1 with errno set (out
 * untouched). */
int hash_file(const char *path, hash256 *out);

/* Write h as 64 lowercase hex digits plus a terminating NUL into out. */
void hash_hex(const hash256 *h, char out[65]);

/* Start an incremental SHA-256; returns NULL (errno ENOMEM) if it cannot be allocated. */
hash_ctx *hash_new(void);

/* Feed n bytes at p into ctx (n may be 0); ctx must come from hash_new and not yet be finalised. */
void hash_update(hash_ctx *ctx, const void *p, size_t n);

/* Write the digest of everything fed to ctx into *out and free ctx (ctx is invalid afterwards). */
void hash_final(hash_ctx *ctx, hash256 *out);

#endif
