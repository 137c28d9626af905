/* soak: one run of the soak suite (bench/soak.sh, docs/reliability.md): a
 * little of everything a test suite does, in one job, printing what it saw
 * so that any difference between two runs shows in the output as well as in
 * the trace: threads contending on a lock, files written, renamed and read
 * back, sleeps, signals between processes, forked children with exit codes,
 * and output on stdout and stderr. Deterministic under rewind whatever the
 * schedule: every line it prints is decided by the program, not by timing
 * (the schedule only changes the order of events in the trace). */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define THREADS 4
#define ROUNDS 2000

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static long counter;
static volatile sig_atomic_t got_usr1;

static void *worker(void *arg)
{
    long id = (long)arg;
    for (int i = 0; i < ROUNDS; i++) {
        pthread_mutex_lock(&lock);
        counter += id + 1;
        pthread_mutex_unlock(&lock);
        if (i % 500 == 0)
            sched_yield();
    }
    return NULL;
}

static void on_usr1(int sig)
{
    (void)sig;
    got_usr1++;
}

static int files(void)
{
    char name[64], back[64];
    for (int i = 0; i < 8; i++) {
        snprintf(name, sizeof(name), "/tmp/soak.%d", i);
        int fd = open(name, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        char line[64];
        int n = snprintf(line, sizeof(line), "file %d: %d\n", i, i * i);
        if (fd < 0 || write(fd, line, (size_t)n) != n || close(fd) != 0)
            return -1;
        snprintf(back, sizeof(back), "/tmp/soak.%d.done", i);
        if (rename(name, back) != 0)
            return -1;
    }
    long sum = 0;
    for (int i = 0; i < 8; i++) {
        snprintf(back, sizeof(back), "/tmp/soak.%d.done", i);
        FILE *f = fopen(back, "r");
        int a, b;
        if (!f || fscanf(f, "file %d: %d", &a, &b) != 2)
            return -1;
        fclose(f);
        sum += b;
        unlink(back);
    }
    printf("files: sum %ld\n", sum);
    return 0;
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    pthread_t t[THREADS];
    for (long i = 0; i < THREADS; i++)
        pthread_create(&t[i], NULL, worker, (void *)i);
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    printf("threads: counter %ld\n", counter);

    if (files() < 0) {
        perror("files");
        return 1;
    }

    struct timespec ts = {0, 20 * 1000 * 1000};
    for (int i = 0; i < 3; i++)
        nanosleep(&ts, NULL);
    printf("sleep: 3 x 20 ms\n");

    /* signals: a child waits for SIGUSR1 from the parent and exits 7 */
    signal(SIGUSR1, on_usr1);
    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGUSR1);
    sigprocmask(SIG_BLOCK, &block, &old);
    pid_t c = fork();
    if (c == 0) {
        while (!got_usr1)
            sigsuspend(&old);
        _exit(7);
    }
    kill(c, SIGUSR1);
    int st = 0;
    waitpid(c, &st, 0);
    sigprocmask(SIG_SETMASK, &old, NULL);
    printf("signal: child exited %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);

    /* fork: children with their own exit codes, reaped in order */
    int sum = 0;
    pid_t kids[5];
    for (int i = 0; i < 5; i++) {
        kids[i] = fork();
        if (kids[i] == 0) {
            printf("child %d\n", i);
            _exit(i + 1);
        }
        waitpid(kids[i], &st, 0); /* one at a time: the output order is fixed */
        sum += WEXITSTATUS(st);
    }
    printf("fork: exit codes sum %d\n", sum);

    for (int i = 0; i < 50; i++)
        printf("output line %d %s\n", i, "abcdefghijklmnopqrstuvwxyz");
    fprintf(stderr, "stderr: done\n");
    return 0;
}
