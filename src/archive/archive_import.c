/*
 * archive_import: read an archive into $REWIND_HOME, verifying all of it
 * before adding anything (the format and the checks are in archive.h).
 *
 * Three phases:
 *  1. read: every entry is bounds-checked and written to a staging place:
 *     run files to runs/.import.<pid>/<run>/<file>, pages (re-hashed, then
 *     kept as read, compressed or not) to runs/.import.<pid>/pages, images (re-hashed while copied)
 * to images/<hex>.erofs.tmp.<pid> (or only hashed, if the image is already here). The END entry's
 * count and hash close the archive.
 *  2. check: the staged runs are complete and readable, their keyframes
 *     chains and pages resolve, and runs already here are identical.
 *  3. commit: pages into the store (store_put_batch, store_sync), images
 *     linked into place, run directories renamed into runs/ (parents
 *     first). A crash during commit leaves at worst pages or images no run
 *     names yet (gc frees them) and never a run whose pages are missing.
 * What is staged is bounded by the input: on disk the entries' bytes as
 * read, in memory 34 bytes per page entry (of at least 81 bytes read), and
 * an entry claiming more bytes than a regular-file input has left is
 * refused before anything of it is staged.
 * Any failure in 1 or 2 removes what was staged and what this import
 * created (runs/ or images/ if they were new), so nothing is added.
 */
#include "archive/archive.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>
#include <zstd.h>

#include "store/store.h"
#include "trace/trace.h"
#include "trace/tracehash.h"
#include "util/bytes.h"
#include "util/fail.h"
#include "util/io.h"
#include "archive/archive_int.h"
#include "util/hashvec.h"
#include "util/failpoint.h"
#include "home/homelock.h"
#include "util/homepath.h"
#include "trace/keyframe.h"
#include "home/rundir.h"
#include "home/runnames.h"
#include "home/runinputs.h"
#include "home/runref.h"
#include "rewind.h"
#include "input/patch.h"

#define PUT_BATCH 256

struct rd {
    int fd;
    uint64_t off;
    hash_ctx *h;
    uint8_t buf[1 << 16];
    size_t pos, len;
};

struct irun {
    char name[64];
    unsigned files; /* bit per enum arch_file */
    int already;    /* present here with identical files */
    int published;  /* this import renamed it into runs/ */
    char image[65];
    char trace_hash[80]; /* the manifest's, "" if it states none */
};

struct iimg {
    char hex[65];
    char tmp[4400]; /* staged copy; "" if the image was already here */
};

struct imp {
    const char *home;
    char stage[4200];
    struct rd r;
    uint32_t flags;
    char main[65];
    struct irun run[ARCH_MAX_RUNS];
    size_t nruns;
    struct iimg img[ARCH_MAX_RUNS];
    size_t nimg;
    struct hashvec pages; /* in the archive, in archive order until checked */
    int pages_fd;         /* the pages' entry bytes as read (disk <= input) */
    uint16_t *plen;       /* each staged page's length, in archive order */
    uint64_t nplen, plen_cap;
    uint64_t in_size; /* the input's size if it is a regular file, else 0 */
    uint64_t staged;  /* bytes written to staging so far (inv. of the file comment) */
    uint64_t entries;
    int made_runs, made_images; /* this import created runs/, images/ */
    struct store *local;        /* the store here, opened to check pages */
    int local_tried;
};

/* ---- reading ------------------------------------------------------------ */

/* Read exactly n bytes: 0, 1 at the end of the input, -1 on an I/O error. */
static int rd_exact(struct rd *r, void *p, size_t n, int hash)
{
    uint8_t *o = p;
    while (n) {
        if (r->pos == r->len) {
            ssize_t k = read(r->fd, r->buf, sizeof(r->buf));
            if (k < 0 && errno == EINTR)
                continue;
            if (k < 0)
                return -1;
            if (k == 0)
                return 1;
            r->pos = 0;
            r->len = (size_t)k;
        }
        size_t c = r->len - r->pos < n ? r->len - r->pos : n;
        memcpy(o, r->buf + r->pos, c);
        if (hash)
            hash_update(r->h, o, c);
        r->pos += c;
        r->off += c;
        o += c;
        n -= c;
    }
    return 0;
}

static int rd_fail(struct imp *m, int r, char *err, size_t errlen)
{
    if (r > 0)
        return util_fail(err, errlen, "the archive is truncated at byte %llu",
                         (unsigned long long)m->r.off);
    return util_fail(err, errlen, "cannot read the archive: %s", strerror(errno));
}

/* Copy len bytes of the archive to fd (if >= 0), hashing them into verify
 * (if not NULL). */
/* Whether staging len more bytes keeps within the bounds: at most the
 * input's size in all (ARCH_STREAM_MAX for a pipe), and a reserve of the
 * staging file system left free (ARCH_FREE_RESERVE of it): a stream of
 * zeros or a sparse file cannot fill the disk before its checksum fails. */
static int stage_room(struct imp *m, uint64_t len, char *err, size_t errlen)
{
    uint64_t cap = m->in_size ? m->in_size : ARCH_STREAM_MAX;
    if (len > cap || m->staged > cap - len)
        return util_fail(err, errlen, "the archive stages more than %llu bytes (its %s)",
                         (unsigned long long)cap, m->in_size ? "size" : "bound as a stream");
    struct statvfs v;
    if (m->stage[0] && statvfs(m->stage, &v) == 0) {
        uint64_t avail = (uint64_t)v.f_bavail * v.f_frsize,
                 reserve = (uint64_t)v.f_blocks * v.f_frsize / ARCH_FREE_RESERVE;
        if (len > avail || avail - len < reserve)
            return util_fail(err, errlen,
                             "importing needs %llu bytes more than the disk of %s can spare",
                             (unsigned long long)len, m->home);
    }
    m->staged += len;
    return 0;
}

static int rd_copy(struct imp *m, int fd, uint64_t len, hash_ctx *verify, char *err, size_t errlen)
{
    if (fd >= 0 && stage_room(m, len, err, errlen) < 0)
        return -1;
    uint8_t *buf = malloc(ARCH_COPY_BUF); /* not static: the engine is reentrant */
    if (!buf)
        return util_fail(err, errlen, "out of memory");
    int rc = 0;
    while (rc == 0 && len) {
        size_t n = len < ARCH_COPY_BUF ? (size_t)len : ARCH_COPY_BUF;
        int r = rd_exact(&m->r, buf, n, 1);
        if (r)
            rc = rd_fail(m, r, err, errlen);
        else if (verify)
            hash_update(verify, buf, n);
        if (rc == 0 && fd >= 0 && io_write_all(fd, buf, n) < 0)
            rc = util_fail(err, errlen, "cannot stage the import: %s", strerror(errno));
        len -= n;
    }
    free(buf);
    return rc;
}

static int make_dir(const char *path, int *made)
{
    if (mkdir(path, 0755) == 0) {
        if (made)
            *made = 1;
        return 0;
    }
    return errno == EEXIST ? 0 : -1;
}

/* ---- entries ------------------------------------------------------------ */

static struct irun *find_run(struct imp *m, const char *name)
{
    for (size_t i = 0; i < m->nruns; i++)
        if (!strcmp(m->run[i].name, name))
            return &m->run[i];
    return NULL;
}

static int entry_file(struct imp *m, const char *name, uint64_t len, char *err, size_t errlen)
{
    char run[256], path[4600];
    const char *slash = strchr(name, '/');
    size_t rl = slash ? (size_t)(slash - name) : 0;
    if (!slash || rl >= sizeof(run))
        return util_fail(err, errlen, "bad file entry '%s' in the archive", name);
    memcpy(run, name, rl);
    run[rl] = 0;
    int f = archive_file_index(slash + 1);
    if (!archive_valid_run_name(run) || f < 0)
        return util_fail(err, errlen, "refusing archive entry '%s' (not a run file)", name);
    if (len > ((f == ARCH_F_MANIFEST || f == ARCH_F_SPEC) ? ARCH_JSON_MAX : ARCH_DATA_MAX))
        return util_fail(err, errlen, "archive entry %s is too large (%llu bytes)", name,
                         (unsigned long long)len);
    struct irun *r = find_run(m, run);
    if (!r) {
        if (m->nruns == ARCH_MAX_RUNS)
            return util_fail(err, errlen, "the archive holds more than %d runs", ARCH_MAX_RUNS);
        r = &m->run[m->nruns++];
        memcpy(r->name, run, rl + 1); /* a valid name is <= ARCHIVE_NAME_MAX bytes */
        snprintf(path, sizeof(path), "%s/%s", m->stage, run);
        if (mkdir(path, 0755) < 0)
            return util_fail(err, errlen, "cannot create %s: %s", path, strerror(errno));
    }
    if (r->files & (1u << f))
        return util_fail(err, errlen, "the archive holds %s twice", name);
    r->files |= 1u << f;
    snprintf(path, sizeof(path), "%s/%s", m->stage, name);
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0)
        return util_fail(err, errlen, "cannot create %s: %s", path, strerror(errno));
    int rc = rd_copy(m, fd, len, NULL, err, errlen);
    RW_FAILPOINT("import.stage.fsync_file");
    if (rc == 0 && fsync(fd) < 0)
        rc = util_fail(err, errlen, "cannot write %s: %s", path, strerror(errno));
    close(fd);
    return rc;
}

static int entry_page(struct imp *m, int kind, const char *name, uint64_t len, char *err,
                      size_t errlen)
{
    hash256 want, got;
    uint8_t in[STORE_PAGE_SIZE], page[STORE_PAGE_SIZE];
    if (archive_parse_hex(name, strlen(name), &want) < 0)
        return util_fail(err, errlen, "bad page name '%s' in the archive", name);
    if (kind == ARCH_PAGE ? len != STORE_PAGE_SIZE : (len == 0 || len >= STORE_PAGE_SIZE))
        return util_fail(err, errlen, "page %s has a bad length (%llu bytes)", name,
                         (unsigned long long)len);
    int r = rd_exact(&m->r, in, (size_t)len, 1);
    if (r)
        return rd_fail(m, r, err, errlen);
    if (kind == ARCH_PAGE) {
        memcpy(page, in, STORE_PAGE_SIZE);
    } else {
        size_t n = ZSTD_decompress(page, sizeof(page), in, (size_t)len);
        if (ZSTD_isError(n) || n != STORE_PAGE_SIZE)
            return util_fail(err, errlen, "page %s is corrupt (does not decompress to a page)",
                             name);
    }
    hash_buf(page, STORE_PAGE_SIZE, &got);
    if (memcmp(&got, &want, sizeof(got))) {
        char hex[65];
        hash_hex(&got, hex);
        return util_fail(err, errlen, "page %s is corrupt (its bytes hash to %.16s...)", name, hex);
    }
    if (hashvec_add(&m->pages, &want) < 0)
        return util_fail(err, errlen, "the archive holds too many pages");
    if (m->nplen == m->plen_cap) {
        uint64_t cap = m->plen_cap ? m->plen_cap * 2 : 1024;
        uint16_t *v = realloc(m->plen, cap * sizeof(*v));
        if (!v)
            return util_fail(err, errlen, "out of memory");
        m->plen = v;
        m->plen_cap = cap;
    }
    m->plen[m->nplen++] = (uint16_t)len;
    if (io_write_all(m->pages_fd, in, (size_t)len) < 0)
        return util_fail(err, errlen, "cannot stage the import: %s", strerror(errno));
    return 0;
}

static int entry_image(struct imp *m, const char *name, uint64_t len, char *err, size_t errlen)
{
    hash256 want, got;
    char dir[4200], final[4300], hex[65];
    if (archive_parse_hex(name, strlen(name), &want) < 0)
        return util_fail(err, errlen, "bad image name '%s' in the archive", name);
    if (len > ARCH_DATA_MAX)
        return util_fail(err, errlen, "image %s is too large", name);
    for (size_t i = 0; i < m->nimg; i++)
        if (!strcmp(m->img[i].hex, name))
            return util_fail(err, errlen, "the archive holds image %s twice", name);
    if (m->nimg == ARCH_MAX_RUNS)
        return util_fail(err, errlen, "the archive holds more than %d images", ARCH_MAX_RUNS);
    struct iimg *g = &m->img[m->nimg++];
    snprintf(g->hex, sizeof(g->hex), "%s", name);
    if (home_path(dir, sizeof(dir), m->home, HOME_IMAGES, NULL, NULL) < 0 ||
        home_path(final, sizeof(final), m->home, HOME_IMAGES, name, NULL) < 0)
        return util_fail(err, errlen, "bad image name '%s' in the archive", name);
    int fd = -1;
    if (access(final, F_OK) != 0) {
        if (make_dir(dir, &m->made_images) < 0)
            return util_fail(err, errlen, "cannot create %s: %s", dir, strerror(errno));
        char sfx[48];
        home_stage_name(sfx, sizeof(sfx), ".tmp"); /* homepath.h inv. 3 */
        snprintf(g->tmp, sizeof(g->tmp), "%s%s", final, sfx);
        fd = open(g->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        if (fd < 0)
            return util_fail(err, errlen, "cannot create %s: %s", g->tmp, strerror(errno));
    }
    hash_ctx *h = hash_new();
    if (!h) {
        if (fd >= 0)
            close(fd);
        return util_fail(err, errlen, "out of memory");
    }
    int rc = rd_copy(m, fd, len, h, err, errlen);
    hash_final(h, &got);
    RW_FAILPOINT("import.stage.fsync_image");
    if (rc == 0 && fd >= 0 && fsync(fd) < 0)
        rc = util_fail(err, errlen, "cannot write %s: %s", g->tmp, strerror(errno));
    if (fd >= 0)
        close(fd);
    hash_hex(&got, hex);
    if (rc == 0 && memcmp(&got, &want, sizeof(got)))
        rc = util_fail(err, errlen, "image %s is corrupt (its bytes hash to %.16s...)", name, hex);
    return rc;
}

static int entry_end(struct imp *m, uint32_t name_len, uint64_t len, char *err, size_t errlen)
{
    uint8_t end[ARCH_END_LEN], one;
    hash256 d;
    uint64_t at = m->r.off - ARCH_ENTRY_SIZE;
    if (name_len != 0 || len != ARCH_END_LEN)
        return util_fail(err, errlen, "bad end entry at byte %llu", (unsigned long long)at);
    hash_final(m->r.h, &d);
    m->r.h = NULL;
    int r = rd_exact(&m->r, end, sizeof(end), 0);
    if (r)
        return rd_fail(m, r, err, errlen);
    if (bytes_get_u64(end) != m->entries || memcmp(end + 8, d.b, 32))
        return util_fail(err, errlen, "the archive is corrupt (its checksum does not match)");
    r = rd_exact(&m->r, &one, 1, 0);
    if (r < 0)
        return rd_fail(m, r, err, errlen);
    if (r == 0)
        return util_fail(err, errlen, "the archive has data after its end (byte %llu)",
                         (unsigned long long)(m->r.off - 1));
    return 0;
}

/* Read one entry; 1 when it was the END entry. */
static int read_entry(struct imp *m, char *err, size_t errlen)
{
    uint8_t h[ARCH_ENTRY_SIZE];
    char name[ARCH_NAME_LEN_MAX + 1];
    uint64_t at = m->r.off;
    int r = rd_exact(&m->r, h, sizeof(h), 0);
    if (r)
        return rd_fail(m, r, err, errlen);
    uint32_t kind = bytes_get_u32(h), nl = bytes_get_u32(h + 4);
    uint64_t len = bytes_get_u64(h + 8);
    if (kind == ARCH_END)
        return entry_end(m, nl, len, err, errlen) < 0 ? -1 : 1;
    if (kind < ARCH_FILE || kind > ARCH_END)
        return util_fail(err, errlen, "unknown entry kind %u at byte %llu of the archive", kind,
                         (unsigned long long)at);
    if (nl == 0 || nl > ARCH_NAME_LEN_MAX)
        return util_fail(err, errlen, "bad entry name length %u at byte %llu of the archive", nl,
                         (unsigned long long)at);
    hash_update(m->r.h, h, sizeof(h));
    if ((r = rd_exact(&m->r, name, nl, 1)) != 0)
        return rd_fail(m, r, err, errlen);
    name[nl] = 0;
    if (strlen(name) != nl)
        return util_fail(err, errlen, "bad entry name at byte %llu of the archive",
                         (unsigned long long)at);
    m->entries++;
    if (m->in_size && len > m->in_size - m->r.off)
        return util_fail(err, errlen,
                         "archive entry %s is too large (%llu bytes): the archive is truncated "
                         "at byte %llu",
                         name, (unsigned long long)len, (unsigned long long)m->in_size);
    if (kind == ARCH_FILE)
        return entry_file(m, name, len, err, errlen);
    if (kind == ARCH_IMAGE)
        return entry_image(m, name, len, err, errlen);
    return entry_page(m, (int)kind, name, len, err, errlen);
}

static int read_header(struct imp *m, char *err, size_t errlen)
{
    uint8_t h[ARCH_HEADER_SIZE];
    int r = rd_exact(&m->r, h, sizeof(h), 1);
    if (r > 0 && m->r.off < 8)
        return util_fail(err, errlen, "not a rewind archive (%llu bytes)",
                         (unsigned long long)m->r.off);
    if (r)
        return rd_fail(m, r, err, errlen);
    if (memcmp(h, ARCHIVE_MAGIC, 8))
        return util_fail(err, errlen, "not a rewind archive");
    if (bytes_get_u32(h + 8) != ARCHIVE_VERSION)
        return util_fail(err, errlen,
                         "rewind archive version %u is not supported (this rewind "
                         "reads version %d)",
                         bytes_get_u32(h + 8), ARCHIVE_VERSION);
    m->flags = bytes_get_u32(h + 12);
    if (m->flags & ~ARCHIVE_F_REPLAYABLE)
        return util_fail(err, errlen, "unknown archive flags %#x", m->flags);
    memcpy(m->main, h + 16, 64);
    m->main[64] = 0;
    if (!archive_valid_run_name(m->main))
        return util_fail(err, errlen, "the archive names a bad run '%.64s'", m->main);
    return 0;
}

/* ---- checks ------------------------------------------------------------- */

static int has_local_page(struct imp *m, const hash256 *h)
{
    if (!m->local_tried) {
        char dir[4200], why[256];
        m->local_tried = 1;
        if (home_path(dir, sizeof(dir), m->home, HOME_STORE, NULL, NULL) == 0 &&
            access(dir, F_OK) == 0)
            store_open(dir, &m->local, why, sizeof(why));
    }
    return m->local && store_has(m->local, h);
}

struct pagecheck {
    struct imp *m;
    int missing;
    hash256 first;
};

static void check_page(void *ctx, const hash256 *h)
{
    struct pagecheck *c = ctx;
    if (c->missing || store_is_zero_hash(h) || hashvec_has(&c->m->pages, h) ||
        has_local_page(c->m, h))
        return;
    c->missing = 1;
    c->first = *h;
}

static const char *json_image(json_t *j)
{
    const char *s = json_string_value(json_object_get(j, "image"));
    hash256 h;
    return s && archive_parse_hex(s, strlen(s), &h) == 0 ? s : NULL;
}

/* 1 if runs/<name> exists here. */
static int run_here_dir(struct imp *m, const char *name)
{
    char p[4300];
    return home_path(p, sizeof(p), m->home, HOME_RUNS, name, NULL) == 0 && access(p, F_OK) == 0;
}

/* 1 if runs/<name> exists here or is another run of this archive. */
static int run_here(struct imp *m, const char *name)
{
    char p[4300];
    if (find_run(m, name))
        return 1;
    return home_path(p, sizeof(p), m->home, HOME_RUNS, name, NULL) == 0 && access(p, F_OK) == 0;
}

/* The fields a manifest could use to take over another run or to wrap a
 * size (docs/reliability.md): each name a valid name (never shaped like a
 * run id, never a run here), "created" not in the future (a day of clock
 * skew allowed), mem_mib in the range rewind runs, gdb's writes (if any)
 * well formed and in their limits (src/input/patch.h invariant 4). */
static int check_fields(struct imp *m, struct irun *r, json_t *man, json_t *spec, char *err,
                        size_t errlen)
{
    json_t *names = json_object_get(man, "names");
    json_t *one = json_object_get(man, "name");
    if ((names && !json_is_array(names)) || (one && !json_is_null(one) && !json_is_string(one)))
        return util_fail(err, errlen, "the manifest of run %s has a corrupt name", r->name);
    size_t i, k = json_array_size(names);
    for (i = 0; i <= k; i++) {
        json_t *v = i < k ? json_array_get(names, i) : one;
        if (!v || json_is_null(v))
            continue;
        const char *s = json_string_value(v);
        if (!s || !runnames_valid(s))
            return util_fail(err, errlen,
                             "run %s is named '%.64s', which is not a valid name (a name "
                             "is never shaped like a run id)",
                             r->name, s ? s : "?");
        if (run_here(m, s))
            return util_fail(err, errlen, "run %s is named '%.64s', which is the id of a run",
                             r->name, s);
        /* a name that answers here already stays with its run: names from
         * an archive never displace the home's (issue 27, 3) */
        char dir[256], why[512];
        if (runref_resolve(m->home, s, dir, sizeof(dir), why, sizeof(why)) == 0 &&
            strcmp(dir, r->name))
            return util_fail(err, errlen,
                             "run %s is named '%.64s', which names run %s here already", r->name, s,
                             dir);
    }
    json_t *cr = json_object_get(man, "created");
    if (cr && (!json_is_integer(cr) || json_integer_value(cr) < 0 ||
               json_integer_value(cr) > (json_int_t)time(NULL) + 86400))
        return util_fail(err, errlen, "run %s claims to be created in the future or before 1970",
                         r->name);
    json_t *specs[2] = {json_object_get(man, "spec"), spec};
    for (i = 0; i < 2; i++) {
        json_t *mem = json_object_get(specs[i], "mem_mib");
        if (mem && (!json_is_integer(mem) || json_integer_value(mem) < 1 ||
                    (uint64_t)json_integer_value(mem) > rw_defaults.mem_max_mib))
            return util_fail(err, errlen, "run %s asks for %lld MiB of guest RAM (at most %llu)",
                             r->name, (long long)json_integer_value(mem),
                             (unsigned long long)rw_defaults.mem_max_mib);
        struct rw_patch *pt;
        char why[200];
        if (patch_from_json(json_object_get(specs[i], "gdb_writes"), &pt, why, sizeof(why)) < 0)
            return util_fail(err, errlen, "run %s: %s", r->name, why);
        free(pt);
    }
    return 0;
}

/* 1 if s is "~N" (N: 1..9 digits): the suffix of a run kept beside another
 * of its spec (src/run/ctx.c, free_name). */
static int id_suffix(const char *s)
{
    size_t n = s[0] == '~' ? strspn(s + 1, "0123456789") : 0;
    return n >= 1 && n <= 9 && s[1 + n] == 0;
}

/* 1 if name is shaped like a run id: 16 hex digits, maybe "~N". */
static int id_shaped(const char *name)
{
    return strspn(name, "0123456789abcdef") == 16 && (!name[16] || id_suffix(name + 16));
}

/* 1 if the spec file at path hashes to the id that starts name (spec_id:
 * the first 16 hex digits of the SHA-256 of its canonical JSON, which is
 * what spec.json holds). */
static int spec_names(const char *path, const char *name)
{
    hash256 h;
    char hex[65];
    if (hash_file(path, &h) < 0)
        return 0;
    hash_hex(&h, hex);
    return !strncmp(hex, name, 16);
}

static int check_json(struct imp *m, struct irun *r, char *err, size_t errlen)
{
    char p[4600];
    json_error_t je;
    snprintf(p, sizeof(p), "%s/%s/manifest.json", m->stage, r->name);
    json_t *man = json_load_file(p, 0, &je);
    snprintf(p, sizeof(p), "%s/%s/spec.json", m->stage, r->name);
    json_t *spec = json_load_file(p, 0, &je);
    int rc = 0;
    const char *id = json_string_value(json_object_get(man, "id"));
    size_t idl = id ? strlen(id) : 0;
    if (!json_is_object(man) || !id)
        rc = util_fail(err, errlen, "the manifest of run %s is corrupt", r->name);
    else if (strncmp(r->name, id, idl) || (r->name[idl] && !id_suffix(r->name + idl)))
        rc = util_fail(err, errlen,
                       "run %s's manifest says it is run %.64s (a run's directory is its id)",
                       r->name, id);
    else if (!json_is_object(spec))
        rc = util_fail(err, errlen, "the spec of run %s is corrupt", r->name);
    else if (id_shaped(r->name) && !spec_names(p, r->name))
        rc = util_fail(err, errlen,
                       "run %s's spec does not hash to its id (a run's id is its spec's hash)",
                       r->name);
    if (rc == 0)
        rc = check_fields(m, r, man, spec, err, errlen);
    if (rc == 0 && json_object_get(man, "spec") && !json_equal(json_object_get(man, "spec"), spec))
        rc = util_fail(err, errlen,
                       "run %s's manifest holds another spec than its spec.json (a replay "
                       "would run another program than the one its id names)",
                       r->name);
    /* a shell session's keystrokes are inputs its id covers (runinputs.h) */
    const char *keys =
        rc ? NULL : json_string_value(json_object_get(json_object_get(spec, "inspect"), "inputs"));
    if (keys && *keys) {
        char why[200];
        snprintf(p, sizeof(p), "%s/%s/inputs", m->stage, r->name);
        int k = runinputs_check(p, keys, why, sizeof(why));
        if (k)
            rc = util_fail(err, errlen, "run %s: %s", r->name,
                           k < 0 ? "out of memory while reading its inputs" : why);
    }
    const char *img = rc ? NULL : json_image(json_object_get(man, "spec"));
    if (!img && !rc)
        img = json_image(spec);
    snprintf(r->image, sizeof(r->image), "%s", img ? img : "");
    const char *th = json_string_value(json_object_get(man, "trace_hash"));
    snprintf(r->trace_hash, sizeof(r->trace_hash), "%s", rc == 0 && th ? th : "");
    json_decref(man);
    json_decref(spec);
    return rc;
}

/* The trace reads whole and hashes to the manifest's trace_hash (a run's
 * manifest that states none has no hash to check). */
static int check_trace(struct imp *m, struct irun *r, uint64_t *events, char *err, size_t errlen)
{
    char p[4600], hex[65];
    snprintf(p, sizeof(p), "%s/%s/trace", m->stage, r->name);
    /* a trace may refer to a parent's prefix (trace.h, version 2): the
     * parent staged beside it or a run of the home, checked by its hash */
    char runs[4300];
    int rc = home_path(runs, sizeof(runs), m->home, HOME_RUNS, NULL, NULL) == 0
                 ? tracehash_file(p, runs, hex, events)
                 : TRACEHASH_UNREADABLE;
    if (rc == TRACEHASH_UNREADABLE)
        return util_fail(err, errlen, "the trace of run %s is not a trace of this version",
                         r->name);
    if (rc == TRACEHASH_TORN)
        return util_fail(err, errlen, "the trace of run %s is corrupt after %llu events", r->name,
                         (unsigned long long)*events);
    if (r->trace_hash[0] && strcmp(r->trace_hash, hex))
        return util_fail(err, errlen,
                         "the trace of run %s does not hash to its manifest's trace_hash "
                         "(%.16s..., not %.16s...)",
                         r->name, hex, r->trace_hash);
    return 0;
}

static int parent_known(struct imp *m, const char *parent)
{
    struct irun *p = find_run(m, parent);
    if (p)
        return (p->files >> ARCH_F_KEYFRAMES) & 1;
    char path[4300];
    return home_path(path, sizeof(path), m->home, HOME_RUNS, parent, "keyframes") == 0 &&
           access(path, R_OK) == 0;
}

static int check_keyframes(struct imp *m, struct irun *r, uint64_t *count, char *err, size_t errlen)
{
    char p[4600], hex[65];
    snprintf(p, sizeof(p), "%s/%s/keyframes", m->stage, r->name);
    struct kf_file k;
    if (kf_open(p, &k) != 0)
        return util_fail(err, errlen,
                         "the keyframes of run %s are not a keyframes file of this "
                         "version",
                         r->name);
    int rc = 0;
    if (k.torn)
        rc = util_fail(err, errlen, "the keyframes of run %s are corrupt after %zu keyframes",
                       r->name, k.n);
    else if (k.parent[0] && (!archive_valid_run_name(k.parent) || !strcmp(k.parent, r->name)))
        rc = util_fail(err, errlen, "the keyframes of run %s name a bad parent run", r->name);
    else if (k.parent[0] && !parent_known(m, k.parent))
        rc = util_fail(err, errlen,
                       "run %s is a fork of run %s, which is neither in the archive "
                       "nor here with its keyframes",
                       r->name, k.parent);
    *count = k.n;
    kf_close_read(&k);
    struct pagecheck c = {.m = m};
    if (rc == 0 && kf_each_page(p, check_page, &c) < 0)
        rc = util_fail(err, errlen, "cannot read the keyframes of run %s", r->name);
    if (rc == 0 && c.missing) {
        hash_hex(&c.first, hex);
        rc = util_fail(err, errlen,
                       "the keyframes of run %s name page %s, which is neither in the "
                       "archive nor stored here",
                       r->name, hex);
    }
    return rc;
}

static int image_known(struct imp *m, const char *hex)
{
    for (size_t i = 0; i < m->nimg; i++)
        if (!strcmp(m->img[i].hex, hex))
            return 1;
    char path[4300];
    return home_path(path, sizeof(path), m->home, HOME_IMAGES, hex, NULL) == 0 &&
           access(path, R_OK) == 0;
}

static int same_file(const char *a, const char *b)
{
    FILE *x = fopen(a, "rbe"), *y = fopen(b, "rbe");
    int same = x && y;
    char p[1 << 14], q[1 << 14];
    while (same) {
        size_t n = fread(p, 1, sizeof(p), x), k = fread(q, 1, sizeof(q), y);
        same = n == k && !memcmp(p, q, n);
        if (n == 0 || n < sizeof(p))
            break;
    }
    if (x)
        fclose(x);
    if (y)
        fclose(y);
    return same;
}

/* Mark r already present if runs/<name> holds the same files; fail if it
 * holds other ones. */
static int check_existing(struct imp *m, struct irun *r, char *err, size_t errlen)
{
    char dir[4300], a[4600], b[4600];
    if (home_path(dir, sizeof(dir), m->home, HOME_RUNS, r->name, NULL) < 0)
        return util_fail(err, errlen, "bad run name '%s' in the archive", r->name);
    if (access(dir, F_OK) != 0)
        return 0;
    for (int f = 0; f < ARCH_NFILES; f++) {
        if (!((r->files >> f) & 1))
            continue;
        snprintf(a, sizeof(a), "%s/%s/%s", m->stage, r->name, archive_file_names[f]);
        home_path(b, sizeof(b), m->home, HOME_RUNS, r->name, archive_file_names[f]);
        if (!same_file(a, b))
            return util_fail(err, errlen,
                             "run %s is already here with other content (%s differs "
                             "or is missing; rewind remove %s, then import again)",
                             r->name, archive_file_names[f], r->name);
    }
    r->already = 1;
    return 0;
}

/* A run new here must not take over a reference that names a run here
 * already: its directory name is resolved first (runref.c), so a name, an
 * id prefix or an id~N that answers today would answer with the archive's
 * run after the import (issue 27, 3). */
static int check_takeover(struct imp *m, struct irun *r, char *err, size_t errlen)
{
    char dir[256], why[512];
    if (runref_resolve(m->home, r->name, dir, sizeof(dir), why, sizeof(why)) < 0)
        return 0; /* answers nothing here today */
    return util_fail(err, errlen,
                     "run %s would take over the reference '%s', which names run %s here "
                     "(a name or an id prefix)",
                     r->name, r->name, dir);
}

static int check_run(struct imp *m, struct irun *r, struct archive_stats *st, char *err,
                     size_t errlen)
{
    static const int need[] = {ARCH_F_MANIFEST, ARCH_F_SPEC, ARCH_F_TRACE};
    for (size_t i = 0; i < sizeof(need) / sizeof(need[0]); i++)
        if (!((r->files >> need[i]) & 1))
            return util_fail(err, errlen, "the archive lacks %s/%s", r->name,
                             archive_file_names[need[i]]);
    uint64_t events = 0, kfs = 0;
    if (check_json(m, r, err, errlen) < 0 || check_trace(m, r, &events, err, errlen) < 0)
        return -1;
    if (((r->files >> ARCH_F_KEYFRAMES) & 1) && check_keyframes(m, r, &kfs, err, errlen) < 0)
        return -1;
    if ((m->flags & ARCHIVE_F_REPLAYABLE) && (!r->image[0] || !image_known(m, r->image)))
        return util_fail(err, errlen,
                         "the archive lacks the root image %s of run %s and this home has none "
                         "(exported --without-image? import it into a home that ran the same "
                         "root, or export it again without that option)",
                         r->image[0] ? r->image : "(none named)", r->name);
    if (!strcmp(r->name, m->main)) {
        st->events = events;
        st->keyframes = kfs;
    }
    if (check_existing(m, r, err, errlen) < 0)
        return -1;
    return r->already ? 0 : check_takeover(m, r, err, errlen);
}

static int check_all(struct imp *m, struct archive_stats *st, char *err, size_t errlen)
{
    if (!find_run(m, m->main))
        return util_fail(err, errlen, "the archive lacks its run %s", m->main);
    if (hashvec_sort_unique(&m->pages))
        return util_fail(err, errlen, "the archive holds a page twice");
    for (size_t i = 0; i < m->nruns; i++)
        if (check_run(m, &m->run[i], st, err, errlen) < 0)
            return -1;
    return 0;
}

/* ---- commit ------------------------------------------------------------- */

static int commit_pages(struct imp *m, char *err, size_t errlen)
{
    if (!m->pages.n)
        return 0;
    char dir[4200], why[512] = "path too long";
    struct store *s;
    if (home_path(dir, sizeof(dir), m->home, HOME_STORE, NULL, NULL) < 0 ||
        store_open(dir, &s, why, sizeof(why)) < 0)
        return util_fail(err, errlen, "cannot open the page store: %s", why);
    uint8_t *buf = malloc((size_t)PUT_BATCH * STORE_PAGE_SIZE);
    hash256 *names = malloc(PUT_BATCH * sizeof(hash256));
    int rc = buf && names ? 0 : util_fail(err, errlen, "out of memory");
    uint8_t in[STORE_PAGE_SIZE];
    uint64_t off = 0;
    /* The staged entries in archive order (pages.n counts them once each). */
    for (uint64_t i = 0; rc == 0 && i < m->nplen; i += PUT_BATCH) {
        size_t n = m->nplen - i < PUT_BATCH ? (size_t)(m->nplen - i) : PUT_BATCH;
        for (size_t k = 0; rc == 0 && k < n; k++) {
            size_t len = m->plen[i + k];
            uint8_t *page = buf + k * STORE_PAGE_SIZE;
            if (io_pread_full(m->pages_fd, in, len, (off_t)off) != (ssize_t)len)
                rc = util_fail(err, errlen, "cannot read the staged pages: %s", strerror(errno));
            else if (len == STORE_PAGE_SIZE)
                memcpy(page, in, STORE_PAGE_SIZE);
            else if (ZSTD_decompress(page, STORE_PAGE_SIZE, in, len) != STORE_PAGE_SIZE)
                rc = util_fail(err, errlen, "a staged page changed since it was checked");
            off += len;
        }
        RW_FAILPOINT("import.commit.pages");
        if (rc == 0 && store_put_batch(s, buf, n, names) < 0)
            rc = util_fail(err, errlen, "cannot store pages: %s", strerror(errno));
    }
    RW_FAILPOINT("import.commit.store_sync");
    if (rc == 0 && store_sync(s) < 0)
        rc = util_fail(err, errlen, "cannot sync the page store: %s", strerror(errno));
    free(buf);
    free(names);
    store_close(s);
    return rc;
}

static int commit_images(struct imp *m, char *err, size_t errlen)
{
    for (size_t i = 0; i < m->nimg; i++) {
        struct iimg *g = &m->img[i];
        if (!g->tmp[0])
            continue;
        char final[4300];
        if (home_path(final, sizeof(final), m->home, HOME_IMAGES, g->hex, NULL) < 0)
            return util_fail(err, errlen, "bad image name '%s'", g->hex);
        RW_FAILPOINT("import.commit.image");
        if (link(g->tmp, final) < 0 && errno != EEXIST && rename(g->tmp, final) < 0)
            return util_fail(err, errlen, "cannot add image %s: %s", final, strerror(errno));
        unlink(g->tmp);
        g->tmp[0] = 0;
    }
    return 0;
}

static int publish_run(struct imp *m, struct irun *r, char *err, size_t errlen)
{
    char from[4300], to[4300];
    snprintf(from, sizeof(from), "%s/%s", m->stage, r->name);
    if (r->already)
        return 0;
    if (home_path(to, sizeof(to), m->home, HOME_RUNS, r->name, NULL) < 0)
        return util_fail(err, errlen, "bad run name '%s' in the archive", r->name);
    /* an imported run is never the stored reference of its spec (ctx.c,
     * check_against_stored): a run made here replaces it (inv. of
     * archive.h, docs/reliability.md) */
    char mark[4400];
    snprintf(mark, sizeof(mark), "%s/%s", from, RUNDIR_IMPORTED);
    int mfd = open(mark, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (mfd < 0 || fsync(mfd) < 0) {
        if (mfd >= 0)
            close(mfd);
        return util_fail(err, errlen, "cannot write %s: %s", mark, strerror(errno));
    }
    close(mfd);
    RW_FAILPOINT("import.publish.fsync_run");
    if (io_fsync_dir(from) < 0) /* rundir.c invariant 5: durable, then published */
        return util_fail(err, errlen, "cannot sync %s: %s", from, strerror(errno));
    RW_FAILPOINT("import.publish.rename");
    if (renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE) == 0 ||
        ((errno == EINVAL || errno == ENOSYS) && access(to, F_OK) != 0 && rename(from, to) == 0)) {
        r->published = 1;
        char runs[4300];
        if (home_path(runs, sizeof(runs), m->home, HOME_RUNS, NULL, NULL) < 0 ||
            io_fsync_dir(runs) < 0)
            return util_fail(err, errlen, "cannot sync the runs of %s: %s", m->home,
                             strerror(errno));
        return 0;
    }
    int e = errno;
    if ((e == EEXIST || e == ENOTEMPTY) && check_existing(m, r, err, errlen) == 0 && r->already)
        return 0; /* a concurrent import of the same run won: identical */
    return util_fail(err, errlen,
                     "cannot add run %s: %s (pages and images were added; rewind gc "
                     "frees them)",
                     to,
                     e == EEXIST || e == ENOTEMPTY ? "it appeared during the import" : strerror(e));
}

/* Take back a run this import published (the main run then failed): moved
 * back into the staging directory, which cleanup removes. */
static void unpublish_run(struct imp *m, struct irun *r)
{
    char from[4300], to[4300];
    snprintf(to, sizeof(to), "%s/%s", m->stage, r->name);
    if (home_path(from, sizeof(from), m->home, HOME_RUNS, r->name, NULL) == 0 &&
        rename(from, to) == 0 && home_path(from, sizeof(from), m->home, HOME_RUNS, NULL, NULL) == 0)
        io_fsync_dir(from);
}

/* The parents first (a fork's keyframes name them), the main run last; if
 * the main run cannot be added, the parents this import added are taken
 * back: an import adds its run with its parents, or no run at all. */
static int commit_all(struct imp *m, char *err, size_t errlen)
{
    struct irun *main = find_run(m, m->main);
    /* another import of the same archive may have added it meanwhile:
     * identical is "already here" (check_existing), other content an error */
    for (size_t i = 0; i < m->nruns; i++)
        if (!m->run[i].already && run_here_dir(m, m->run[i].name) &&
            check_existing(m, &m->run[i], err, errlen) < 0)
            return -1;
    if (commit_pages(m, err, errlen) < 0 || commit_images(m, err, errlen) < 0)
        return -1;
    int rc = 0;
    for (size_t i = 0; i < m->nruns && rc == 0; i++)
        if (&m->run[i] != main)
            rc = publish_run(m, &m->run[i], err, errlen);
    if (rc == 0)
        rc = publish_run(m, main, err, errlen);
    for (size_t i = 0; rc < 0 && i < m->nruns; i++)
        if (m->run[i].published)
            unpublish_run(m, &m->run[i]);
    return rc;
}

/* ---- driver ------------------------------------------------------------- */

static void cleanup(struct imp *m)
{
    char dir[4200];
    if (m->pages_fd >= 0)
        close(m->pages_fd);
    if (m->stage[0])
        rundir_remove_tree(m->stage);
    for (size_t i = 0; i < m->nimg; i++)
        if (m->img[i].tmp[0])
            unlink(m->img[i].tmp);
    if (m->made_images && home_path(dir, sizeof(dir), m->home, HOME_IMAGES, NULL, NULL) == 0)
        rmdir(dir);
    if (m->made_runs && home_path(dir, sizeof(dir), m->home, HOME_RUNS, NULL, NULL) == 0)
        rmdir(dir);
    if (m->r.h)
        hash_final(m->r.h, &(hash256){{0}});
    free(m->plen);
    store_close(m->local);
    hashvec_free(&m->pages);
}

static int stage_begin(struct imp *m, char *err, size_t errlen)
{
    char runs[4100], p[4400], name[48];
    if (home_stage_name(name, sizeof(name), ".import") < 0 ||
        home_path(runs, sizeof(runs), m->home, HOME_RUNS, NULL, NULL) < 0 ||
        home_path(m->stage, sizeof(m->stage), m->home, HOME_RUNS, name, NULL) < 0) {
        m->stage[0] = 0;
        return util_fail(err, errlen, "the home's path is too long: %s", m->home);
    }
    if (make_dir(runs, &m->made_runs) < 0) {
        int e = errno;
        m->stage[0] = 0;
        return util_fail(err, errlen, "cannot create %s: %s", runs, strerror(e));
    }
    /* homepath.h inv. 3: a new name, made by mkdir, nothing removed first */
    if (mkdir(m->stage, 0755) < 0) {
        int e = errno;
        m->stage[0] = 0;
        return util_fail(err, errlen, "cannot create the staging directory in %s: %s", runs,
                         strerror(e));
    }
    snprintf(p, sizeof(p), "%s/pages", m->stage);
    m->pages_fd = open(p, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (m->pages_fd < 0)
        return util_fail(err, errlen, "cannot create %s: %s", p, strerror(errno));
    return 0;
}

static int import_locked(struct imp *m, struct archive_stats *st, char *err, size_t errlen)
{
    if (stage_begin(m, err, errlen) < 0 || read_header(m, err, errlen) < 0)
        return -1;
    int r;
    while ((r = read_entry(m, err, errlen)) == 0)
        ;
    if (r < 0 || check_all(m, st, err, errlen) < 0)
        return -1;
    store_close(m->local);
    m->local = NULL;
    if (commit_all(m, err, errlen) < 0)
        return -1;
    memcpy(st->run, m->main, strlen(m->main) + 1); /* validated: <= ARCHIVE_NAME_MAX */
    st->runs = m->nruns;
    st->pages = m->pages.n;
    st->images = m->nimg;
    st->bytes = m->r.off;
    st->already = find_run(m, m->main)->already;
    m->made_runs = m->made_images = 0; /* keep them: they hold what we added */
    return 0;
}

int archive_import(const char *home, const char *in_path, struct archive_stats *st, char *err,
                   size_t errlen)
{
    memset(st, 0, sizeof(*st));
    int fd = strcmp(in_path, "-") ? open(in_path, O_RDONLY | O_CLOEXEC) : 0;
    if (fd < 0)
        return util_fail(err, errlen, "cannot open %s: %s", in_path, strerror(errno));
    struct stat sb;
    if (fstat(fd, &sb) == 0 && S_ISDIR(sb.st_mode)) {
        close(fd);
        return util_fail(err, errlen, "%s is a directory, not an archive", in_path);
    }
    /* a sparse file is no archive rewind wrote: its holes would be staged
     * as bytes (issue 27, 7) */
    if (S_ISREG(sb.st_mode) && sb.st_size > 0) {
        off_t hole = lseek(fd, 0, SEEK_HOLE);
        if ((hole >= 0 && hole < sb.st_size) || lseek(fd, 0, SEEK_SET) != 0) {
            if (fd > 0)
                close(fd);
            return util_fail(err, errlen, "%s is a sparse file, not an archive", in_path);
        }
    }
    int lock = homelock_take(home, 0, 1, err, errlen);
    struct imp *m = lock >= 0 ? calloc(1, sizeof(*m)) : NULL;
    int rc = -1;
    if (m) {
        m->home = home;
        m->pages_fd = -1;
        m->pages.max = ARCH_MAX_PAGES;
        m->r.fd = fd;
        m->in_size = S_ISREG(sb.st_mode) ? (uint64_t)sb.st_size : 0;
        m->r.h = hash_new();
        rc = m->r.h ? import_locked(m, st, err, errlen) : util_fail(err, errlen, "out of memory");
        cleanup(m);
        free(m);
    } else if (lock >= 0) {
        util_fail(err, errlen, "out of memory");
    }
    homelock_release(lock);
    if (fd > 0)
        close(fd);
    return rc;
}
