/*
 * spinreport: the words of a run that ended as spin (no step for
 * --spin-limit seconds): which process, in which mode, at which
 * instruction, in which function.
 *
 * The process is the guest kernel's current task (src/vmm/spin.c). In user
 * mode the function comes from the symbol table of the program that pid
 * exec'd last (its EXEC record), read from the run's root: a directory root
 * in place, an image root extracted by fsck.erofs into a temp directory of
 * the home (removed after). In kernel mode it comes from the guest kernel.
 *
 * Invariants:
 *  1. The program's path comes from the guest: it is opened with
 *     RESOLVE_IN_ROOT under the root, so neither ".." nor a symlink in the
 *     root can reach a host file outside it.
 *  2. The temp directory never outlives this call.
 *  3. Naming a spin never fails the run: what cannot be found is said to be
 *     unknown.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <linux/openat2.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/homepath.h"
#include "run/ctx.h"
#include "util/check.h"
#include "guestos/elfsym.h"
#include "vmm/spin.h"
#include "util/spawn.h"

extern char **environ;

/* Open path under the directory rootfd, never leaving it (invariant 1). */
static int open_in_root(int rootfd, const char *path)
{
    struct open_how how = {.flags = O_RDONLY | O_CLOEXEC, .resolve = RESOLVE_IN_ROOT};
    return (int)syscall(SYS_openat2, rootfd, path, &how, sizeof(how));
}

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *f)
{
    (void)st;
    (void)flag;
    (void)f;
    return remove(p) < 0 ? 0 : 0; /* best effort: see the caller */
}

/* Extract the image into a fresh temp dir of the home; 0 and dir filled, or -1. */
static int extract_image(const char *home, const char *image, char *dir, size_t n)
{
    char images[4200];
    if (home_path(images, sizeof(images), home, HOME_IMAGES, NULL, NULL) < 0 ||
        snprintf(dir, n, "%s/.tmp-spin-XXXXXX", images) >= (int)n || !mkdtemp(dir))
        return -1;
    char opt[4400];
    snprintf(opt, sizeof(opt), "--extract=%s", dir);
    char *argv[] = {"fsck.erofs", opt, "--force", (char *)image, NULL};
    pid_t pid;
    int st = 0;
    int rc = spawn_start(argv, NULL, SPAWN_KEEP, SPAWN_NULL, SPAWN_NULL, &pid);
    if (rc == 0)
        rc = spawn_wait(pid, &st);
    if (rc != 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
        return -1;
    }
    return 0;
}

/* The function of the user-mode rip in the program at path (in the root). */
static void user_function(struct run_ctx *c, const char *path, uint64_t rip, char *out, size_t n)
{
    struct stat st;
    char tmp[4300] = "";
    const char *base = c->o->root;
    snprintf(out, n, "function unknown");
    if (stat(c->o->root, &st) < 0)
        return;
    if (!S_ISDIR(st.st_mode)) {
        if (extract_image(c->o->home, c->img.path, tmp, sizeof(tmp)) < 0) {
            snprintf(out, n, "function unknown (cannot extract the root image)");
            return;
        }
        base = tmp;
    }
    int rootfd = open(base, O_PATH | O_DIRECTORY | O_CLOEXEC);
    int fd = rootfd >= 0 ? open_in_root(rootfd, path) : -1;
    if (fd < 0) {
        snprintf(out, n, "function unknown (%s is not in the root image)", path);
    } else {
        char fn[128];
        uint64_t off = 0;
        int pie = 0, r = elfsym_function(fd, rip, fn, sizeof(fn), &off, &pie);
        if (r == 1)
            snprintf(out, n, "in %s+0x%llx (%s)", fn, (unsigned long long)off, path);
        else if (pie)
            snprintf(out, n, "function unknown (%s is position-independent)", path);
        else
            snprintf(out, n, "function unknown (%s has no symbol there)", path);
        close(fd);
    }
    if (rootfd >= 0)
        close(rootfd);
    if (tmp[0])
        nftw(tmp, rm_one, 16, FTW_DEPTH | FTW_PHYS); /* invariant 2 */
}

void run_spin_describe(struct run_ctx *c, double limit_s, const struct run_exec *execs, unsigned n)
{
    struct platform *p = c->p;
    RW_ASSERT(p->outcome == PLATFORM_SPIN);
    struct spin_where w;
    char why[256], who[320], fn[600];
    if (spin_where(&c->vm, c->o->kernel, &w, why, sizeof(why)) < 0) { /* invariant 3 */
        snprintf(p->message, sizeof(p->message),
                 "no step for %g s of wall time (the spin limit) after step %llu; %s", limit_s,
                 (unsigned long long)p->step, why);
        return;
    }
    if (w.have_task)
        snprintf(who, sizeof(who), "pid %u (%s)", w.tgid, w.comm);
    else
        snprintf(who, sizeof(who), "an unknown process (%.250s)", why);
    if (w.have_task && w.pid != w.tgid)
        snprintf(who + strlen(who), sizeof(who) - strlen(who), " thread %u", w.pid);
    if (!w.user) {
        if (w.have_func)
            snprintf(fn, sizeof(fn), "in %s+0x%llx (guest kernel)", w.func,
                     (unsigned long long)w.func_off);
        else
            snprintf(fn, sizeof(fn), "function unknown");
    } else {
        const char *path = NULL;
        for (unsigned i = 0; w.have_task && i < n; i++)
            if (execs[i].pid == w.tgid || (!path && execs[i].pid == w.pid))
                path = execs[i].path;
        if (path)
            user_function(c, path, w.rip, fn, sizeof(fn));
        else
            snprintf(fn, sizeof(fn), "function unknown (no exec seen for the pid)");
    }
    /* docs/determinism.md: with memory-access points a user-mode loop that
     * touches a page another thread shares (or reads while another is
     * runnable) makes steps; one that still spins touches none. */
    const char *why_none = w.user && c->o->preempt_memory
                               ? " (--preempt memory: it touches no page another thread "
                                 "shares, or no other thread is runnable)"
                               : "";
    int m = snprintf(p->message, sizeof(p->message),
                     "no step for %g s of wall time (the spin limit) after step %llu: %.150s "
                     "spinning in %s mode at 0x%llx, %.250s",
                     limit_s, (unsigned long long)p->step, who, w.user ? "user" : "kernel",
                     (unsigned long long)w.rip, fn);
    if (m > 0 && (size_t)m < sizeof(p->message))
        snprintf(p->message + m, sizeof(p->message) - (size_t)m, "%s", why_none);
}
