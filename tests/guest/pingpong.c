/* pingpong: two threads pass a token back and forth through two pipes,
 * ROUNDS times each; each writes one line to stdout with write(2) when it
 * holds the token (each line is one output record, so one step made by
 * that thread). `rewind sched` shows the two alternating
 * (tests/system/t_sched.sh). */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define ROUNDS 6

static int to_pong[2], to_ping[2];

static void say(const char *who, int i)
{
    char line[64];
    int n = snprintf(line, sizeof(line), "%s %d tid %ld\n", who, i, (long)syscall(SYS_gettid));
    if (write(1, line, (size_t)n) != n)
        _exit(2);
}

static void pass(int fd)
{
    char c = 't';
    if (write(fd, &c, 1) != 1)
        _exit(2);
}

static void take(int fd)
{
    char c;
    if (read(fd, &c, 1) != 1)
        _exit(2);
}

static void *ping(void *arg)
{
    (void)arg;
    for (int i = 0; i < ROUNDS; i++) {
        say("ping", i);
        pass(to_pong[1]);
        take(to_ping[0]);
    }
    return NULL;
}

static void *pong(void *arg)
{
    (void)arg;
    for (int i = 0; i < ROUNDS; i++) {
        take(to_pong[0]);
        say("pong", i);
        pass(to_ping[1]);
    }
    return NULL;
}

int main(void)
{
    if (pipe(to_pong) || pipe(to_ping))
        return 2;
    pthread_t a, b;
    pthread_create(&b, NULL, pong, NULL);
    pthread_create(&a, NULL, ping, NULL);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    return 0;
}
