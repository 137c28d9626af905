/* image.c - resolve a run's root filesystem to a content-addressed erofs image.
 *
 * What it is for: `rewind run --root ROOT` accepts a directory, a tarball
 * (plain or compressed, as `docker export` writes) or an erofs image. The
 * guest mounts an erofs image read-only; this module produces it, names it
 * by the SHA-256 of its bytes and caches it so that an unchanged root is
 * neither rebuilt nor rehashed.
 *
 * Cache layout (cache_dir/images/):
 *   <hex>.erofs        an image whose bytes hash to <hex>; never modified
 *   keys/<keyhex>      one line: 64 hex digits (an image hash, or for a file
 *                      identity key the hash of that file's bytes)
 *   .tmp-*             in-flight temp files/dirs of live or crashed callers
 * Keys are SHA-256 over a domain-separated description:
 *   file: (dev, ino, size, mtime_ns, ctime_ns) of an erofs image or tarball
 *         -> hash of the file's bytes (so a big file is hashed once);
 *   tree2: a sorted walk of a directory (relative path, type, mode, size,
 *         content hash of each regular file, symlink target, rdev,
 *         hard-link grouping, xattrs) plus our mkfs flags -> image hash.
 *         Times and owners are left out: mkfs.erofs drops them (5). The
 *         content hashes come from the root's file index (imgindex.c),
 *         keyed by (path, dev, inode, mode, size, mtime, ctime), so an
 *         unchanged tree is only stat'ed and a changed file is re-read;
 *   tar:  hash of the tarball's bytes plus our mkfs flags -> image hash.
 *
 * Invariants:
 *  1. Nothing half-written is ever visible under a final name: images and
 *     keys are written to .tmp-* names, fsync'd (images) and then published
 *     with link() (images: first writer wins, later identical ones are
 *     dropped) or rename() (keys). Temps are removed on every failure path.
 *  2. A key is only trusted if the image it names exists and carries the
 *     erofs magic; otherwise it is a miss and the image is rebuilt.
 *  3. A key is only stored if the source did not change while we built
 *     (tree walked again / file re-stat'ed afterwards).
 *  4. Concurrent callers never fail because of each other: every name they
 *     create is unique (mkstemp/mkdtemp) or published atomically.
 *  5. Reproducibility: mkfs.erofs 1.5 with -T0 (every inode gets mtime 0 and
 *     a compact inode; superblock build time 0), --all-root (uid/gid 0) and a
 *     fixed -U uuid gives byte-identical images for identical trees whatever
 *     their readdir order or owners. Modes, xattrs and hard links are part of
 *     the image, so tarballs are extracted with -p --xattrs --acls.
 *  6. External tools run via fork/execvpe with LC_ALL=C, stdin/stdout on
 *     /dev/null and stderr captured; no shell is involved.
 *  7. An erofs root that is this cache's own images/<hex>.erofs (a run's
 *     kept image: a fork, check, replay or cat of a stored run names it) is
 *     named <hex> without reading it, as a key hit names it (2): images are
 *     never modified. Another file (a copy, another home's image) is hashed
 *     by its bytes, once per file identity.
 *  8. A file of at least SHARED_MIN bytes (a root image, a tarball, the
 *     guest kernel) is also looked up in, and its identity key written to,
 *     the user's key cache shared by every home (shared_keys: $REWIND_CACHE/
 *     filehash, else $XDG_CACHE_HOME/rewind/filehash, else ~/.cache/rewind/
 *     filehash), so a new home does not read the same big file again. It is
 *     used only when it is a directory of the effective user that no one
 *     else may write; anything wrong with it is a miss, never an error. A
 *     hit there is copied into the home's keys (the home stays whole alone).
 */
#include "image/image.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "util/bytes.h"
#include "util/check.h"
#include "util/fail.h"
#include "util/io.h"
#include "image/imgindex.h"
#include "util/spawn.h"
#include "util/usercache.h"

#define KEY_DOMAIN "rewind-image-v1"
#define IMAGE_UUID "72657769-6e64-4572-6f66-730000000001"
#define EROFS_MAGIC_OFF 1024
#define STDERR_CAP 65536
#define STALE_TEMP_SECS (24 * 3600)
#define XATTR_VAL_MAX 65536 /* an xattr value's largest size (XATTR_SIZE_MAX) */

/* Everything after "mkfs.erofs" and before OUTPUT DIR; also hashed into keys. */
static const char *const mkfs_flags[] = {"--quiet", "-T0", "--all-root", "-U", IMAGE_UUID};
#define N_MKFS_FLAGS (sizeof mkfs_flags / sizeof mkfs_flags[0])

static atomic_ulong mkfs_runs, files_hashed;

unsigned long image_files_hashed(void)
{
    return atomic_load(&files_hashed);
}

unsigned long image_mkfs_runs(void)
{
    return atomic_load(&mkfs_runs);
}

/* ---- errors ------------------------------------------------------------ */

struct ectx {
    char *buf;
    size_t len;
};

/* util_fail into e, then flatten the line: a tool's stderr quoted in it
 * must not break it over lines. Always returns -1. */
__attribute__((format(printf, 2, 3))) static int fail(struct ectx *e, const char *fmt, ...)
{
    if (!e->buf || e->len == 0)
        return -1;
    va_list ap;
    va_start(ap, fmt);
    util_vfail(e->buf, e->len, fmt, ap);
    va_end(ap);
    for (char *p = e->buf; *p; p++)
        if (*p == '\n' || *p == '\r' || *p == '\t')
            *p = ' ';
    size_t n = strlen(e->buf);
    while (n > 0 && e->buf[n - 1] == ' ')
        e->buf[--n] = '\0';
    return -1;
}

/* strerror, but ENOSPC/EDQUOT say plainly that the disk is full. */
static const char *why(int err)
{
    if (err == ENOSPC || err == EDQUOT)
        return "disk full (No space left on device)";
    return strerror(err);
}

/* ---- small helpers ------------------------------------------------------ */

/* dst = a "/" b; -1 with ENAMETOOLONG if it does not fit. */
static int path_join(char *dst, size_t n, const char *a, const char *b)
{
    int r = snprintf(dst, n, "%s/%s", a, b);
    if (r < 0 || (size_t)r >= n) {
        errno = ENAMETOOLONG;
        return -1;
    }
    return 0;
}

static int is_hex64(const char *s)
{
    for (int i = 0; i < 64; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
            return 0;
    return 1;
}

static void hex_to_hash(const char hex[65], hash256 *h)
{
    for (int i = 0; i < 32; i++) {
        int hi = hex[2 * i] <= '9' ? hex[2 * i] - '0' : hex[2 * i] - 'a' + 10;
        int lo = hex[2 * i + 1] <= '9' ? hex[2 * i + 1] - '0' : hex[2 * i + 1] - 'a' + 10;
        h->b[i] = (unsigned char)(hi << 4 | lo);
    }
}

static void put_u64(hash_ctx *h, uint64_t v)
{
    uint8_t b[8];
    bytes_put_u64(b, v);
    hash_update(h, b, sizeof b);
}

/* Length-prefixed bytes, so that concatenated fields cannot collide. */
static void put_bytes(hash_ctx *h, const void *p, size_t n)
{
    put_u64(h, n);
    hash_update(h, p, n);
}

static void put_str(hash_ctx *h, const char *s)
{
    put_bytes(h, s, strlen(s));
}

/* Start a key hash: domain, kind and the mkfs flags that shape the image. */
static hash_ctx *key_begin(const char *kind)
{
    hash_ctx *h = hash_new();
    if (!h)
        return NULL;
    put_str(h, KEY_DOMAIN);
    put_str(h, kind);
    put_u64(h, N_MKFS_FLAGS);
    for (size_t i = 0; i < N_MKFS_FLAGS; i++)
        put_str(h, mkfs_flags[i]);
    return h;
}

/* ---- removing temp trees -------------------------------------------------- */

/* Remove parent/name recursively, making directories writable first (a
 * non-root caller may have extracted 0555 directories). */
static int rm_tree_at(int parent, const char *name)
{
    if (unlinkat(parent, name, 0) == 0 || errno == ENOENT)
        return 0;
    if (errno != EISDIR && errno != EPERM)
        return -1;
    (void)fchmodat(parent, name, 0700, 0); /* best effort: unlinkat reports real trouble */
    int fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return -1;
    DIR *d = fdopendir(fd);
    if (!d) {
        close(fd);
        return -1;
    }
    int rc = 0;
    for (bool removed = true; removed && rc == 0;) {
        removed = false;
        rewinddir(d);
        struct dirent *de;
        while (rc == 0 && (de = readdir(d)) != NULL) {
            if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
                continue;
            rc = rm_tree_at(dirfd(d), de->d_name);
            removed = true;
        }
    }
    int e = errno;
    closedir(d);
    if (rc < 0) {
        errno = e;
        return -1;
    }
    return unlinkat(parent, name, AT_REMOVEDIR);
}

static int rm_tree(const char *path)
{
    return rm_tree_at(AT_FDCWD, path);
}

/* ---- running tools -------------------------------------------------------- */

struct run {
    int exec_errno; /* nonzero: the tool could not be started */
    int status;     /* wait status */
    char err[STDERR_CAP];
    size_t errlen;
    bool truncated;
};

/* environ with LC_ALL=C (tool messages are parsed and quoted in English). */
static char **tool_env(void)
{
    extern char **environ;
    size_t n = 0;
    while (environ[n])
        n++;
    char **env = calloc(n + 2, sizeof *env);
    if (!env)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (strncmp(environ[i], "LC_ALL=", 7) && strncmp(environ[i], "LANGUAGE=", 9))
            env[k++] = environ[i];
    env[k++] = "LC_ALL=C";
    env[k] = NULL;
    return env;
}

/* Called about every TICK_MS while a tool runs (progress). */
struct tick {
    void (*fn)(void *ctx);
    void *ctx;
};
#define TICK_MS 200

/* Drain fd into r->err (keeping the first STDERR_CAP-1 bytes), ticking. */
static void run_drain(int fd, struct run *r, const struct tick *t)
{
    char buf[4096];
    for (;;) {
        if (t && t->fn) {
            struct pollfd pfd = {.fd = fd, .events = POLLIN};
            int pr = poll(&pfd, 1, TICK_MS);
            if (pr < 0 && errno != EINTR)
                break;
            t->fn(t->ctx);
            if (pr <= 0)
                continue;
        }
        ssize_t n = read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        size_t room = sizeof r->err - 1 - r->errlen;
        size_t take = (size_t)n < room ? (size_t)n : room;
        memcpy(r->err + r->errlen, buf, take);
        r->errlen += take;
        if (take < (size_t)n)
            r->truncated = true;
    }
    r->err[r->errlen] = '\0';
}

/* Run argv[0] (PATH search) to completion; -1 only if no process could be
 * made. A tool that cannot be run leaves its errno in r->exec_errno. */
static int run_tool(char *const argv[], struct run *r, const struct tick *t)
{
    memset(r, 0, sizeof *r);
    char **env = tool_env();
    if (!env)
        return -1;
    int errp[2];
    if (pipe2(errp, O_CLOEXEC) < 0) {
        free(env);
        return -1;
    }
    pid_t pid;
    int rc = spawn_start(argv, env, SPAWN_NULL, SPAWN_NULL, errp[1], &pid);
    int spawn_errno = errno;
    free(env);
    close(errp[1]);
    if (rc < 0) {
        close(errp[0]);
        if (spawn_errno == EAGAIN || spawn_errno == ENOMEM) {
            errno = spawn_errno;
            return -1;
        }
        r->exec_errno = spawn_errno ? spawn_errno : EINVAL;
        r->status = 127 << 8;
        return 0;
    }
    run_drain(errp[0], r, t);
    close(errp[0]);
    return spawn_wait(pid, &r->status);
}

static bool run_ok(const struct run *r)
{
    return !r->exec_errno && WIFEXITED(r->status) && WEXITSTATUS(r->status) == 0;
}

/* First non-empty stderr line (preferring one tagged "<E>"), trimmed, into out. */
static void run_first_line(const struct run *r, char *out, size_t n)
{
    const char *pick = NULL, *p = r->err;
    while (*p) {
        const char *end = strchr(p, '\n');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len > 0 && !pick)
            pick = p;
        if (len > 4 && !strncmp(p, "<E> ", 4)) {
            pick = p;
            break;
        }
        p += len + (end ? 1 : 0);
    }
    if (!pick) {
        if (WIFSIGNALED(r->status))
            snprintf(out, n, "killed by signal %d", WTERMSIG(r->status));
        else
            snprintf(out, n, "exit status %d", WEXITSTATUS(r->status));
        return;
    }
    if (!strncmp(pick, "<E> ", 4))
        pick += 4;
    const char *end = strchr(pick, '\n');
    size_t len = end ? (size_t)(end - pick) : strlen(pick);
    while (len > 0 && (pick[len - 1] == ' ' || pick[len - 1] == '\t' || pick[len - 1] == '\r'))
        len--;
    snprintf(out, n, "%.*s", (int)len, pick);
}

/* ---- the cache -------------------------------------------------------------- */

struct cache {
    char images[PATH_MAX]; /* absolute */
    char keys[PATH_MAX];
    const char *home; /* the cache_dir given: $REWIND_HOME */
    const struct image_progress *prog;
};

/* Remove .tmp-* entries older than a day: leftovers of crashed callers. */
static void sweep_stale_temps(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return; /* sweeping is housekeeping only */
    time_t now = time(NULL);
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        struct stat st;
        if (strncmp(de->d_name, ".tmp-", 5) ||
            fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
            continue;
        /* ctime, not mtime: tar sets a temp tree's mtime from the archive. */
        if (now - st.st_ctime > STALE_TEMP_SECS)
            (void)rm_tree_at(dirfd(d), de->d_name); /* best effort, see above */
    }
    closedir(d);
}

static int cache_open(const char *cache_dir, struct cache *c, struct ectx *e)
{
    char images[PATH_MAX];
    if (path_join(images, sizeof images, cache_dir, "images") < 0 ||
        path_join(c->keys, sizeof c->keys, images, "keys") < 0)
        return fail(e, "cache directory path '%s' is too long", cache_dir);
    c->home = cache_dir;
    c->prog = NULL;
    if (io_mkdir_p(c->keys) < 0)
        return fail(e, "cannot create cache directory '%s': %s", c->keys, why(errno));
    if (!realpath(images, c->images))
        return fail(e, "cannot resolve cache directory '%s': %s", images, why(errno));
    if (path_join(c->keys, sizeof c->keys, c->images, "keys") < 0)
        return fail(e, "cache directory path '%s' is too long", c->images);
    sweep_stale_temps(c->images);
    sweep_stale_temps(c->keys);
    return 0;
}

/* Look up keys/<key>; returns 1 and fills hex on a well-formed entry, else 0. */
static int key_get(const struct cache *c, const hash256 *key, char hex[65])
{
    char kh[65], path[PATH_MAX];
    hash_hex(key, kh);
    if (path_join(path, sizeof path, c->keys, kh) < 0)
        return 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    char buf[66];
    ssize_t got = io_pread_full(fd, buf, sizeof buf, 0);
    close(fd);
    if (got != 65 || buf[64] != '\n' || !is_hex64(buf))
        return 0;
    memcpy(hex, buf, 64);
    hex[64] = '\0';
    return 1;
}

/* Atomically (re)write keys/<key> = hex. */
static int key_put(const struct cache *c, const hash256 *key, const char hex[65], struct ectx *e)
{
    RW_ASSERT(is_hex64(hex) && hex[64] == 0); /* a key names a hash we computed */
    char kh[65], path[PATH_MAX], tmp[PATH_MAX];
    hash_hex(key, kh);
    if (path_join(path, sizeof path, c->keys, kh) < 0 ||
        path_join(tmp, sizeof tmp, c->keys, ".tmp-key-XXXXXX") < 0)
        return fail(e, "cache path too long under '%s'", c->keys);
    int fd = mkostemp(tmp, O_CLOEXEC);
    if (fd < 0)
        return fail(e, "cannot create a temp file in '%s': %s", c->keys, why(errno));
    char line[65];
    memcpy(line, hex, 64);
    line[64] = '\n';
    int rc = fchmod(fd, 0644) < 0 || io_write_all(fd, line, sizeof line) < 0 ? -1 : 0;
    int err = errno;
    if (close(fd) < 0 && rc == 0) {
        rc = -1;
        err = errno;
    }
    if (rc == 0 && rename(tmp, path) < 0) {
        rc = -1;
        err = errno;
    }
    if (rc < 0) {
        unlink(tmp);
        return fail(e, "cannot write cache key '%s': %s", path, why(err));
    }
    return 0;
}

/* Does path hold an erofs superblock? 1 yes, 0 no/unreadable. */
static int has_erofs_magic(int fd)
{
    unsigned char m[4];
    if (io_pread_exact(fd, m, sizeof m, EROFS_MAGIC_OFF) < 0)
        return 0;
    return m[0] == 0xE2 && m[1] == 0xE1 && m[2] == 0xF5 && m[3] == 0xE0;
}

/* Fill out from images/<hex>.erofs if it is there and looks sound; 1 hit, 0 miss. */
static int image_lookup(const struct cache *c, const char hex[65], struct image *out)
{
    char name[80], path[PATH_MAX];
    snprintf(name, sizeof name, "%s.erofs", hex);
    if (path_join(path, sizeof path, c->images, name) < 0 || strlen(path) >= sizeof out->path)
        return 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    struct stat st;
    int ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && has_erofs_magic(fd);
    close(fd);
    if (!ok)
        return 0;
    snprintf(out->path, sizeof out->path, "%s", path);
    memcpy(out->hex, hex, 65);
    hex_to_hash(hex, &out->hash);
    out->size = (uint64_t)st.st_size;
    return 1;
}

static bool same_file_state(const struct stat *a, const struct stat *b)
{
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
           a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec &&
           a->st_ctim.tv_sec == b->st_ctim.tv_sec && a->st_ctim.tv_nsec == b->st_ctim.tv_nsec;
}

/* ---- progress ------------------------------------------------------------------ */

struct progress_state {
    const char *what;
    uint64_t done, total;
    bool on;
};

static void progress_begin(const struct cache *c, struct progress_state *ps, const char *what,
                           uint64_t total)
{
    ps->what = what;
    ps->done = 0;
    ps->total = total;
    ps->on = c->prog && c->prog->fn && total > 0;
    if (ps->on)
        c->prog->fn(c->prog->ctx, what, 0, total);
}

static void progress_add(const struct cache *c, struct progress_state *ps, uint64_t n)
{
    ps->done += n;
    if (ps->on)
        c->prog->fn(c->prog->ctx, ps->what, ps->done < ps->total ? ps->done : ps->total, ps->total);
}

/* The phase is over: NULL tells the display to finish its line. */
static void progress_end(const struct cache *c, struct progress_state *ps)
{
    if (ps->on)
        c->prog->fn(c->prog->ctx, NULL, ps->total, ps->total);
    ps->on = false;
}

/* ---- building an image ------------------------------------------------------- */

/* Explain a failed mkfs.erofs run in e. */
static int mkfs_failure(const struct run *r, struct ectx *e)
{
    if (r->exec_errno == ENOENT)
        return fail(e, "mkfs.erofs not found in PATH (apt-get install erofs-utils)");
    if (r->exec_errno)
        return fail(e, "cannot run mkfs.erofs: %s", strerror(r->exec_errno));
    char line[512];
    run_first_line(r, line, sizeof line);
    if (strstr(r->err, "No space left on device") || strstr(r->err, "Error 28]"))
        return fail(e, "disk full: mkfs.erofs failed: %s", line);
    return fail(e, "mkfs.erofs failed: %s", line);
}

/* Make tmp durable, hash it and publish it as images/<hex>.erofs. */
static int publish_image(const struct cache *c, const char *tmp, struct image *out, struct ectx *e)
{
    const char *base = strrchr(tmp, '/');
    RW_ASSERT(base && strncmp(base + 1, ".tmp-", 5) == 0); /* built under a temp name (1) */
    int fd = open(tmp, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return fail(e, "cannot open new image '%s': %s", tmp, why(errno));
    int rc = fsync(fd);
    int err = errno;
    close(fd);
    if (rc < 0)
        return fail(e, "cannot sync new image '%s': %s", tmp, why(err));
    hash256 h;
    if (hash_file(tmp, &h) < 0)
        return fail(e, "cannot read new image '%s': %s", tmp, why(errno));
    char hex[65], name[80], final[PATH_MAX];
    hash_hex(&h, hex);
    snprintf(name, sizeof name, "%s.erofs", hex);
    if (path_join(final, sizeof final, c->images, name) < 0)
        return fail(e, "cache path too long under '%s'", c->images);
    if (link(tmp, final) < 0 && errno != EEXIST) {
        /* Filesystems without hard links: rename is atomic too (same bytes). */
        if (rename(tmp, final) < 0)
            return fail(e, "cannot store image '%s': %s", final, why(errno));
    }
    if (!image_lookup(c, hex, out))
        return fail(e, "stored image '%s' vanished or is not erofs", final);
    return 0;
}

struct build_tick {
    const struct cache *c;
    struct progress_state ps;
    const char *tmp;
};

/* The image grows as mkfs.erofs writes it: its size is the progress. */
static void build_tick(void *arg)
{
    struct build_tick *b = arg;
    struct stat st;
    if (stat(b->tmp, &st) == 0 && (uint64_t)st.st_size > b->ps.done)
        progress_add(b->c, &b->ps, (uint64_t)st.st_size - b->ps.done);
}

/* mkfs.erofs dir into a temp file, then publish it; the temp never survives. */
static int build_image(const struct cache *c, const char *dir, uint64_t expect, struct image *out,
                       struct ectx *e)
{
    char tmp[PATH_MAX];
    if (path_join(tmp, sizeof tmp, c->images, ".tmp-img-XXXXXX") < 0)
        return fail(e, "cache path too long under '%s'", c->images);
    int fd = mkostemp(tmp, O_CLOEXEC);
    if (fd < 0)
        return fail(e, "cannot create a temp file in '%s': %s", c->images, why(errno));
    int rc = fchmod(fd, 0644);
    int err = errno;
    close(fd);
    if (rc < 0) {
        unlink(tmp);
        return fail(e, "cannot chmod '%s': %s", tmp, why(err));
    }
    char *argv[N_MKFS_FLAGS + 4];
    size_t k = 0;
    argv[k++] = "mkfs.erofs";
    for (size_t i = 0; i < N_MKFS_FLAGS; i++)
        argv[k++] = (char *)mkfs_flags[i];
    argv[k++] = tmp;
    argv[k++] = (char *)dir;
    argv[k] = NULL;
    struct run *r = malloc(sizeof *r);
    if (!r) {
        unlink(tmp);
        return fail(e, "out of memory");
    }
    atomic_fetch_add(&mkfs_runs, 1);
    struct build_tick bt = {.c = c, .tmp = tmp};
    progress_begin(c, &bt.ps, "building image", expect);
    struct tick t = {bt.ps.on ? build_tick : NULL, &bt};
    int started = run_tool(argv, r, &t);
    progress_end(c, &bt.ps);
    if (started < 0) {
        err = errno;
        free(r);
        unlink(tmp);
        return fail(e, "cannot start mkfs.erofs: %s", why(err));
    }
    rc = run_ok(r) ? publish_image(c, tmp, out, e) : mkfs_failure(r, e);
    free(r);
    unlink(tmp); /* published under its final name by link(), or failed */
    return rc;
}

/* ---- walking a tree into a key ---------------------------------------------- */

struct node {
    char *rel; /* path relative to the root ("" for the root) */
    struct stat st;
    hash256 data;   /* regular file: SHA-256 of its bytes; symlink: of its target */
    hash256 xattrs; /* SHA-256 of the sorted (name, value) pairs; zero: none */
    bool need_data; /* a regular file the index did not know: read it */
    uint64_t nchildren, link_ord;
};

struct walk {
    hash_ctx *h; /* the xattr digest being built */
    char path[PATH_MAX];
    size_t rootlen;
    struct link_id {
        dev_t dev;
        ino_t ino;
    } * links;
    size_t nlinks, caplinks;
    struct node *nodes;
    size_t nnodes, capnodes;
    struct imgindex *ix; /* NULL: no index (every node read in full) */
    struct ectx *e;
};

static void walk_free(struct walk *w)
{
    for (size_t i = 0; i < w->nnodes; i++)
        free(w->nodes[i].rel);
    free(w->nodes);
    free(w->links);
    w->nodes = NULL;
    w->links = NULL;
    w->nnodes = w->capnodes = w->nlinks = w->caplinks = 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static char type_char(mode_t m)
{
    return S_ISDIR(m)    ? 'd'
           : S_ISREG(m)  ? 'f'
           : S_ISLNK(m)  ? 'l'
           : S_ISCHR(m)  ? 'c'
           : S_ISBLK(m)  ? 'b'
           : S_ISFIFO(m) ? 'p'
           : S_ISSOCK(m) ? 's'
                         : '?';
}

/* Ordinal of a multiply-linked inode, in order of first appearance. */
static int link_ordinal(struct walk *w, const struct stat *st, uint64_t *ord)
{
    for (size_t i = 0; i < w->nlinks; i++) {
        if (w->links[i].dev == st->st_dev && w->links[i].ino == st->st_ino) {
            *ord = i;
            return 0;
        }
    }
    if (w->nlinks == w->caplinks) {
        size_t cap = w->caplinks ? 2 * w->caplinks : 64;
        void *p = realloc(w->links, cap * sizeof *w->links);
        if (!p)
            return -1;
        w->links = p;
        w->caplinks = cap;
    }
    w->links[w->nlinks].dev = st->st_dev;
    w->links[w->nlinks].ino = st->st_ino;
    *ord = w->nlinks++;
    return 0;
}

/* Digest of the xattrs of w->path (names sorted) into *out. */
static int walk_xattrs(struct walk *w, hash256 *out)
{
    ssize_t n = llistxattr(w->path, NULL, 0);
    if (n < 0 && (errno == ENOTSUP || errno == ENOSYS))
        n = 0;
    if (n < 0)
        return fail(w->e, "cannot list xattrs of '%s': %s", w->path, strerror(errno));
    if (n == 0) {
        memset(out, 0, sizeof *out); /* none: the common case, no hashing */
        return 0;
    }
    char *list = malloc((size_t)n + 1);
    char **names = calloc((size_t)n / 2 + 1, sizeof *names);
    char *val = malloc(XATTR_VAL_MAX); /* not static: the engine is reentrant */
    w->h = hash_new();
    if (!list || !names || !val || !w->h) {
        free(list);
        free(names);
        free(val);
        if (w->h)
            hash_final(w->h, out);
        return fail(w->e, "out of memory");
    }
    ssize_t got = llistxattr(w->path, list, (size_t)n);
    int rc = 0;
    if (got < 0)
        rc = fail(w->e, "cannot list xattrs of '%s': %s", w->path, strerror(errno));
    size_t cnt = 0;
    for (ssize_t i = 0; rc == 0 && i < got; i += (ssize_t)strlen(list + i) + 1)
        names[cnt++] = list + i;
    qsort(names, cnt, sizeof *names, cmp_str);
    put_u64(w->h, cnt);
    for (size_t i = 0; rc == 0 && i < cnt; i++) {
        ssize_t v = lgetxattr(w->path, names[i], val, XATTR_VAL_MAX);
        if (v < 0)
            rc = fail(w->e, "cannot read xattr %s of '%s': %s", names[i], w->path, strerror(errno));
        else {
            put_str(w->h, names[i]);
            put_bytes(w->h, val, (size_t)v);
        }
    }
    hash_final(w->h, out);
    w->h = NULL;
    free(list);
    free(names);
    free(val);
    return rc;
}

/* Sorted names of the directory open at dfd (taken: closed here), named
 * w->path in errors (NULL-terminated, caller frees). */
static char **walk_list(struct walk *w, int dfd, size_t *count)
{
    DIR *d = fdopendir(dfd);
    if (!d) {
        close(dfd);
        fail(w->e, "cannot read directory '%s': %s", w->path, strerror(errno));
        return NULL;
    }
    char **v = NULL;
    size_t n = 0, cap = 0;
    struct dirent *de;
    int err = 0;
    for (errno = 0; (de = readdir(d)) != NULL; errno = 0) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
            continue;
        if (n + 1 >= cap) {
            cap = cap ? 2 * cap : 32;
            char **p = realloc(v, cap * sizeof *v);
            if (!p) {
                err = ENOMEM;
                break;
            }
            v = p;
        }
        if (!(v[n] = strdup(de->d_name))) {
            err = ENOMEM;
            break;
        }
        n++;
    }
    if (!err)
        err = errno;
    closedir(d);
    if (err || !v) {
        for (size_t i = 0; i < n; i++)
            free(v[i]);
        free(v);
        if (err) {
            fail(w->e, "cannot read directory '%s': %s", w->path, strerror(err));
            return NULL;
        }
        v = calloc(1, sizeof *v);
        if (!v)
            fail(w->e, "out of memory");
        *count = 0;
        return v;
    }
    qsort(v, n, sizeof *v, cmp_str);
    v[n] = NULL;
    *count = n;
    return v;
}

static int walk_node(struct walk *w, int pfd, const char *name, size_t len, bool follow);

/* Walk the children of directory w->path (length len, open at dfd: taken),
 * in sorted order; their count goes into node ni. Each child is looked up
 * relative to dfd: one lookup, not one per component of its path. */
static int walk_children(struct walk *w, int dfd, size_t len, size_t ni)
{
    int keep = dup(dfd); /* fdopendir takes dfd; the children need a descriptor */
    if (keep < 0) {
        close(dfd);
        return fail(w->e, "cannot read directory '%s': %s", w->path, strerror(errno));
    }
    size_t n = 0;
    char **names = walk_list(w, dfd, &n);
    if (!names) {
        close(keep);
        return -1;
    }
    w->nodes[ni].nchildren = n;
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        size_t nl = strlen(names[i]);
        if (rc == 0 && len + 1 + nl >= sizeof w->path)
            rc = fail(w->e, "path too long under '%s'", w->path);
        if (rc == 0) {
            w->path[len] = '/';
            memcpy(w->path + len + 1, names[i], nl + 1);
            rc = walk_node(w, keep, names[i], len + 1 + nl, false);
            w->path[len] = '\0';
        }
        free(names[i]);
    }
    free(names);
    close(keep);
    return rc;
}

/* Record one node (name in the directory pfd; w->path, length len) and, for
 * a directory, its subtree. An entry of the file index whose metadata
 * matches gives the node's data and xattr hashes without reading anything
 * but its stat; otherwise xattrs and symlink targets are read here and
 * regular files are marked for hash_nodes. */
static int walk_node(struct walk *w, int pfd, const char *name, size_t len, bool follow)
{
    struct stat st;
    if (fstatat(pfd, name, &st, follow ? 0 : AT_SYMLINK_NOFOLLOW) < 0)
        return fail(w->e, "cannot stat '%s': %s", w->path, strerror(errno));
    if (w->nnodes == w->capnodes) {
        size_t cap = w->capnodes ? 2 * w->capnodes : 1024;
        void *p = realloc(w->nodes, cap * sizeof *w->nodes);
        if (!p)
            return fail(w->e, "out of memory");
        w->nodes = p;
        w->capnodes = cap;
    }
    size_t ni = w->nnodes;
    struct node *nd = &w->nodes[ni];
    memset(nd, 0, sizeof *nd);
    nd->st = st;
    if (!(nd->rel = strdup(w->path + w->rootlen)))
        return fail(w->e, "out of memory");
    w->nnodes++;
    if (!S_ISDIR(st.st_mode) && st.st_nlink > 1) {
        uint64_t ord;
        if (link_ordinal(w, &st, &ord) < 0)
            return fail(w->e, "out of memory");
        nd->link_ord = ord + 1;
    }
    bool hit = w->ix && imgindex_find(w->ix, nd->rel, &st, &nd->data, &nd->xattrs);
    if (!hit) {
        if (walk_xattrs(w, &nd->xattrs) < 0)
            return -1;
        nd = &w->nodes[ni];
        if (S_ISLNK(st.st_mode)) {
            char target[PATH_MAX];
            ssize_t n = readlinkat(pfd, name, target, sizeof target);
            if (n < 0 || (size_t)n >= sizeof target)
                return fail(w->e, "cannot read symlink '%s': %s", w->path,
                            n < 0 ? strerror(errno) : "target too long");
            hash_buf(target, (size_t)n, &nd->data);
        }
        if (S_ISREG(st.st_mode))
            nd->need_data = true;
        else if (w->ix && imgindex_put(w->ix, nd->rel, &st, &nd->data, &nd->xattrs) < 0)
            return fail(w->e, "out of memory");
    }
    if (!S_ISDIR(st.st_mode))
        return 0;
    int dfd = openat(pfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW));
    if (dfd < 0)
        return fail(w->e, "cannot read directory '%s': %s", w->path, strerror(errno));
    return walk_children(w, dfd, len, ni);
}

/* Walk the tree at dir into w (metadata only). */
static int walk_tree(struct walk *w, const char *dir, struct imgindex *ix, struct ectx *e)
{
    memset(w, 0, sizeof *w);
    w->e = e;
    w->ix = ix;
    size_t len = strlen(dir);
    if (len >= sizeof w->path)
        return fail(e, "root path '%s' is too long", dir);
    memcpy(w->path, dir, len + 1);
    w->rootlen = len;
    return walk_node(w, AT_FDCWD, dir, len, true);
}

#define HASH_BUF (1 << 20)

/* Read path into h through buf (HASH_BUF bytes, the caller's: no static
 * buffer, the engine is reentrant), reporting progress; -1 with errno. */
static int hash_with_progress(const struct cache *c, const char *path, hash256 *out,
                              struct progress_state *ps, uint8_t *buf)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return -1;
    hash_ctx *h = hash_new();
    if (!h) {
        close(fd);
        errno = ENOMEM;
        return -1;
    }
    ssize_t n;
    while ((n = io_read_full(fd, buf, HASH_BUF)) > 0) {
        hash_update(h, buf, (size_t)n);
        progress_add(c, ps, (uint64_t)n);
    }
    int err = errno;
    hash_final(h, out);
    close(fd);
    if (n < 0) {
        errno = err;
        return -1;
    }
    return 0;
}

/* Fill the content hash of every regular file of w: from the index when
 * its metadata is unchanged, else by reading it (and remembering it). */
static int hash_nodes(const struct cache *c, struct walk *w, struct imgindex *ix, struct ectx *e)
{
    uint64_t todo = 0;
    bool *miss = calloc(w->nnodes + 1, sizeof *miss);
    uint8_t *buf = malloc(HASH_BUF);
    if (!miss || !buf) {
        free(miss);
        free(buf);
        return fail(e, "out of memory");
    }
    for (size_t i = 0; i < w->nnodes; i++) {
        struct node *nd = &w->nodes[i];
        if (nd->need_data) {
            miss[i] = true;
            todo += (uint64_t)nd->st.st_size;
        }
    }
    struct progress_state ps;
    progress_begin(c, &ps, "hashing", todo);
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < w->nnodes; i++) {
        struct node *nd = &w->nodes[i];
        if (!miss[i])
            continue;
        size_t rl = strlen(nd->rel);
        RW_ASSERT(w->rootlen + rl < sizeof w->path); /* the walk built this path */
        memcpy(w->path + w->rootlen, nd->rel, rl + 1);
        struct stat after;
        atomic_fetch_add(&files_hashed, 1);
        if (hash_with_progress(c, w->path, &nd->data, &ps, buf) < 0)
            rc = fail(e, "cannot read '%s': %s", w->path, strerror(errno));
        else if (lstat(w->path, &after) < 0)
            rc = fail(e, "cannot stat '%s': %s", w->path, strerror(errno));
        else if (same_file_state(&nd->st, &after) &&
                 imgindex_put(ix, nd->rel, &nd->st, &nd->data, &nd->xattrs) < 0)
            rc = fail(e, "out of memory");
    }
    progress_end(c, &ps);
    free(miss);
    free(buf);
    return rc;
}

/* The key of a walked tree: what decides whether a cached image fits it.
 * Everything mkfs.erofs puts in the image, and nothing it drops (times,
 * owners: invariant 5), so a tree copied or checked out again hits. */
static int tree_key_of(const struct walk *w, hash256 *key, struct ectx *e)
{
    hash_ctx *h = key_begin("tree3");
    if (!h)
        return fail(e, "out of memory");
    put_u64(h, w->nnodes);
    for (size_t i = 0; i < w->nnodes; i++) {
        const struct node *nd = &w->nodes[i];
        put_str(h, nd->rel);
        char t = type_char(nd->st.st_mode);
        hash_update(h, &t, 1);
        put_u64(h, nd->st.st_mode & 07777);
        put_u64(h, (uint64_t)nd->st.st_size);
        if (S_ISREG(nd->st.st_mode) || S_ISLNK(nd->st.st_mode))
            hash_update(h, nd->data.b, sizeof nd->data.b);
        if (S_ISCHR(nd->st.st_mode) || S_ISBLK(nd->st.st_mode))
            put_u64(h, (uint64_t)nd->st.st_rdev);
        put_u64(h, nd->link_ord);
        hash_update(h, nd->xattrs.b, sizeof nd->xattrs.b);
        if (S_ISDIR(nd->st.st_mode))
            put_u64(h, nd->nchildren);
    }
    hash_final(h, key);
    return 0;
}

/* Key of the tree at dir, its size in bytes (regular files) in *bytes. */
static int tree_key(const struct cache *c, const char *dir, struct imgindex *ix, hash256 *key,
                    uint64_t *bytes, struct ectx *e)
{
    struct walk w;
    int rc = walk_tree(&w, dir, ix, e);
    if (rc == 0)
        rc = hash_nodes(c, &w, ix, e);
    if (rc == 0)
        rc = tree_key_of(&w, key, e);
    uint64_t total = 0;
    for (size_t i = 0; i < w.nnodes; i++)
        if (S_ISREG(w.nodes[i].st.st_mode))
            total += (uint64_t)w.nodes[i].st.st_size;
    if (bytes)
        *bytes = total;
    walk_free(&w);
    return rc;
}

/* ---- the three kinds of root ------------------------------------------------- */

static hash256 file_key(const struct stat *st)
{
    hash256 k;
    hash_ctx *h = key_begin("file");
    if (!h) {
        memset(&k, 0, sizeof k); /* all-zero key: never stored, see file_hash_cached */
        return k;
    }
    put_u64(h, (uint64_t)st->st_dev);
    put_u64(h, (uint64_t)st->st_ino);
    put_u64(h, (uint64_t)st->st_size);
    put_u64(h, (uint64_t)st->st_mtim.tv_sec);
    put_u64(h, (uint64_t)st->st_mtim.tv_nsec);
    put_u64(h, (uint64_t)st->st_ctim.tv_sec);
    put_u64(h, (uint64_t)st->st_ctim.tv_nsec);
    hash_final(h, &k);
    return k;
}

#define SHARED_MIN (256u << 10)

/* Invariant 8: the user's shared key cache as a struct cache (keys only)
 * whose path is /proc/self/fd/N of the directory opened without following
 * a link and checked on that descriptor (no swap between check and use).
 * The descriptor, to close, or -1 when there is none to trust. */
static int shared_keys(struct cache *s)
{
    memset(s, 0, sizeof *s);
    return usercache_open("filehash", s->keys, sizeof s->keys);
}

/* Hash of the bytes of path, remembered by file identity (dev, ino, size,
 * times) in the home's keys and, for a big file, the user's (invariant 8). */
static int file_hash_cached(const struct cache *c, const char *path, const struct stat *st,
                            hash256 *out, struct ectx *e)
{
    static const hash256 zero;
    hash256 key = file_key(st);
    bool usable = memcmp(&key, &zero, sizeof key) != 0;
    char hex[65];
    if (usable && key_get(c, &key, hex)) {
        hex_to_hash(hex, out);
        return 0;
    }
    struct cache shared;
    int sfd = usable && (uint64_t)st->st_size >= SHARED_MIN ? shared_keys(&shared) : -1;
    if (sfd >= 0 && key_get(&shared, &key, hex)) {
        close(sfd);
        hex_to_hash(hex, out);
        return key_put(c, &key, hex, e);
    }
    struct stat after;
    if (hash_file(path, out) < 0 || stat(path, &after) < 0) {
        int err = errno;
        if (sfd >= 0)
            close(sfd);
        return fail(e, "cannot read root '%s': %s", path, strerror(err));
    }
    int keep = usable && same_file_state(st, &after); /* else changed while hashing */
    hash_hex(out, hex);
    if (sfd >= 0) {
        char why[256];
        struct ectx quiet = {why, sizeof why};
        if (keep)
            (void)key_put(&shared, &key, hex, &quiet); /* invariant 8: a miss next time at worst */
        close(sfd);
    }
    return keep ? key_put(c, &key, hex, e) : 0;
}

/* Invariant 7: is real (a resolved path) this cache's own images/<hex>.erofs?
 * Then hex is its name. */
static int stored_image_name(const struct cache *c, const char *real, char hex[65])
{
    size_t n = strlen(c->images);
    if (strlen(real) != n + 1 + 64 + 6 || strncmp(real, c->images, n) || real[n] != '/' ||
        strcmp(real + n + 1 + 64, ".erofs"))
        return 0;
    memcpy(hex, real + n + 1, 64);
    hex[64] = 0;
    return is_hex64(hex);
}

static int prepare_erofs(const struct cache *c, const char *root, const struct stat *st,
                         struct image *out, struct ectx *e)
{
    if (!realpath(root, out->path))
        return fail(e, "cannot resolve root '%s': %s", root, strerror(errno));
    char hex[65];
    if (stored_image_name(c, out->path, hex)) { /* invariant 7 */
        RW_ASSERT(S_ISREG(st->st_mode));
        hex_to_hash(hex, &out->hash);
    } else if (file_hash_cached(c, root, st, &out->hash, e) < 0)
        return -1;
    hash_hex(&out->hash, out->hex);
    out->size = (uint64_t)st->st_size;
    return 0;
}

static int prepare_dir(const struct cache *c, const char *dir, struct image *out, struct ectx *e)
{
    hash256 key, again;
    char hex[65], real[PATH_MAX];
    uint64_t bytes = 0;
    if (!realpath(dir, real))
        return fail(e, "cannot resolve root '%s': %s", dir, strerror(errno));
    struct imgindex ix;
    if (imgindex_open(&ix, c->home, real) < 0)
        return fail(e, "cannot open the file index of '%s': %s", dir, why(errno));
    int rc = tree_key(c, dir, &ix, &key, &bytes, e);
    (void)imgindex_save(&ix); /* a cache only: a failed save costs a re-hash next time */
    if (rc == 0 && key_get(c, &key, hex) && image_lookup(c, hex, out))
        goto done;
    if (rc == 0)
        rc = build_image(c, dir, bytes, out, e);
    if (rc == 0)
        rc = tree_key(c, dir, &ix, &again, NULL, e);
    /* Invariant 3: a tree changed during the build gives a fine image but no key. */
    if (rc == 0 && memcmp(&key, &again, sizeof key) == 0)
        rc = key_put(c, &key, out->hex, e);
    if (rc == 0)
        out->built = 1;
done:
    imgindex_close(&ix);
    return rc;
}

/* Explain a failed tar run in e, or return 0 if the failure is tolerable. */
static int tar_failure(const struct run *r, struct ectx *e)
{
    if (r->exec_errno == ENOENT)
        return fail(e, "tar not found in PATH (apt-get install tar)");
    if (r->exec_errno)
        return fail(e, "cannot run tar: %s", strerror(r->exec_errno));
    /* Non-root cannot create device nodes: skip them, as documented. */
    if (geteuid() != 0 && !r->truncated && WIFEXITED(r->status) && WEXITSTATUS(r->status) == 2) {
        bool only_mknod = true, any = false;
        for (const char *p = r->err; *p && only_mknod;) {
            size_t len = strcspn(p, "\n");
            char line[512];
            snprintf(line, sizeof line, "%.*s", (int)len, p);
            if (strstr(line, "Cannot mknod"))
                any = true;
            else if (len && !strstr(line, "Exiting with failure status"))
                only_mknod = false;
            p += len + (p[len] == '\n');
        }
        if (only_mknod && any)
            return 0;
    }
    char line[512];
    run_first_line(r, line, sizeof line);
    if (strstr(r->err, "No space left on device"))
        return fail(e, "disk full: tar failed: %s", line);
    return fail(e, "tar failed: %s", line);
}

static int extract_tar(const char *tarball, const char *dir, struct ectx *e)
{
    char *argv[] = {"tar",
                    "-x",
                    "-f",
                    (char *)tarball,
                    "-C",
                    (char *)dir,
                    "-p",
                    "--numeric-owner",
                    geteuid() == 0 ? "--same-owner" : "--no-same-owner",
                    "--xattrs",
                    "--xattrs-include=*",
                    "--acls",
                    NULL};
    struct run *r = malloc(sizeof *r);
    if (!r)
        return fail(e, "out of memory");
    int rc = 0;
    if (run_tool(argv, r, NULL) < 0)
        rc = fail(e, "cannot start tar: %s", why(errno));
    else if (!run_ok(r))
        rc = tar_failure(r, e);
    free(r);
    return rc;
}

/* Extract into a fresh temp dir and build; the temp dir never survives. */
static int build_from_tar(const struct cache *c, const char *tarball, struct image *out,
                          struct ectx *e)
{
    char tmp[PATH_MAX];
    if (path_join(tmp, sizeof tmp, c->images, ".tmp-tree-XXXXXX") < 0)
        return fail(e, "cache path too long under '%s'", c->images);
    if (!mkdtemp(tmp))
        return fail(e, "cannot create a temp dir in '%s': %s", c->images, why(errno));
    /* A tarball without a "./" entry leaves the root at this mode. */
    int rc = chmod(tmp, 0755) < 0 ? fail(e, "cannot chmod '%s': %s", tmp, why(errno)) : 0;
    if (rc == 0)
        rc = extract_tar(tarball, tmp, e);
    uint64_t expect = 0;
    if (rc == 0 && c->prog) {
        struct walk w;
        if (walk_tree(&w, tmp, NULL, e) == 0)
            for (size_t i = 0; i < w.nnodes; i++)
                if (S_ISREG(w.nodes[i].st.st_mode))
                    expect += (uint64_t)w.nodes[i].st.st_size;
        walk_free(&w);
        if (e->buf)
            e->buf[0] = 0; /* only an estimate for the progress line */
    }
    if (rc == 0)
        rc = build_image(c, tmp, expect, out, e);
    if (rm_tree(tmp) < 0 && rc == 0)
        rc = fail(e, "cannot remove temp dir '%s': %s", tmp, strerror(errno));
    return rc;
}

static int prepare_tar(const struct cache *c, const char *tarball, const struct stat *st,
                       struct image *out, struct ectx *e)
{
    hash256 content, key;
    if (file_hash_cached(c, tarball, st, &content, e) < 0)
        return -1;
    hash_ctx *h = key_begin("tar");
    if (!h)
        return fail(e, "out of memory");
    put_bytes(h, content.b, sizeof content.b);
    hash_final(h, &key);
    char hex[65];
    if (key_get(c, &key, hex) && image_lookup(c, hex, out))
        return 0;
    if (build_from_tar(c, tarball, out, e) < 0)
        return -1;
    struct stat after;
    if (stat(tarball, &after) < 0 || !same_file_state(st, &after))
        return 0; /* tarball changed meanwhile: do not remember */
    return key_put(c, &key, out->hex, e);
}

/* ---- classification ---------------------------------------------------------- */

enum kind { KIND_OTHER, KIND_EROFS, KIND_TAR };

/* Sniff a regular file: erofs superblock, ustar header or a compressor's magic. */
static int sniff(const char *path, enum kind *k, struct ectx *e)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return fail(e, "root '%s' is not readable: %s", path, strerror(errno));
    unsigned char b[EROFS_MAGIC_OFF + 4];
    ssize_t r = io_pread_full(fd, b, sizeof b, 0);
    int err = errno;
    close(fd);
    if (r < 0)
        return fail(e, "root '%s' is not readable: %s", path, strerror(err));
    size_t got = (size_t)r;
    static const struct {
        size_t off, len;
        const char *magic;
    } tar_magic[] = {
        {257, 5, "ustar"},  /* POSIX and GNU tar */
        {0, 2, "\x1f\x8b"}, /* gzip */
        {0, 6,
         "\xfd"
         "7zXZ\0"},                 /* xz */
        {0, 4, "\x28\xb5\x2f\xfd"}, /* zstd */
        {0, 3, "BZh"},              /* bzip2 */
    };
    *k = KIND_OTHER;
    if (got == sizeof b && b[1024] == 0xE2 && b[1025] == 0xE1 && b[1026] == 0xF5 &&
        b[1027] == 0xE0) {
        *k = KIND_EROFS;
        return 0;
    }
    for (size_t i = 0; i < sizeof tar_magic / sizeof tar_magic[0]; i++) {
        if (got >= tar_magic[i].off + tar_magic[i].len &&
            !memcmp(b + tar_magic[i].off, tar_magic[i].magic, tar_magic[i].len)) {
            *k = KIND_TAR;
            return 0;
        }
    }
    return 0;
}

static const char *kind_name(mode_t m)
{
    return S_ISCHR(m)    ? "character device"
           : S_ISBLK(m)  ? "block device"
           : S_ISFIFO(m) ? "fifo"
           : S_ISSOCK(m) ? "socket"
                         : "special file";
}

static int prepare_file(const struct cache *c, const char *root, const struct stat *st,
                        struct image *out, struct ectx *e)
{
    enum kind k = KIND_OTHER;
    if (sniff(root, &k, e) < 0)
        return -1;
    if (k == KIND_EROFS)
        return prepare_erofs(c, root, st, out, e);
    if (k == KIND_TAR)
        return prepare_tar(c, root, st, out, e);
    if (st->st_size == 0)
        return fail(e, "root '%s' is an empty file, not a directory, tarball or erofs image", root);
    return fail(e, "root '%s' is a regular file but neither a tarball nor an erofs image", root);
}

int image_prepare(const char *root, const char *cache_dir, struct image *out, char *err,
                  size_t errlen)
{
    return image_prepare_progress(root, cache_dir, NULL, out, err, errlen);
}

int image_prepare_progress(const char *root, const char *cache_dir,
                           const struct image_progress *prog, struct image *out, char *err,
                           size_t errlen)
{
    struct ectx e = {err, errlen};
    if (err && errlen)
        err[0] = '\0';
    if (!root || !*root || !cache_dir || !*cache_dir || !out)
        return fail(&e, "image_prepare: root, cache_dir and out are required");
    memset(out, 0, sizeof *out);
    struct stat st;
    if (stat(root, &st) < 0) {
        if (errno == ENOENT)
            return fail(&e, "root '%s' does not exist", root);
        return fail(&e, "cannot access root '%s': %s", root, strerror(errno));
    }
    if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode))
        return fail(&e, "root '%s' is a %s, not a directory, tarball or erofs image", root,
                    kind_name(st.st_mode));
    if (S_ISDIR(st.st_mode) && faccessat(AT_FDCWD, root, R_OK | X_OK, AT_EACCESS) < 0)
        return fail(&e, "root '%s' is not readable: %s", root, strerror(errno));
    struct cache c;
    if (cache_open(cache_dir, &c, &e) < 0)
        return -1;
    c.prog = prog;
    if (S_ISDIR(st.st_mode))
        return prepare_dir(&c, root, out, &e);
    return prepare_file(&c, root, &st, out, &e);
}

int image_hash_file(const char *path, const char *cache_dir, hash256 *out, char *err, size_t errlen)
{
    struct ectx e = {err, errlen};
    struct stat st;
    if (stat(path, &st) < 0)
        return fail(&e, "cannot read '%s': %s", path, strerror(errno));
    struct cache c;
    if (cache_open(cache_dir, &c, &e) < 0)
        return -1;
    return file_hash_cached(&c, path, &st, out, &e);
}
