/*
 * bench/ingest.c (built and run by bench/ingest.sh): the cost of a page
 * entering the store, per codec, side by side in one run (issue 17 item 4).
 * For each 4 KiB page of the input files: SHA-256 alone (what a known page
 * costs: it is named, found and not stored again), and SHA-256 plus each
 * codec (what a new page costs): zstd level 1 (today's store and archives),
 * zstd's fast levels -1, -3, -5 and lz4 (LZ4_compress_default). Prints MB/s
 * per core and the ratio (input / output, a frame no smaller than the page
 * counted as stored raw, as the store does), and each codec's decode speed.
 * Each figure is the best of ROUNDS rounds, the codecs interleaved within a
 * round, so that a busy machine disturbs their ratios less.
 */
#include <lz4.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zstd.h>

#define PAGE 4096
#define ROUNDS 7
#define NCODEC 5

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static unsigned char *pages;
static size_t npages;

static void load(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        exit(2);
    }
    unsigned char buf[PAGE];
    size_t got;
    while ((got = fread(buf, 1, PAGE, f)) == PAGE) {
        pages = realloc(pages, (npages + 1) * PAGE);
        if (!pages)
            exit(2);
        memcpy(pages + npages++ * PAGE, buf, PAGE);
    }
    fclose(f);
}

static void sha(EVP_MD_CTX *c, const EVP_MD *md, const unsigned char *p, unsigned char *out)
{
    unsigned len;
    EVP_DigestInit_ex(c, md, NULL);
    EVP_DigestUpdate(c, p, PAGE);
    EVP_DigestFinal_ex(c, out, &len);
}

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        load(argv[i]);
    if (!npages) {
        fprintf(stderr, "ingest: no pages\n");
        return 2;
    }
    EVP_MD *md = EVP_MD_fetch(NULL, "SHA256", NULL);
    EVP_MD_CTX *mc = EVP_MD_CTX_new();
    ZSTD_CCtx *zc = ZSTD_createCCtx();
    ZSTD_DCtx *zd = ZSTD_createDCtx();
    unsigned char digest[32], out[PAGE * 2], back[PAGE];
    double mb = (double)npages * PAGE / 1e6;
    printf("%zu pages (%.1f MB)\n", npages, mb);
    printf("%-14s %12s %8s %12s\n", "codec", "new MB/s", "ratio", "decode MB/s");
    struct {
        const char *name;
        int level; /* zstd level, or 99: lz4 */
    } cs[NCODEC] = {{"zstd 1", 1}, {"zstd -1", -1}, {"zstd -3", -3}, {"zstd -5", -5}, {"lz4", 99}};
    double best_h = 1e9, best_c[NCODEC], best_d[NCODEC];
    size_t total[NCODEC];
    unsigned char *enc = malloc(npages * (PAGE + 16));
    size_t *elen = malloc(npages * sizeof(size_t));
    if (!enc || !elen)
        return 2;
    for (int c = 0; c < NCODEC; c++)
        best_c[c] = best_d[c] = 1e9;
    for (int round = 0; round < ROUNDS; round++) {
        double t0 = now();
        for (size_t i = 0; i < npages; i++)
            sha(mc, md, pages + i * PAGE, digest);
        double hs = now() - t0;
        best_h = hs < best_h ? hs : best_h;
        for (int c = 0; c < NCODEC; c++) {
            total[c] = 0;
            if (cs[c].level != 99)
                ZSTD_CCtx_setParameter(zc, ZSTD_c_compressionLevel, cs[c].level);
            t0 = now();
            for (size_t i = 0; i < npages; i++) {
                const unsigned char *p = pages + i * PAGE;
                sha(mc, md, p, digest);
                size_t n;
                if (cs[c].level == 99)
                    n = (size_t)LZ4_compress_default((const char *)p, (char *)out, PAGE,
                                                     sizeof(out));
                else
                    n = ZSTD_compress2(zc, out, sizeof(out), p, PAGE);
                if (n == 0 || ZSTD_isError(n) || n >= PAGE)
                    n = PAGE; /* stored raw */
                memcpy(enc + i * (PAGE + 16), n < PAGE ? out : p, n);
                elen[i] = n;
                total[c] += n;
            }
            double t = now() - t0;
            best_c[c] = t < best_c[c] ? t : best_c[c];
            t0 = now();
            for (size_t i = 0; i < npages; i++) {
                if (elen[i] == PAGE)
                    continue;
                const unsigned char *e = enc + i * (PAGE + 16);
                int ok = cs[c].level == 99
                             ? LZ4_decompress_safe((const char *)e, (char *)back, (int)elen[i],
                                                   PAGE) == PAGE
                             : ZSTD_decompressDCtx(zd, back, PAGE, e, elen[i]) == PAGE;
                if (!ok || memcmp(back, pages + i * PAGE, PAGE)) {
                    fprintf(stderr, "ingest: %s: page %zu does not come back\n", cs[c].name, i);
                    return 1;
                }
            }
            t = now() - t0;
            best_d[c] = t < best_d[c] ? t : best_d[c];
        }
    }
    printf("%-14s %12.0f %8s %12s   (a known page: hash only)\n", "sha256", mb / best_h, "-", "-");
    for (int c = 0; c < NCODEC; c++)
        printf("%-14s %12.0f %8.2f %12.0f\n", cs[c].name, mb / best_c[c],
               (double)npages * PAGE / (double)total[c], mb / best_d[c]);
    free(enc);
    free(elen);
    return 0;
}
