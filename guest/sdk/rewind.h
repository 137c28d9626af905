/*
 * rewind.h: the in-guest SDK for C programs that run inside a rewind VM.
 * Header-only, C99 with GNU C extensions (GCC, Clang), no dependencies
 * beyond libc. It speaks the line protocol of docs/sdk.md on /dev/rewind.
 * Outside rewind (no /dev/rewind) every call is a cheap no-op, and the
 * assertions still evaluate their condition and return it.
 *
 *   rewind_always(n >= 0, "count never negative");  every evaluation true
 *   rewind_always_or_unreachable(ok, "reply well formed");  same, may be never reached
 *   rewind_sometimes(n == 3, "queue reaches three"); true at least once in a check
 *   rewind_reachable("retry path taken");           reached at least once in a check
 *   rewind_unreachable("lost an update");           never reached
 *   rewind_point();      a schedule point: schedules may switch threads here
 *   rewind_random();     64 random bits from the run's seed (getrandom)
 *   rewind_mark("reached phase 2");                 one mark event, as before
 *
 * Messages must be string literals: each assertion is put in the catalog
 * (the linker section "rewind_sdk_sites") at build time, and a constructor
 * reports the whole catalog when the program starts, so an assertion that
 * is never reached is still known. An assertion is identified by its kind
 * and its message: give each assertion its own message.
 *
 * Invariants:
 *  1. One protocol line is one write(2) of at most REWIND_SDK_LINE_MAX
 *     bytes, so it reaches the trace as one mark record (docs/guest-abi.md).
 *  2. Every byte of a file name or message below 0x21, 0x7f or '%' is
 *     written as %XX; file names are cut to 255 bytes and messages to 1023
 *     before escaping, so a line always fits.
 *  3. Each loaded object (program or shared library) reports its catalog
 *     once, whatever the number of translation units that include this.
 */
#ifndef REWIND_SDK_H
#define REWIND_SDK_H

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

/* Where the lines go; a test may point it at a file. */
#ifndef REWIND_SDK_DEVICE
#define REWIND_SDK_DEVICE "/dev/rewind"
#endif
#define REWIND_SDK_LINE_MAX 4000
#define REWIND_SDK_FILE_MAX 255
#define REWIND_SDK_MSG_MAX 1023

enum rewind_sdk_kind {
    REWIND_ALWAYS,
    REWIND_ALWAYS_OR_UNREACHABLE,
    REWIND_SOMETIMES,
    REWIND_REACHABLE,
    REWIND_UNREACHABLE,
};

/* One catalog entry: a call site of an assertion. */
struct rewind_sdk_site {
    int kind;
    unsigned line;
    const char *file;
    const char *msg;
};

static inline int rewind_sdk_fd(void)
{
    static int fd = -2;
    int cur = __atomic_load_n(&fd, __ATOMIC_ACQUIRE);
    if (cur != -2)
        return cur;
    int mine = open(REWIND_SDK_DEVICE, O_WRONLY | O_APPEND | O_CLOEXEC);
    int expect = -2;
    if (!__atomic_compare_exchange_n(&fd, &expect, mine, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        if (mine >= 0)
            close(mine); /* another thread opened it first */
        return expect;
    }
    return mine;
}

/* Emit one mark (a line of text) into the run's trace. Returns 0 or -1. */
static inline int rewind_mark(const char *text)
{
    int fd = rewind_sdk_fd();
    if (fd < 0)
        return -1;
    return write(fd, text, strlen(text)) < 0 ? -1 : 0;
}

static inline const char *rewind_sdk_kind_word(int kind)
{
    static const char *const w[] = {"always", "always_or_unreachable", "sometimes", "reachable",
                                    "unreachable"};
    return kind >= 0 && kind < 5 ? w[kind] : "always";
}

/* Append s (at most max bytes of it) escaped to buf at *o. */
static inline void rewind_sdk_put_escaped(char *buf, size_t *o, const char *s, size_t max)
{
    static const char hex[] = "0123456789ABCDEF";
    for (size_t i = 0; s && s[i] && i < max; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c <= ' ' || c == 0x7f || c == '%') {
            buf[(*o)++] = '%';
            buf[(*o)++] = hex[c >> 4];
            buf[(*o)++] = hex[c & 15];
        } else {
            buf[(*o)++] = (char)c;
        }
    }
}

static inline void rewind_sdk_put(char *buf, size_t *o, const char *s)
{
    size_t n = strlen(s);
    memcpy(buf + *o, s, n);
    *o += n;
}

static inline void rewind_sdk_put_uint(char *buf, size_t *o, unsigned long v)
{
    char d[24];
    int n = 0;
    do {
        d[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (n)
        buf[(*o)++] = d[--n];
}

/* Write "rw1 VERB [KIND] [RESULT] FILE LINE [MSG]\n" as one write(2).
 * verb is "cat", "hit" or "point"; result < 0: none. */
static inline void rewind_sdk_line(const char *verb, int kind, int result, const char *file,
                                   unsigned line, const char *msg)
{
    int fd = rewind_sdk_fd();
    if (fd < 0)
        return;
    char buf[REWIND_SDK_LINE_MAX];
    size_t o = 0;
    rewind_sdk_put(buf, &o, "rw1 ");
    rewind_sdk_put(buf, &o, verb);
    if (kind >= 0) {
        buf[o++] = ' ';
        rewind_sdk_put(buf, &o, rewind_sdk_kind_word(kind));
    }
    if (result >= 0) {
        buf[o++] = ' ';
        buf[o++] = result ? '1' : '0';
    }
    buf[o++] = ' ';
    rewind_sdk_put_escaped(buf, &o, file, REWIND_SDK_FILE_MAX);
    buf[o++] = ' ';
    rewind_sdk_put_uint(buf, &o, line);
    if (msg) {
        buf[o++] = ' ';
        rewind_sdk_put_escaped(buf, &o, msg, REWIND_SDK_MSG_MAX);
    }
    buf[o++] = '\n';
    ssize_t w;
    do
        w = write(fd, buf, o);
    while (w < 0 && errno == EINTR);
}

static inline void rewind_sdk_hit(const struct rewind_sdk_site *s, int cond)
{
    rewind_sdk_line("hit", s->kind, cond, s->file, s->line, s->msg);
}

/* The catalog: every assertion site of this object, placed by the macros
 * below in the section rewind_sdk_sites; the linker defines its bounds. */
extern struct rewind_sdk_site __start_rewind_sdk_sites[]
    __attribute__((weak, visibility("hidden")));
extern struct rewind_sdk_site __stop_rewind_sdk_sites[]
    __attribute__((weak, visibility("hidden")));
/* One flag per object, shared by every translation unit (invariant 3). */
__attribute__((weak, visibility("hidden"))) int rewind_sdk_catalog_done;

__attribute__((constructor)) static void rewind_sdk_catalog(void)
{
    if (rewind_sdk_catalog_done)
        return;
    rewind_sdk_catalog_done = 1;
    if (!__start_rewind_sdk_sites || rewind_sdk_fd() < 0)
        return;
    for (struct rewind_sdk_site *s = __start_rewind_sdk_sites; s < __stop_rewind_sdk_sites; s++)
        rewind_sdk_line("cat", s->kind, -1, s->file, s->line, s->msg);
}

#define REWIND_SDK_SITE(k, m)                                                                      \
    static struct rewind_sdk_site rewind_sdk_site_                                                 \
        __attribute__((section("rewind_sdk_sites"), used, aligned(sizeof(void *)))) = {           \
            (k), __LINE__, __FILE__, "" m}

#define REWIND_SDK_ASSERT(k, cond, m)                                                              \
    __extension__({                                                                                \
        REWIND_SDK_SITE(k, m);                                                                     \
        int rewind_sdk_c_ = !!(cond);                                                              \
        rewind_sdk_hit(&rewind_sdk_site_, rewind_sdk_c_);                                          \
        rewind_sdk_c_;                                                                             \
    })

/* Each returns the condition (1 for reachable, 0 for unreachable). */
#define rewind_always(cond, msg) REWIND_SDK_ASSERT(REWIND_ALWAYS, cond, msg)
#define rewind_always_or_unreachable(cond, msg)                                                    \
    REWIND_SDK_ASSERT(REWIND_ALWAYS_OR_UNREACHABLE, cond, msg)
#define rewind_sometimes(cond, msg) REWIND_SDK_ASSERT(REWIND_SOMETIMES, cond, msg)
#define rewind_reachable(msg) REWIND_SDK_ASSERT(REWIND_REACHABLE, 1, msg)
#define rewind_unreachable(msg) REWIND_SDK_ASSERT(REWIND_UNREACHABLE, 0, msg)

/* A schedule point: one step at which a schedule may switch threads, where
 * no system call would otherwise give one (docs/sdk.md). */
#define rewind_point() rewind_sdk_line("point", -1, -1, __FILE__, __LINE__, (const char *)0)

/* 64 random bits from getrandom(2); inside rewind the guest kernel's
 * generator is seeded from the run's seed, so a run and its replay draw
 * the same numbers and another --seed draws others. */
static inline uint64_t rewind_random(void)
{
    uint64_t v = 0;
    size_t got = 0;
    while (got < sizeof(v)) {
        ssize_t n = getrandom((char *)&v + got, sizeof(v) - got, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    return v;
}

#endif
