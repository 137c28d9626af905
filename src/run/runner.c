/*
 * runner: see runner.h.
 *
 * Output of the job reaches the user as it is produced: each OUTPUT record
 * is written to our stdout or stderr at the step it arrives. Kernel console
 * lines are kept in a small ring and shown when the guest dies abnormally.
 * The trace hash is SHA-256 over (step as 8 little-endian bytes, record
 * bytes) for every record in order: two runs with equal trace hashes saw the
 * same events at the same steps.
 */

#include "util/fail.h"
#include "run/runner.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <sys/random.h>
#include <jansson.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "util/hash.h"
#include "vmm/boot.h"
#include "vmm/cpuid.h"
#include "vmm/initrd.h"
#include "vmm/kvm.h"
#include "vmm/vcpu.h"
#include "image/image.h"
#include "home/homelock.h"
#include "trace/keyframe.h"
#include "run/session.h"
#include "run/kfcap.h"
#include "run/job.h"
#include "home/rundir.h"
#include "trace/compare.h"
#include "run/spec.h"

#define KERNEL_CMDLINE "console=rewind lpj=1000000 io_delay=none panic=-1 quiet"
#define CONSOLE_RING 8192

struct kvm_run *volatile run_active_kvm_run;

struct sink {
    hash_ctx *trace;
    hash_ctx *output; /* the job's output: (fd, length, bytes) per record */
    struct trace_writer *file;
    int show_console, quiet;
    char console[CONSOLE_RING];
    size_t console_len;
    char init_error[512];
    FILE *states;        /* --state-log: per-step register hashes, periodic RAM hashes */
    uint64_t ram_every;
    struct kvm_vm *vm;
    struct kfcap *kf;    /* NULL: no keyframes */
    struct platform *p;
    struct session *session; /* shell: input at idle steps */
    int inspected, inspect_status;
    uint64_t kf_every;
    int kf_due;          /* take a keyframe at the end of this step (the job starts) */
};

/* Keyframes are taken at steps that depend only on the spec: every
 * kf_every steps, and at the step the job starts. A failure to write one
 * (disk full) is reported once and the run goes on without keyframes. */
static void keyframe_step(struct sink *s, struct platform *p)
{
    if (!s->kf || !s->kf->writing || p->outcome != PLATFORM_RUNNING)
        return;
    if (!s->kf_due && p->step % s->kf_every != 0)
        return;
    s->kf_due = 0;
    char err[512];
    if (kfcap_take(s->kf, p, err, sizeof(err)) < 0) {
        fprintf(stderr, "rewind: warning: keyframes stop at step %llu: %s\n",
                (unsigned long long)p->step, err);
        kf_close(&s->kf->w);
        s->kf->writing = 0;
    }
}

/* State log entry: u64 step | u64 first 8 bytes of a SHA-256; the top bit of
 * step marks a RAM hash, otherwise it is the hash of the general registers. */
static void on_step(void *ctx, struct platform *p)
{
    struct sink *s = ctx;
    keyframe_step(s, p);
    if (!s->states)
        return;
    struct kvm_regs regs;
    if (ioctl(s->vm->vcpu_fd, KVM_GET_REGS, &regs) < 0)
        return;
    hash256 h;
    hash_buf(&regs, sizeof(regs), &h);
    uint64_t e[2] = {p->step, 0};
    memcpy(&e[1], h.b, 8);
    fwrite(e, sizeof(e), 1, s->states);
    if (s->ram_every && p->step % s->ram_every == 0 && kvm_ram_hash(s->vm, h.b) == 0) {
        e[0] = p->step | 1ull << 63;
        memcpy(&e[1], h.b, 8);
        fwrite(e, sizeof(e), 1, s->states);
    }
}

#define fail util_fail

static void write_all(int fd, const uint8_t *p, size_t n)
{
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return; /* a closed pipe must not stop the run */
        p += w;
        n -= (size_t)w;
    }
}

static void console_keep(struct sink *s, const uint8_t *p, size_t n)
{
    if (n >= CONSOLE_RING) {
        p += n - CONSOLE_RING / 2;
        n = CONSOLE_RING / 2;
    }
    if (s->console_len + n > CONSOLE_RING) {
        size_t drop = s->console_len + n - CONSOLE_RING;
        memmove(s->console, s->console + drop, s->console_len - drop);
        s->console_len -= drop;
    }
    memcpy(s->console + s->console_len, p, n);
    s->console_len += n;
}

static void on_record(void *ctx, uint64_t step, const struct rewind_record *r,
                      const uint8_t *payload, size_t len)
{
    struct sink *s = ctx;
    uint8_t le[8];
    for (int i = 0; i < 8; i++)
        le[i] = (uint8_t)(step >> (8 * i));
    hash_update(s->trace, le, 8);
    hash_update(s->trace, r, sizeof(*r));
    hash_update(s->trace, payload, len);
    if (s->file) {
        trace_append(s->file, step, r);
        if (r->kind == REWIND_REC_OUTPUT || s->file->count % 64 == 0)
            trace_flush(s->file);
    }
    switch (r->kind) {
    case REWIND_REC_OUTPUT:
        if (s->output) {
            uint32_t hd[2] = {(uint32_t)r->aux, (uint32_t)len};
            hash_update(s->output, hd, sizeof(hd));
            hash_update(s->output, payload, len);
        }
        if (!s->quiet)
            write_all(r->aux == 2 ? 2 : 1, payload, len);
        break;
    case REWIND_REC_CONSOLE:
        console_keep(s, payload, len);
        if (s->show_console)
            write_all(2, payload, len);
        break;
    case REWIND_REC_INIT:
        if (r->aux == REWIND_INIT_JOB_START)
            s->kf_due = 1;
        if (r->aux == REWIND_INIT_INSPECT_DONE && s->p) {
            char num[16];
            snprintf(num, sizeof(num), "%.*s", (int)(len < 15 ? len : 15), payload);
            s->inspected = 1;
            s->inspect_status = atoi(num);
            s->p->outcome = PLATFORM_STOPPED;
            snprintf(s->p->message, sizeof(s->p->message), "inspection ended");
        }
        if (r->aux == REWIND_INIT_ERROR)
            snprintf(s->init_error, sizeof(s->init_error), "%.*s", (int)len, payload);
        break;
    default:
        break;
    }
}

static double now_wall(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* REWIND_TIMING=1: print the wall time of each phase of a run on stderr. */
static void phase(const char *name)
{
    static double last;
    static int on = -1;
    if (on < 0)
        on = getenv("REWIND_TIMING") != NULL;
    if (!on)
        return;
    double t = now_wall();
    if (last > 0)
        fprintf(stderr, "rewind: timing: %-10s %.3f s\n", name, t - last);
    last = t;
}

const char *run_outcome_word(enum platform_outcome o)
{
    switch (o) {
    case PLATFORM_EXITED:
        return "exited";
    case PLATFORM_NOT_FOUND:
        return "not-found";
    case PLATFORM_NOT_EXEC:
        return "not-executable";
    case PLATFORM_INIT_FAILED:
        return "init-failed";
    case PLATFORM_PANIC:
        return "panic";
    case PLATFORM_GUEST_ERROR:
        return "guest-error";
    case PLATFORM_STALLED:
        return "stalled";
    case PLATFORM_TIMEOUT:
        return "timeout";
    case PLATFORM_STOPPED:
        return "stopped";
    default:
        return "running";
    }
}

static int exit_code_of(const struct platform *p)
{
    switch (p->outcome) {
    case PLATFORM_EXITED: {
        int st = (int)p->job_status;
        if (WIFEXITED(st))
            return WEXITSTATUS(st);
        if (WIFSIGNALED(st))
            return 128 + WTERMSIG(st);
        return RUN_EXIT_INTERNAL;
    }
    case PLATFORM_NOT_FOUND:
        return RUN_EXIT_NOT_FOUND;
    case PLATFORM_NOT_EXEC:
        return RUN_EXIT_NOT_EXEC;
    case PLATFORM_PANIC:
        return RUN_EXIT_PANIC;
    case PLATFORM_TIMEOUT:
        return RUN_EXIT_TIMEOUT;
    case PLATFORM_INIT_FAILED:
        return RUN_EXIT_INTERNAL;
    default:
        return RUN_EXIT_GUEST_ERROR;
    }
}

uint64_t run_hole_bit(const char *name)
{
    if (!strcmp(name, "host-tsc"))
        return REWIND_HOLE_HOST_TSC;
    if (!strcmp(name, "timer-at-host-exit"))
        return PLATFORM_HOLE_TIMER_AT_HOST_EXIT;
    if (!strcmp(name, "host-rng"))
        return PLATFORM_HOLE_HOST_RNG;
    return 0;
}

unsigned run_snap_hole_bit(const char *name)
{
    if (!strcmp(name, "kf-no-io-completion"))
        return SNAP_HOLE_NO_IO_COMPLETION;
    if (!strcmp(name, "restore-no-tlb-flush"))
        return SNAP_HOLE_NO_TLB_FLUSH;
    return 0;
}

/* The test hole timer-at-host-exit needs host-caused exits: a thread that
 * interrupts the vCPU thread every 1 ms of host time (more often can starve
 * the guest on a slow host). */
struct kicker {
    pthread_t thread, target;
    volatile int stop;
};

static void kick_handler(int sig)
{
    (void)sig;
}

static void *kicker_main(void *arg)
{
    struct kicker *k = arg;
    struct timespec ts = {0, 1000000};
    while (!k->stop) {
        nanosleep(&ts, NULL);
        pthread_kill(k->target, SIGUSR1);
    }
    return NULL;
}

static void seed_bytes(uint64_t seed, uint8_t out[32])
{
    char buf[64];
    int n = snprintf(buf, sizeof(buf), "rewind-rng-seed:%llu", (unsigned long long)seed);
    hash256 h;
    hash_buf(buf, (size_t)n, &h);
    memcpy(out, h.b, 32);
}

static int hash_of(const struct run_opts *o, const char *path, char hex[65], const char *what,
                   char *err, size_t errlen)
{
    hash256 h;
    char why[512];
    if (image_hash_file(path, o->home, &h, why, sizeof(why)) < 0)
        return fail(err, errlen, "cannot read the %s: %s", what, why);
    hash_hex(&h, hex);
    return 0;
}

static char *manifest_json(const char *spec_json, const struct run_result *r, uint64_t events,
                           const char *name)
{
    json_t *m = json_object();
    json_error_t je;
    json_object_set_new(m, "version", json_integer(1));
    json_object_set_new(m, "id", json_string(r->id));
    json_object_set_new(m, "state", json_string("complete"));
    json_object_set_new(m, "spec", json_loads(spec_json, 0, &je));
    json_object_set_new(m, "parent", json_null()); /* replaced below for forks */
    if (name)
        json_object_set_new(m, "name", json_string(name));
    json_object_set_new(m, "outcome", json_string(run_outcome_word(r->outcome)));
    json_object_set_new(m, "status", json_integer((json_int_t)r->job_status));
    json_object_set_new(m, "exit_code", json_integer(r->exit_code));
    json_object_set_new(m, "message", json_string(r->message));
    json_object_set_new(m, "steps", json_integer((json_int_t)r->steps));
    json_object_set_new(m, "virtual_ns", json_integer((json_int_t)r->virt_ns));
    json_object_set_new(m, "wall_s", json_real(r->wall_s));
    json_object_set_new(m, "events", json_integer((json_int_t)events));
    json_object_set_new(m, "trace_hash", json_string(r->trace_hash));
    json_object_set_new(m, "ram_hash", json_string(r->ram_hash));
    json_object_set_new(m, "output_hash", json_string(r->output_hash));
    json_object_set_new(m, "created", json_integer((json_int_t)time(NULL)));
    json_object_set_new(m, "keyframes", json_integer((json_int_t)r->keyframes));
    json_object_set_new(m, "keyframe_bytes", json_integer((json_int_t)r->kf_bytes));
    json_object_set_new(m, "keyframe_every", json_integer((json_int_t)r->kf_every));
    json_object_set_new(m, "keyframe_capture_s", json_real(r->kf_capture_s));
    if (r->from_step || r->parent[0]) {
        json_object_set_new(m, "parent", json_string(r->parent));
        json_object_set_new(m, "from_step", json_integer((json_int_t)r->from_step));
        if (r->fork_step)
            json_object_set_new(m, "fork_step", json_integer((json_int_t)r->fork_step));
    }
    char *out = json_dumps(m, JSON_SORT_KEYS | JSON_INDENT(2));
    json_decref(m);
    if (!out)
        return NULL;
    size_t n = strlen(out);
    char *nl = realloc(out, n + 2);
    if (!nl)
        return out;
    nl[n] = '\n';
    nl[n + 1] = 0;
    return nl;
}

/* A run of a spec that was run before must equal it. If the stored run
 * differs, this is a determinism violation: keep the stored run, publish
 * this one as <id>~N, and say where the two traces part. */
static void check_against_stored(const struct run_opts *o, struct run_result *r,
                                 struct rundir *dir, char *name, size_t n)
{
    snprintf(name, n, "%s", r->id);
    char path[4200], mine[4200];
    snprintf(path, sizeof(path), "%s/runs/%s/manifest.json", o->home, r->id);
    json_error_t je;
    json_t *m = json_load_file(path, 0, &je);
    if (!m)
        return;
    r->had_stored = 1;
    const char *th = json_string_value(json_object_get(m, "trace_hash"));
    const char *rh = json_string_value(json_object_get(m, "ram_hash"));
    const char *oc = json_string_value(json_object_get(m, "outcome"));
    json_int_t steps = json_integer_value(json_object_get(m, "steps"));
    int same = th && rh && !strcmp(th, r->trace_hash) && !strcmp(rh, r->ram_hash) &&
               (uint64_t)steps == r->steps;
    /* A run cut by --timeout ended at a step chosen by wall time: it is no
     * reference, and comparing with one proves nothing. A complete run
     * replaces a cut one; a cut run is kept beside a complete one. */
    int stored_cut = oc && !strcmp(oc, "timeout"), cut = r->outcome == PLATFORM_TIMEOUT;
    json_decref(m);
    if (same || (stored_cut && !cut))
        return;
    if (cut) {
        r->had_stored = 0;
        for (int i = 1; i < 1000; i++) {
            snprintf(name, n, "%s~%d", r->id, i);
            snprintf(path, sizeof(path), "%s/runs/%s", o->home, name);
            if (access(path, F_OK) != 0)
                break;
        }
        return;
    }
    for (int i = 1; i < 1000; i++) {
        snprintf(name, n, "%s~%d", r->id, i);
        snprintf(path, sizeof(path), "%s/runs/%s", o->home, name);
        if (access(path, F_OK) != 0)
            break;
    }
    snprintf(path, sizeof(path), "%s/runs/%s/trace", o->home, r->id);
    snprintf(mine, sizeof(mine), "%s/trace", dir->staging);
    struct trace_difference d;
    r->diverged = 1;
    if (compare_traces(path, mine, &d) == 0 && d.differ)
        snprintf(r->divergence, sizeof(r->divergence),
                 "this run differs from the stored run %s of the same spec: their traces part "
                 "at event %llu (step %llu there, step %llu here); kept as %s",
                 r->id, (unsigned long long)d.index, (unsigned long long)d.step_a,
                 (unsigned long long)d.step_b, name);
    else
        snprintf(r->divergence, sizeof(r->divergence),
                 "this run differs from the stored run %s of the same spec (same trace, "
                 "%s); kept as %s",
                 r->id, (uint64_t)steps != r->steps ? "other step count" : "other final RAM",
                 name);
}

/* Keep the root image in the store as images/<hash>.erofs, so that replay,
 * show and later runs find it by hash even when the user's file (an erofs
 * root used in place) moves or changes. A hard link when possible, else a
 * copy (temp file + rename). */
static int keep_image(const struct run_opts *o, const struct image *img, char *err, size_t errlen)
{
    char want[4200], tmp[4300];
    snprintf(want, sizeof(want), "%s/images/%s.erofs", o->home, img->hex);
    if (access(want, R_OK) == 0 || link(img->path, want) == 0)
        return 0;
    snprintf(tmp, sizeof(tmp), "%s.tmp.%d", want, (int)getpid());
    int in = open(img->path, O_RDONLY | O_CLOEXEC);
    int out = in >= 0 ? open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644) : -1;
    int ok = in >= 0 && out >= 0;
    char buf[1 << 16];
    ssize_t n;
    while (ok && (n = read(in, buf, sizeof(buf))) != 0)
        ok = n > 0 && write(out, buf, (size_t)n) == n;
    ok = ok && fsync(out) == 0;
    if (in >= 0)
        close(in);
    if (out >= 0 && close(out) != 0)
        ok = 0;
    if (!ok || rename(tmp, want) != 0) {
        unlink(tmp);
        return fail(err, errlen, "cannot keep the root image in %s: %s", want, strerror(errno));
    }
    return 0;
}

static int build_initrd(const struct run_opts *o, struct initrd *rd, char *err, size_t errlen)
{
    size_t jlen = 0;
    char *job = job_encode(o->argv, o->env, o->cwd, &jlen);
    int rc = -1;
    if (!job)
        return fail(err, errlen, "out of memory");
    memset(rd, 0, sizeof(*rd));
    if (initrd_add_dir(rd, "dev", 0755) < 0 || initrd_add_dir(rd, "proc", 0755) < 0 ||
        initrd_add_dir(rd, "lower", 0755) < 0 || initrd_add_dir(rd, "rw", 0755) < 0 ||
        initrd_add_dir(rd, "newroot", 0755) < 0 || initrd_add_file(rd, "job", 0644, job, jlen) < 0)
        fail(err, errlen, "out of memory building the initramfs");
    else if (initrd_add_host_file(rd, "init", 0755, o->init) < 0)
        fail(err, errlen, "cannot read rewind-init %s: %s", o->init, strerror(errno));
    else if (initrd_finish(rd) < 0)
        fail(err, errlen, "out of memory building the initramfs");
    else
        rc = 0;
    free(job);
    return rc;
}

static int on_idle(void *ctx, struct platform *p)
{
    struct sink *s = ctx;
    return s->session ? session_on_idle(s->session, p) : 0;
}

/* Run to o->inspect_at, then ask the guest to inspect; the caller runs on
 * until the inspector is done. */
static int start_inspection(const struct run_opts *o, struct platform *p, struct sink *sink,
                            struct session *sess, const char *staging, char *err, size_t errlen)
{
    struct vcpu_limits lim = {.abort = o->abort, .max_steps = o->inspect_at};
    if (p->step < o->inspect_at && vcpu_run(p, &lim) < 0)
        return fail(err, errlen, "%s", p->message);
    if (p->outcome != PLATFORM_RUNNING || p->step != o->inspect_at)
        return fail(err, errlen, "the run ended at step %llu, before step %llu (%s)",
                    (unsigned long long)p->step, (unsigned long long)o->inspect_at,
                    run_outcome_word(p->outcome));
    char req[REWIND_SHARED_REQ_MAX];
    int n = snprintf(req, sizeof(req), "%s%c%llu%c%s", o->inspect_kind, 0,
                     (unsigned long long)o->inspect_pid, 0,
                     o->inspect_path ? o->inspect_path : "");
    if (n < 0 || (size_t)n + 1 > sizeof(req))
        return fail(err, errlen, "the path is too long (at most %d bytes)",
                    REWIND_SHARED_REQ_MAX - 32);
    if (!strcmp(o->inspect_kind, "shell")) {
        char ip[4200];
        snprintf(ip, sizeof(ip), "%s/inputs", staging);
        int r = o->session_replay ? session_open_replay(sess, o->session_replay, err, errlen)
                                  : session_open_live(sess, o->session_fd, ip, err, errlen);
        if (r < 0)
            return -1;
        sess->abort = o->abort;
        sink->session = sess;
        p->on_idle = on_idle;
    }
    sink->quiet = o->session_replay ? 1 : 0;
    if (platform_inspect(p, req, (size_t)n + 1) < 0)
        return fail(err, errlen, "the guest cannot be inspected at step %llu (before its "
                    "platform is up)", (unsigned long long)p->step);
    return 0;
}

/* Feed the entries of the trace at path with step <= upto into the sink (the
 * trace hash, and the new trace file when the sink has one): the history a
 * run restored from a keyframe shares with its source. */
static int replay_prefix(const char *path, uint64_t upto, struct sink *s, char *err,
                         size_t errlen)
{
    struct trace_reader r;
    if (trace_open_read(&r, path) != 0)
        return fail(err, errlen, "cannot read the trace %s", path);
    struct trace_entry e;
    while (trace_next(&r, &e) == 1 && e.step <= upto) {
        uint8_t le[8];
        for (int i = 0; i < 8; i++)
            le[i] = (uint8_t)(e.step >> (8 * i));
        hash_update(s->trace, le, 8);
        hash_update(s->trace, &e.rec, sizeof(e.rec));
        hash_update(s->trace, e.payload, e.payload_len);
        if (s->file)
            trace_append(s->file, e.step, (const struct rewind_record *)r.buf);
        if (s->output && e.rec.kind == REWIND_REC_OUTPUT) {
            uint32_t hd[2] = {(uint32_t)e.rec.aux, e.payload_len};
            hash_update(s->output, hd, sizeof(hd));
            hash_update(s->output, e.payload, e.payload_len);
        }
    }
    int torn = r.torn;
    trace_close_read(&r);
    if (torn)
        return fail(err, errlen, "the trace %s is torn before step %llu", path,
                    (unsigned long long)upto);
    return 0;
}

/* Restore the keyframe of o->from_run at or before o->from_step into a fresh
 * VM and give the new run the source's trace up to it. */
static int start_from_keyframe(const struct run_opts *o, struct platform *p, struct kfcap *kf,
                               struct sink *sink, struct run_result *res, char *err,
                               size_t errlen)
{
    struct kf_chain c;
    size_t link, idx;
    if (kf_chain_load(o->home, o->from_run, &c, err, errlen) < 0)
        return -1;
    int rc = -1;
    res->from_step = 0;
    res->parent[0] = 0;
    if (kf_chain_find(&c, o->from_step, &link, &idx) < 0) {
        fail(err, errlen, "run %s has no keyframe at or before step %llu", o->from_run,
             (unsigned long long)o->from_step);
        goto out;
    }
    snprintf(res->parent, sizeof(res->parent), "%s", o->from_run);
    if (kfcap_restore(kf, p, &c, link, idx, err, errlen) < 0)
        goto out;
    res->from_step = p->step;
    res->fork_step = o->fork_step;
    char tp[4200];
    snprintf(tp, sizeof(tp), "%s/runs/%s/trace", o->home, o->from_run);
    rc = replay_prefix(tp, p->step, sink, err, errlen);
out:
    kf_chain_free(&c);
    return rc;
}

/* The restore differential, in place: restore sampled keyframes of this run
 * into the same VM, run each to the end, and compare steps, outcome, trace
 * hash and RAM hash with the run itself. Prints one line per keyframe. */
static int verify_restores(const struct run_opts *o, struct run_result *res, struct platform *p,
                           struct sink *sink, struct rundir *dir, struct kfcap *kf, char *err,
                           size_t errlen)
{
    const char *name = strrchr(dir->staging, '/');
    name = name ? name + 1 : dir->staging;
    trace_flush(&dir->trace);
    fflush(kf->w.f);
    struct kf_chain c;
    if (kf_chain_load(o->home, name, &c, err, errlen) < 0)
        return -1;
    size_t total = 0;
    for (size_t l = 0; l < c.nlinks; l++)
        total += c.link[l].count;
    uint64_t want = o->verify_restores < total ? o->verify_restores : total;
    char tp[4200];
    snprintf(tp, sizeof(tp), "%s/trace", dir->staging);
    struct trace_writer *file = sink->file;
    int quiet = sink->quiet, rc = 0;
    sink->file = NULL;
    sink->quiet = 1;
    kf->writing = 0;
    for (uint64_t j = 0; j < want && rc == 0; j++) {
        /* Evenly spaced over the chain, last keyframe included. */
        size_t pick = want == 1 ? total - 1 : (size_t)(j * (total - 1) / (want - 1)), l = 0;
        while (pick >= c.link[l].count)
            pick -= c.link[l++].count;
        /* First restore and run a little (the same process stays current,
         * so its CR3 is the one restored next): the second restore below is
         * the case a missed TLB flush would break (docs/determinism.md rule 10). */
        if (kfcap_restore(kf, p, &c, l, pick, err, errlen) < 0) {
            rc = -1;
            break;
        }
        struct vcpu_limits warm = {.abort = o->abort, .max_steps = p->step + 64};
        sink->trace = hash_new();
        if (!sink->trace || vcpu_run(p, &warm) < 0) {
            rc = fail(err, errlen, "%s", p->message);
            break;
        }
        hash256 scratch;
        hash_final(sink->trace, &scratch);
        sink->trace = NULL;
        if (kfcap_restore(kf, p, &c, l, pick, err, errlen) < 0) {
            rc = -1;
            break;
        }
        uint64_t from = p->step;
        sink->trace = hash_new();
        if (!sink->trace || replay_prefix(tp, from, sink, err, errlen) < 0) {
            rc = -1;
            break;
        }
        struct vcpu_limits lim = {.abort = o->abort};
        if (vcpu_run(p, &lim) < 0) {
            rc = fail(err, errlen, "%s", p->message);
            break;
        }
        hash256 th, rh;
        char thx[65], rhx[65];
        hash_final(sink->trace, &th);
        sink->trace = NULL;
        hash_hex(&th, thx);
        if (kfcap_ram_hash(kf, rh.b) < 0) {
            rc = fail(err, errlen, "cannot hash guest RAM");
            break;
        }
        hash_hex(&rh, rhx);
        res->restores_checked++;
        const char *why = p->step != res->steps           ? "other step count"
                          : p->outcome != res->outcome    ? "other outcome"
                          : p->job_status != res->job_status ? "other status"
                          : strcmp(thx, res->trace_hash) ? "other trace"
                          : strcmp(rhx, res->ram_hash)   ? "other final RAM"
                                                          : NULL;
        if (why) {
            res->restores_failed++;
            fprintf(stderr, "rewind: restore at step %llu: DIFFERS (%s: %llu steps, %s, trace "
                    "%.12s, RAM %.12s)\n", (unsigned long long)from, why,
                    (unsigned long long)p->step, run_outcome_word(p->outcome), thx, rhx);
        } else {
            fprintf(stderr, "rewind: restore at step %llu: identical to the end (step %llu)\n",
                    (unsigned long long)from, (unsigned long long)p->step);
        }
    }
    kf_chain_free(&c);
    sink->file = file;
    sink->quiet = quiet;
    res->restore_s = kf->restore_s;
    return rc;
}

int run_execute(const struct run_opts *o, struct run_result *res, char *err, size_t errlen)
{
    memset(res, 0, sizeof(*res));
    res->exit_code = RUN_EXIT_INTERNAL;
    struct run_spec spec = {
        .argv = o->argv, .env = o->env, .cwd = o->cwd, .mem_mib = o->mem_mib, .seed = o->seed,
        .schedule = 0, .test_holes = o->test_holes, .quantum_ns = o->quantum_ns, .epoch_s = o->epoch_s, .cpu_model = NULL,
        .perturb = &o->sched,
        .inspect_kind = o->inspect_kind && !strcmp(o->inspect_kind, "shell") ? "shell" : NULL,
        .inspect_pid = o->inspect_pid, .inspect_at = o->inspect_at, .inputs_hash = "",
    };
    struct session sess;
    memset(&sess, 0, sizeof(sess));
    sess.fd = -1;
    char inputs_hex[65] = "";
    struct image img;
    phase("start");
    /* gc must not take pages or images this run writes but has not named yet. */
    int lockfd = homelock_take(o->home, 0, 1, err, errlen);
    if (lockfd < 0)
        return -1;
    res->exit_code = RUN_EXIT_ROOT;
    if (image_prepare(o->root, o->home, &img, err, errlen) < 0) {
        homelock_release(lockfd);
        return -1;
    }
    phase("image");
    res->exit_code = RUN_EXIT_KERNEL;
    if (hash_of(o, o->kernel, spec.kernel_hash, "guest kernel", err, errlen) < 0 ||
        hash_of(o, o->init, spec.init_hash, "rewind-init", err, errlen) < 0 ||
        (memcpy(spec.image_hash, img.hex, sizeof(spec.image_hash)),
         keep_image(o, &img, err, errlen) < 0)) {
        homelock_release(lockfd);
        return -1;
    }

    struct initrd rd;
    struct kvm_vm vm;
    struct platform *p = NULL;
    struct sink sink = {.show_console = o->show_console, .quiet = o->quiet};
    char *spec_json = NULL;
    char model[64];
    struct rundir dir = {0};
    struct store *store = NULL;
    struct kfcap kf;
    int kf_ready = 0;
    int rc = -1;
    memset(&rd, 0, sizeof(rd));
    memset(&vm, 0, sizeof(vm));
    vm.kvm_fd = vm.vm_fd = vm.vcpu_fd = -1;
    phase("hashes");
    if (build_initrd(o, &rd, err, errlen) < 0) {
        res->exit_code = RUN_EXIT_INTERNAL;
        goto out;
    }
    if (kvm_open(&vm, o->mem_mib << 20, err, errlen) < 0) {
        res->exit_code = RUN_EXIT_NO_KVM;
        goto out;
    }
    if (cpuid_model_name(vm.kvm_fd, model, sizeof(model)) < 0) {
        fail(err, errlen, "cannot read the host's CPUID from KVM");
        goto out;
    }
    spec.cpu_model = model;
    spec_id(&spec, res->id);
    spec_json = spec_to_json(&spec);
    if (rundir_begin(&dir, o->home, res->id, spec_json, err, errlen) < 0)
        goto out;
    sink.file = &dir.trace;
    sink.vm = &vm;
    if (o->state_log) {
        char sp[4200];
        snprintf(sp, sizeof(sp), "%s/states", dir.staging);
        sink.states = fopen(sp, "we");
        sink.ram_every = o->state_log;
    }
    res->exit_code = RUN_EXIT_INTERNAL;
    if (kvm_map_image(&vm, img.path, err, errlen) < 0)
        goto out;
    p = malloc(sizeof(*p));
    sink.trace = hash_new();
    sink.output = hash_new();
    if (!p || !sink.trace || !sink.output) {
        fail(err, errlen, "out of memory");
        goto out;
    }
    platform_init(p, &vm, o->quantum_ns, (uint64_t)o->epoch_s * 1000000000ull, o->seed);
    p->test_holes = o->test_holes;
    p->sched = o->sched;
    p->sched.seed = o->seed;
    p->on_record = on_record;
    p->on_step = on_step;
    p->record_ctx = &sink;
    sink.p = p;
    if (!o->no_keyframes || o->from_run || o->verify_restores) {
        char sp[4200];
        snprintf(sp, sizeof(sp), "%s/store", o->home);
        if (store_open(sp, &store, err, errlen) < 0)
            goto out;
        kf_ready = 1; /* kfcap_finish frees whatever kfcap_init allocated */
        if (kfcap_init(&kf, &vm, store, err, errlen) < 0)
            goto out;
        kf.holes = o->snap_holes;
    }
    const char *parent = NULL;
    uint64_t parent_upto = 0;
    if (o->from_run) {
        if (start_from_keyframe(o, p, &kf, &sink, res, err, errlen) < 0) {
            if (!res->from_step && !res->parent[0])
                res->exit_code = RUN_EXIT_USAGE; /* no such keyframe: the user's STEP or RUN */
            goto out;
        }
        parent = o->from_run;
        parent_upto = res->from_step;
    } else {
        struct boot_config bc = {.kernel_path = o->kernel, .cmdline = KERNEL_CMDLINE,
                                 .initrd = rd.data, .initrd_size = rd.size, .with_image = 1};
        seed_bytes(o->seed, bc.rng_seed);
        if (o->test_holes & PLATFORM_HOLE_HOST_RNG && getrandom(bc.rng_seed, 32, 0) != 32) {
            fail(err, errlen, "getrandom failed");
            goto out;
        }
        if (boot_setup(&vm, &bc, err, errlen) < 0) {
            res->exit_code = RUN_EXIT_KERNEL;
            goto out;
        }
    }
    if (!o->no_keyframes) {
        char kp[4200];
        snprintf(kp, sizeof(kp), "%s/keyframes", dir.staging);
        if (kfcap_open(&kf, kp, parent, parent_upto, err, errlen) < 0)
            goto out;
        sink.kf = &kf;
        sink.kf_every = o->kf_every ? o->kf_every : RUN_KF_EVERY;
        res->kf_every = sink.kf_every;
        if (!o->from_run && kfcap_take(&kf, p, err, errlen) < 0)
            goto out;
    }
    struct vcpu_limits lim = {.abort = o->abort};
    phase("setup");
    double t0 = now_wall();
    run_active_kvm_run = vm.run;
    struct kicker kick = {.target = pthread_self()};
    int kicking = 0;
    if (o->test_holes & PLATFORM_HOLE_TIMER_AT_HOST_EXIT) {
        struct sigaction sa = {.sa_handler = kick_handler};
        sigemptyset(&sa.sa_mask);
        sigaction(SIGUSR1, &sa, NULL);
        kicking = pthread_create(&kick.thread, NULL, kicker_main, &kick) == 0;
    }
    if (o->inspect_kind) {
        sink.quiet = 1; /* the job's output before the step is in the trace */
        if (start_inspection(o, p, &sink, &sess, dir.staging, err, errlen) < 0) {
            run_active_kvm_run = NULL;
            res->exit_code = RUN_EXIT_USAGE;
            goto out;
        }
    }
    int vr = vcpu_run(p, &lim);
    if (kicking) {
        kick.stop = 1;
        pthread_join(kick.thread, NULL);
    }
    run_active_kvm_run = NULL;
    res->wall_s = now_wall() - t0;
    if (vr < 0) {
        fail(err, errlen, "%s", p->message);
        goto out;
    }
    hash256 th;
    hash_final(sink.trace, &th);
    sink.trace = NULL;
    hash_hex(&th, res->trace_hash);
    hash_final(sink.output, &th);
    sink.output = NULL;
    hash_hex(&th, res->output_hash);
    res->perturbed = p->perturbed;
    res->outcome = p->outcome;
    res->job_status = p->job_status;
    res->steps = p->step;
    res->virt_ns = p->now_ns;
    res->exit_code = exit_code_of(p);
    res->inspected = sink.inspected;
    res->inspect_status = sink.inspect_status;
    if (o->inspect_kind && !sink.inspected) {
        fail(err, errlen, "the inspection did not finish: the run ended %s at step %llu",
             run_outcome_word(p->outcome), (unsigned long long)p->step);
        goto out;
    }
    if (sink.init_error[0] && p->outcome != PLATFORM_EXITED)
        snprintf(res->message, sizeof(res->message), "%s", sink.init_error);
    else
        snprintf(res->message, sizeof(res->message), "%s", p->message);
    if (p->outcome == PLATFORM_PANIC || p->outcome == PLATFORM_GUEST_ERROR ||
        p->outcome == PLATFORM_INIT_FAILED || p->outcome == PLATFORM_STALLED) {
        if (!o->show_console && sink.console_len) {
            fprintf(stderr, "rewind: last kernel console lines:\n");
            write_all(2, (const uint8_t *)sink.console, sink.console_len);
            if (sink.console[sink.console_len - 1] != '\n')
                fputc('\n', stderr);
        }
    }
    phase("vm");
    unsigned char rh[32];
    if ((kf_ready ? kfcap_ram_hash(&kf, rh) : kvm_ram_hash(&vm, rh)) < 0) {
        fail(err, errlen, "cannot hash guest RAM: %s", strerror(errno));
        goto out;
    }
    hash256 rhh;
    memcpy(rhh.b, rh, 32);
    hash_hex(&rhh, res->ram_hash);
    if (sink.states) {
        fclose(sink.states);
        sink.states = NULL;
    }
    if (kf_ready) {
        res->keyframes = kf.taken;
        res->kf_pages = kf.delta_pages;
        res->kf_bytes = kf.w.bytes;
        res->kf_capture_s = kf.capture_s;
        res->restore_s = kf.restore_s;
    }
    /* The pages first, then the keyframes file that names them (kfcap.h 2). */
    if (kf_ready && (store_sync(store) < 0 || kf_close(&kf.w) < 0)) {
        fail(err, errlen, "cannot write the keyframes of this run: %s", strerror(errno));
        goto out;
    }
    if (o->verify_restores && verify_restores(o, res, p, &sink, &dir, &kf, err, errlen) < 0)
        goto out;
    if (kf_ready && kfcap_finish(&kf) < 0) {
        fail(err, errlen, "cannot write the keyframes of this run: %s", strerror(errno));
        goto out;
    }
    kf_ready = 0;
    if (o->throwaway) { /* cat: the look must not change anything stored */
        rundir_abort(&dir);
        rc = 0;
        goto out;
    }
    if (sink.session) {
        /* The session's id covers its inputs: known only now. */
        if (session_close(&sess, inputs_hex) < 0) {
            fail(err, errlen, "cannot write the session's inputs");
            goto out;
        }
        sink.session = NULL;
        spec.inputs_hash = inputs_hex;
        free(spec_json);
        spec_json = spec_to_json(&spec);
        spec_id(&spec, res->id);
        char sp[4200];
        snprintf(sp, sizeof(sp), "%s/spec.json", dir.staging);
        if (!spec_json || rundir_write_file(sp, spec_json) < 0) {
            fail(err, errlen, "cannot write the session's spec");
            goto out;
        }
    }
    char name[64];
    check_against_stored(o, res, &dir, name, sizeof(name));
    res->events = dir.trace.count;
    if ((o->replay || o->from_run) && res->had_stored && !res->diverged) {
        /* Identical to the stored run: nothing new to keep. A run restored
         * from a keyframe must never replace the run its keyframes name. */
        rundir_abort(&dir);
        rc = 0;
        goto out;
    }
    char *mj = manifest_json(spec_json, res, dir.trace.count, o->name);
    int fr = mj ? rundir_finish_as(&dir, name, mj, err, errlen) : -1;
    free(mj);
    if (fr < 0) {
        res->exit_code = RUN_EXIT_INTERNAL;
        goto out;
    }
    phase("ram+save");
    rc = 0;
out:
    if (sink.session)
        session_close(&sess, inputs_hex);
    if (kf_ready)
        kfcap_finish(&kf);
    store_close(store);
    if (rc < 0)
        rundir_abort(&dir);
    if (sink.trace) {
        hash256 dummy;
        hash_final(sink.trace, &dummy);
    }
    if (sink.output) {
        hash256 dummy;
        hash_final(sink.output, &dummy);
    }
    free(p);
    kvm_close(&vm);
    initrd_free(&rd);
    free(spec_json);
    homelock_release(lockfd);
    return rc;
}

static char **strv_from_json(json_t *a)
{
    size_t n = json_array_size(a), i;
    char **v = calloc(n + 1, sizeof(char *));
    json_t *x;
    if (!v)
        return NULL;
    json_array_foreach(a, i, x)
    {
        const char *s = json_string_value(x);
        v[i] = strdup(s ? s : "");
    }
    return v;
}

int run_opts_from_spec(json_t *spec, const char *home, struct run_opts *o, char *err,
                       size_t errlen)
{
    const char *image = json_string_value(json_object_get(spec, "image"));
    const char *cwd = json_string_value(json_object_get(spec, "cwd"));
    json_t *argv = json_object_get(spec, "argv"), *env = json_object_get(spec, "env");
    if (!image || !cwd || !json_is_array(argv) || !json_array_size(argv) || !json_is_array(env))
        return fail(err, errlen, "the run's spec is incomplete or corrupt");
    json_t *ins = json_object_get(spec, "inspect");
    if (ins) {
        const char *k = json_string_value(json_object_get(ins, "kind"));
        if (!k || strcmp(k, "shell"))
            return fail(err, errlen, "the run's spec has an unknown inspection");
        o->inspect_kind = "shell";
        o->inspect_pid = (uint64_t)json_integer_value(json_object_get(ins, "pid"));
        o->inspect_at = (uint64_t)json_integer_value(json_object_get(ins, "at"));
    }
    if (spec_parse_perturb(spec, &o->sched) < 0)
        return fail(err, errlen, "the run's spec has a malformed perturb list");
    if (json_integer_value(json_object_get(spec, "test_holes")))
        return fail(err, errlen, "this run was made with a test hole open; it cannot be replayed");
    static char root[4200];
    snprintf(root, sizeof(root), "%s/images/%s.erofs", home, image);
    if (access(root, R_OK) != 0)
        return fail(err, errlen, "the root image %s of this run is gone (rewind gc?)", root);
    o->root = root;
    o->cwd = strdup(cwd);
    o->argv = strv_from_json(argv);
    o->env = strv_from_json(env);
    o->mem_mib = (uint64_t)json_integer_value(json_object_get(spec, "mem_mib"));
    o->seed = (uint64_t)json_integer_value(json_object_get(spec, "seed"));
    o->epoch_s = (int64_t)json_integer_value(json_object_get(spec, "epoch"));
    o->quantum_ns = (uint64_t)json_integer_value(json_object_get(spec, "quantum_ns"));
    o->home = home;
    if (!o->cwd || !o->argv || !o->env || !o->mem_mib || !o->quantum_ns)
        return fail(err, errlen, "the run's spec is incomplete or corrupt");
    return 0;
}

int run_check_artifacts(const struct run_opts *o, json_t *spec, char *err, size_t errlen)
{
    const char *want_k = json_string_value(json_object_get(spec, "kernel"));
    const char *want_i = json_string_value(json_object_get(spec, "init"));
    char k[65], i[65];
    if (hash_of(o, o->kernel, k, "guest kernel", err, errlen) < 0 ||
        hash_of(o, o->init, i, "rewind-init", err, errlen) < 0)
        return -1;
    if (!want_k || strcmp(k, want_k))
        return fail(err, errlen, "this run used guest kernel %.16s; %s is %.16s", want_k ? want_k : "?",
                    o->kernel, k);
    if (!want_i || strcmp(i, want_i))
        return fail(err, errlen, "this run used rewind-init %.16s; %s is %.16s", want_i ? want_i : "?",
                    o->init, i);
    return 0;
}
