/* freeze: a job for the inspect freeze (REWIND_PENDING_INSPECT). Two threads
 * spin, each keeping its iteration count in /tmp/freeze.t0 and .t1, and the
 * main thread forks and reaps children in a loop (each child bumps
 * /tmp/freeze.forks before it exits), so that an inspection lands on threads
 * in user mode, in the kernel, and on a fork in flight. Once frozen, none of
 * the three files may change: an inspector shell that reads them twice with
 * a sleep in between must see the same bytes. The threads write their file
 * every 1000 iterations (one OPEN record, a step, each time: spinning alone
 * would not move virtual time). Forks argv[1] children (default 100), then
 * prints "freeze: done". */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void put(const char *path, unsigned long n)
{
    char buf[32];
    int len = snprintf(buf, sizeof(buf), "%lu\n", n);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || write(fd, buf, (size_t)len) != len) {
        perror(path);
        exit(1);
    }
    close(fd);
}

static unsigned long get(const char *path)
{
    char buf[32] = {0};
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return 0;
    if (read(fd, buf, sizeof(buf) - 1) < 0)
        buf[0] = 0;
    close(fd);
    return strtoul(buf, NULL, 10);
}

static void *spin(void *arg)
{
    const char *path = arg;
    for (unsigned long n = 1;; n++)
        if (n % 1000 == 0)
            put(path, n);
    return NULL;
}

int main(int argc, char **argv)
{
    long forks = argc > 1 ? atol(argv[1]) : 100;
    pthread_t t[2];
    pthread_create(&t[0], NULL, spin, "/tmp/freeze.t0");
    pthread_create(&t[1], NULL, spin, "/tmp/freeze.t1");
    for (long i = 0; i < forks; i++) {
        pid_t p = fork();
        if (p == 0) {
            put("/tmp/freeze.forks", get("/tmp/freeze.forks") + 1);
            _exit(0);
        }
        if (p > 0)
            waitpid(p, NULL, 0);
    }
    printf("freeze: done\n");
    return 0;
}
