/* The library's own tests: edge cases, then a producer and a consumer
 * thread passing 1 MiB through a locked ring; the CRC of what arrived must
 * equal the CRC of what was sent. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "ring.h"

static int failed, passed;
#define CHECK(c)                                                                                   \
    do {                                                                                           \
        if (c)                                                                                     \
            passed++;                                                                              \
        else {                                                                                     \
            failed++;                                                                              \
            fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #c);                           \
        }                                                                                          \
    } while (0)

static struct ring shared;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
enum { TOTAL = 1 << 20 };

static unsigned char byte_at(size_t i)
{
    return (unsigned char)(i * 2654435761u >> 13);
}

static void *producer(void *arg)
{
    (void)arg;
    unsigned char chunk[333];
    size_t sent = 0;
    while (sent < TOTAL) {
        size_t n = sizeof chunk < TOTAL - sent ? sizeof chunk : TOTAL - sent;
        for (size_t i = 0; i < n; i++)
            chunk[i] = byte_at(sent + i);
        size_t off = 0;
        pthread_mutex_lock(&mu);
        while (off < n) {
            size_t k = ring_put(&shared, chunk + off, n - off);
            off += k;
            pthread_cond_broadcast(&cv);
            if (off < n)
                pthread_cond_wait(&cv, &mu);
        }
        pthread_mutex_unlock(&mu);
        sent += n;
    }
    return NULL;
}

int main(void)
{
    struct ring r;
    unsigned char out[8];
    CHECK(ring_init(&r, 4) == 0);
    CHECK(ring_get(&r, out, 1) == 0);
    CHECK(ring_put(&r, "abcdef", 6) == 4);
    CHECK(ring_get(&r, out, 2) == 2 && memcmp(out, "ab", 2) == 0);
    CHECK(ring_put(&r, "xy", 2) == 2);
    CHECK(ring_get(&r, out, 8) == 4 && memcmp(out, "cdxy", 4) == 0);
    ring_free(&r);
    CHECK(ring_crc32(0, "123456789", 9) == 0xCBF43926u);

    uint32_t want = 0, got = 0;
    for (size_t i = 0; i < TOTAL; i++) {
        unsigned char b = byte_at(i);
        want = ring_crc32(want, &b, 1);
    }
    CHECK(ring_init(&shared, 1000) == 0);
    pthread_t t;
    CHECK(pthread_create(&t, NULL, producer, NULL) == 0);
    size_t recvd = 0;
    unsigned char buf[257];
    while (recvd < TOTAL) {
        pthread_mutex_lock(&mu);
        while (shared.len == 0)
            pthread_cond_wait(&cv, &mu);
        size_t k = ring_get(&shared, buf, sizeof buf);
        pthread_cond_broadcast(&cv);
        pthread_mutex_unlock(&mu);
        got = ring_crc32(got, buf, k);
        recvd += k;
    }
    pthread_join(t, NULL);
    CHECK(recvd == TOTAL && got == want);
    ring_free(&shared);
    printf("ring_test: %d passed, %d failed\n", passed, failed);
    return failed != 0;
}
