/*
 * spin: see spin.h.
 *
 * How the current task is found without changing the guest kernel: the
 * guest kernel is uniprocessor (no per-CPU offset), so its symbol
 * current_task is a plain pointer to the running task_struct. The kernel has
 * no debug info, so the offsets of comm and pid in task_struct are found in
 * init_task, whose contents are known: comm is "swapper", pid and tgid are
 * 0, and real_parent, parent and group_leader all point to init_task itself
 * (real_parent and parent adjacent, group_leader 48 bytes after real_parent:
 * two list_heads between them), right after pid and tgid (the config has no
 * stack protector; with one, its canary sits between and is skipped).
 *
 * Invariants:
 *  1. Guest memory is read only through the vCPU's own page tables (its
 *     CR3, walked by gos_vread over vmm/gview.h), page by page, and only
 *     inside guest RAM: a bad pointer in the guest gives "unknown", never a
 *     read outside the mapping.
 *  2. The watchdog only reads the step counter and writes w->fired and
 *     run->immediate_exit; the vCPU thread alone changes the outcome.
 *  3. A pid, tgid or comm that does not look like one (pid above
 *     PID_MAX_LIMIT, comm not printable) is reported unknown.
 */
#include "vmm/spin.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "util/bytes.h"
#include "util/check.h"
#include "guestos/elfsym.h"
#include "vmm/gview.h"

#define SPIN_POLL_NS 50000000L
#define SPIN_PID_MAX 4194304u /* the kernel's PID_MAX_LIMIT */
#define SPIN_TASK_SCAN 16384  /* bytes of init_task searched for the offsets */

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void spin_kick(int sig)
{
    (void)sig;
}

static void *watch_main(void *arg)
{
    struct spin_watch *w = arg;
    uint64_t last = __atomic_load_n(w->step, __ATOMIC_RELAXED);
    double since = mono_s();
    struct timespec ts = {0, SPIN_POLL_NS};
    while (!w->stop) {
        nanosleep(&ts, NULL);
        uint64_t now = __atomic_load_n(w->step, __ATOMIC_RELAXED);
        double t = mono_s();
        if (now != last && !w->fired) {
            last = now;
            since = t;
            continue;
        }
        if (!w->fired && t - since < w->limit_s)
            continue;
        w->fired = 1; /* invariant 2 */
        w->run->immediate_exit = 1;
        pthread_kill(w->target, SIGUSR1); /* again each poll until the vCPU thread stops us */
    }
    return NULL;
}

int spin_watch_start(struct spin_watch *w, const uint64_t *step, double limit_s,
                     struct kvm_run *run)
{
    memset(w, 0, sizeof(*w));
    if (limit_s <= 0)
        return 0;
    w->step = step;
    w->limit_s = limit_s;
    w->run = run;
    w->target = pthread_self();
    struct sigaction sa = {.sa_handler = spin_kick}; /* no SA_RESTART: KVM_RUN returns EINTR */
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGUSR1, &sa, NULL) < 0)
        return -1;
    int e = pthread_create(&w->thread, NULL, watch_main, w);
    if (e) {
        errno = e;
        return -1;
    }
    w->on = 1;
    return 0;
}

void spin_watch_stop(struct spin_watch *w)
{
    if (!w->on)
        return;
    w->stop = 1;
    pthread_join(w->thread, NULL);
    w->on = 0;
}

/* Read n bytes at guest virtual address gva through the vCPU's own page
 * tables (its CR3), walked by guestos (invariant 1). 0 or -1. */
static int read_gva(struct kvm_vm *vm, uint64_t gva, void *out, size_t n)
{
    struct kvm_sregs sr;
    if (ioctl(vm->vcpu_fd, KVM_GET_SREGS, &sr) < 0)
        return -1;
    return gview_read(vm, sr.cr3, gva, out, n);
}

struct task_layout {
    uint64_t current_task, init_task;
    size_t comm_off, pid_off;
    int ok;
};

/* Find the offsets in init_task (see the design note). */
static int find_layout(struct kvm_vm *vm, const char *kernel, struct task_layout *l, char *why,
                       size_t n)
{
    memset(l, 0, sizeof(*l));
    if (elfsym_address(kernel, "current_task", &l->current_task) != 1 ||
        elfsym_address(kernel, "init_task", &l->init_task) != 1) {
        snprintf(why, n, "the guest kernel %s names no current_task/init_task", kernel);
        return -1;
    }
    uint8_t buf[SPIN_TASK_SCAN]; /* 16 KiB on the stack, not static: reentrant */
    size_t len = SPIN_TASK_SCAN;
    while (len >= 4096 && read_gva(vm, l->init_task, buf, len) < 0)
        len -= 4096;
    if (len < 4096) {
        snprintf(why, n, "cannot read init_task in guest memory");
        return -1;
    }
    const uint8_t *c = memmem(buf, len, "swapper", 7);
    if (!c || (size_t)(c - buf) + 8 > len || (c[7] != 0 && c[7] != '/')) {
        snprintf(why, n, "no \"swapper\" in init_task");
        return -1;
    }
    l->comm_off = (size_t)(c - buf);
    for (size_t off = 16; off + 56 <= len; off += 8) {
        if (bytes_get_u64(buf + off) != l->init_task ||
            bytes_get_u64(buf + off + 8) != l->init_task ||
            bytes_get_u64(buf + off + 48) != l->init_task)
            continue;
        if (bytes_get_u64(buf + off - 8) == 0)
            l->pid_off = off - 8;
        else if (bytes_get_u64(buf + off - 16) == 0)
            l->pid_off = off - 16; /* a stack canary between tgid and real_parent */
        else
            continue;
        l->ok = 1;
        return 0;
    }
    snprintf(why, n, "no real_parent/parent/group_leader in init_task");
    return -1;
}

static int printable(const char *s)
{
    if (!*s)
        return 0;
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || (unsigned char)*s > 0x7e)
            return 0;
    return 1;
}

int spin_where(struct kvm_vm *vm, const char *kernel_path, struct spin_where *w, char *why,
               size_t n)
{
    memset(w, 0, sizeof(*w));
    why[0] = 0;
    struct kvm_regs regs;
    struct kvm_sregs sregs;
    if (ioctl(vm->vcpu_fd, KVM_GET_REGS, &regs) < 0 ||
        ioctl(vm->vcpu_fd, KVM_GET_SREGS, &sregs) < 0) {
        snprintf(why, n, "cannot read the vCPU's registers: %s", strerror(errno));
        return -1;
    }
    w->rip = regs.rip;
    w->user = (sregs.cs.selector & 3) == 3;
    if (!w->user) {
        int fd = open(kernel_path, O_RDONLY | O_CLOEXEC);
        int pie = 0;
        if (fd >= 0) {
            w->have_func =
                elfsym_function(fd, w->rip, w->func, sizeof(w->func), &w->func_off, &pie) == 1;
            close(fd);
        }
    }
    struct task_layout l;
    if (find_layout(vm, kernel_path, &l, why, n) < 0)
        return 0;
    uint8_t ptr[8], ids[8];
    char comm[17] = {0};
    uint64_t task;
    if (read_gva(vm, l.current_task, ptr, 8) < 0 || !(task = bytes_get_u64(ptr)) ||
        read_gva(vm, task + l.pid_off, ids, 8) < 0 ||
        read_gva(vm, task + l.comm_off, comm, 16) < 0) {
        snprintf(why, n, "cannot read the current task in guest memory");
        return 0;
    }
    w->pid = bytes_get_u32(ids);
    w->tgid = bytes_get_u32(ids + 4);
    if (w->pid >= SPIN_PID_MAX || w->tgid >= SPIN_PID_MAX || !printable(comm)) { /* invariant 3 */
        snprintf(why, n, "the current task does not look like one (pid %u)", w->pid);
        return 0;
    }
    memcpy(w->comm, comm, sizeof(w->comm));
    w->have_task = 1;
    return 0;
}

int spin_layout_find(struct kvm_vm *vm, const char *kernel_path, struct spin_layout *l, char *why,
                     size_t n)
{
    struct task_layout t;
    if (find_layout(vm, kernel_path, &t, why, n) < 0)
        return -1;
    *l = (struct spin_layout){
        .current_task = t.current_task, .pid_off = t.pid_off, .comm_off = t.comm_off};
    return 0;
}
