/* image_test.c - src/image/image.c: dir/tarball/erofs roots, reproducibility,
 * caching, errors, concurrency. Needs mkfs.erofs (erofs-utils) and tar. */
#include "unit.h"

#include "image/image.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

static char base[256]; /* scratch dir for the whole test */
static char errbuf[1024];

static char *pth(const char *rel)
{
    static char bufs[8][4096];
    static int i;
    char *b = bufs[i++ % 8];
    snprintf(b, 4096, "%s/%s", base, rel);
    return b;
}

static void write_file(const char *path, const char *s, mode_t mode)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);
    CHECK(fd >= 0, path);
    if (fd < 0)
        return;
    size_t n = strlen(s);
    CHECK(write(fd, s, n) == (ssize_t)n, "write");
    CHECK(close(fd) == 0, "close");
    CHECK(chmod(path, mode) == 0, "chmod");
}

/* Run argv to completion with stdout/stderr to /dev/null; returns exit status. */
static int run(char *const argv[])
{
    pid_t pid = fork();
    if (pid == 0) {
        int fd = open("/dev/null", O_WRONLY);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
        }
        execvp(argv[0], argv);
        _exit(127);
    }
    int st = 0;
    if (pid < 0 || waitpid(pid, &st, 0) < 0)
        return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* A small tree; `reverse` creates it in another order with other mtimes. */
static void make_tree(const char *dir, bool reverse)
{
    char p[4096];
    CHECK(mkdir(dir, 0755) == 0 || errno == EEXIST, "mkdir tree");
    CHECK(chmod(dir, 0755) == 0, "chmod tree");
    for (int step = 0; step < 2; step++) {
        bool files = (step == 0) != reverse;
        if (files) {
            snprintf(p, sizeof p, "%s/hello.txt", dir);
            write_file(p, "hello, world\n", 0644);
            snprintf(p, sizeof p, "%s/empty", dir);
            write_file(p, "", 0600);
            snprintf(p, sizeof p, "%s/run.sh", dir);
            write_file(p, "#!/bin/sh\necho hi\n", 0755);
            snprintf(p, sizeof p, "%s/link", dir);
            CHECK(symlink("hello.txt", p) == 0, "symlink");
        } else {
            snprintf(p, sizeof p, "%s/sub", dir);
            CHECK(mkdir(p, 0750) == 0, "mkdir sub");
            CHECK(chmod(p, 0750) == 0, "chmod sub");
            snprintf(p, sizeof p, "%s/sub/deep.txt", dir);
            write_file(p, "deep\n", 0640);
            snprintf(p, sizeof p, "%s/sub/z", dir);
            CHECK(mkdir(p, 0755) == 0, "mkdir sub/z");
        }
    }
    char a[4096];
    snprintf(a, sizeof a, "%s/hello.txt", dir);
    snprintf(p, sizeof p, "%s/sub/hard", dir);
    CHECK(link(a, p) == 0, "hard link");
    if (reverse) {
        struct timespec ts[2] = {{1000000, 5}, {1000000, 5}};
        CHECK(utimensat(AT_FDCWD, a, ts, 0) == 0, "utimensat");
    }
}

static int prep(const char *root, const char *cache, struct image *img)
{
    errbuf[0] = '\0';
    int rc = image_prepare(root, cache, img, errbuf, sizeof errbuf);
    if (rc != 0)
        fprintf(stderr, "  image_prepare(%s): %s\n", root, errbuf);
    return rc;
}

static bool err_has(const char *needle)
{
    bool ok = strstr(errbuf, needle) != NULL && !strchr(errbuf, '\n');
    if (!ok)
        fprintf(stderr, "  error was: '%s' (wanted '%s')\n", errbuf, needle);
    return ok;
}

/* No .tmp-* left in cache/images or cache/images/keys. */
static bool no_temps(const char *cache)
{
    const char *subs[] = {"images", "images/keys"};
    for (int i = 0; i < 2; i++) {
        char d[4096];
        snprintf(d, sizeof d, "%s/%s", cache, subs[i]);
        DIR *dp = opendir(d);
        if (!dp)
            continue;
        struct dirent *de;
        while ((de = readdir(dp)) != NULL) {
            if (!strncmp(de->d_name, ".tmp-", 5)) {
                fprintf(stderr, "  leftover %s/%s\n", d, de->d_name);
                closedir(dp);
                return false;
            }
        }
        closedir(dp);
    }
    return true;
}

static int count_entries(const char *dir)
{
    DIR *dp = opendir(dir);
    if (!dp)
        return -1;
    int n = 0;
    struct dirent *de;
    while ((de = readdir(dp)) != NULL)
        n += de->d_name[0] != '.';
    closedir(dp);
    return n;
}

static bool is_erofs(const char *path)
{
    unsigned char m[4] = {0};
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return false;
    ssize_t r = pread(fd, m, 4, 1024);
    close(fd);
    return r == 4 && m[0] == 0xE2 && m[1] == 0xE1 && m[2] == 0xF5 && m[3] == 0xE0;
}

static struct image dir_img;

static void test_dir(void)
{
    make_tree(pth("tree"), false);
    unsigned long runs = image_mkfs_runs();
    CHECK(prep(pth("tree"), pth("cache"), &dir_img) == 0, "dir image");
    CHECK(image_mkfs_runs() == runs + 1, "dir: one mkfs run");
    CHECK(is_erofs(dir_img.path), "dir: result is erofs");
    CHECK(dir_img.path[0] == '/', "dir: absolute path");
    CHECK(strstr(dir_img.path, dir_img.hex) != NULL, "dir: path named by hash");
    struct stat st;
    CHECK(stat(dir_img.path, &st) == 0 && (uint64_t)st.st_size == dir_img.size, "dir: size");
    hash256 h;
    char hex[65];
    CHECK(hash_file(dir_img.path, &h) == 0, "hash image");
    hash_hex(&h, hex);
    CHECK(strcmp(hex, dir_img.hex) == 0 && !memcmp(&h, &dir_img.hash, 32), "dir: hash matches");

    struct image again;
    runs = image_mkfs_runs();
    CHECK(prep(pth("tree"), pth("cache"), &again) == 0, "dir again");
    CHECK(image_mkfs_runs() == runs, "dir again: cache hit, no mkfs");
    CHECK(strcmp(again.hex, dir_img.hex) == 0, "dir again: same hash");
    struct stat st2;
    CHECK(stat(again.path, &st2) == 0 && st2.st_mtim.tv_sec == st.st_mtim.tv_sec &&
              st2.st_mtim.tv_nsec == st.st_mtim.tv_nsec,
          "dir again: image untouched");

    /* The same tree made in another order, with other mtimes, in a fresh cache. */
    make_tree(pth("tree2"), true);
    struct image other;
    CHECK(prep(pth("tree2"), pth("cache2"), &other) == 0, "same tree twice");
    CHECK(strcmp(other.hex, dir_img.hex) == 0, "same tree twice: same image");

    /* A change to the tree is seen. */
    write_file(pth("tree2/hello.txt"), "changed\n", 0644);
    runs = image_mkfs_runs();
    CHECK(prep(pth("tree2"), pth("cache2"), &other) == 0, "changed tree");
    CHECK(image_mkfs_runs() == runs + 1, "changed tree: rebuilt");
    CHECK(strcmp(other.hex, dir_img.hex) != 0, "changed tree: other image");
    CHECK(no_temps(pth("cache")) && no_temps(pth("cache2")), "dir: no temps left");
}

static void test_tar(void)
{
    char *mk[] = {"tar", "-C", pth("tree"), "-cf", pth("tree.tar"), ".", NULL};
    CHECK(run(mk) == 0, "make tarball");
    struct image t;
    unsigned long runs = image_mkfs_runs();
    CHECK(prep(pth("tree.tar"), pth("cache-tar"), &t) == 0, "tar image");
    CHECK(image_mkfs_runs() == runs + 1, "tar: one mkfs run");
    CHECK(strcmp(t.hex, dir_img.hex) == 0, "tar and dir give the same image");
    runs = image_mkfs_runs();
    CHECK(prep(pth("tree.tar"), pth("cache-tar"), &t) == 0, "tar again");
    CHECK(image_mkfs_runs() == runs, "tar again: cache hit, no mkfs");
    CHECK(strcmp(t.hex, dir_img.hex) == 0, "tar again: same image");

    char *gz[] = {"tar", "-C", pth("tree"), "-czf", pth("tree.tar.gz"), ".", NULL};
    CHECK(run(gz) == 0, "make tar.gz");
    CHECK(prep(pth("tree.tar.gz"), pth("cache"), &t) == 0, "tar.gz image");
    CHECK(strcmp(t.hex, dir_img.hex) == 0, "tar.gz gives the same image");

    /* Like docker export: members without a "./" entry; root defaults to 0755. */
    char *nodot[] = {"tar",  "-C",     pth("tree"), "-cf", pth("nodot.tar"), "empty", "hello.txt",
                     "link", "run.sh", "sub",       NULL};
    CHECK(run(nodot) == 0, "make tarball without ./");
    CHECK(prep(pth("nodot.tar"), pth("cache"), &t) == 0, "tar without ./");
    CHECK(strcmp(t.hex, dir_img.hex) == 0, "tar without ./ gives the same image");
    CHECK(no_temps(pth("cache")) && no_temps(pth("cache-tar")), "tar: no temps left");
}

/* xattrs are part of the image; a tarball made with --xattrs must carry them over. */
static void test_xattrs(void)
{
    make_tree(pth("xtree"), false);
    if (setxattr(pth("xtree/hello.txt"), "user.rewind", "yes", 3, 0) < 0) {
        SKIP("xattr case: cannot set a user xattr here");
        return;
    }
    struct image d, t;
    CHECK(prep(pth("xtree"), pth("cache"), &d) == 0, "xattr dir");
    CHECK(strcmp(d.hex, dir_img.hex) != 0, "xattr is part of the image");
    char *mk[] = {"tar", "--xattrs", "-C", pth("xtree"), "-cf", pth("xtree.tar"), ".", NULL};
    CHECK(run(mk) == 0, "make xattr tarball");
    CHECK(prep(pth("xtree.tar"), pth("cache"), &t) == 0, "xattr tar");
    CHECK(strcmp(d.hex, t.hex) == 0, "xattr: tar and dir give the same image");
}

static int count_fds(void)
{
    return count_entries("/proc/self/fd");
}

static void test_erofs(void)
{
    char *cp[] = {"cp", dir_img.path, pth("copy.erofs"), NULL};
    CHECK(run(cp) == 0, "copy image");
    int keys0 = count_entries(pth("cache3/images/keys"));
    struct image e;
    unsigned long runs = image_mkfs_runs();
    CHECK(prep(pth("copy.erofs"), pth("cache3"), &e) == 0, "erofs passes through");
    CHECK(image_mkfs_runs() == runs, "erofs: no mkfs");
    CHECK(strcmp(e.path, pth("copy.erofs")) == 0, "erofs: used in place");
    CHECK(strcmp(e.hex, dir_img.hex) == 0 && e.size == dir_img.size, "erofs: hash and size");
    int keys1 = count_entries(pth("cache3/images/keys"));
    CHECK(keys1 == (keys0 < 0 ? 0 : keys0) + 1, "erofs: hash remembered by file identity");
    CHECK(prep(pth("copy.erofs"), pth("cache3"), &e) == 0, "erofs again");
    CHECK(strcmp(e.hex, dir_img.hex) == 0, "erofs again: same hash");
    CHECK(count_entries(pth("cache3/images/keys")) == keys1, "erofs again: no new key");

    /* Invariant 7: the cache's own images/<hex>.erofs is named by its name,
     * never read (a name that is not its bytes' hash shows it); the same
     * bytes under any other name, or in another cache, are hashed. */
    static const char fake[] = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";
    char named[PATH_MAX], other[PATH_MAX];
    snprintf(named, sizeof named, "%s/%s.erofs", pth("cache3/images"), fake);
    snprintf(other, sizeof other, "%s/%s.erofs", pth("cache"), fake);
    char *cp2[] = {"cp", pth("copy.erofs"), named, NULL};
    char *cp3[] = {"cp", pth("copy.erofs"), pth("cache3/images/plain.erofs"), NULL};
    char *cp4[] = {"cp", pth("copy.erofs"), other, NULL};
    CHECK(run(cp2) == 0 && run(cp3) == 0 && run(cp4) == 0, "copy images into the caches");
    CHECK(prep(named, pth("cache3"), &e) == 0 && !strcmp(e.hex, fake) && !strcmp(e.path, named) &&
              e.size == dir_img.size,
          "stored image: named by its name");
    CHECK(count_entries(pth("cache3/images/keys")) == keys1, "stored image: no key, not read");
    CHECK(prep(pth("cache3/images/plain.erofs"), pth("cache3"), &e) == 0 &&
              !strcmp(e.hex, dir_img.hex),
          "an image in the cache not named by a hash: hashed");
    CHECK(prep(other, pth("cache3"), &e) == 0 && !strcmp(e.hex, dir_img.hex),
          "another cache's image: hashed");
    unlink(named);
    unlink(pth("cache3/images/plain.erofs"));
    unlink(other);
}

static void test_errors(void)
{
    struct image img;
    CHECK(prep(pth("nope"), pth("cache"), &img) == -1 && err_has("does not exist"), "missing");
    write_file(pth("notes.txt"), "just some text, not an archive\n", 0644);
    CHECK(prep(pth("notes.txt"), pth("cache"), &img) == -1 &&
              err_has("neither a tarball nor an erofs image"),
          "regular file");
    CHECK(mkfifo(pth("fifo"), 0644) == 0, "mkfifo");
    CHECK(prep(pth("fifo"), pth("cache"), &img) == -1 && err_has("is a fifo"), "fifo");
    write_file(pth("bad.tar.gz"), "\x1f\x8b garbage that is not gzip", 0644);
    CHECK(prep(pth("bad.tar.gz"), pth("cache"), &img) == -1 && err_has("tar failed: "),
          "corrupt tarball");
    fprintf(stderr, "  (corrupt tarball: %s)\n", errbuf);

    /* mkfs.erofs missing: a tree not in the cache, with an empty PATH. */
    make_tree(pth("tree3"), false);
    write_file(pth("tree3/extra"), "x", 0644);
    char *path = getenv("PATH");
    char *saved = path ? strdup(path) : NULL;
    CHECK(setenv("PATH", "/nonexistent", 1) == 0, "setenv");
    CHECK(prep(pth("tree3"), pth("cache"), &img) == -1 && err_has("apt-get install erofs-utils"),
          "mkfs.erofs missing");
    CHECK(setenv("PATH", saved ? saved : "/usr/sbin:/usr/bin:/sbin:/bin", 1) == 0, "setenv");
    free(saved);
    CHECK(no_temps(pth("cache")), "errors: no temps left");
}

/* Run fn in a child as nobody (when we are root) and return its exit status. */
static int as_nobody(int (*fn)(void))
{
    pid_t pid = fork();
    if (pid == 0) {
        if (geteuid() == 0 && (setgroups(0, NULL) < 0 || setgid(65534) < 0 || setuid(65534) < 0))
            _exit(99);
        _exit(fn());
    }
    int st = 0;
    if (pid < 0 || waitpid(pid, &st, 0) < 0 || !WIFEXITED(st))
        return -1;
    return WEXITSTATUS(st);
}

static int nobody_unreadable(void)
{
    struct image img;
    int rc = prep(pth("locked"), pth("cache-nobody"), &img);
    return rc == -1 && err_has("not readable") ? 0 : 1;
}

static int nobody_mkfs_fails(void)
{
    struct image img;
    int rc = prep(pth("secret"), pth("cache-nobody"), &img);
    fprintf(stderr, "  (unreadable file: %s)\n", errbuf);
    /* The file index reads every file before mkfs.erofs does: the unreadable
     * file is named, with the reason. */
    return rc == -1 && err_has("cannot read '") && err_has("secret/key': Permission denied") &&
                   no_temps(pth("cache-nobody"))
               ? 0
               : 1;
}

static int nobody_devices(void)
{
    struct image img;
    return prep(pth("dev.tar"), pth("cache-nobody"), &img) == 0 && is_erofs(img.path) ? 0 : 1;
}

static void test_permissions(void)
{
    CHECK(mkdir(pth("cache-nobody"), 0777) == 0 && chmod(pth("cache-nobody"), 0777) == 0,
          "cache for nobody");
    CHECK(mkdir(pth("locked"), 0700) == 0 && chmod(pth("locked"), 0) == 0, "mkdir locked");
    if (geteuid() == 0)
        CHECK(chown(pth("locked"), 0, 0) == 0, "chown");
    CHECK(as_nobody(nobody_unreadable) == 0, "unreadable dir gives 'not readable'");
    CHECK(chmod(pth("locked"), 0700) == 0, "unlock");

    CHECK(mkdir(pth("secret"), 0755) == 0 && chmod(pth("secret"), 0755) == 0, "mkdir secret");
    write_file(pth("secret/key"), "k", 0000);
    if (geteuid() == 0)
        CHECK(as_nobody(nobody_mkfs_fails) == 0, "unreadable file reported");
    else
        SKIP("mkfs failure as nobody: not root");

    if (geteuid() != 0) {
        SKIP("device-node tarball: not root");
        return;
    }
    make_tree(pth("devtree"), false);
    CHECK(mknod(pth("devtree/null"), S_IFCHR | 0666, makedev(1, 3)) == 0, "mknod");
    char *mk[] = {"tar", "-C", pth("devtree"), "-cf", pth("dev.tar"), ".", NULL};
    CHECK(run(mk) == 0, "make device tarball");
    struct image img;
    CHECK(prep(pth("dev.tar"), pth("cache"), &img) == 0, "device tarball as root");
    CHECK(as_nobody(nobody_devices) == 0, "device tarball as non-root skips the node");
}

static void test_disk_full(void)
{
    if (geteuid() != 0 || mkdir(pth("small"), 0755) < 0 ||
        mount("tmpfs", pth("small"), "tmpfs", 0, "size=64k") < 0) {
        SKIP("disk-full case: cannot mount a small tmpfs");
        return;
    }
    CHECK(mkdir(pth("big"), 0755) == 0, "mkdir big");
    char *blob = malloc(1 << 20);
    CHECK(blob != NULL, "malloc");
    if (blob) {
        for (int i = 0; i < (1 << 20) - 1; i++)
            blob[i] = (char)('a' + i % 26);
        blob[(1 << 20) - 1] = '\0';
        write_file(pth("big/blob"), blob, 0644);
        free(blob);
    }
    struct image img;
    CHECK(prep(pth("big"), pth("small"), &img) == -1 && err_has("disk full"), "disk full");
    fprintf(stderr, "  (disk full: %s)\n", errbuf);
    CHECK(no_temps(pth("small")), "disk full: no temps left");
    CHECK(umount(pth("small")) == 0, "umount");
}

static void test_concurrent(void)
{
    make_tree(pth("tree4"), false);
    write_file(pth("tree4/four"), "4", 0644);
    char *mk[] = {"tar", "-C", pth("tree4"), "-cf", pth("tree4.tar"), ".", NULL};
    CHECK(run(mk) == 0, "make tree4.tar");
    enum { N = 6 };
    int fds[N][2];
    pid_t pids[N];
    for (int i = 0; i < N; i++) {
        CHECK(pipe(fds[i]) == 0, "pipe");
        pids[i] = fork();
        if (pids[i] == 0) {
            struct image img;
            const char *root = i % 2 ? pth("tree4.tar") : pth("tree4");
            if (prep(root, pth("cache-conc"), &img) != 0)
                _exit(1);
            ssize_t w = write(fds[i][1], img.hex, 64);
            _exit(w == 64 ? 0 : 1);
        }
        close(fds[i][1]);
    }
    char first[65] = {0};
    for (int i = 0; i < N; i++) {
        int st = 0;
        CHECK(pids[i] > 0 && waitpid(pids[i], &st, 0) == pids[i] && WIFEXITED(st) &&
                  WEXITSTATUS(st) == 0,
              "concurrent caller succeeded");
        char hex[65] = {0};
        CHECK(read(fds[i][0], hex, 64) == 64, "concurrent result");
        close(fds[i][0]);
        if (i == 0)
            memcpy(first, hex, 65);
        CHECK(strcmp(hex, first) == 0, "concurrent callers agree");
    }
    CHECK(count_entries(pth("cache-conc/images")) == 2, "one image (+ keys dir) in cache");
    CHECK(no_temps(pth("cache-conc")), "concurrent: no temps left");
}

int main(void)
{
    snprintf(base, sizeof base, "/tmp/image_test_XXXXXX");
    if (!mkdtemp(base)) {
        perror("mkdtemp");
        return 1;
    }
    umask(022);
    if (chmod(base, 0755) < 0) {
        perror("chmod");
        return 1;
    }
    int fds = count_fds();
    test_dir();
    test_tar();
    test_xattrs();
    test_erofs();
    test_errors();
    test_permissions();
    test_disk_full();
    test_concurrent();
    CHECK(count_fds() == fds, "no file descriptors leaked");
    if (unit_failed == 0) {
        char *rm[] = {"rm", "-rf", base, NULL};
        CHECK(run(rm) == 0, "cleanup");
    } else {
        fprintf(stderr, "kept %s for inspection\n", base);
    }
    return unit_done();
}
