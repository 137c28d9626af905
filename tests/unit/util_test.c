/*
 * util_test: the util layer. io.h through pipes that force short reads and
 * short writes, a signal that interrupts a blocked read (EINTR), end of
 * file and a closed reader; bytes.h's byte order; crc.h's check values
 * (the CRC of "123456789", as the CRC catalogues list them); spawn.h, the
 * one spawner (its options, rw_spawn's errors and waits).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "unit.h"
#include "util/bytes.h"
#include "util/crc.h"
#include "util/fail.h"
#include "util/io.h"
#include "util/spawn.h"

static void sleep_ms(long ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR) {
    }
}

static uint8_t pattern(size_t i)
{
    return (uint8_t)(i * 7 + i / 251);
}

/* ---- a writer that trickles, so every read(2) comes back short ---------- */

struct trickle {
    int fd;
    size_t n;     /* bytes to write, one at a time */
    int close_it; /* close fd afterwards (end of file for the reader) */
    long delay_ms;
};

static void *trickle_writer(void *arg)
{
    struct trickle *t = arg;
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL); /* signals go to the reader */
    sleep_ms(t->delay_ms);
    for (size_t i = 0; i < t->n; i++) {
        uint8_t b = pattern(i);
        if (write(t->fd, &b, 1) != 1)
            break;
        if (i % 64 == 0)
            sched_yield();
    }
    if (t->close_it)
        close(t->fd);
    return NULL;
}

static void test_short_reads(void)
{
    int p[2];
    CHECK(pipe(p) == 0, "pipe");
    struct trickle t = {.fd = p[1], .n = 3000};
    pthread_t th;
    pthread_create(&th, NULL, trickle_writer, &t);
    uint8_t buf[3000];
    ssize_t r = io_read_full(p[0], buf, sizeof(buf));
    pthread_join(th, NULL);
    CHECK(r == (ssize_t)sizeof(buf), "short reads are joined into one full read");
    int same = 1;
    for (size_t i = 0; i < sizeof(buf); i++)
        same &= buf[i] == pattern(i);
    CHECK(same, "in order, nothing lost");
    close(p[0]);
    close(p[1]);
}

static void test_eof(void)
{
    int p[2];
    CHECK(pipe(p) == 0, "pipe");
    struct trickle t = {.fd = p[1], .n = 100, .close_it = 1};
    pthread_t th;
    pthread_create(&th, NULL, trickle_writer, &t);
    uint8_t buf[500];
    ssize_t r = io_read_full(p[0], buf, sizeof(buf));
    pthread_join(th, NULL);
    CHECK(r == 100, "end of file: the shorter count, not an error");
    CHECK(buf[0] == pattern(0) && buf[99] == pattern(99), "the bytes before it");
    CHECK(io_read_full(p[0], buf, sizeof(buf)) == 0, "at end of file: 0");
    close(p[0]);
}

/* ---- EINTR: a signal interrupts a read blocked on an empty pipe --------- */

static volatile sig_atomic_t ticks;

static void on_alarm(int sig)
{
    (void)sig;
    ticks++;
}

static void test_eintr(void)
{
    struct sigaction sa, old;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_alarm; /* no SA_RESTART: read(2) fails with EINTR */
    sigemptyset(&sa.sa_mask);
    sigaction(SIGALRM, &sa, &old);
    int p[2];
    CHECK(pipe(p) == 0, "pipe");
    struct trickle t = {.fd = p[1], .n = 10, .delay_ms = 60};
    pthread_t th;
    pthread_create(&th, NULL, trickle_writer, &t);
    struct itimerval it = {.it_interval = {0, 2000}, .it_value = {0, 2000}};
    setitimer(ITIMER_REAL, &it, NULL);
    uint8_t buf[10];
    ssize_t r = io_read_full(p[0], buf, sizeof(buf));
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &off, NULL);
    pthread_join(th, NULL);
    sigaction(SIGALRM, &old, NULL);
    CHECK(ticks > 0, "the read was interrupted");
    CHECK(r == 10 && buf[9] == pattern(9), "and retried to the end");
    close(p[0]);
    close(p[1]);
}

/* ---- short writes: a small pipe, a slow reader, and a signal that stops a
 * blocked write(2) part way (it then returns the bytes it wrote) ------------ */

struct slow_reader {
    int fd;
    uint8_t *got;
    size_t n, reads;
};

static void *slow_read(void *arg)
{
    struct slow_reader *s = arg;
    for (;;) {
        ssize_t r = read(s->fd, s->got + s->n, 1000);
        if (r <= 0)
            break;
        s->n += (size_t)r;
        if (++s->reads % 16 == 0)
            sleep_ms(1);
    }
    return NULL;
}

static void test_short_writes(void)
{
    int p[2];
    CHECK(pipe(p) == 0, "pipe");
    fcntl(p[1], F_SETPIPE_SZ, 4096); /* smallest pipe: writes come back short */
    size_t n = 1 << 20;
    uint8_t *data = malloc(n);
    struct slow_reader s = {.fd = p[0], .got = malloc(n + 1000)};
    for (size_t i = 0; i < n; i++)
        data[i] = pattern(i);
    struct sigaction sa, old;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_alarm;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGALRM, &sa, &old);
    sigset_t alrm;
    sigemptyset(&alrm);
    sigaddset(&alrm, SIGALRM);
    pthread_sigmask(SIG_BLOCK, &alrm, NULL); /* the reader thread inherits it blocked */
    pthread_t th;
    pthread_create(&th, NULL, slow_read, &s);
    pthread_sigmask(SIG_UNBLOCK, &alrm, NULL);
    ticks = 0;
    struct itimerval it = {.it_interval = {0, 1000}, .it_value = {0, 1000}};
    setitimer(ITIMER_REAL, &it, NULL);
    CHECK(io_write_all(p[1], data, n) == 0, "1 MiB through a 4 KiB pipe");
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &off, NULL);
    sigaction(SIGALRM, &old, NULL);
    CHECK(ticks > 0, "signals interrupted the write");
    close(p[1]);
    pthread_join(th, NULL);
    CHECK(s.n == n && memcmp(s.got, data, n) == 0, "every byte, in order");
    close(p[0]);
    free(data);
    free(s.got);

    CHECK(pipe(p) == 0, "pipe");
    close(p[0]);
    signal(SIGPIPE, SIG_IGN);
    errno = 0;
    CHECK(io_write_all(p[1], "x", 1) == -1 && errno == EPIPE, "no reader: -1, EPIPE");
    signal(SIGPIPE, SIG_DFL);
    close(p[1]);
}

/* ---- positional I/O and whole files ------------------------------------- */

static void test_files(void)
{
    char dir[] = "/tmp/util_test.XXXXXX", path[256];
    CHECK(mkdtemp(dir) != NULL, "temp dir");
    snprintf(path, sizeof(path), "%s/f", dir);
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
    CHECK(fd >= 0, "open");
    uint8_t b[100], r[200];
    for (int i = 0; i < 100; i++)
        b[i] = pattern((size_t)i);
    CHECK(io_pwrite_all(fd, b, 60, 40) == 0 && io_pwrite_all(fd, b, 40, 0) == 0, "pwrite");
    CHECK(io_pread_full(fd, r, 200, 0) == 100, "pread to end of file: 100");
    CHECK(memcmp(r, b, 40) == 0 && memcmp(r + 40, b, 60) == 0, "at their offsets");
    CHECK(io_pread_full(fd, r, 10, 95) == 5, "short at end of file");
    CHECK(io_pread_full(fd, r, 10, 500) == 0, "past end of file");
    CHECK(io_pread_exact(fd, r, 10, 90) == 0, "exact, fits");
    errno = 0;
    CHECK(io_pread_exact(fd, r, 11, 90) == -1 && errno == EIO, "exact, short: EIO");
    close(fd);

    size_t len = 0;
    char *all = io_read_file(path, 100, &len);
    CHECK(all && len == 100 && all[100] == 0 && memcmp(all + 40, b, 60) == 0, "read_file");
    free(all);
    errno = 0;
    CHECK(io_read_file(path, 99, &len) == NULL && errno == EFBIG, "read_file past max");

    snprintf(path, sizeof(path), "%s/g", dir);
    CHECK(io_write_file_atomic(path, "hello\n", 6) == 0, "write_file_atomic");
    all = io_read_file(path, 1000, &len);
    CHECK(all && len == 6 && strcmp(all, "hello\n") == 0, "its contents");
    free(all);
    unlink(path);
    snprintf(path, sizeof(path), "%s/f", dir);
    unlink(path);
    CHECK(rmdir(dir) == 0, "no temp file left beside it");
}

/* ---- bytes.h and crc.h -------------------------------------------------- */

static void test_bytes(void)
{
    uint8_t b[8];
    bytes_put_u16(b, 0x1122);
    CHECK(b[0] == 0x22 && b[1] == 0x11, "u16 little-endian");
    CHECK(bytes_get_u16(b) == 0x1122, "u16 back");
    bytes_put_u32(b, 0x11223344u);
    CHECK(b[0] == 0x44 && b[1] == 0x33 && b[2] == 0x22 && b[3] == 0x11, "u32 little-endian");
    CHECK(bytes_get_u32(b) == 0x11223344u, "u32 back");
    bytes_put_u64(b, 0x0102030405060708ull);
    CHECK(b[0] == 8 && b[3] == 5 && b[7] == 1, "u64 little-endian");
    CHECK(bytes_get_u64(b) == 0x0102030405060708ull, "u64 back");
    bytes_put_u64(b, UINT64_MAX);
    CHECK(bytes_get_u64(b) == UINT64_MAX && bytes_get_u32(b + 4) == UINT32_MAX, "all ones");
    static const uint8_t hi[8] = {0, 0, 0, 0, 0, 0, 0, 0x80};
    CHECK(bytes_get_u64(hi) == 1ull << 63, "top bit of u64");
    CHECK(bytes_get_u32(hi + 4) == 1u << 31, "top bit of u32");
    CHECK(bytes_get_u16(hi + 6) == 0x8000, "top bit of u16");
}

static void test_crc(void)
{
    const char *s = "123456789";
    CHECK(crc_32(0, s, 9) == 0xcbf43926u, "CRC-32 check value");
    CHECK(crc_32c(0, s, 9) == 0xe3069283u, "CRC-32C check value");
    CHECK(crc_32(crc_32(0, s, 4), s + 4, 5) == 0xcbf43926u, "CRC-32 in parts");
    CHECK(crc_32c(crc_32c(0, s, 1), s + 1, 8) == 0xe3069283u, "CRC-32C in parts");
    CHECK(crc_32(0, s, 0) == 0 && crc_32c(0, "", 0) == 0, "empty input");
    CHECK(crc_32c(0, s, 9) != crc_32c(0, "123456780", 9), "one changed byte changes it");
}

static void test_fail(void)
{
    char err[16];
    CHECK(util_fail(err, sizeof(err), "bad %s %d", "thing", 42) == -1, "returns -1");
    CHECK(strcmp(err, "bad thing 42") == 0, "formats the line");
    CHECK(util_fail(err, sizeof(err), "%s", "a line longer than sixteen") == -1, "truncates");
    CHECK(strlen(err) == 15, "within the buffer");
    CHECK(util_fail(NULL, 0, "nothing") == -1, "no buffer is fine");
}

/* io_mkdir_p: the one mkdir -p of the engine (src/util/io.c). */
static void test_mkdir_p(void)
{
    char base[] = "/tmp/rw_mkdir_XXXXXX";
    if (!mkdtemp(base)) {
        SKIP("no temporary directory");
        return;
    }
    char p[512], f[512];
    struct stat st;
    snprintf(p, sizeof p, "%s/a/b//c/", base);
    CHECK(io_mkdir_p(p) == 0 && stat(p, &st) == 0 && S_ISDIR(st.st_mode), "a chain, // and /");
    CHECK(io_mkdir_p(p) == 0, "existing directories are fine");
    snprintf(f, sizeof f, "%s/a/file", base);
    int fd = open(f, O_CREAT | O_WRONLY, 0644);
    CHECK(fd >= 0, "a file");
    if (fd >= 0)
        close(fd);
    errno = 0;
    CHECK(io_mkdir_p(f) < 0 && errno == ENOTDIR, "a file in the way: ENOTDIR");
    snprintf(p, sizeof p, "%s/a/file/below", base);
    CHECK(io_mkdir_p(p) < 0 && errno == ENOTDIR, "a file on the way: ENOTDIR");
    char *lng = malloc(PATH_MAX + 16);
    if (lng) {
        memset(lng, 'x', PATH_MAX + 15);
        lng[0] = '/';
        lng[PATH_MAX + 15] = 0;
        errno = 0;
        CHECK(io_mkdir_p(lng) < 0 && errno == ENAMETOOLONG, "too long: ENAMETOOLONG");
        free(lng);
    }
    unlink(f);
    snprintf(p, sizeof p, "%s/a/b/c", base);
    rmdir(p);
    snprintf(p, sizeof p, "%s/a/b", base);
    rmdir(p);
    snprintf(p, sizeof p, "%s/a", base);
    rmdir(p);
    rmdir(base);
}

/* spawn: the one way the engine starts a program (src/util/spawn.c). */
static void test_spawn(void)
{
    pid_t pid;
    int st = -1;
    char *t[] = {"true", NULL}, *f[] = {"false", NULL};
    CHECK(spawn_start(t, NULL, SPAWN_NULL, SPAWN_NULL, SPAWN_NULL, &pid) == 0 &&
              spawn_wait(pid, &st) == 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0,
          "true: status 0");
    CHECK(spawn_start(f, NULL, SPAWN_NULL, SPAWN_NULL, SPAWN_NULL, &pid) == 0 &&
              spawn_wait(pid, &st) == 0 && WIFEXITED(st) && WEXITSTATUS(st) == 1,
          "false: status 1");
    char *none[] = {"rewind-no-such-program-here", NULL};
    errno = 0;
    CHECK(spawn_start(none, NULL, SPAWN_NULL, SPAWN_NULL, SPAWN_NULL, &pid) < 0 && errno == ENOENT,
          "a program not in PATH: ENOENT from the call");
    int p[2];
    if (pipe2(p, O_CLOEXEC) < 0) {
        SKIP("no pipe");
        return;
    }
    char script[200];
    snprintf(script, sizeof script,
             "echo \"$RW_SPAWN_X\"; echo err >&2; test -e /proc/self/fd/%d && echo open || "
             "echo closed",
             p[0]);
    char *sh[] = {"sh", "-c", script, NULL};
    char *env[] = {"RW_SPAWN_X=hello", "PATH=/usr/bin:/bin", NULL};
    int ok = spawn_start(sh, env, SPAWN_NULL, p[1], p[1], &pid) == 0;
    close(p[1]);
    char buf[256] = {0};
    ssize_t n = ok ? io_read_full(p[0], buf, sizeof(buf) - 1) : -1;
    close(p[0]);
    CHECK(ok && spawn_wait(pid, &st) == 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0, "sh ran");
    /* The environment given, stdout and stderr to one pipe, and the
     * caller's close-on-exec pipe end not in the child: spawn.h invariant 1. */
    CHECK(n > 0 && !strcmp(buf, "hello\nerr\nclosed\n"), "env, streams and fds");

    /* A caller whose stdin was closed gets fd 0 for a pipe end: the child's
     * stdout on that fd must not be overwritten by its /dev/null stdin
     * (spawn.c moves it above 2 first). In a child process of the test, so
     * the harness keeps its own streams. */
    pid_t lo = fork();
    if (lo == 0) {
        int q[2];
        close(0);
        if (pipe(q) < 0 || q[0] != 0)
            _exit(2);
        int r = fcntl(q[0], F_DUPFD_CLOEXEC, 3); /* read end above 2, write end to 0 */
        if (r < 0 || dup2(q[1], 0) != 0 || close(q[1]) < 0)
            _exit(2);
        fcntl(0, F_SETFD, FD_CLOEXEC);
        char *echo[] = {"echo", "low", NULL};
        pid_t e;
        if (spawn_start(echo, NULL, SPAWN_NULL, 0, SPAWN_KEEP, &e) < 0)
            _exit(3);
        close(0);
        char b[16] = {0};
        ssize_t m = io_read_full(r, b, sizeof(b) - 1);
        int es;
        spawn_wait(e, &es);
        _exit(m == 4 && !strcmp(b, "low\n") ? 0 : 1);
    }
    int ts = -1;
    CHECK(lo > 0 && waitpid(lo, &ts, 0) == lo && WIFEXITED(ts) && WEXITSTATUS(ts) == 0,
          "a pipe on fd 0 as the child's stdout");
}

/* Run argv as o says with its stdout (and stderr) into buf; the exit
 * status, or -1 when it could not start. */
static int spawn_output(char *const argv[], struct rw_spawn *o, char *buf, size_t n)
{
    int p[2];
    pid_t pid;
    int st = -1;
    buf[0] = 0;
    if (pipe2(p, O_CLOEXEC) < 0)
        return -1;
    o->out = o->err = p[1];
    int ok = spawn_run(argv, o, &pid) == 0;
    close(p[1]);
    ssize_t got = ok ? io_read_full(p[0], buf, n - 1) : -1;
    close(p[0]);
    buf[got > 0 ? got : 0] = 0;
    if (!ok || spawn_wait(pid, &st) < 0 || !WIFEXITED(st))
        return -1;
    return WEXITSTATUS(st);
}

/* A /proc/self/status mask line's value ("SigBlk:", "SigIgn:"), or ~0. */
static unsigned long long status_mask(const char *status, const char *key)
{
    const char *l = strstr(status, key);
    return l ? strtoull(l + strlen(key), NULL, 16) : ~0ull;
}

/* spawn_run's options: an exact path, every fd but 0..2 closed (close-on-
 * exec or not: spawn.h invariant 1), a new session, the signal mask and
 * dispositions (invariant 4), and rw_spawn's errors and waits. */
static void test_spawn_options(void)
{
    struct rw_spawn o;
    char buf[4096];
    rw_spawn_init(&o);
    o.path = "/bin/sh";
    char *named[] = {"rewind-no-such-program-here", "-c", "exit 3", NULL};
    CHECK(spawn_output(named, &o, buf, sizeof buf) == 3, "an exact path: argv[0] is only a name");

    int leak = fcntl(2, F_DUPFD, 50); /* not close-on-exec */
    char script[100];
    snprintf(script, sizeof script, "test -e /proc/self/fd/%d && echo open || echo closed", leak);
    char *sh[] = {"sh", "-c", script, NULL};
    rw_spawn_init(&o);
    CHECK(leak >= 50 && spawn_output(sh, &o, buf, sizeof buf) == 0 && !strcmp(buf, "closed\n"),
          "an fd above 2 without close-on-exec does not reach the child");
    if (leak >= 0)
        close(leak);

    /* the signal state: a blocked SIGUSR1 and an ignored SIGPIPE stay so
     * unless asked (SIGUSR1 is bit 9, SIGPIPE bit 12 of the masks) */
    sigset_t usr1, old_mask;
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    pthread_sigmask(SIG_BLOCK, &usr1, &old_mask);
    void (*old_pipe)(int) = signal(SIGPIPE, SIG_IGN);
    char *cat[] = {"cat", "/proc/self/status", NULL};
    rw_spawn_init(&o);
    CHECK(spawn_output(cat, &o, buf, sizeof buf) == 0 &&
              (status_mask(buf, "SigBlk:") & (1ull << 9)) &&
              (status_mask(buf, "SigIgn:") & (1ull << 12)),
          "by default the child keeps the caller's mask and ignored signals");
    rw_spawn_init(&o);
    o.unblock_all = 1;
    o.sigdefault[0] = SIGPIPE;
    CHECK(spawn_output(cat, &o, buf, sizeof buf) == 0 && status_mask(buf, "SigBlk:") == 0 &&
              !(status_mask(buf, "SigIgn:") & (1ull << 12)),
          "unblock_all and sigdefault: nothing blocked, SIGPIPE at its default");
    rw_spawn_init(&o);
    o.sigdefault[0] = 12345;
    pid_t pid;
    CHECK(spawn_run(cat, &o, &pid) < 0 && errno == EINVAL, "a bad signal: EINVAL");
    signal(SIGPIPE, old_pipe);
    pthread_sigmask(SIG_SETMASK, &old_mask, NULL);

    /* a new session, and a wait that does not block */
    int in[2];
    if (pipe2(in, O_CLOEXEC) < 0) {
        SKIP("no pipe");
        return;
    }
    char *cat_in[] = {"cat", NULL};
    rw_spawn_init(&o);
    o.in = in[0];
    o.out = SPAWN_NULL;
    o.new_session = 1;
    struct rw_error err;
    int st = -1, started = rw_spawn(cat_in, &o, &pid, &err) == 0;
    close(in[0]);
    CHECK(started && getsid(pid) == pid && getsid(pid) != getsid(0),
          "new_session: the child leads a session of its own");
    CHECK(started && rw_spawn_wait(pid, &st, 0, &err) == 0, "a running child: 0 without waiting");
    close(in[1]);
    CHECK(started && rw_spawn_wait(pid, &st, 1, &err) == 1 && WIFEXITED(st) && WEXITSTATUS(st) == 0,
          "its end: 1 and its status");
    CHECK(started && rw_spawn_wait(pid, &st, 1, &err) < 0 && errno == ECHILD,
          "reaped once: ECHILD after");

    char *none[] = {"rewind-no-such-program-here", NULL};
    rw_spawn_init(&o);
    errno = 0;
    CHECK(rw_spawn(none, &o, &pid, &err) < 0 && errno == ENOENT && err.code == RW_ENOTFOUND &&
              !strcmp(err.msg, "cannot run rewind-no-such-program-here: No such file or directory"),
          err.msg);
    char plain[] = "/tmp/util_test_spawn.XXXXXX";
    int pf = mkstemp(plain);
    o.path = plain;
    CHECK(pf >= 0 && rw_spawn(none, &o, &pid, &err) < 0 && errno == EACCES &&
              err.code == RW_ENOTEXEC,
          "a file that is not executable: RW_ENOTEXEC, EACCES");
    if (pf >= 0) {
        close(pf);
        unlink(plain);
    }
}

int main(void)
{
    test_short_reads();
    test_eof();
    test_eintr();
    test_short_writes();
    test_files();
    test_bytes();
    test_crc();
    test_fail();
    test_mkdir_p();
    test_spawn();
    test_spawn_options();
    return unit_done();
}
