/* hash.c - SHA-256 via OpenSSL 3's EVP API.
 *
 * What it is for: naming content (root filesystem images, cache keys) by
 * its SHA-256, as lowercase hex.
 *
 * Invariants:
 *  - A hash_ctx owns exactly one EVP_MD_CTX, initialised for SHA-256 by
 *    hash_new and freed by hash_final; nothing else frees it.
 *  - SHA-256 over memory cannot fail short of libcrypto being broken or out
 *    of memory mid-digest, so the void functions abort() rather than return a
 *    hash that is silently wrong.
 *  - hash_file never writes *out unless the whole file was read.
 *  - SHA-256's implementation is fetched from libcrypto once per process
 *    (pthread_once) and never freed: OpenSSL 3 otherwise looks it up on
 *    every digest, about a tenth of a 4 KiB page's hash (bench/sha256.sh, bench/RESULTS.md).
 */
#include "util/hash.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "util/io.h"

struct hash_ctx {
    EVP_MD_CTX *md;
};

static void hash_die(const char *what)
{
    fprintf(stderr, "rewind: libcrypto failure in %s\n", what);
    abort();
}

static pthread_once_t sha256_once = PTHREAD_ONCE_INIT;
static EVP_MD *sha256_md;

static void sha256_fetch(void)
{
    sha256_md = EVP_MD_fetch(NULL, "SHA256", NULL);
}

static const EVP_MD *sha256(void)
{
    if (pthread_once(&sha256_once, sha256_fetch) != 0 || !sha256_md)
        hash_die("EVP_MD_fetch");
    return sha256_md;
}

void hash_buf(const void *p, size_t n, hash256 *out)
{
    unsigned int len = 0;
    if (!EVP_Digest(p, n, out->b, &len, sha256(), NULL) || len != 32)
        hash_die("EVP_Digest");
}

hash_ctx *hash_new(void)
{
    hash_ctx *c = malloc(sizeof *c);
    if (!c) {
        errno = ENOMEM;
        return NULL;
    }
    c->md = EVP_MD_CTX_new();
    if (!c->md) {
        free(c);
        errno = ENOMEM;
        return NULL;
    }
    if (!EVP_DigestInit_ex(c->md, sha256(), NULL))
        hash_die("EVP_DigestInit_ex");
    return c;
}

void hash_update(hash_ctx *ctx, const void *p, size_t n)
{
    if (n && !EVP_DigestUpdate(ctx->md, p, n))
        hash_die("EVP_DigestUpdate");
}

void hash_final(hash_ctx *ctx, hash256 *out)
{
    unsigned int len = 0;
    if (!EVP_DigestFinal_ex(ctx->md, out->b, &len) || len != 32)
        hash_die("EVP_DigestFinal_ex");
    EVP_MD_CTX_free(ctx->md);
    free(ctx);
}

/* Read fd to EOF into ctx; returns 0 or -1 with errno. */
static int hash_fd(int fd, hash_ctx *ctx)
{
    static const size_t bufsz = 1 << 16;
    unsigned char *buf = malloc(bufsz);
    if (!buf)
        return -1;
    for (;;) {
        ssize_t r = io_read_full(fd, buf, bufsz);
        if (r < 0) {
            int e = errno;
            free(buf);
            errno = e;
            return -1;
        }
        if (r == 0)
            break;
        hash_update(ctx, buf, (size_t)r);
    }
    free(buf);
    return 0;
}

int hash_file(const char *path, hash256 *out)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    hash_ctx *ctx = hash_new();
    if (!ctx) {
        close(fd);
        errno = ENOMEM;
        return -1;
    }
    int rc = hash_fd(fd, ctx);
    int e = errno;
    hash256 h;
    hash_final(ctx, &h);
    close(fd);
    if (rc < 0) {
        errno = e;
        return -1;
    }
    *out = h;
    return 0;
}

void hash_hex(const hash256 *h, char out[65])
{
    static const char digits[] = "0123456789abcdef";
    for (int i = 0; i < 32; i++) {
        out[2 * i] = digits[h->b[i] >> 4];
        out[2 * i + 1] = digits[h->b[i] & 15];
    }
    out[64] = '\0';
}
