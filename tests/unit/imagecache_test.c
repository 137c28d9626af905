/* imagecache_test.c - the file index of root directories (src/image/imgindex.c
 * through image_prepare): an unchanged tree is not read again, a changed
 * file is, the image id stays the content hash, a bad index file is
 * rebuilt. Needs mkfs.erofs (erofs-utils). */
#include "unit.h"

#include "image/image.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static char base[256];
static char errbuf[1024];

static char *pth(const char *rel)
{
    static char bufs[8][4096];
    static int i;
    char *b = bufs[i++ % 8];
    snprintf(b, 4096, "%s/%s", base, rel);
    return b;
}

static void write_file(const char *path, const char *s)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    CHECK(fd >= 0, path);
    if (fd < 0)
        return;
    size_t n = strlen(s);
    CHECK(write(fd, s, n) == (ssize_t)n, "write");
    CHECK(close(fd) == 0, "close");
}

/* Overwrite the start of path in place (same size), then put its mtime back. */
static void poke_same_mtime(const char *path, const char *s)
{
    struct stat st;
    CHECK(stat(path, &st) == 0, "stat before poke");
    int fd = open(path, O_WRONLY);
    CHECK(fd >= 0 && pwrite(fd, s, strlen(s), 0) == (ssize_t)strlen(s), "poke");
    if (fd >= 0)
        close(fd);
    struct timespec ts[2] = {st.st_atim, st.st_mtim};
    CHECK(utimensat(AT_FDCWD, path, ts, 0) == 0, "restore mtime");
}

static int prep(const char *root, struct image *img)
{
    int rc = image_prepare(root, pth("home"), img, errbuf, sizeof errbuf);
    if (rc < 0)
        fprintf(stderr, "  image_prepare(%s): %s\n", root, errbuf);
    return rc;
}

/* The index file of the tree (there is one root, so one file). */
static int index_file(char *out, size_t n)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "ls %s/home/images/index/ 2>/dev/null", base);
    FILE *f = popen(cmd, "r");
    char name[128] = "";
    if (!f)
        return -1;
    int ok = fgets(name, sizeof name, f) != NULL;
    pclose(f);
    name[strcspn(name, "\n")] = 0;
    if (!ok || !name[0])
        return -1;
    snprintf(out, n, "%s/home/images/index/%s", base, name);
    return 0;
}

static void make_tree(void)
{
    CHECK(mkdir(pth("tree"), 0755) == 0 && mkdir(pth("tree/d"), 0755) == 0, "mkdir");
    write_file(pth("tree/a"), "alpha\n");
    write_file(pth("tree/d/b"), "bravo bravo\n");
    write_file(pth("tree/d/c"), "charlie\n");
    CHECK(symlink("d/b", pth("tree/l")) == 0, "symlink");
}

/* The one key file in dir (its name in out), or -1 if there is not exactly one. */
static int only_key(const char *dir, char *out, size_t n)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "ls %s 2>/dev/null", dir);
    FILE *f = popen(cmd, "r");
    if (!f)
        return -1;
    char a[128] = "", b[128] = "";
    int got = (fgets(a, sizeof a, f) != NULL) + (fgets(b, sizeof b, f) != NULL);
    pclose(f);
    a[strcspn(a, "\n")] = 0;
    if (got != 1)
        return -1;
    snprintf(out, n, "%s/%s", dir, a);
    return 0;
}

static int hash_in(const char *home, const char *file, char hex[65])
{
    hash256 h;
    if (image_hash_file(file, pth(home), &h, errbuf, sizeof errbuf) < 0) {
        fprintf(stderr, "  image_hash_file(%s): %s\n", file, errbuf);
        return -1;
    }
    hash_hex(&h, hex);
    return 0;
}

/* image.c invariant 8: a big file's hash is shared by every home of the user. */
static void test_shared_keys(void)
{
    CHECK(mkdir(pth("shared"), 0700) == 0, "mkdir shared");
    setenv("REWIND_CACHE", pth("shared"), 1);
    char big[300 << 10];
    memset(big, 'x', sizeof big);
    big[sizeof big - 1] = 0;
    write_file(pth("big"), big);
    write_file(pth("small"), "a small file\n");
    char h1[65], h2[65], h3[65], key[700];
    CHECK(hash_in("home1", pth("big"), h1) == 0 && hash_in("home1", pth("small"), h2) == 0,
          "hash in home1");
    CHECK(only_key(pth("shared/filehash"), key, sizeof key) == 0,
          "one shared key: the big file's (a small file stays in its home)");
    char line[66] = "";
    int fd = open(key, O_RDONLY);
    CHECK(fd >= 0 && read(fd, line, 65) == 65 && !strncmp(line, h1, 64), "the key holds its hash");
    if (fd >= 0)
        close(fd);
    /* A new home takes the shared key without reading the file: a key
     * edited by hand shows it (and the home keeps a copy). */
    char bogus[66];
    memset(bogus, 'a', 64);
    bogus[64] = '\n';
    bogus[65] = 0;
    write_file(key, bogus);
    CHECK(hash_in("home2", pth("big"), h3) == 0 && !strncmp(h3, bogus, 64),
          "home2: the shared key's hash");
    write_file(key, line);
    CHECK(hash_in("home2", pth("big"), h3) == 0 && !strncmp(h3, bogus, 64),
          "home2 keeps its own copy");
    /* A shared directory others may write is not trusted: the file is read. */
    write_file(key, bogus);
    CHECK(chmod(pth("shared/filehash"), 0777) == 0, "chmod 0777");
    CHECK(hash_in("home3", pth("big"), h3) == 0 && !strcmp(h3, h1),
          "a group/world-writable shared cache is ignored");
    CHECK(chmod(pth("shared/filehash"), 0700) == 0, "chmod back");
    /* ... nor one reached through a symbolic link */
    CHECK(mkdir(pth("shared2"), 0700) == 0 &&
              symlink(pth("shared/filehash"), pth("shared2/filehash")) == 0,
          "a shared cache whose filehash is a link");
    setenv("REWIND_CACHE", pth("shared2"), 1);
    CHECK(hash_in("home4", pth("big"), h3) == 0 && !strcmp(h3, h1),
          "a shared key directory reached through a link is ignored");
    unsetenv("REWIND_CACHE");
}

int main(void)
{
    snprintf(base, sizeof base, "/tmp/imagecache_test_XXXXXX");
    if (!mkdtemp(base)) {
        perror("mkdtemp");
        return 1;
    }
    make_tree();
    struct image a, b;

    /* Fresh files (younger than the racy window) are hashed but not kept. */
    unsigned long h0 = image_files_hashed(), m0 = image_mkfs_runs();
    CHECK(prep(pth("tree"), &a) == 0, "first prepare");
    /* 6: the walk after the build (invariant 3 of image.c) reads racy files again. */
    CHECK(image_files_hashed() == h0 + 6 && image_mkfs_runs() == m0 + 1,
          "first: 3 files read (twice: racy), one mkfs");
    h0 = image_files_hashed();
    CHECK(prep(pth("tree"), &b) == 0 && !strcmp(a.hex, b.hex), "again, same id");
    CHECK(image_files_hashed() == h0 + 3, "racy files are read again (not trusted)");

    sleep(3); /* out of the racy window */
    CHECK(prep(pth("tree"), &b) == 0, "prepare after the racy window");
    h0 = image_files_hashed();
    m0 = image_mkfs_runs();
    CHECK(prep(pth("tree"), &b) == 0 && !strcmp(a.hex, b.hex) && !b.built, "unchanged: cache hit");
    CHECK(image_files_hashed() == h0, "unchanged tree: no file read");
    CHECK(image_mkfs_runs() == m0, "unchanged tree: no mkfs");

    /* Only metadata changed: the file is read again, the image is not rebuilt. */
    struct timespec old[2] = {{.tv_sec = 1000000000}, {.tv_sec = 1000000000}};
    CHECK(utimensat(AT_FDCWD, pth("tree/d/c"), old, 0) == 0, "set mtime");
    h0 = image_files_hashed();
    m0 = image_mkfs_runs();
    CHECK(prep(pth("tree"), &b) == 0 && !strcmp(a.hex, b.hex), "touched: same id");
    CHECK(image_files_hashed() == h0 + 1, "touched: that one file read again");
    CHECK(image_mkfs_runs() == m0, "touched, same content: no mkfs");

    /* Content changed, size and mtime kept: ctime tells (as git's index). */
    sleep(3);
    CHECK(prep(pth("tree"), &b) == 0, "settle");
    poke_same_mtime(pth("tree/d/b"), "BRAVO");
    h0 = image_files_hashed();
    m0 = image_mkfs_runs();
    CHECK(prep(pth("tree"), &b) == 0, "poked");
    CHECK(strcmp(a.hex, b.hex) != 0, "changed content (same size, same mtime): other id");
    CHECK(image_files_hashed() == h0 + 2 && image_mkfs_runs() == m0 + 1,
          "changed: one file read (before and after the build: racy), one mkfs");

    /* The id is the content hash: the old content gives the old id back. */
    poke_same_mtime(pth("tree/d/b"), "bravo");
    CHECK(prep(pth("tree"), &b) == 0 && !strcmp(a.hex, b.hex), "old content: old id, from cache");

    /* A corrupt index is an empty one: everything read again, same id, rewritten. */
    sleep(3);
    CHECK(prep(pth("tree"), &b) == 0, "settle 2");
    char ix[600];
    CHECK(index_file(ix, sizeof ix) == 0, "index file exists");
    struct stat st;
    CHECK(stat(ix, &st) == 0 && st.st_size > 40, "index has entries");
    int fd = open(ix, O_RDWR);
    char byte;
    CHECK(fd >= 0 && pread(fd, &byte, 1, st.st_size / 2) == 1, "read a byte");
    byte ^= 0x40;
    CHECK(pwrite(fd, &byte, 1, st.st_size / 2) == 1, "flip a byte");
    close(fd);
    h0 = image_files_hashed();
    CHECK(prep(pth("tree"), &b) == 0 && !strcmp(a.hex, b.hex), "corrupt index: same id");
    CHECK(image_files_hashed() == h0 + 3, "corrupt index: every file read again");
    h0 = image_files_hashed();
    CHECK(prep(pth("tree"), &b) == 0 && image_files_hashed() == h0, "index rewritten: hits again");
    CHECK(truncate(ix, 10) == 0, "truncate index");
    h0 = image_files_hashed();
    CHECK(prep(pth("tree"), &b) == 0 && !strcmp(a.hex, b.hex) && image_files_hashed() == h0 + 3,
          "truncated index: read again, same id");

    /* A symlink pointed elsewhere (a new inode) is seen: other id; back: old id. */
    sleep(3);
    CHECK(prep(pth("tree"), &b) == 0 && !strcmp(a.hex, b.hex), "settle 3");
    CHECK(unlink(pth("tree/l")) == 0 && symlink("d/c", pth("tree/l")) == 0, "retarget symlink");
    CHECK(prep(pth("tree"), &b) == 0 && strcmp(a.hex, b.hex) != 0, "symlink retargeted: other id");
    CHECK(unlink(pth("tree/l")) == 0 && symlink("d/b", pth("tree/l")) == 0, "target back");
    CHECK(prep(pth("tree"), &b) == 0 && !strcmp(a.hex, b.hex), "symlink back: old id");

    /* A file gone from the tree changes the id; its entry is dropped. */
    CHECK(unlink(pth("tree/a")) == 0, "unlink");
    CHECK(prep(pth("tree"), &b) == 0 && strcmp(a.hex, b.hex) != 0, "file removed: other id");

    test_shared_keys();

    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf %s", base);
    if (system(cmd) != 0)
        fprintf(stderr, "cannot remove %s\n", base);
    return unit_done();
}
