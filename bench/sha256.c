/*
 * sha256.c: what SHA-256 of one 4 KiB page costs through OpenSSL 3's EVP
 * API, three ways: EVP_Digest with EVP_sha256() (an implicit fetch per
 * call), a context reused with an EVP_MD fetched once, and EVP_Digest with
 * the fetched EVP_MD (src/util/hash.c's way). bench/sha256.sh runs it here
 * and in the test host under several OPENSSL_ia32cap masks.
 */
#include <openssl/evp.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(void)
{
    static unsigned char buf[4096 * 256];
    memset(buf, 7, sizeof buf);
    unsigned char out[32];
    unsigned len;
    const int n = 20000;
    double t = now();
    for (int i = 0; i < n; i++)
        EVP_Digest(buf + (i % 256) * 4096, 4096, out, &len, EVP_sha256(), NULL);
    double a = now() - t;
    EVP_MD *md = EVP_MD_fetch(NULL, "SHA256", NULL);
    EVP_MD_CTX *c = EVP_MD_CTX_new();
    t = now();
    for (int i = 0; i < n; i++) {
        EVP_DigestInit_ex(c, md, NULL);
        EVP_DigestUpdate(c, buf + (i % 256) * 4096, 4096);
        EVP_DigestFinal_ex(c, out, &len);
    }
    double b = now() - t;
    t = now();
    for (int i = 0; i < n; i++)
        EVP_Digest(buf + (i % 256) * 4096, 4096, out, &len, md, NULL);
    double d = now() - t;
    printf("us per 4 KiB page: EVP_Digest(EVP_sha256()) %.2f; fetched once, context reused %.2f; "
           "EVP_Digest(fetched) %.2f\n",
           a / n * 1e6, b / n * 1e6, d / n * 1e6);
    EVP_MD_CTX_free(c);
    EVP_MD_free(md);
    return 0;
}
