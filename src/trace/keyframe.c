/*
 * keyframe: see keyframe.h for the file format and the chain.
 *
 * Invariants:
 *  1. A record the reader accepts lies wholly inside the file (its header,
 *     padded state and pages end at or before the file's size).
 *  2. A parent named by a keyframes file is a safe run directory name
 *     (home_safe_name) and not a staging directory (no leading '.') before
 *     any path is built from it.
 *  3. Only damage that looks like a crash while appending (looks_torn: a
 *     short last record, or a zero tail) is a torn tail; a bad record with
 *     other bytes after it, a flipped byte in a whole-length last record or
 *     a read error sets damaged, and a failed allocation fails kf_open:
 *     nothing that may hide keyframes reads as "the file ends here"
 *     (issue 27, 4: gc frees by what this reader reports).
 */
#include "trace/keyframe.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/homepath.h"
#include "util/bytes.h"
#include "util/check.h"
#include "util/crc.h"
#include "util/fail.h"

struct rec_hdr {
    uint32_t magic, npages;
    uint64_t step;
    uint32_t state_len, crc;
};

#define REC_HDR_SIZE 24 /* u32 magic | u32 npages | u64 step | u32 state_len | u32 crc */

static void hdr_encode(uint8_t b[REC_HDR_SIZE], const struct rec_hdr *h)
{
    bytes_put_u32(b, h->magic);
    bytes_put_u32(b + 4, h->npages);
    bytes_put_u64(b + 8, h->step);
    bytes_put_u32(b + 16, h->state_len);
    bytes_put_u32(b + 20, h->crc);
}

static void hdr_decode(const uint8_t b[REC_HDR_SIZE], struct rec_hdr *h)
{
    h->magic = bytes_get_u32(b);
    h->npages = bytes_get_u32(b + 4);
    h->step = bytes_get_u64(b + 8);
    h->state_len = bytes_get_u32(b + 16);
    h->crc = bytes_get_u32(b + 20);
}

static uint64_t pad8(uint64_t n)
{
    return (n + 7) & ~7ull;
}

int kf_create(struct kf_writer *w, const char *path, const char *parent, uint64_t parent_upto)
{
    memset(w, 0, sizeof(*w));
    uint8_t h[KF_HEADER_SIZE] = {0};
    memcpy(h, KF_MAGIC, 8);
    bytes_put_u32(h + 8, KF_VERSION);
    bytes_put_u32(h + 12, KF_HEADER_SIZE);
    if (parent && strlen(parent) > 32) {
        errno = ENAMETOOLONG;
        return -1;
    }
    if (parent)
        memcpy(h + 16, parent, strlen(parent));
    bytes_put_u64(h + 48, parent_upto);
    w->f = fopen(path, "wbe");
    if (!w->f)
        return -1;
    if (fwrite(h, sizeof(h), 1, w->f) != 1 || fflush(w->f) != 0) {
        fclose(w->f);
        w->f = NULL;
        return -1;
    }
    w->bytes = sizeof(h);
    return 0;
}

int kf_append(struct kf_writer *w, uint64_t step, const void *state, uint32_t state_len,
              const struct kf_page *pages, uint32_t npages)
{
    if (!w->f || w->failed)
        return -1;
    struct rec_hdr h = {
        .magic = KF_REC_MAGIC, .npages = npages, .step = step, .state_len = state_len};
    static const uint8_t zeros[8];
    uint64_t spad = pad8(state_len) - state_len;
    uint8_t hb[REC_HDR_SIZE];
    hdr_encode(hb, &h);
    uint32_t crc = crc_32(0, hb, sizeof(hb));
    crc = crc_32(crc, state, state_len);
    crc = crc_32(crc, zeros, spad);
    crc = crc_32(crc, pages, (size_t)npages * sizeof(*pages));
    h.crc = crc;
    hdr_encode(hb, &h);
    int ok =
        fwrite(hb, sizeof(hb), 1, w->f) == 1 && fwrite(state, 1, state_len, w->f) == state_len &&
        fwrite(zeros, 1, spad, w->f) == spad &&
        (npages == 0 || fwrite(pages, sizeof(*pages), npages, w->f) == npages) && fflush(w->f) == 0;
    if (!ok) {
        w->failed = 1;
        return -1;
    }
    w->count++;
    w->last_step = step;
    w->bytes += sizeof(hb) + state_len + spad + (uint64_t)npages * sizeof(*pages);
    return 0;
}

int kf_close(struct kf_writer *w)
{
    if (!w->f)
        return 0;
    int rc = (w->failed || fflush(w->f) != 0 || fsync(fileno(w->f)) != 0) ? -1 : 0;
    if (fclose(w->f) != 0)
        rc = -1;
    w->f = NULL;
    return rc;
}

/* 1 if the bytes from off to the end of the file are what a crash while
 * appending one record leaves (invariant 3): fewer than a record's header,
 * a record whose stated length runs past the end, or a tail of zeros where
 * the file system had not yet written the data; 0 for anything else (a
 * flipped byte, a bad record followed by more data). */
static int looks_torn(FILE *f, uint64_t off, uint64_t size)
{
    uint8_t hb[REC_HDR_SIZE];
    if (size - off < sizeof(hb))
        return 1;
    if (fseeko(f, (off_t)off, SEEK_SET) != 0 || fread(hb, sizeof(hb), 1, f) != 1)
        return 0;
    struct rec_hdr r;
    hdr_decode(hb, &r);
    uint64_t body = pad8(r.state_len) + (uint64_t)r.npages * sizeof(struct kf_page);
    if (r.magic == KF_REC_MAGIC && body > size - off - sizeof(hb))
        return 1; /* short: the record's end was never written */
    /* a zero tail: the record's last page-cache block was lost */
    uint64_t z = size, at; /* z: the end of the last nonzero byte + 1 */
    uint8_t b[4096];
    while (z > off) {
        at = z - off > sizeof(b) ? z - sizeof(b) : off;
        if (fseeko(f, (off_t)at, SEEK_SET) != 0 || fread(b, 1, (size_t)(z - at), f) != z - at)
            return 0;
        size_t n = (size_t)(z - at);
        while (n && b[n - 1] == 0)
            n--;
        if (n) {
            z = at + n;
            break;
        }
        z = at;
    }
    /* nothing but zeros from off, or a record that ends at the end of the
     * file and whose body is all zeros or ends in 512 of them */
    return z == off || ((z <= off + sizeof(hb) || size - z >= 512) && r.magic == KF_REC_MAGIC &&
                        off + sizeof(hb) + body == size);
}

int kf_open(const char *path, struct kf_file *k)
{
    memset(k, 0, sizeof(*k));
    k->f = fopen(path, "rbe");
    if (!k->f)
        return -1;
    struct stat st;
    uint8_t h[KF_HEADER_SIZE];
    if (fstat(fileno(k->f), &st) < 0 || fread(h, sizeof(h), 1, k->f) != 1 ||
        memcmp(h, KF_MAGIC, 8) != 0) {
        kf_close_read(k);
        return -2;
    }
    if (bytes_get_u32(h + 8) != KF_VERSION || bytes_get_u32(h + 12) != KF_HEADER_SIZE) {
        kf_close_read(k);
        return -2;
    }
    memcpy(k->parent, h + 16, 32);
    k->parent[32] = 0;
    k->parent_upto = bytes_get_u64(h + 48);
    uint64_t off = KF_HEADER_SIZE, size = (uint64_t)st.st_size, last = 0;
    size_t cap = 0;
    uint8_t *buf = NULL;
    int oom = 0;
    for (;;) {
        struct rec_hdr r;
        uint8_t hb[REC_HDR_SIZE];
        if (size - off < sizeof(hb))
            break;
        if (fseeko(k->f, (off_t)off, SEEK_SET) != 0 || fread(hb, sizeof(hb), 1, k->f) != 1) {
            k->torn = k->damaged = 1; /* a read error is no torn tail (inv. 3) */
            break;
        }
        hdr_decode(hb, &r);
        uint64_t body = pad8(r.state_len) + (uint64_t)r.npages * sizeof(struct kf_page);
        if (r.magic != KF_REC_MAGIC || r.state_len > (64u << 10) || r.npages > (1u << 22) ||
            body > size - off - sizeof(hb) || (k->n && r.step <= last)) {
            k->torn = 1;
            break;
        }
        uint8_t *nb = realloc(buf, body ? body : 1);
        if (!nb) {
            oom = 1;
            break;
        }
        buf = nb;
        if (body && fread(buf, 1, body, k->f) != body) {
            k->torn = k->damaged = 1;
            break;
        }
        bytes_put_u32(hb + 20, 0); /* the crc covers the header with its crc field 0 */
        if (crc_32(crc_32(0, hb, sizeof(hb)), buf, body) != r.crc) {
            k->torn = 1;
            break;
        }
        if (k->n == cap) {
            size_t nc = cap ? cap * 2 : 16;
            struct kf_entry *ne = realloc(k->e, nc * sizeof(*ne));
            if (!ne) {
                oom = 1;
                break;
            }
            k->e = ne;
            cap = nc;
        }
        k->e[k->n++] = (struct kf_entry){
            .step = r.step, .offset = off, .state_len = r.state_len, .npages = r.npages};
        last = r.step;
        off += sizeof(hb) + body;
        RW_ASSERT(off <= size); /* invariant 1 */
    }
    free(buf);
    if (oom) { /* an index cut by a failed allocation is no torn tail (inv. 3) */
        kf_close_read(k);
        errno = ENOMEM;
        return -1;
    }
    if (off < size && !k->torn)
        k->torn = 1;
    if (k->torn && !k->damaged && !looks_torn(k->f, off, size))
        k->damaged = 1;
    RW_ASSERT(!k->damaged || k->torn);
    return 0;
}

void kf_close_read(struct kf_file *k)
{
    if (k->f)
        fclose(k->f);
    free(k->e);
    memset(k, 0, sizeof(*k));
}

int kf_read_state(struct kf_file *k, size_t i, void **state, uint32_t *len)
{
    if (i >= k->n)
        return -1;
    void *b = malloc(k->e[i].state_len ? k->e[i].state_len : 1);
    if (!b)
        return -1;
    if (fseeko(k->f, (off_t)(k->e[i].offset + REC_HDR_SIZE), SEEK_SET) != 0 ||
        fread(b, 1, k->e[i].state_len, k->f) != k->e[i].state_len) {
        free(b);
        return -1;
    }
    *state = b;
    *len = k->e[i].state_len;
    return 0;
}

int kf_read_pages(struct kf_file *k, size_t i, struct kf_page **pages)
{
    if (i >= k->n)
        return -1;
    size_t n = k->e[i].npages;
    struct kf_page *p = malloc(n ? n * sizeof(*p) : 1);
    if (!p)
        return -1;
    uint64_t at = k->e[i].offset + REC_HDR_SIZE + pad8(k->e[i].state_len);
    if (fseeko(k->f, (off_t)at, SEEK_SET) != 0 || (n && fread(p, sizeof(*p), n, k->f) != n)) {
        free(p);
        return -1;
    }
    *pages = p;
    return 0;
}

int kf_chain_load(const char *home, const char *name, struct kf_chain *c, char *err, size_t errlen)
{
    memset(c, 0, sizeof(*c));
    char cur[64];
    uint64_t upto = UINT64_MAX;
    snprintf(cur, sizeof(cur), "%s", name);
    struct kf_link tmp[KF_MAX_CHAIN];
    size_t n = 0;
    for (;;) {
        if (n == KF_MAX_CHAIN) {
            for (size_t i = 0; i < n; i++)
                kf_close_read(&tmp[i].file);
            return util_fail(err, errlen, "run %s has more than %d generations of forks", name,
                             KF_MAX_CHAIN);
        }
        char path[PATH_MAX];
        struct kf_link *l = &tmp[n];
        memset(l, 0, sizeof(*l));
        snprintf(l->run, sizeof(l->run), "%s", cur);
        int r = home_path(path, sizeof(path), home, HOME_RUNS, cur, "keyframes") < 0
                    ? -2
                    : kf_open(path, &l->file);
        if (r < 0) {
            for (size_t i = 0; i < n; i++)
                kf_close_read(&tmp[i].file);
            if (r == -1 && errno == ENOENT)
                return util_fail(err, errlen,
                                 "run %s has no keyframes (made with --no-keyframes, "
                                 "or its parent was removed)",
                                 cur);
            return util_fail(err, errlen, "cannot read the keyframes of run %s%s", cur,
                             r == -2 ? ": not a keyframes file of this version" : "");
        }
        l->count = 0;
        while (l->count < l->file.n && l->file.e[l->count].step <= upto)
            l->count++;
        n++;
        if (!l->file.parent[0])
            break;
        const char *par = l->file.parent;
        if (par[0] == '.' || !home_safe_name(par)) {
            for (size_t i = 0; i < n; i++)
                kf_close_read(&tmp[i].file);
            return util_fail(err, errlen, "the keyframes of run %s name a bad parent", cur);
        }
        RW_ASSERT(home_safe_name(par)); /* invariant 2 */
        upto = l->file.parent_upto;
        snprintf(cur, sizeof(cur), "%s", l->file.parent);
    }
    for (size_t i = 0; i < n; i++)
        c->link[i] = tmp[n - 1 - i];
    c->nlinks = n;
    return 0;
}

void kf_chain_free(struct kf_chain *c)
{
    for (size_t i = 0; i < c->nlinks; i++)
        kf_close_read(&c->link[i].file);
    c->nlinks = 0;
}

int kf_chain_find(const struct kf_chain *c, uint64_t step, size_t *link, size_t *idx)
{
    int found = 0;
    for (size_t l = 0; l < c->nlinks; l++)
        for (size_t i = 0; i < c->link[l].count; i++)
            if (c->link[l].file.e[i].step <= step) {
                *link = l;
                *idx = i;
                found = 1;
            }
    return found ? 0 : -1;
}

int kf_chain_map(const struct kf_chain *c, size_t link, size_t idx, hash256 *map, uint64_t npfn,
                 char *err, size_t errlen)
{
    memset(map, 0, npfn * sizeof(*map));
    for (size_t l = 0; l <= link && l < c->nlinks; l++) {
        size_t upto = l == link ? idx + 1 : c->link[l].count;
        for (size_t i = 0; i < upto; i++) {
            struct kf_page *pg;
            if (kf_read_pages((struct kf_file *)&c->link[l].file, i, &pg) < 0)
                return util_fail(err, errlen, "cannot read keyframe %zu of run %s", i,
                                 c->link[l].run);
            for (uint32_t j = 0; j < c->link[l].file.e[i].npages; j++) {
                if (pg[j].pfn >= npfn) {
                    unsigned long long pfn = (unsigned long long)pg[j].pfn; /* before the free */
                    free(pg);
                    return util_fail(err, errlen,
                                     "keyframe %zu of run %s names page %llu beyond RAM", i,
                                     c->link[l].run, pfn);
                }
                map[pg[j].pfn] = pg[j].hash;
            }
            free(pg);
        }
    }
    return 0;
}

int kf_each_page(const char *path, void (*fn)(void *ctx, const hash256 *h), void *ctx)
{
    struct kf_file k;
    int r = kf_open(path, &k);
    if (r < 0)
        return -1;
    if (k.damaged) { /* inv. 3: its pages past the damage are unknown */
        kf_close_read(&k);
        errno = EILSEQ;
        return -1;
    }
    for (size_t i = 0; i < k.n; i++) {
        struct kf_page *pg;
        if (kf_read_pages(&k, i, &pg) < 0) {
            kf_close_read(&k);
            return -1;
        }
        for (uint32_t j = 0; j < k.e[i].npages; j++)
            fn(ctx, &pg[j].hash);
        free(pg);
    }
    kf_close_read(&k);
    return 0;
}
