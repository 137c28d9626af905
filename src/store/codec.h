/* codec.h - one page to its name and stored form and back (page store internal). */
#ifndef REWIND_STORE_CODEC_H
#define REWIND_STORE_CODEC_H

#include <stddef.h>
#include <stdint.h>

#include "util/hash.h"

#define STORE_F_RAW 0x0001u /* stored form is the page itself (zstd did not shrink it) */
#define STORE_F_SUM 0x0002u /* a zstd frame with its content checksum: written by this code */

struct store_codec {
    void *cctx;  /* ZSTD_CCtx */
    void *dctx;  /* ZSTD_DCtx */
    void *md;    /* EVP_MD for SHA-256, fetched once */
    void *mdctx; /* EVP_MD_CTX, reused for every page */
};

/* Allocate the compression and hashing contexts of c; returns 0 or -1 (ENOMEM). */
int store_codec_init(struct store_codec *c);

/* Free what store_codec_init allocated (a zeroed c is fine). */
void store_codec_free(struct store_codec *c);

/* Write the SHA-256 of the 4096 bytes at page into *out (equal to hash_buf's). */
void store_codec_hash(struct store_codec *c, const void *page, hash256 *out);

/* Return 1 if the 4096 bytes at page are all zero, else 0. */
int store_codec_is_zero(const void *page);

/* Compress the page at page with zstd level 1 and a content checksum into
 * out (4096 bytes of room); return the stored length and set *flags
 * (STORE_F_SUM, or STORE_F_RAW when stored as is). */
size_t store_codec_encode(struct store_codec *c, const void *page, void *out, uint16_t *flags);

/* Decode len stored bytes at in (with flags) into page and check that their
 * SHA-256 is *h; with trust, a frame with STORE_F_SUM whose checksum zstd
 * verified is not hashed again (invariant 3). Returns 0, or -1 (EIO) with
 * page's contents unspecified. */
int store_codec_decode(struct store_codec *c, const void *in, size_t len, uint16_t flags,
                       const hash256 *h, void *page, int trust);

#endif
