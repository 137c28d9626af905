/*
 * archive_export: write one run (and, replayable, its keyframe chain, pages
 * and images) as an archive; the format is in archive.h.
 *
 * The run's files are opened (openat on the run directory) before anything
 * is written, so a run replaced by a re-run mid-export is read whole from
 * one version. Lengths written in entry headers come from fstat and exactly
 * that many bytes are copied (a file that shrinks fails the export). A
 * keyframes file is cut to its whole records (a torn tail is never
 * exported). Pages are read with store_get (which verifies them) and images
 * are re-hashed while copied, so an export never carries a corrupt page or
 * image. Output to a file goes to <out>.tmp.<pid>, fsync'd and renamed: a
 * failed export leaves no file; to stdout, a failed export lacks the END
 * entry and import refuses it.
 */
#include "archive/archive.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "store/store.h"
#include "util/bytes.h"
#include "util/fail.h"
#include "util/io.h"
#include "archive/archive_int.h"
#include "util/hashvec.h"
#include "home/homelock.h"
#include "util/homepath.h"
#include "trace/keyframe.h"
#include "trace/trace.h"

#define KF_REC_HDR 24 /* u32 magic | u32 npages | u64 step | u32 state_len | u32 crc */

struct wr {
    int fd;
    hash_ctx *h;
    uint64_t off, entries;
};

struct xrun {
    char name[64];
    int fd[ARCH_NFILES]; /* -1: not exported */
    uint64_t len[ARCH_NFILES];
    char image[65];
};

struct xp {
    const char *home;
    int replayable;
    int no_image;                   /* replayable without the root images */
    struct xrun run[ARCH_MAX_RUNS]; /* root ancestor first */
    size_t nruns;
    struct hashvec pages;
};

static int wr_bytes(struct wr *w, const void *p, size_t n, int hash)
{
    if (hash)
        hash_update(w->h, p, n);
    if (io_write_all(w->fd, p, n) < 0)
        return -1;
    w->off += n;
    return 0;
}

/* An entry header and name; the END entry is not hashed (nor counted). */
static int wr_entry(struct wr *w, uint32_t kind, const char *name, uint64_t len)
{
    uint8_t h[ARCH_ENTRY_SIZE];
    size_t n = strlen(name);
    int hash = kind != ARCH_END;
    bytes_put_u32(h, kind);
    bytes_put_u32(h + 4, (uint32_t)n);
    bytes_put_u64(h + 8, len);
    w->entries += (uint64_t)hash;
    return wr_bytes(w, h, sizeof(h), hash) < 0 || wr_bytes(w, name, n, hash) < 0 ? -1 : 0;
}

/* Copy exactly len bytes of fd (from offset 0) into the archive, hashing them
 * into verify too if it is not NULL. */
static int wr_copy(struct wr *w, int fd, uint64_t len, hash_ctx *verify)
{
    uint8_t *buf = malloc(ARCH_COPY_BUF); /* not static: the engine is reentrant */
    if (!buf) {
        errno = ENOMEM;
        return -1;
    }
    uint64_t done = 0;
    int rc = 0;
    while (rc == 0 && done < len) {
        size_t want = len - done < ARCH_COPY_BUF ? (size_t)(len - done) : ARCH_COPY_BUF;
        ssize_t k = io_pread_full(fd, buf, want, (off_t)done);
        if (k != (ssize_t)want) {
            errno = k < 0 ? errno : EIO; /* the file shrank under us */
            rc = -1;
        } else {
            if (verify)
                hash_update(verify, buf, (size_t)k);
            rc = wr_bytes(w, buf, (size_t)k, 1);
            done += (uint64_t)k;
        }
    }
    int e = errno;
    free(buf);
    errno = e;
    return rc;
}

/* Length of the whole records of the keyframes file at path. */
static int kf_whole_len(const char *path, uint64_t *len)
{
    struct kf_file k;
    if (kf_open(path, &k) != 0)
        return -1;
    if (k.damaged) { /* only a torn tail is left out (keyframe.c inv. 3) */
        kf_close_read(&k);
        return -1;
    }
    *len = KF_HEADER_SIZE;
    if (k.n) {
        const struct kf_entry *e = &k.e[k.n - 1];
        *len = e->offset + KF_REC_HDR + ((e->state_len + 7ull) & ~7ull) +
               (uint64_t)e->npages * sizeof(struct kf_page);
    }
    kf_close_read(&k);
    return 0;
}

/* home/runs/<run>/<file> into out: 0, or -1 if it does not fit or a name
 * is unsafe. */
static int run_path(char *out, size_t n, const char *home, const char *run, const char *file)
{
    return home_path(out, n, home, HOME_RUNS, run, file);
}

/* The image the run in dirfd names, as hex into hex (65 bytes; "" if none). */
static void image_of(int dirfd, char hex[65])
{
    hex[0] = 0;
    static const char *files[] = {"manifest.json", "spec.json"};
    for (int i = 0; i < 2 && !hex[0]; i++) {
        int fd = openat(dirfd, files[i], O_RDONLY | O_CLOEXEC);
        json_error_t je;
        json_t *j = fd >= 0 ? json_loadfd(fd, 0, &je) : NULL;
        if (fd >= 0)
            close(fd);
        json_t *spec = i == 0 ? json_object_get(j, "spec") : j;
        const char *s = json_string_value(json_object_get(spec, "image"));
        hash256 h;
        if (s && archive_parse_hex(s, strlen(s), &h) == 0)
            snprintf(hex, 65, "%s", s);
        json_decref(j);
    }
}

static void close_run(struct xrun *r)
{
    for (int i = 0; i < ARCH_NFILES; i++)
        if (r->fd[i] >= 0)
            close(r->fd[i]);
}

/* A trace that refers to its parent's prefix (trace.h, version 2) goes
 * into the archive whole: an archive's traces stand alone, whether or not
 * the parent travels with it. r's trace fd becomes that of a temp file
 * holding the whole trace. */
static int flat_trace(struct xp *x, struct xrun *r, const char *name, char *err, size_t errlen)
{
    char p[4300], parent[TRACE_REF_NAME];
    if (run_path(p, sizeof(p), x->home, name, "trace") < 0 || trace_parent(p, parent) < 0)
        return util_fail(err, errlen, "cannot read the trace of run %s", name);
    if (!parent[0])
        return 0;
    FILE *t = tmpfile();
    uint64_t len = 0;
    int fd = -1;
    if (t && trace_write_flat(p, t, &len) == 0)
        fd = dup(fileno(t));
    if (t)
        fclose(t);
    if (fd < 0 || lseek(fd, 0, SEEK_SET) != 0) {
        if (fd >= 0)
            close(fd);
        return util_fail(err, errlen, "cannot read the trace of run %s with its parent %s's prefix",
                         name, parent);
    }
    close(r->fd[ARCH_F_TRACE]);
    r->fd[ARCH_F_TRACE] = fd;
    r->len[ARCH_F_TRACE] = len;
    return 0;
}

/* Open the files of run name that go into the archive. */
static int open_run(struct xp *x, struct xrun *r, const char *name, char *err, size_t errlen)
{
    char dir[4200];
    memset(r, 0, sizeof(*r));
    for (int i = 0; i < ARCH_NFILES; i++)
        r->fd[i] = -1;
    snprintf(r->name, sizeof(r->name), "%s", name);
    if (home_path(dir, sizeof(dir), x->home, HOME_RUNS, name, NULL) < 0)
        return util_fail(err, errlen, "cannot open run %s: %s", name, strerror(errno));
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0)
        return util_fail(err, errlen, "cannot open run %s: %s", name, strerror(errno));
    int rc = 0;
    for (int i = 0; i < ARCH_NFILES && rc == 0; i++) {
        if (i == ARCH_F_KEYFRAMES && !x->replayable)
            continue; /* a session's inputs still go: they are part of its spec */
        r->fd[i] = openat(dfd, archive_file_names[i], O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        struct stat sb;
        if (r->fd[i] < 0 && errno == ENOENT && i >= ARCH_F_STATES)
            continue;
        if (r->fd[i] < 0 || fstat(r->fd[i], &sb) < 0 || !S_ISREG(sb.st_mode))
            rc = util_fail(err, errlen, "cannot read %s/%s: %s", dir, archive_file_names[i],
                           r->fd[i] < 0 ? strerror(errno) : "not a regular file");
        else
            r->len[i] = (uint64_t)sb.st_size;
    }
    /* a damaged manifest or spec is refused here, not by the import that
     * would read the archive (issue 27, 5) */
    for (int i = ARCH_F_MANIFEST; rc == 0 && i <= ARCH_F_SPEC; i++) {
        json_error_t je;
        json_t *j = json_loadfd(r->fd[i], 0, &je);
        if (!json_is_object(j) ||
            (i == ARCH_F_MANIFEST && !json_is_string(json_object_get(j, "id"))))
            rc = util_fail(err, errlen, "run %s: its %s is damaged (%s)", name,
                           archive_file_names[i], j ? "not a manifest" : je.text);
        json_decref(j);
        if (rc == 0 && lseek(r->fd[i], 0, SEEK_SET) != 0)
            rc = util_fail(err, errlen, "cannot read %s/%s: %s", dir, archive_file_names[i],
                           strerror(errno));
    }
    if (rc == 0)
        rc = flat_trace(x, r, name, err, errlen);
    if (rc == 0 && r->fd[ARCH_F_KEYFRAMES] >= 0) {
        char p[4300];
        if (run_path(p, sizeof(p), x->home, name, "keyframes") < 0 ||
            kf_whole_len(p, &r->len[ARCH_F_KEYFRAMES]) < 0)
            rc = util_fail(err, errlen, "cannot read the keyframes of run %s (damaged?)", name);
    }
    if (rc == 0)
        image_of(dfd, r->image);
    close(dfd);
    if (rc < 0)
        close_run(r);
    return rc;
}

/* The parent named by run r's keyframes file ("" for none). */
static int parent_of(struct xp *x, const struct xrun *r, char parent[33])
{
    char p[4300];
    struct kf_file k;
    parent[0] = 0;
    if (r->fd[ARCH_F_KEYFRAMES] < 0)
        return 0;
    if (run_path(p, sizeof(p), x->home, r->name, "keyframes") < 0 || kf_open(p, &k) != 0)
        return -1;
    memcpy(parent, k.parent, 33);
    kf_close_read(&k);
    return 0;
}

static int in_chain(const struct xrun *v, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(v[i].name, name))
            return 1;
    return 0;
}

/* Open the run and, replayable, the chain of parents its keyframes name. */
static int open_chain(struct xp *x, const char *name, char *err, size_t errlen)
{
    struct xrun tmp[ARCH_MAX_RUNS];
    size_t n = 0;
    char cur[64], parent[33];
    snprintf(cur, sizeof(cur), "%s", name);
    for (;;) {
        if (n > 0 &&
            (n == ARCH_MAX_RUNS || in_chain(tmp, n, cur) || !archive_valid_run_name(cur))) {
            util_fail(err, errlen, "the keyframes chain of run %s is corrupt (parent '%s' of %s)",
                      name, cur, tmp[n - 1].name);
            break;
        }
        if (open_run(x, &tmp[n], cur, err, errlen) < 0)
            break;
        n++;
        if (parent_of(x, &tmp[n - 1], parent) < 0) {
            util_fail(err, errlen, "cannot read the keyframes of run %s", cur);
            break;
        }
        if (!parent[0]) {
            for (size_t i = 0; i < n; i++)
                x->run[i] = tmp[n - 1 - i];
            x->nruns = n;
            return 0;
        }
        snprintf(cur, sizeof(cur), "%s", parent);
    }
    for (size_t i = 0; i < n; i++)
        close_run(&tmp[i]);
    return -1;
}

static void add_page(void *ctx, const hash256 *h)
{
    struct xp *x = ctx;
    if (!store_is_zero_hash(h))
        hashvec_add(&x->pages, h);
}

/* The sorted, distinct non-zero pages every keyframes file of the chain names. */
static int list_pages(struct xp *x, char *err, size_t errlen)
{
    for (size_t i = 0; i < x->nruns; i++) {
        char p[4300];
        if (x->run[i].fd[ARCH_F_KEYFRAMES] < 0)
            continue;
        if (run_path(p, sizeof(p), x->home, x->run[i].name, "keyframes") < 0 ||
            kf_each_page(p, add_page, x) < 0)
            return util_fail(err, errlen, "cannot read the keyframes of run %s", x->run[i].name);
    }
    if (x->pages.oom)
        return util_fail(err, errlen, "out of memory listing the pages");
    hashvec_sort_unique(&x->pages);
    return 0;
}

static int write_runs(struct xp *x, struct wr *w, char *err, size_t errlen)
{
    for (size_t i = 0; i < x->nruns; i++)
        for (int f = 0; f < ARCH_NFILES; f++) {
            const struct xrun *r = &x->run[i];
            if (r->fd[f] < 0)
                continue;
            char name[128];
            snprintf(name, sizeof(name), "%s/%s", r->name, archive_file_names[f]);
            if (wr_entry(w, ARCH_FILE, name, r->len[f]) < 0 ||
                wr_copy(w, r->fd[f], r->len[f], NULL) < 0)
                return util_fail(err, errlen, "cannot export %s: %s", name, strerror(errno));
        }
    return 0;
}

static int write_page(struct wr *w, const hash256 *h, const uint8_t *page)
{
    uint8_t z[STORE_PAGE_SIZE]; /* not static: the engine is reentrant */
    char hex[65];
    hash_hex(h, hex);
    size_t n = ZSTD_compress(z, sizeof(z), page, STORE_PAGE_SIZE, 1);
    if (!ZSTD_isError(n) && n < STORE_PAGE_SIZE)
        return wr_entry(w, ARCH_PAGEZ, hex, n) < 0 || wr_bytes(w, z, n, 1) < 0 ? -1 : 0;
    return wr_entry(w, ARCH_PAGE, hex, STORE_PAGE_SIZE) < 0 ||
                   wr_bytes(w, page, STORE_PAGE_SIZE, 1) < 0
               ? -1
               : 0;
}

static int write_pages(struct xp *x, struct wr *w, char *err, size_t errlen)
{
    if (!x->pages.n)
        return 0;
    char dir[4200], why[512], hex[65];
    struct store *s;
    if (home_path(dir, sizeof(dir), x->home, HOME_STORE, NULL, NULL) < 0)
        return util_fail(err, errlen, "cannot open the page store of %s", x->home);
    if (access(dir, F_OK) != 0 || store_open(dir, &s, why, sizeof(why)) < 0)
        return util_fail(err, errlen, "cannot open the page store %s", dir);
    uint8_t page[STORE_PAGE_SIZE];
    int rc = 0;
    for (size_t i = 0; i < x->pages.n && rc == 0; i++) {
        if (store_get(s, &x->pages.v[i], page) < 0) {
            hash_hex(&x->pages.v[i], hex);
            rc = util_fail(err, errlen, "page %s is %s the page store", hex,
                           errno == ENOENT ? "missing from" : "corrupt in");
        } else if (write_page(w, &x->pages.v[i], page) < 0) {
            rc = util_fail(err, errlen, "cannot write the archive: %s", strerror(errno));
        }
    }
    store_close(s);
    return rc;
}

static int write_image(struct xp *x, struct wr *w, const char *hex, char *err, size_t errlen)
{
    char path[4300] = "", got[65];
    int fd = home_path(path, sizeof(path), x->home, HOME_IMAGES, hex, NULL) < 0
                 ? -1
                 : open(path, O_RDONLY | O_CLOEXEC);
    struct stat sb;
    if (fd < 0 || fstat(fd, &sb) < 0) {
        if (fd >= 0)
            close(fd);
        return util_fail(err, errlen,
                         "the root image %s is gone (rewind gc?); cannot export it "
                         "replayable",
                         path);
    }
    hash_ctx *h = hash_new();
    int rc =
        h && wr_entry(w, ARCH_IMAGE, hex, (uint64_t)sb.st_size) == 0 &&
                wr_copy(w, fd, (uint64_t)sb.st_size, h) == 0
            ? 0
            : util_fail(err, errlen, "cannot export the root image %s: %s", path, strerror(errno));
    close(fd);
    if (h) {
        hash256 d;
        hash_final(h, &d);
        hash_hex(&d, got);
        if (rc == 0 && strcmp(got, hex))
            rc = util_fail(err, errlen, "the root image %s is corrupt (its bytes hash to %.16s)",
                           path, got);
    }
    return rc;
}

static int write_images(struct xp *x, struct wr *w, struct archive_stats *st, char *err,
                        size_t errlen)
{
    for (size_t i = 0; i < x->nruns; i++) {
        const char *hex = x->run[i].image;
        int seen = 0;
        for (size_t j = 0; j < i; j++)
            seen |= !strcmp(x->run[j].image, hex);
        if (seen)
            continue;
        if (!hex[0])
            return util_fail(err, errlen, "run %s names no root image; cannot export it replayable",
                             x->run[i].name);
        if (write_image(x, w, hex, err, errlen) < 0)
            return -1;
        st->images++;
    }
    return 0;
}

static int write_all(struct xp *x, struct wr *w, struct archive_stats *st, char *err, size_t errlen)
{
    uint8_t h[ARCH_HEADER_SIZE] = {0};
    memcpy(h, ARCHIVE_MAGIC, 8);
    bytes_put_u32(h + 8, ARCHIVE_VERSION);
    bytes_put_u32(h + 12, x->replayable ? ARCHIVE_F_REPLAYABLE : 0);
    memcpy(h + 16, x->run[x->nruns - 1].name, strlen(x->run[x->nruns - 1].name));
    if (wr_bytes(w, h, sizeof(h), 1) < 0)
        return util_fail(err, errlen, "cannot write the archive: %s", strerror(errno));
    if (write_runs(x, w, err, errlen) < 0)
        return -1;
    if (x->replayable && (write_pages(x, w, err, errlen) < 0 ||
                          (!x->no_image && write_images(x, w, st, err, errlen) < 0)))
        return -1;
    uint8_t end[ARCH_END_LEN];
    hash256 d;
    bytes_put_u64(end, w->entries);
    hash_final(w->h, &d);
    w->h = NULL;
    memcpy(end + 8, d.b, 32);
    if (wr_entry(w, ARCH_END, "", ARCH_END_LEN) < 0)
        return util_fail(err, errlen, "cannot write the archive: %s", strerror(errno));
    if (wr_bytes(w, end, sizeof(end), 0) < 0)
        return util_fail(err, errlen, "cannot write the archive: %s", strerror(errno));
    st->pages = x->pages.n;
    st->runs = x->nruns;
    st->bytes = w->off;
    return 0;
}

/* Open the output: stdout for "-", else a temp file next to out_path. */
static int open_out(const char *out_path, char *tmp, size_t tmplen, char *err, size_t errlen)
{
    tmp[0] = 0;
    if (!strcmp(out_path, "-")) {
        if (isatty(1))
            return util_fail(err, errlen,
                             "refusing to write an archive to a terminal (use -o FILE)");
        return 1;
    }
    /* A device or a pipe (-o /dev/null, a FIFO) is written in place: a
     * rename over it would replace it with a regular file. */
    struct stat sb;
    if (stat(out_path, &sb) == 0 && !S_ISREG(sb.st_mode)) {
        if (S_ISDIR(sb.st_mode))
            return util_fail(err, errlen, "cannot write the archive to %s: a directory", out_path);
        int fd = open(out_path, O_WRONLY | O_CLOEXEC);
        if (fd < 0)
            return util_fail(err, errlen, "cannot open %s: %s", out_path, strerror(errno));
        return fd;
    }
    snprintf(tmp, tmplen, "%s.tmp.%d", out_path, (int)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return util_fail(err, errlen, "cannot create %s: %s", tmp, strerror(errno));
    return fd;
}

static int finish_out(int fd, const char *tmp, const char *out_path, int ok, char *err,
                      size_t errlen)
{
    if (!tmp[0]) { /* stdout, or a device or pipe written in place */
        if (fd > 2 && close(fd) < 0 && ok) {
            util_fail(err, errlen, "cannot write %s: %s", out_path, strerror(errno));
            return -1;
        }
        return ok ? 0 : -1;
    }
    if (ok && (fsync(fd) < 0 || close(fd) < 0 || rename(tmp, out_path) < 0)) {
        util_fail(err, errlen, "cannot write %s: %s", out_path, strerror(errno));
        unlink(tmp);
        return -1;
    }
    if (!ok) {
        close(fd);
        unlink(tmp);
        return -1;
    }
    return 0;
}

static void count_main(struct xp *x, struct archive_stats *st)
{
    const struct xrun *r = &x->run[x->nruns - 1];
    snprintf(st->run, sizeof(st->run), "%s", r->name);
    char p[4300];
    json_error_t je;
    json_t *m = run_path(p, sizeof(p), x->home, r->name, "manifest.json") < 0
                    ? NULL
                    : json_load_file(p, 0, &je);
    st->events = (uint64_t)json_integer_value(json_object_get(m, "events"));
    json_decref(m);
    struct kf_file k;
    if (r->fd[ARCH_F_KEYFRAMES] >= 0 &&
        run_path(p, sizeof(p), x->home, r->name, "keyframes") == 0 && kf_open(p, &k) == 0) {
        st->keyframes = k.n;
        kf_close_read(&k);
    }
}

int archive_export(const char *home, const char *name, int flags, const char *out_path,
                   struct archive_stats *st, char *err, size_t errlen)
{
    memset(st, 0, sizeof(*st));
    if (name[0] == '.')
        return util_fail(err, errlen,
                         "run %s did not finish (killed mid-way?); only finished runs "
                         "can be exported",
                         name);
    if (!archive_valid_run_name(name))
        return util_fail(err, errlen, "run name '%s' cannot go in an archive", name);
    int lock = homelock_take(home, 0, 1, err, errlen);
    if (lock < 0)
        return -1;
    struct xp *x = calloc(1, sizeof(*x));
    int rc = x ? 0 : util_fail(err, errlen, "out of memory");
    if (rc == 0) {
        x->home = home;
        x->replayable = (flags & ARCHIVE_X_REPLAYABLE) != 0;
        x->no_image = x->replayable && (flags & ARCHIVE_X_NO_IMAGE);
        rc = open_chain(x, name, err, errlen);
    }
    if (rc == 0 && x->replayable)
        rc = list_pages(x, err, errlen);
    char tmp[4300];
    int fd = rc == 0 ? open_out(out_path, tmp, sizeof(tmp), err, errlen) : -1;
    if (fd >= 0) {
        struct wr w = {.fd = fd, .h = hash_new()};
        rc = w.h ? write_all(x, &w, st, err, errlen) : util_fail(err, errlen, "out of memory");
        if (w.h)
            hash_final(w.h, &(hash256){{0}});
        rc = finish_out(fd, tmp, out_path, rc == 0, err, errlen);
        if (rc == 0)
            count_main(x, st);
    } else {
        rc = -1;
    }
    if (x) {
        for (size_t i = 0; i < x->nruns; i++)
            close_run(&x->run[i]);
        hashvec_free(&x->pages);
        free(x);
    }
    homelock_release(lock);
    return rc;
}
