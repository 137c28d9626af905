/* hash_test.c - SHA-256 known-answer tests for src/util/hash.c. */
#include "unit.h"

#include "util/hash.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *ABC448 = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";

static int hex_is(const hash256 *h, const char *want)
{
    char hex[65];
    hash_hex(h, hex);
    if (strcmp(hex, want) != 0)
        fprintf(stderr, "  got  %s\n  want %s\n", hex, want);
    return strcmp(hex, want) == 0;
}

static void test_buf(void)
{
    hash256 h;
    hash_buf("", 0, &h);
    CHECK(hex_is(&h, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"), "empty");
    hash_buf("abc", 3, &h);
    CHECK(hex_is(&h, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"), "abc");
    hash_buf(ABC448, strlen(ABC448), &h);
    CHECK(hex_is(&h, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"),
          "448 bit");
}

static void test_incremental(void)
{
    hash_ctx *c = hash_new();
    CHECK(c != NULL, "hash_new");
    if (!c)
        return;
    char block[1000];
    memset(block, 'a', sizeof block);
    for (int i = 0; i < 1000; i++)
        hash_update(c, block, sizeof block);
    hash256 h;
    hash_final(c, &h);
    CHECK(hex_is(&h, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"),
          "million a");

    c = hash_new();
    CHECK(c != NULL, "hash_new 2");
    if (!c)
        return;
    hash_update(c, "a", 1);
    hash_update(c, "", 0);
    hash_update(c, "bc", 2);
    hash_final(c, &h);
    CHECK(hex_is(&h, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
          "abc in pieces");
}

static void test_file(void)
{
    char path[] = "/tmp/hash_test_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0, "mkstemp");
    if (fd < 0)
        return;
    /* 200000 bytes: spans several read() buffers. */
    char *big = malloc(200000);
    CHECK(big != NULL, "malloc");
    if (!big) {
        close(fd);
        unlink(path);
        return;
    }
    for (size_t i = 0; i < 200000; i++)
        big[i] = (char)(i * 7);
    CHECK(write(fd, big, 200000) == 200000, "write");
    close(fd);
    hash256 a, b;
    CHECK(hash_file(path, &a) == 0, "hash_file");
    hash_buf(big, 200000, &b);
    CHECK(memcmp(a.b, b.b, 32) == 0, "hash_file == hash_buf");
    free(big);

    fd = open(path, O_WRONLY | O_TRUNC);
    CHECK(fd >= 0 && close(fd) == 0, "truncate");
    CHECK(hash_file(path, &a) == 0, "hash_file empty");
    CHECK(hex_is(&a, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
          "empty file");
    unlink(path);

    errno = 0;
    CHECK(hash_file("/nonexistent/hash_test", &a) == -1 && errno == ENOENT, "missing file");
    errno = 0;
    CHECK(hash_file("/tmp", &a) == -1 && errno == EISDIR, "directory");
}

int main(void)
{
    test_buf();
    test_incremental();
    test_file();
    return unit_done();
}
