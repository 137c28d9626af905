/*
 * index: encode, read, trim and append the page store's index file (page
 * store internal; the format is in index.h, the locking rules in store.c).
 *
 * Invariants:
 *  1. An entry is good only if its CRC-32C matches and its fields are in
 *     range (pack >= 1, offset past the pack header, length 1..4096, raw pages
 *     exactly 4096, no unknown flag); anything else is skipped, never trusted.
 *  2. ix->off only ever moves to the end of a good entry, so it never points
 *     past a tail that a locked trim may cut, and a trim never cuts a good
 *     entry (it cuts from ix->off after a locked read of everything).
 *  3. Appends are one write(2) of whole entries to an O_APPEND file under the
 *     lock: other readers see an entry either whole (Linux raises i_size only
 *     after copying the bytes) or not at all (a partial tail, not consumed).
 */
#include "store/index.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store/codec.h"
#include "store/pack.h"
#include "store/store.h"

#define STORE_INDEX_CHUNK 1365 /* entries per read: just under 64 KiB */
#define INDEX_MAGIC "RWSTIDX1"
#define INDEX_VERSION 1
#define INDEX_HASH_SHA256 1

/* CRC-32C (Castagnoli), reflected, polynomial 0x82f63b78. */
static const uint32_t crc32c_table[256] = {
    0x00000000u, 0xf26b8303u, 0xe13b70f7u, 0x1350f3f4u, 0xc79a971fu, 0x35f1141cu, 0x26a1e7e8u,
    0xd4ca64ebu, 0x8ad958cfu, 0x78b2dbccu, 0x6be22838u, 0x9989ab3bu, 0x4d43cfd0u, 0xbf284cd3u,
    0xac78bf27u, 0x5e133c24u, 0x105ec76fu, 0xe235446cu, 0xf165b798u, 0x030e349bu, 0xd7c45070u,
    0x25afd373u, 0x36ff2087u, 0xc494a384u, 0x9a879fa0u, 0x68ec1ca3u, 0x7bbcef57u, 0x89d76c54u,
    0x5d1d08bfu, 0xaf768bbcu, 0xbc267848u, 0x4e4dfb4bu, 0x20bd8edeu, 0xd2d60dddu, 0xc186fe29u,
    0x33ed7d2au, 0xe72719c1u, 0x154c9ac2u, 0x061c6936u, 0xf477ea35u, 0xaa64d611u, 0x580f5512u,
    0x4b5fa6e6u, 0xb93425e5u, 0x6dfe410eu, 0x9f95c20du, 0x8cc531f9u, 0x7eaeb2fau, 0x30e349b1u,
    0xc288cab2u, 0xd1d83946u, 0x23b3ba45u, 0xf779deaeu, 0x05125dadu, 0x1642ae59u, 0xe4292d5au,
    0xba3a117eu, 0x4851927du, 0x5b016189u, 0xa96ae28au, 0x7da08661u, 0x8fcb0562u, 0x9c9bf696u,
    0x6ef07595u, 0x417b1dbcu, 0xb3109ebfu, 0xa0406d4bu, 0x522bee48u, 0x86e18aa3u, 0x748a09a0u,
    0x67dafa54u, 0x95b17957u, 0xcba24573u, 0x39c9c670u, 0x2a993584u, 0xd8f2b687u, 0x0c38d26cu,
    0xfe53516fu, 0xed03a29bu, 0x1f682198u, 0x5125dad3u, 0xa34e59d0u, 0xb01eaa24u, 0x42752927u,
    0x96bf4dccu, 0x64d4cecfu, 0x77843d3bu, 0x85efbe38u, 0xdbfc821cu, 0x2997011fu, 0x3ac7f2ebu,
    0xc8ac71e8u, 0x1c661503u, 0xee0d9600u, 0xfd5d65f4u, 0x0f36e6f7u, 0x61c69362u, 0x93ad1061u,
    0x80fde395u, 0x72966096u, 0xa65c047du, 0x5437877eu, 0x4767748au, 0xb50cf789u, 0xeb1fcbadu,
    0x197448aeu, 0x0a24bb5au, 0xf84f3859u, 0x2c855cb2u, 0xdeeedfb1u, 0xcdbe2c45u, 0x3fd5af46u,
    0x7198540du, 0x83f3d70eu, 0x90a324fau, 0x62c8a7f9u, 0xb602c312u, 0x44694011u, 0x5739b3e5u,
    0xa55230e6u, 0xfb410cc2u, 0x092a8fc1u, 0x1a7a7c35u, 0xe811ff36u, 0x3cdb9bddu, 0xceb018deu,
    0xdde0eb2au, 0x2f8b6829u, 0x82f63b78u, 0x709db87bu, 0x63cd4b8fu, 0x91a6c88cu, 0x456cac67u,
    0xb7072f64u, 0xa457dc90u, 0x563c5f93u, 0x082f63b7u, 0xfa44e0b4u, 0xe9141340u, 0x1b7f9043u,
    0xcfb5f4a8u, 0x3dde77abu, 0x2e8e845fu, 0xdce5075cu, 0x92a8fc17u, 0x60c37f14u, 0x73938ce0u,
    0x81f80fe3u, 0x55326b08u, 0xa759e80bu, 0xb4091bffu, 0x466298fcu, 0x1871a4d8u, 0xea1a27dbu,
    0xf94ad42fu, 0x0b21572cu, 0xdfeb33c7u, 0x2d80b0c4u, 0x3ed04330u, 0xccbbc033u, 0xa24bb5a6u,
    0x502036a5u, 0x4370c551u, 0xb11b4652u, 0x65d122b9u, 0x97baa1bau, 0x84ea524eu, 0x7681d14du,
    0x2892ed69u, 0xdaf96e6au, 0xc9a99d9eu, 0x3bc21e9du, 0xef087a76u, 0x1d63f975u, 0x0e330a81u,
    0xfc588982u, 0xb21572c9u, 0x407ef1cau, 0x532e023eu, 0xa145813du, 0x758fe5d6u, 0x87e466d5u,
    0x94b49521u, 0x66df1622u, 0x38cc2a06u, 0xcaa7a905u, 0xd9f75af1u, 0x2b9cd9f2u, 0xff56bd19u,
    0x0d3d3e1au, 0x1e6dcdeeu, 0xec064eedu, 0xc38d26c4u, 0x31e6a5c7u, 0x22b65633u, 0xd0ddd530u,
    0x0417b1dbu, 0xf67c32d8u, 0xe52cc12cu, 0x1747422fu, 0x49547e0bu, 0xbb3ffd08u, 0xa86f0efcu,
    0x5a048dffu, 0x8ecee914u, 0x7ca56a17u, 0x6ff599e3u, 0x9d9e1ae0u, 0xd3d3e1abu, 0x21b862a8u,
    0x32e8915cu, 0xc083125fu, 0x144976b4u, 0xe622f5b7u, 0xf5720643u, 0x07198540u, 0x590ab964u,
    0xab613a67u, 0xb831c993u, 0x4a5a4a90u, 0x9e902e7bu, 0x6cfbad78u, 0x7fab5e8cu, 0x8dc0dd8fu,
    0xe330a81au, 0x115b2b19u, 0x020bd8edu, 0xf0605beeu, 0x24aa3f05u, 0xd6c1bc06u, 0xc5914ff2u,
    0x37faccf1u, 0x69e9f0d5u, 0x9b8273d6u, 0x88d28022u, 0x7ab90321u, 0xae7367cau, 0x5c18e4c9u,
    0x4f48173du, 0xbd23943eu, 0xf36e6f75u, 0x0105ec76u, 0x12551f82u, 0xe03e9c81u, 0x34f4f86au,
    0xc69f7b69u, 0xd5cf889du, 0x27a40b9eu, 0x79b737bau, 0x8bdcb4b9u, 0x988c474du, 0x6ae7c44eu,
    0xbe2da0a5u, 0x4c4623a6u, 0x5f16d052u, 0xad7d5351u,
};

static uint32_t crc32c(const uint8_t *p, size_t n)
{
    uint32_t c = 0xffffffffu;
    while (n--)
        c = crc32c_table[(c ^ *p++) & 0xff] ^ (c >> 8);
    return ~c;
}

static void put_u16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

static void put_u32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint16_t get_u16(const uint8_t *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t get_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void encode_entry(const struct store_entry *e, uint8_t *out)
{
    memcpy(out, e->h.b, 32);
    put_u32(out + 32, e->pack);
    put_u32(out + 36, e->off);
    put_u16(out + 40, e->len);
    put_u16(out + 42, e->flags);
    put_u32(out + 44, crc32c(out, 44));
}

/* Decode one entry; returns 1 if it is good (invariant 1), else 0. */
static int decode_entry(const uint8_t *in, struct store_entry *e)
{
    if (get_u32(in + 44) != crc32c(in, 44))
        return 0;
    memcpy(e->h.b, in, 32);
    e->pack = get_u32(in + 32);
    e->off = get_u32(in + 36);
    e->len = get_u16(in + 40);
    e->flags = get_u16(in + 42);
    if (e->pack < 1 || e->pack > STORE_PACK_MAX_NUM || e->off < STORE_PACK_HEADER)
        return 0;
    if (e->len < 1 || e->len > STORE_PAGE_SIZE || (e->flags & ~STORE_F_RAW))
        return 0;
    if ((e->flags & STORE_F_RAW) && e->len != STORE_PAGE_SIZE)
        return 0;
    return 1;
}

static void encode_header(uint8_t *out)
{
    memset(out, 0, STORE_INDEX_HEADER);
    memcpy(out, INDEX_MAGIC, 8);
    put_u32(out + 8, INDEX_VERSION);
    put_u32(out + 12, STORE_INDEX_ENTRY);
    put_u32(out + 16, STORE_PAGE_SIZE);
    put_u32(out + 20, INDEX_HASH_SHA256);
    put_u32(out + 44, crc32c(out, 44));
}

/* Write all n bytes at p to fd (appending); returns 0 or -1. */
static int write_all(int fd, const void *p, size_t n)
{
    const uint8_t *b = p;
    while (n > 0) {
        ssize_t w = write(fd, b, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return -1;
        if (w == 0) {
            errno = EIO;
            return -1;
        }
        b += w;
        n -= (size_t)w;
    }
    return 0;
}

int store_index_open(struct store_index *ix, const char *path)
{
    memset(ix, 0, sizeof(*ix));
    ix->fd = -1;
    ix->buf = malloc((size_t)STORE_INDEX_CHUNK * STORE_INDEX_ENTRY);
    if (!ix->buf) {
        errno = ENOMEM;
        return -1;
    }
    ix->fd = open(path, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    struct stat sb;
    if (ix->fd < 0 || fstat(ix->fd, &sb) < 0) {
        int e = errno;
        store_index_close(ix);
        errno = e;
        return -1;
    }
    ix->dev = sb.st_dev;
    ix->ino = sb.st_ino;
    return 0;
}

void store_index_close(struct store_index *ix)
{
    if (ix->fd >= 0)
        close(ix->fd);
    free(ix->buf);
    memset(ix, 0, sizeof(*ix));
    ix->fd = -1;
}

int store_index_replaced(const struct store_index *ix, const char *path)
{
    struct stat sb;
    if (stat(path, &sb) < 0)
        return errno == ENOENT ? 1 : -1;
    /* ix holds the old file open, so its inode cannot be reused by a new one. */
    return sb.st_dev != ix->dev || sb.st_ino != ix->ino;
}

int store_index_check_header(struct store_index *ix)
{
    uint8_t got[STORE_INDEX_HEADER], want[STORE_INDEX_HEADER];
    ssize_t r;
    do
        r = pread(ix->fd, got, sizeof(got), 0);
    while (r < 0 && errno == EINTR);
    if (r < 0)
        return -1;
    if (r < (ssize_t)sizeof(got))
        return 1;
    static const uint8_t zeros[STORE_INDEX_HEADER];
    struct stat sb;
    if (memcmp(got, zeros, sizeof(got)) == 0 && fstat(ix->fd, &sb) == 0 &&
        sb.st_size == STORE_INDEX_HEADER)
        return 1; /* created, then an OS crash lost the header's bytes */
    encode_header(want);
    if (memcmp(got, want, sizeof(got)) != 0) {
        errno = EPROTO;
        return -1;
    }
    if (ix->off < STORE_INDEX_HEADER)
        ix->off = STORE_INDEX_HEADER;
    return 0;
}

int store_index_init_locked(struct store_index *ix)
{
    uint8_t h[STORE_INDEX_HEADER];
    encode_header(h);
    if (ftruncate(ix->fd, 0) < 0 || write_all(ix->fd, h, sizeof(h)) < 0)
        return -1;
    ix->off = STORE_INDEX_HEADER;
    return 0;
}

int store_index_read(struct store_index *ix, uint64_t from, store_entry_fn fn, void *ctx,
                     struct store_index_scan *sc)
{
    struct stat sb;
    memset(sc, 0, sizeof(*sc));
    sc->good_end = from;
    if (fstat(ix->fd, &sb) < 0)
        return -1;
    sc->size = (uint64_t)sb.st_size;
    uint64_t pos = from, pending_bad = 0;
    while (pos + STORE_INDEX_ENTRY <= sc->size) {
        uint64_t want = (sc->size - pos) / STORE_INDEX_ENTRY;
        if (want > STORE_INDEX_CHUNK)
            want = STORE_INDEX_CHUNK;
        ssize_t r = pread(ix->fd, ix->buf, want * STORE_INDEX_ENTRY, (off_t)pos);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return -1;
        size_t got = (size_t)r / STORE_INDEX_ENTRY;
        if (got == 0)
            break; /* cut under us by a locked trim: nothing good was there */
        for (size_t i = 0; i < got; i++, pos += STORE_INDEX_ENTRY) {
            struct store_entry e;
            if (!decode_entry(ix->buf + i * STORE_INDEX_ENTRY, &e)) {
                pending_bad++;
                continue;
            }
            if (fn && fn(ctx, &e) < 0)
                return -1;
            sc->bad += pending_bad;
            pending_bad = 0;
            sc->good_end = pos + STORE_INDEX_ENTRY;
        }
    }
    return 0;
}

int64_t store_index_trim_locked(struct store_index *ix)
{
    struct stat sb;
    if (fstat(ix->fd, &sb) < 0)
        return -1;
    if ((uint64_t)sb.st_size <= ix->off)
        return 0;
    if (ftruncate(ix->fd, (off_t)ix->off) < 0)
        return -1;
    return (int64_t)((uint64_t)sb.st_size - ix->off);
}

int store_index_append_locked(struct store_index *ix, const struct store_entry *e, size_t n)
{
    struct stat sb;
    if (fstat(ix->fd, &sb) < 0)
        return -1;
    if ((uint64_t)sb.st_size < ix->off) {
        errno = EIO; /* shorter than what we read: not the file we think it is */
        return -1;
    }
    if ((uint64_t)sb.st_size > ix->off && ftruncate(ix->fd, (off_t)ix->off) < 0)
        return -1; /* a bad tail: cut it so entries stay on boundaries */
    while (n > 0) {
        size_t k = n < STORE_INDEX_CHUNK ? n : STORE_INDEX_CHUNK;
        for (size_t i = 0; i < k; i++)
            encode_entry(&e[i], ix->buf + i * STORE_INDEX_ENTRY);
        if (write_all(ix->fd, ix->buf, k * STORE_INDEX_ENTRY) < 0) {
            int err = errno;
            if (ftruncate(ix->fd, (off_t)ix->off) < 0) {
                /* Left as a tail the next locked trim cuts (invariant 2). */
            }
            errno = err;
            return -1;
        }
        ix->off += k * STORE_INDEX_ENTRY;
        e += k;
        n -= k;
    }
    return 0;
}

int store_index_sync(struct store_index *ix)
{
    return fdatasync(ix->fd);
}

int store_index_write_file(const char *path, const struct store_entry *e, size_t n)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return -1;
    uint8_t *buf = malloc((size_t)STORE_INDEX_CHUNK * STORE_INDEX_ENTRY);
    int rc = -1;
    if (!buf) {
        errno = ENOMEM;
        goto out;
    }
    encode_header(buf);
    if (write_all(fd, buf, STORE_INDEX_HEADER) < 0)
        goto out;
    while (n > 0) {
        size_t k = n < STORE_INDEX_CHUNK ? n : STORE_INDEX_CHUNK;
        for (size_t i = 0; i < k; i++)
            encode_entry(&e[i], buf + i * STORE_INDEX_ENTRY);
        if (write_all(fd, buf, k * STORE_INDEX_ENTRY) < 0)
            goto out;
        e += k;
        n -= k;
    }
    rc = fsync(fd);
out:;
    int err = errno;
    free(buf);
    close(fd);
    errno = err;
    return rc;
}
