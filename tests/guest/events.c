/* events: does one of each thing the guest kernel reports as an event record
 * (fork, open for writing, rename, unlink, exec, thread create/exit, fatal
 * SIGSEGV, exit) and prints a line per phase with the ids involved, so a
 * test can match the run's trace against them. Paths are given relative and
 * unnormalized on purpose; the records must carry them absolute and
 * normalized (/tmp/a.txt, /tmp/b.txt, /bin/true). */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static void *thread_main(void *arg)
{
    (void)arg;
    printf("thread tid %ld exits\n", (long)syscall(SYS_gettid));
    fflush(stdout);
    return NULL;
}

static int wait_for(pid_t pid)
{
    int status;
    if (waitpid(pid, &status, 0) != pid) {
        perror("waitpid");
        exit(1);
    }
    return status;
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    printf("events: pid %d\n", (int)getpid());

    /* Phase 1: a child writes, renames, unlinks, then execs /bin/true. */
    pid_t pid = fork();
    if (pid < 0) {
        perror("fork");
        return 1;
    }
    if (pid == 0) {
        if (chdir("/tmp") != 0) {
            perror("chdir");
            _exit(2);
        }
        int fd = open("../tmp/./a.txt", O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0 || write(fd, "hello\n", 6) != 6 || close(fd) != 0) {
            perror("a.txt");
            _exit(3);
        }
        if (rename("a.txt", "/tmp//b.txt") != 0) {
            perror("rename");
            _exit(4);
        }
        if (unlink("../tmp/b.txt") != 0) {
            perror("unlink");
            _exit(5);
        }
        printf("child %d wrote /tmp/a.txt, renamed it to /tmp/b.txt, unlinked it\n",
               (int)getpid());
        execl("../bin/./true", "true", "arg1", "two words", (char *)NULL);
        perror("exec");
        _exit(6);
    }
    int status = wait_for(pid);
    printf("child %d exec /bin/true: status 0x%x\n", (int)pid, status);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return 1;

    /* Phase 2: a thread that exits. */
    pthread_t t;
    if (pthread_create(&t, NULL, thread_main, NULL) != 0 || pthread_join(t, NULL) != 0) {
        fprintf(stderr, "pthread failed\n");
        return 1;
    }
    printf("thread joined\n");

    /* Phase 3: a child that dereferences 0x1234. */
    pid = fork();
    if (pid < 0) {
        perror("fork");
        return 1;
    }
    if (pid == 0) {
        *(volatile int *)0x1234 = 1;
        _exit(7);
    }
    status = wait_for(pid);
    printf("child %d segv: status 0x%x signal %d\n", (int)pid, status,
           WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    if (!WIFSIGNALED(status) || WTERMSIG(status) != 11)
        return 1;
    printf("events: done\n");
    return 0;
}
