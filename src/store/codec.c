/*
 * codec: what a page becomes on disk (page store internal).
 *
 * A page is named by SHA-256 and stored as one zstd frame at level 1, or as
 * its raw 4096 bytes with STORE_F_RAW when the frame would not be smaller.
 * Level 1 because a keyframe's new pages are compressed at every capture:
 * zstd -1 compresses text-like pages about 6x at over 1 GB/s, higher levels
 * gain a little ratio for a large loss of speed. Since issue 29 the capture
 * compresses on a worker thread, off the step path (src/run/kfpipe.h);
 * zstd's negative levels and lz4 were measured against level 1 then and
 * not taken (bench/RESULTS.md, "Keyframes off the step path"): the format
 * stays a zstd frame or raw, as the flags say.
 *
 * Invariants:
 *  1. store_codec_hash gives exactly SHA-256 (the same bytes as hash_buf); it
 *     only avoids hash_buf's per-call digest lookup and allocation, which cost
 *     about a fifth of the time on a 4 KiB page (1,100 against 1,350 MB/s,
 *     bench/store.sh).
 *  2. store_codec_decode succeeds only if the decoded page is exactly 4096
 *     bytes and hashes to the expected name: a corrupt stored form can never
 *     come back as a page.
 *  3. Except when the caller trusts this store's own frames (store_load): a
 *     frame flagged STORE_F_SUM was compressed here from a page whose name
 *     was computed here from its bytes (store_put, import included), and
 *     carries zstd's content checksum (XXH64), which zstd checks while it
 *     decompresses; such a frame that decodes to 4096 bytes with a good
 *     checksum is that page, barring a deliberate forgery of the checksum.
 *     `rewind verify` and export still re-hash every page.
 */
#include "store/codec.h"

#include <errno.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "store/store.h"

int store_codec_init(struct store_codec *c)
{
    memset(c, 0, sizeof(*c));
    c->cctx = ZSTD_createCCtx();
    c->dctx = ZSTD_createDCtx();
    c->md = EVP_MD_fetch(NULL, "SHA256", NULL);
    c->mdctx = EVP_MD_CTX_new();
    if (!c->cctx || !c->dctx || !c->md || !c->mdctx ||
        ZSTD_isError(ZSTD_CCtx_setParameter(c->cctx, ZSTD_c_compressionLevel, 1)) ||
        ZSTD_isError(ZSTD_CCtx_setParameter(c->cctx, ZSTD_c_checksumFlag, 1))) {
        store_codec_free(c);
        errno = ENOMEM;
        return -1;
    }
    return 0;
}

void store_codec_free(struct store_codec *c)
{
    ZSTD_freeCCtx(c->cctx);
    ZSTD_freeDCtx(c->dctx);
    EVP_MD_free(c->md);
    EVP_MD_CTX_free(c->mdctx);
    memset(c, 0, sizeof(*c));
}

void store_codec_hash(struct store_codec *c, const void *page, hash256 *out)
{
    unsigned int len = 0;
    if (!EVP_DigestInit_ex2(c->mdctx, c->md, NULL) ||
        !EVP_DigestUpdate(c->mdctx, page, STORE_PAGE_SIZE) ||
        !EVP_DigestFinal_ex(c->mdctx, out->b, &len) || len != 32) {
        /* As in hash.c: a digest over memory cannot fail short of a broken
         * libcrypto, and a wrong name would be worse than stopping. */
        fprintf(stderr, "rewind: libcrypto failure in the page store\n");
        abort();
    }
}

int store_codec_is_zero(const void *page)
{
    /* Zero iff the first 8 bytes are zero and the page equals itself shifted
     * by 8 bytes; memcmp is the fastest scan libc offers. */
    const unsigned char *p = page;
    uint64_t w;
    memcpy(&w, p, 8);
    return w == 0 && memcmp(p, p + 8, STORE_PAGE_SIZE - 8) == 0;
}

size_t store_codec_encode(struct store_codec *c, const void *page, void *out, uint16_t *flags)
{
    /* A destination one byte short of a page makes zstd give up as soon as
     * the frame could not be smaller than the page itself. */
    size_t n = ZSTD_compress2(c->cctx, out, STORE_PAGE_SIZE - 1, page, STORE_PAGE_SIZE);
    if (ZSTD_isError(n)) {
        memcpy(out, page, STORE_PAGE_SIZE);
        *flags = STORE_F_RAW;
        return STORE_PAGE_SIZE;
    }
    *flags = STORE_F_SUM;
    return n;
}

int store_codec_decode(struct store_codec *c, const void *in, size_t len, uint16_t flags,
                       const hash256 *h, void *page, int trust)
{
    if (flags & STORE_F_RAW) {
        if (len != STORE_PAGE_SIZE)
            goto bad;
        memcpy(page, in, STORE_PAGE_SIZE);
    } else {
        size_t n = ZSTD_decompressDCtx(c->dctx, page, STORE_PAGE_SIZE, in, len);
        if (ZSTD_isError(n) || n != STORE_PAGE_SIZE)
            goto bad;
        /* The frame header descriptor (RFC 8878 3.1.1.1.1) after the 4-byte
         * magic: bit 2 is Content_Checksum_flag, which makes zstd check the
         * checksum while decompressing. */
        const uint8_t *f = in;
        if (trust && (flags & STORE_F_SUM) && len > 4 && f[0] == 0x28 && f[1] == 0xb5 &&
            f[2] == 0x2f && f[3] == 0xfd && (f[4] & 0x04))
            return 0; /* invariant 3: zstd verified the content checksum */
    }
    hash256 got;
    store_codec_hash(c, page, &got);
    if (memcmp(got.b, h->b, sizeof(got.b)) == 0)
        return 0;
bad:
    errno = EIO;
    return -1;
}
