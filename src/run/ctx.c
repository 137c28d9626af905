/*
 * ctx: see ctx.h.
 *
 * Output of the job reaches the observer as it is produced: each OUTPUT
 * record is passed on at the step it arrives. Kernel console lines are kept
 * in a small ring and passed on when the guest dies abnormally. The trace
 * hash is SHA-256 over (step as 8 little-endian bytes, record bytes) for
 * every record in order: two runs with equal trace hashes saw the same
 * events at the same steps.
 */
#include "run/ctx.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "home/homelock.h"
#include "util/homepath.h"
#include "home/runnames.h"
#include "input/faults.h"
#include "input/job.h"
#include "run/kfcache.h"
#include "run/seam.h"
#include "input/limits.h"
#include "input/patch.h"
#include "run/patchapply.h"
#include "trace/compare.h"
#include "trace/keyframe.h"
#include "util/bytes.h"
#include "util/check.h"
#include "util/fail.h"
#include "util/io.h"
#include "vmm/boot.h"
#include "vmm/cpuid.h"
#include "vmm/spin.h"
#include "vmm/vcpu.h"

#define fail util_fail
#define KERNEL_CMDLINE "console=rewind lpj=1000000 io_delay=none panic=-1 quiet"
#define CONSOLE_RING 8192
#define PATH_LEN 4200

_Static_assert(RW_EXITED == (int)PLATFORM_EXITED && RW_STOPPED == (int)PLATFORM_STOPPED &&
                   RW_TIMEOUT == (int)PLATFORM_TIMEOUT && RW_STALLED == (int)PLATFORM_STALLED &&
                   RW_SPIN == (int)PLATFORM_SPIN,
               "enum rw_outcome mirrors enum platform_outcome");
_Static_assert(RW_LIMIT == (int)PLATFORM_LIMIT, "enum rw_outcome mirrors enum platform_outcome");

struct kvm_run *volatile run_active_kvm_run;

struct run_sink {
    hash_ctx *trace;
    hash_ctx *output; /* the job's output: (fd, length, bytes) per record */
    struct trace_writer *file;
    const struct rw_observer *obs;
    int show_console, quiet;
    char console[CONSOLE_RING];
    size_t console_len;
    char init_error[512];
    FILE *states; /* --state-log: per-step register hashes, periodic RAM hashes */
    uint64_t ram_every;
    struct kvm_vm *vm;
    const struct rw_patch *patch; /* gdb's writes (patch.h), or NULL */
    const char *kernel;           /* the guest kernel's ELF (for patch_apply) */
    struct kfcap *kf;             /* NULL: no keyframes */
    struct platform *p;
    struct session *session; /* shell: input at idle steps */
    int inspected, inspect_status;
    int inspecting; /* the inspection was requested: INSPECT_DONE counts from now on */
    uint64_t kf_every;
    int kf_due;                /* take a keyframe at the end of this step (the job starts) */
    struct run_limits lim;     /* the disk caps (src/input/limits.h) */
    struct run_exec execs[64]; /* the last programs exec'd, by pid: what a spinning pid runs */
    unsigned nexec;
};

/* A disk cap is hit: the run ends at the end of this step (outcome limit). */
static void limit_hit(struct run_sink *s)
{
    if (!s->p || s->p->outcome != PLATFORM_RUNNING)
        return;
    s->p->outcome = PLATFORM_LIMIT;
    run_limits_message(&s->lim, s->p->step, s->p->message, sizeof(s->p->message));
}

/* Remember what pid exec'd (EXEC payload: path NUL argv...). */
static void note_exec(struct run_sink *s, const struct rewind_record *r, const uint8_t *payload,
                      size_t len)
{
    if (r->kind != REWIND_REC_EXEC || !len)
        return;
    size_t plen = strnlen((const char *)payload, len);
    unsigned slot = s->nexec % 64;
    for (unsigned i = 0; i < 64 && i < s->nexec; i++)
        if (s->execs[i].pid == r->pid)
            slot = i;
    if (slot == s->nexec % 64)
        s->nexec++;
    s->execs[slot].pid = r->pid;
    snprintf(s->execs[slot].path, sizeof(s->execs[slot].path), "%.*s", (int)plen,
             (const char *)payload);
}

static void emit(const struct rw_observer *obs, enum rw_stream s, const void *p, size_t n)
{
    if (obs && obs->output && n)
        obs->output(obs->ctx, s, p, n);
}

void run_notice(const struct rw_observer *obs, const char *fmt, ...)
{
    if (!obs || !obs->output)
        return;
    char line[1400];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    if (n > 0)
        obs->output(obs->ctx, RW_NOTICE, line, strlen(line));
}

static int ctx_fail(struct run_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int ctx_fail(struct run_ctx *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->err->msg, sizeof(c->err->msg), fmt, ap);
    va_end(ap);
    return -1;
}

#define ERR c->err->msg, sizeof(c->err->msg)

/* The path of file in this run's staging directory (runs/.<id>.<pid>/);
 * "" (which every open refuses) if it cannot be built. */
static void staging_path(const struct run_ctx *c, const char *file, char *out, size_t n)
{
    const char *name = strrchr(c->dir.staging, '/');
    if (home_path(out, n, c->o->home, HOME_RUNS, name ? name + 1 : c->dir.staging, file) < 0)
        out[0] = 0;
}

int run_phase_code(enum run_phase ph)
{
    switch (ph) {
    case PH_IMAGE:
        return RW_EROOT;
    case PH_ARTIFACTS:
    case PH_BOOT:
        return RW_EKERNEL;
    case PH_KVM:
        return RW_ENOKVM;
    case PH_KEYFRAME_FIND:
    case PH_INSPECT:
        return RW_EUSAGE;
    default:
        return RW_EINTERNAL;
    }
}

/* A capture failed (disk full): reported once, and the run goes on
 * without keyframes. */
static void keyframes_stop(struct run_sink *s, uint64_t step, const char *why)
{
    run_notice(s->obs, "warning: keyframes stop at step %llu: %s", (unsigned long long)step, why);
    kfcap_stop(s->kf);
}

/* limits.h invariant 3: the exact keyframe bytes, joining the captures in
 * flight (kfcap.h invariant 6). */
static int keyframes_settle(void *ctx, uint64_t *bytes)
{
    struct run_sink *s = ctx;
    char err[512];
    if (s->kf->writing && kfcap_sync(s->kf, err, sizeof(err)) < 0)
        keyframes_stop(s, s->p ? s->p->step : 0, err);
    uint64_t unsure;
    kfcap_disk(s->kf, bytes, &unsure);
    RW_ASSERT(unsure == 0 || !s->kf->writing);
    return 0;
}

/* Keyframes are taken at steps that depend only on the spec: at the
 * cadence kfcap_due derives from kf_every and the last keyframe (kfcap.h
 * invariant 5), and at the step the job starts. A failure to write one
 * (disk full) is reported once and the run goes on without keyframes. */
static void keyframe_step(struct run_sink *s, struct platform *p)
{
    if (!s->kf || !s->kf->writing || p->outcome != PLATFORM_RUNNING)
        return;
    if (!s->kf_due && !kfcap_due(s->kf, s->kf_every, p->step))
        return;
    s->kf_due = 0;
    char err[512];
    if (kfcap_take(s->kf, p, err, sizeof(err)) < 0) {
        keyframes_stop(s, p->step, err);
        /* limits.h invariant 3: with the worker stopped nothing is in
         * flight any more; what the failed capture stored before it
         * failed is counted now, exactly (a bound left from the capture
         * before it would no longer cover the bytes on disk) */
        uint64_t known, unsure;
        kfcap_disk(s->kf, &known, &unsure);
        RW_ASSERT(unsure == 0);
        if (run_limits_keyframes_unsure(&s->lim, known, 0))
            limit_hit(s);
        return;
    }
    /* kfcap.h invariant 6: what is stored so far, and a bound of the rest */
    uint64_t known, unsure;
    kfcap_disk(s->kf, &known, &unsure);
    if (run_limits_keyframes_unsure(&s->lim, known, unsure))
        limit_hit(s);
}

/* State log entry: u64 step | u64 first 8 bytes of a SHA-256; the top bit of
 * step marks a RAM hash, otherwise it is the hash of the general registers. */
static void on_step(void *ctx, struct platform *p)
{
    struct run_sink *s = ctx;
    /* patch.h invariant 2: gdb's writes before the step's keyframe. */
    if (s->patch && p->step == s->patch->at && p->outcome == PLATFORM_RUNNING && !patch_hole()) {
        char why[400];
        if (patch_apply(s->patch, s->vm, s->kernel, why, sizeof(why)) < 0)
            platform_guest_error(p, "gdb's writes at step %llu cannot be applied: %s",
                                 (unsigned long long)p->step, why);
    }
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
    uint64_t grew = sizeof(e);
    if (s->ram_every && p->step % s->ram_every == 0 && kvm_ram_hash(s->vm, h.b) == 0) {
        e[0] = p->step | 1ull << 63;
        memcpy(&e[1], h.b, 8);
        fwrite(e, sizeof(e), 1, s->states);
        grew += sizeof(e);
    }
    if (run_limits_states(&s->lim, grew)) /* the state log is disk the run uses */
        limit_hit(s);
}

static void console_keep(struct run_sink *s, const uint8_t *p, size_t n)
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

/* The trace hash and the output hash of one record (invariant 3). */
static void hash_record(struct run_sink *s, uint64_t step, const struct rewind_record *r,
                        const uint8_t *payload, size_t len)
{
    uint8_t le[8];
    bytes_put_u64(le, step);
    hash_update(s->trace, le, 8);
    hash_update(s->trace, r, sizeof(*r));
    hash_update(s->trace, payload, len);
    if (s->output && r->kind == REWIND_REC_OUTPUT) {
        uint32_t hd[2] = {(uint32_t)r->aux, (uint32_t)len};
        hash_update(s->output, hd, sizeof(hd));
        hash_update(s->output, payload, len);
    }
    /* --collect's marks (docs/nix.md) are output too: check sees two builds
     * that leave different files as ending differently. fd 0 marks them. */
    if (s->output && r->kind == REWIND_REC_MARK && len >= 19 &&
        !memcmp(payload, "rewind-init:collect", 19)) {
        uint32_t hd[2] = {0, (uint32_t)len};
        hash_update(s->output, hd, sizeof(hd));
        hash_update(s->output, payload, len);
    }
}

static void on_record(void *ctx, uint64_t step, const struct rewind_record *r,
                      const uint8_t *payload, size_t len)
{
    struct run_sink *s = ctx;
    hash_record(s, step, r, payload, len);
    note_exec(s, r, payload, len);
    if (s->file) {
        trace_append(s->file, step, r);
        if (r->kind == REWIND_REC_OUTPUT || s->file->count % 64 == 0)
            trace_flush(s->file);
        if (run_limits_trace(&s->lim, r->len))
            limit_hit(s);
    }
    switch (r->kind) {
    case REWIND_REC_OUTPUT:
        if (!s->quiet)
            emit(s->obs, r->aux == 2 ? RW_STDERR : RW_STDOUT, payload, len);
        break;
    case REWIND_REC_CONSOLE:
        console_keep(s, payload, len);
        if (s->show_console)
            emit(s->obs, RW_CONSOLE, payload, len);
        break;
    case REWIND_REC_INIT:
        if (r->aux == REWIND_INIT_JOB_START)
            s->kf_due = 1;
        /* Only after the request: any root job can emit INIT records
         * (REWIND_IOC_INIT_MSG); a forged INSPECT_DONE must not end a run. */
        if (r->aux == REWIND_INIT_INSPECT_DONE && s->p && s->inspecting) {
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

static int on_idle(void *ctx, struct platform *p)
{
    struct run_sink *s = ctx;
    return s->session ? session_on_idle(s->session, p) : 0;
}

static double now_wall(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* REWIND_TIMING=1: print the wall time of each phase of c on stderr
 * (a developer's measurement, not output of the run); the clock is c's
 * (no static state: the engine is reentrant). */
static void timing(struct run_ctx *c, const char *name)
{
    if (!getenv("REWIND_TIMING"))
        return;
    double t = now_wall();
    if (c->timing_last > 0)
        fprintf(stderr, "rewind: timing: %-10s %.3f s\n", name, t - c->timing_last);
    c->timing_last = t;
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
        return RW_EINTERNAL;
    }
    case PLATFORM_NOT_FOUND:
        return RW_ENOTFOUND;
    case PLATFORM_NOT_EXEC:
        return RW_ENOTEXEC;
    case PLATFORM_PANIC:
        return RW_EPANIC;
    case PLATFORM_TIMEOUT:
        return RW_ETIMEOUT;
    case PLATFORM_LIMIT:
        return RW_ELIMIT;
    case PLATFORM_SPIN:
        return RW_ESPIN;
    case PLATFORM_INIT_FAILED:
        return RW_EINTERNAL;
    default:
        return RW_EGUEST;
    }
}

/* The test hole timer-at-host-exit needs host-caused exits: a thread that
 * interrupts the vCPU thread every 1 ms of host time (more often can starve
 * the guest on a slow host). */
struct kicker {
    pthread_t thread, target;
    volatile int stop;
    int on;
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

static void kicker_start(struct kicker *k, uint64_t holes)
{
    memset(k, 0, sizeof(*k));
    if (!(holes & (PLATFORM_HOLE_TIMER_AT_HOST_EXIT | PLATFORM_HOLE_FAULT_AT_HOST_EXIT)))
        return;
    k->target = pthread_self();
    struct sigaction sa = {.sa_handler = kick_handler};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGUSR1, &sa, NULL);
    k->on = pthread_create(&k->thread, NULL, kicker_main, k) == 0;
}

static void kicker_stop(struct kicker *k)
{
    if (!k->on)
        return;
    k->stop = 1;
    pthread_join(k->thread, NULL);
    k->on = 0;
}

static void seed_bytes(uint64_t seed, uint8_t out[32])
{
    char buf[64];
    int n = snprintf(buf, sizeof(buf), "rewind-rng-seed:%llu", (unsigned long long)seed);
    hash256 h;
    hash_buf(buf, (size_t)n, &h);
    memcpy(out, h.b, 32);
}

static int hash_of(const char *home, const char *path, char hex[65], const char *what, char *err,
                   size_t errlen)
{
    hash256 h;
    char why[512];
    if (image_hash_file(path, home, &h, why, sizeof(why)) < 0)
        return fail(err, errlen, "cannot read the %s: %s", what, why);
    hash_hex(&h, hex);
    return 0;
}

static char *manifest_json(const char *spec_json, const struct rw_result *r, uint64_t events,
                           const char *name, json_t *names)
{
    /* every name given keeps resolving (home/runnames.h); "name" is the newest */
    if (!name && json_array_size(names))
        name = json_string_value(json_array_get(names, json_array_size(names) - 1));
    json_t *m = json_object();
    json_error_t je;
    json_object_set_new(m, "version", json_integer(1));
    json_object_set_new(m, "id", json_string(r->id));
    json_object_set_new(m, "state", json_string("complete"));
    json_object_set_new(m, "spec", json_loads(spec_json, 0, &je));
    json_object_set_new(m, "parent", json_null()); /* replaced below for forks */
    if (name)
        json_object_set_new(m, "name", json_string(name));
    if (json_array_size(names))
        json_object_set(m, "names", names);
    json_object_set_new(m, "outcome", json_string(rw_outcome_word(r->outcome)));
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
    if (r->refused) /* port writes refused as breaches of the guest ABI */
        json_object_set_new(m, "refused", json_integer((json_int_t)r->refused));
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

/* The first free name <id>~N for a run kept beside the stored run <id>. */
static void free_name(const char *home, const char *id, char *name, size_t n)
{
    char path[PATH_LEN];
    for (int i = 1; i < 1000; i++) {
        snprintf(name, n, "%.40s~%d", id, i); /* an id is 16 hex digits */
        if (home_path(path, sizeof(path), home, HOME_RUNS, name, NULL) == 0 &&
            access(path, F_OK) != 0)
            break;
    }
}

/* A run of a spec that was run before must equal it. If the stored run
 * differs, this is a determinism violation: keep the stored run, publish
 * this one as <id>~N, and say where the two traces part. Returns 1 when
 * this run, not cut, is to replace a stored run that was cut (timeout,
 * limit, spin), else 0. */
static int check_against_stored(struct run_ctx *c, char *name, size_t n)
{
    struct rw_result *r = c->res;
    const char *home = c->o->home;
    snprintf(name, n, "%s", r->id);
    char path[PATH_LEN], mine[PATH_LEN];
    if (home_path(path, sizeof(path), home, HOME_RUNS, r->id, "manifest.json") < 0)
        return 0;
    json_error_t je;
    json_t *m = json_load_file(path, 0, &je);
    if (!m)
        return 0;
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
    int stored_cut = oc && (!strcmp(oc, "timeout") || !strcmp(oc, "limit") || !strcmp(oc, "spin"));
    /* An imported run is no reference for a new run either: an archive
     * could plant a run at the id of a spec the user will run (issue 27,
     * 3); a complete run made here replaces it, as it replaces a cut one.
     * A replay of the imported run itself still compares with it. */
    char mark[PATH_LEN];
    if (c->keep == RUN_KEEP &&
        home_path(mark, sizeof(mark), home, HOME_RUNS, r->id, RUNDIR_IMPORTED) == 0 &&
        access(mark, F_OK) == 0)
        stored_cut = 1;
    /* a limit or a spin: the same */
    int cut = r->outcome == RW_TIMEOUT || r->outcome == RW_LIMIT || r->outcome == RW_SPIN;
    json_decref(m);
    if (same || (stored_cut && !cut))
        return !same && stored_cut && !cut;
    free_name(home, r->id, name, n);
    if (cut) {
        r->had_stored = 0;
        return 0;
    }
    home_path(path, sizeof(path), home, HOME_RUNS, r->id, "trace");
    staging_path(c, "trace", mine, sizeof(mine));
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
                 r->id, (uint64_t)steps != r->steps ? "other step count" : "other final RAM", name);
    return 0;
}

/* Keep the root image in the store as images/<hash>.erofs, so that replay,
 * show and later runs find it by hash even when the user's file (an erofs
 * root used in place) moves or changes. A hard link when possible, else a
 * copy (temp file + rename). */
int run_keep_image(const char *home, const struct image *img, char *err, size_t errlen)
{
    char want[PATH_LEN], tmp[PATH_LEN + 32];
    if (home_path(want, sizeof(want), home, HOME_IMAGES, img->hex, NULL) < 0)
        return fail(err, errlen, "the home's path is too long");
    if (access(want, R_OK) == 0 || link(img->path, want) == 0)
        return 0;
    snprintf(tmp, sizeof(tmp), "%s.tmp.%d", want, (int)getpid());
    int in = open(img->path, O_RDONLY | O_CLOEXEC);
    int out = in >= 0 ? open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644) : -1;
    int ok = in >= 0 && out >= 0;
    char buf[1 << 16];
    ssize_t n;
    while (ok && (n = read(in, buf, sizeof(buf))) != 0)
        ok = n > 0 && io_write_all(out, buf, (size_t)n) == 0;
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
    char *job = job_encode_props(o->argv, o->env, o->cwd, o->property, o->expect, &jlen);
    if (job && o->collect)
        job = job_append_collect(job, o->collect, &jlen);
    if (job && o->nodes && o->nodes[0])
        job = job_append_nodes(job, o->nodes, &jlen);
    if (job && o->nodes && o->restarts && o->restarts[0]) /* docs/faults.md */
        job = job_append_restarts(job, o->nodes, o->restarts, &jlen);
    if (job && (o->sched.fault_kinds & (1u << FAULT_NET)))
        job = job_append_netem(job, &jlen);
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

static void progress_to_observer(void *ctx, const char *what, uint64_t done, uint64_t total)
{
    const struct rw_observer *obs = ctx;
    obs->progress(obs->ctx, what, done, total);
}

const struct image_progress *run_image_progress(const struct rw_observer *obs,
                                                struct image_progress *ip)
{
    if (!obs || !obs->progress)
        return NULL;
    *ip = (struct image_progress){progress_to_observer, (void *)obs};
    return ip;
}

int run_machine_open(struct run_ctx *c, const struct run_opts *o, int with_store,
                     struct rw_result *res, struct rw_error *err)
{
    memset(c, 0, sizeof(*c));
    memset(res, 0, sizeof(*res));
    c->o = o;
    c->res = res;
    c->err = err;
    c->lockfd = -1;
    c->sess.fd = -1;
    c->vm.kvm_fd = c->vm.vm_fd = c->vm.vcpu_fd = -1;
    err->code = RW_EINTERNAL;
    err->msg[0] = 0;
    timing(c, "start");
    c->phase = PH_LOCK; /* invariant 1 */
    c->lockfd = homelock_take(o->home, 0, 1, ERR);
    if (c->lockfd < 0)
        return -1;
    c->phase = PH_IMAGE;
    struct image_progress ip;
    if (image_prepare_progress(o->root, o->home, run_image_progress(o->obs, &ip), &c->img, ERR) < 0)
        return -1;
    timing(c, "image");
    c->phase = PH_ARTIFACTS;
    if (hash_of(o->home, o->kernel, c->spec.kernel_hash, "guest kernel", ERR) < 0 ||
        hash_of(o->home, o->init, c->spec.init_hash, "rewind-init", ERR) < 0)
        return -1;
    memcpy(c->spec.image_hash, c->img.hex, sizeof(c->spec.image_hash));
    if (run_keep_image(o->home, &c->img, ERR) < 0)
        return -1;
    timing(c, "hashes");
    c->phase = PH_INITRD;
    if (build_initrd(o, &c->rd, ERR) < 0)
        return -1;
    c->phase = PH_KVM;
    c->seam = o->seam; /* NULL but in tests/engine/ctx_test.c (seam.h invariant 1) */
    const struct run_seam *sm = c->seam;
    int kr = sm ? sm->open(sm->ctx, &c->vm, o->mem_mib << 20, c->model, sizeof(c->model), ERR)
                : kvm_open(&c->vm, o->mem_mib << 20, ERR);
    if (kr < 0)
        return -1;
    if (!sm && cpuid_model_name(c->vm.kvm_fd, c->model, sizeof(c->model)) < 0)
        return ctx_fail(c, "cannot read the host's CPUID from KVM");
    c->phase = PH_SETUP;
    io_set_abort(o->abort); /* a blocked write gives up on --timeout (util/io.h) */
    if (!sm && kvm_map_image(&c->vm, c->img.path, ERR) < 0)
        return -1;
    if (with_store || !o->no_keyframes) {
        char sp[PATH_LEN];
        if (home_path(sp, sizeof(sp), o->home, HOME_STORE, NULL, NULL) < 0)
            return ctx_fail(c, "the home's path is too long");
        if (store_open(sp, &c->store, ERR) < 0)
            return -1;
        c->kf_alloc = 1; /* kfcap_free frees whatever kfcap_init allocated */
        if (kfcap_init(&c->kf, &c->vm, c->store, ERR) < 0)
            return -1;
        c->kf.holes = o->snap_holes;
    }
    return 0;
}

int run_begin(struct run_ctx *c, const struct run_opts *o, const struct run_inspect *ins,
              enum run_keep keep, struct rw_result *res, struct rw_error *err)
{
    RW_ASSERT(!c->sink && !c->p && c->lockfd >= 0); /* invariant 6: one run at a time */
    memset(res, 0, sizeof(*res));
    c->o = o;
    c->res = res;
    c->err = err;
    c->keep = keep;
    c->inspect = ins;
    c->parent = NULL;
    c->parent_upto = 0;
    c->verify = 0;
    c->t0 = 0;
    memset(&c->sess, 0, sizeof(c->sess));
    c->sess.fd = -1;
    c->inputs_hex[0] = 0;
    err->code = RW_EINTERNAL;
    err->msg[0] = 0;
    c->phase = PH_SETUP;
    struct run_spec sp0 = c->spec; /* the machine's hashes (run_machine_open) */
    c->spec = (struct run_spec){
        .argv = o->argv,
        .env = o->env,
        .cwd = o->cwd,
        .mem_mib = o->mem_mib,
        .seed = o->seed,
        .schedule = 0,
        .test_holes = o->test_holes,
        .quantum_ns = o->quantum_ns,
        .epoch_s = o->epoch_s,
        .cpu_model = c->model,
        .perturb = &o->sched,
        .inspect_kind = ins && !strcmp(ins->kind, "shell") ? "shell" : NULL,
        .inspect_pid = ins ? ins->pid : 0,
        .inspect_at = ins ? ins->at : 0,
        .inputs_hash = "",
        .expect = o->expect,
        .property = o->property,
        .dirorder_on = o->dirorder_on,
        .dirorder = o->dirorder,
        .preempt_memory = o->preempt_memory,
        .cpus = o->cpus,
        .nodes = o->nodes,
        .restarts = o->restarts,
        .track_writes = o->track_writes,
        .collect = o->collect,
        .nix_drv = o->nix_drv,
        .patch = o->patch,
    };
    memcpy(c->spec.kernel_hash, sp0.kernel_hash, sizeof(c->spec.kernel_hash));
    memcpy(c->spec.init_hash, sp0.init_hash, sizeof(c->spec.init_hash));
    memcpy(c->spec.image_hash, sp0.image_hash, sizeof(c->spec.image_hash));
    spec_id(&c->spec, res->id);
    c->spec_json = spec_to_json(&c->spec);
    if (!c->spec_json)
        return ctx_fail(c, "out of memory");
    if (rundir_begin(&c->dir, o->home, res->id, c->spec_json, ERR) < 0)
        return -1;
    timing(c, "rundir");
    c->sink = calloc(1, sizeof(*c->sink));
    c->p = malloc(sizeof(*c->p));
    if (!c->sink || !c->p)
        return ctx_fail(c, "out of memory");
    struct run_sink *s = c->sink;
    s->obs = o->obs;
    s->show_console = o->show_console;
    s->quiet = o->quiet;
    s->file = &c->dir.trace;
    s->vm = &c->vm;
    s->patch = o->patch;
    s->kernel = o->kernel;
    run_limits_init(&s->lim, o->max_trace_mb, o->max_disk_mb);
    io_set_abort(o->abort);
    if (o->state_log) {
        char stp[PATH_LEN];
        staging_path(c, "states", stp, sizeof(stp));
        s->states = fopen(stp, "we");
        s->ram_every = o->state_log;
    }
    s->trace = hash_new();
    s->output = hash_new();
    if (!s->trace || !s->output)
        return ctx_fail(c, "out of memory");
    struct platform *p = c->p;
    platform_init(p, &c->vm, o->quantum_ns, (uint64_t)o->epoch_s * 1000000000ull, o->seed);
    p->test_holes = o->test_holes;
    p->sched = o->sched;
    p->sched.seed = o->seed;
    p->on_record = on_record;
    p->on_step = on_step;
    p->record_ctx = s;
    s->p = p;
    if (c->kf_alloc) {
        kfcap_begin_run(&c->kf);
        c->kf.holes = o->snap_holes;
        c->kf_ready = 1; /* this run's part of kf: kfcap_end_run */
    }
    return 0;
}

int run_prepare(struct run_ctx *c, const struct run_opts *o, const struct run_inspect *ins,
                enum run_keep keep, int with_store, struct rw_result *res, struct rw_error *err)
{
    if (run_machine_open(c, o, with_store, res, err) < 0)
        return -1;
    timing(c, "machine");
    return run_begin(c, o, ins, keep, res, err);
}

/* Append to the command line buf of len bytes, *cl bytes long so far: *cl
 * grows by what the text needs, also past len (run_kernel_cmdline then
 * refuses the line). */
static void __attribute__((format(printf, 4, 5)))
cmdline_add(char *buf, size_t len, size_t *cl, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(*cl < len ? buf + *cl : NULL, *cl < len ? len - *cl : 0, fmt, ap);
    va_end(ap);
    *cl += w < 0 ? len : (size_t)w;
}

int run_kernel_cmdline(const struct run_opts *o, char *buf, size_t len)
{
    size_t cl = 0;
    cmdline_add(buf, len, &cl, "%s", KERNEL_CMDLINE);
    if (o->dirorder_on) /* docs/nix.md: guest/linux/patches/20-nix.patch reads these */
        cmdline_add(buf, len, &cl, " rewind.dirorder=%llu", (unsigned long long)o->dirorder);
    if (o->track_writes)
        cmdline_add(buf, len, &cl, " rewind.track=%s", o->track_writes);
    if (o->sched.fault_kinds & FAULT_KINDS_GLOB) { /* docs/faults.md: disk faults' and power
                                                       cuts' files */
        RW_ASSERT(faults_disk_glob_valid(o->sched.fault_disk_glob)); /* a word: faults.h inv. 5 */
        cmdline_add(buf, len, &cl, " rewind.diskglob=%s", o->sched.fault_disk_glob);
    }
    if (o->sched.fault_kinds & (1u << FAULT_POWER)) /* the kernel tracks unsynced writes */
        cmdline_add(buf, len, &cl, " rewind.power");
    if (o->preempt_memory) /* docs/determinism.md: guest/linux/patches/30-mempoint.patch */
        cmdline_add(buf, len, &cl, " rewind.preempt=memory");
    if (o->cpus > 1) /* docs/determinism.md: guest/linux/patches/40-cpus.patch */
        cmdline_add(buf, len, &cl, " rewind.cpus=%u", o->cpus);
    return cl < len ? (int)cl : -1;
}

int run_boot(struct run_ctx *c)
{
    const struct run_opts *o = c->o;
    char cmdline[1024];
    if (run_kernel_cmdline(o, cmdline, sizeof(cmdline)) < 0)
        return ctx_fail(c, "the kernel command line is too long");
    struct boot_config bc = {.kernel_path = o->kernel,
                             .cmdline = cmdline,
                             .initrd = c->rd.data,
                             .initrd_size = c->rd.size,
                             .with_image = 1};
    seed_bytes(o->seed, bc.rng_seed);
    c->phase = PH_SETUP;
    if (o->test_holes & PLATFORM_HOLE_HOST_RNG && getrandom(bc.rng_seed, 32, 0) != 32)
        return ctx_fail(c, "getrandom failed");
    timing(c, "boot-in");
    c->phase = PH_BOOT;
    const struct run_seam *sm = c->seam; /* seam.h invariant 2 */
    if ((sm ? sm->boot(sm->ctx, &c->vm, &bc, ERR) : boot_setup(&c->vm, &bc, ERR)) < 0)
        return -1;
    timing(c, "boot");
    return 0;
}

/* Feed the entries of the trace at path with step <= upto into the sink (the
 * trace hash, and the new trace file when the sink has one): the history a
 * run restored from a keyframe shares with its source (invariant 3). The
 * new trace refers to that prefix of run `from` instead of copying it
 * (trace.h, version 2), unless the new run may be published under that
 * very name (its id is from's). */
static int replay_prefix(const char *path, const char *from, const char *id, uint64_t upto,
                         struct run_sink *s, char *err, size_t errlen)
{
    struct trace_reader *r = malloc(sizeof(*r));
    if (!r)
        return fail(err, errlen, "out of memory");
    if (trace_open_read(r, path) != 0) {
        free(r);
        return fail(err, errlen, "cannot read the trace %s", path);
    }
    struct trace_prefix pre = {0};
    int refer = s->file && from && id && strcmp(from, id) != 0 && trace_prefix_begin(&pre) == 0;
    struct trace_entry e;
    while (trace_next(r, &e) == 1 && e.step <= upto) {
        hash_record(s, e.step, &e.rec, e.payload, e.payload_len);
        note_exec(s, &e.rec, e.payload, e.payload_len);
        if (refer)
            trace_prefix_add(&pre, e.step, (const struct rewind_record *)r->buf);
        else if (s->file)
            trace_append(s->file, e.step, (const struct rewind_record *)r->buf);
    }
    int torn = r->torn;
    trace_close_read(r);
    free(r);
    if (torn) {
        trace_prefix_drop(&pre);
        return fail(err, errlen, "the trace %s is torn before step %llu", path,
                    (unsigned long long)upto);
    }
    if (refer && trace_refer(s->file, from, &pre) < 0)
        return fail(err, errlen, "cannot write the trace's reference to run %s", from);
    return 0;
}

int run_restore(struct run_ctx *c, const char *from, uint64_t step, uint64_t fork_step)
{
    RW_ASSERT(c->kf_ready); /* run_prepare was asked for the store */
    struct rw_result *res = c->res;
    struct kf_chain ch;
    size_t link, idx;
    c->phase = PH_KEYFRAME_FIND;
    if (kf_chain_load(c->o->home, from, &ch, ERR) < 0)
        return -1;
    int rc = -1;
    RW_ASSERT(c->sink->trace && c->dir.trace.count == 0); /* invariant 3: from step 0 */
    if (kf_chain_find(&ch, step, &link, &idx) < 0) {
        ctx_fail(c, "run %s has no keyframe at or before step %llu", from,
                 (unsigned long long)step);
        goto out;
    }
    c->phase = PH_RESTORE;
    snprintf(res->parent, sizeof(res->parent), "%s", from);
    /* A throwaway (cat, seek) copies what it can from the run's cached
     * keyframe and caches this one when the store gave most of its pages
     * (kfcache.c): the next look into the run restores from memory. */
    struct kfmat cache;
    int cached = c->keep == RUN_KEEP_NOTHING && !c->kf.src && !getenv("REWIND_NO_FRAME_CACHE") &&
                 kfcache_open(&cache, c->o->home, from, c->kf.npfn) == 0;
    if (cached)
        c->kf.src = &cache;
    int kr = kfcap_restore(&c->kf, c->p, &ch, link, idx, ERR);
    if (cached) {
        c->kf.src = NULL;
        kfmat_free(&cache);
    }
    if (kr < 0)
        goto out;
    if (c->keep == RUN_KEEP_NOTHING && !getenv("REWIND_NO_FRAME_CACHE") &&
        c->kf.last_from_store > c->kf.last_copied)
        kfcache_write(c->o->home, from, c->p->step, c->kf.cur, c->vm.ram, c->kf.npfn);
    res->from_step = c->p->step;
    res->fork_step = fork_step;
    c->parent = from;
    c->parent_upto = c->p->step;
    char tp[PATH_LEN];
    if (home_path(tp, sizeof(tp), c->o->home, HOME_RUNS, from, "trace") < 0) {
        ctx_fail(c, "bad run name %s", from);
        goto out;
    }
    rc = replay_prefix(tp, from, res->id, c->p->step, c->sink, ERR);
out:
    kf_chain_free(&ch);
    return rc;
}

int run_keyframes_begin(struct run_ctx *c)
{
    const struct run_opts *o = c->o;
    c->phase = PH_SETUP;
    if (o->no_keyframes)
        return 0;
    RW_ASSERT(c->kf_ready);
    char kp[PATH_LEN];
    staging_path(c, "keyframes", kp, sizeof(kp));
    if (kfcap_open(&c->kf, kp, c->parent, c->parent_upto, ERR) < 0)
        return -1;
    c->sink->kf = &c->kf;
    run_limits_settler(&c->sink->lim, keyframes_settle, c->sink);
    c->sink->kf_every = o->kf_every ? o->kf_every : rw_defaults.keyframe_every;
    c->res->kf_every = c->sink->kf_every;
    /* A booted run's first keyframe is its state before step 1. */
    if (!c->parent && kfcap_take(&c->kf, c->p, ERR) < 0)
        return -1;
    return 0;
}

int run_inspect_start(struct run_ctx *c)
{
    const struct run_inspect *in = c->inspect;
    struct platform *p = c->p;
    RW_ASSERT(in && in->kind);
    c->sink->quiet = 1; /* the job's output before the step is in the trace */
    c->phase = PH_INSPECT;
    if (run_loop(c, in->at) < 0)
        return -1;
    c->phase = PH_INSPECT;
    if (p->outcome != PLATFORM_RUNNING || p->step != in->at)
        return ctx_fail(c, "the run ended at step %llu, before step %llu (%s)",
                        (unsigned long long)p->step, (unsigned long long)in->at,
                        rw_outcome_word((enum rw_outcome)p->outcome));
    char req[REWIND_SHARED_REQ_MAX];
    int n = snprintf(req, sizeof(req), "%s%c%llu%c%s", in->kind, 0, (unsigned long long)in->pid, 0,
                     in->path ? in->path : "");
    if (n < 0 || (size_t)n + 1 > sizeof(req))
        return ctx_fail(c, "the path is too long (at most %d bytes)", REWIND_SHARED_REQ_MAX - 32);
    if (!strcmp(in->kind, "shell")) {
        char ip[PATH_LEN];
        staging_path(c, "inputs", ip, sizeof(ip));
        int r = in->session_replay ? session_open_replay(&c->sess, in->session_replay, ERR)
                                   : session_open_live(&c->sess, in->session_fd, ip, ERR);
        if (r < 0)
            return -1;
        c->sess.abort = c->o->abort;
        c->sink->session = &c->sess;
        p->on_idle = on_idle;
    }
    c->sink->quiet = in->session_replay ? 1 : 0;
    if (platform_inspect(p, req, (size_t)n + 1) < 0)
        return ctx_fail(c, "the guest cannot be inspected at step %llu (before its platform is up)",
                        (unsigned long long)p->step);
    c->sink->inspecting = 1;
    return 0;
}

/* vcpu_run under the spin watch (limit spin_s, 0: off) and the test
 * kicker, with run_active_kvm_run set; a spin gets its place named. 0, or
 * -1 with c->err. */
static int watched_run(struct run_ctx *c, struct vcpu_limits *lim, double spin_s)
{
    struct platform *p = c->p;
    struct spin_watch spin;
    struct kicker kick;
    lim->spin = &spin.fired;
    run_active_kvm_run = c->vm.run;
    kicker_start(&kick, c->o->test_holes);
    if (spin_watch_start(&spin, &p->step, spin_s, c->vm.run) < 0) {
        kicker_stop(&kick);
        run_active_kvm_run = NULL;
        return ctx_fail(c, "cannot start the spin watchdog: %s", strerror(errno));
    }
    int vr = vcpu_run(p, lim);
    spin_watch_stop(&spin);
    kicker_stop(&kick);
    if (vr == 0 && p->outcome == PLATFORM_SPIN)
        run_spin_describe(c, spin_s, c->sink->execs, c->sink->nexec < 64 ? c->sink->nexec : 64);
    run_active_kvm_run = NULL;
    if (vr < 0)
        return ctx_fail(c, "%s", p->message);
    return 0;
}

int run_loop(struct run_ctx *c, uint64_t stop_at)
{
    struct platform *p = c->p;
    RW_ASSERT(c->lockfd >= 0); /* invariant 1 */
    if (stop_at && p->step >= stop_at)
        return 0;
    timing(c, "setup");
    c->phase = PH_LOOP;
    if (!c->t0)
        c->t0 = now_wall();
    struct vcpu_clock clock = {0};
    int timed = getenv("REWIND_TIMING") != NULL;
    uint64_t step0 = p->step;
    struct vcpu_limits lim = {
        .abort = c->o->abort, .max_steps = stop_at, .clock = timed ? &clock : NULL};
    int vr = watched_run(c, &lim, c->o->spin_limit_s);
    if (timed && p->step > step0)
        fprintf(stderr,
                "rewind: timing: loop       %llu steps, %llu KVM_RUN calls; per step: monitor %.2f "
                "us, inside KVM_RUN %.2f us\n",
                (unsigned long long)(p->step - step0), (unsigned long long)clock.runs,
                clock.monitor_ns / 1e3 / (double)(p->step - step0),
                clock.in_run_ns / 1e3 / (double)(p->step - step0));
    c->res->wall_s = now_wall() - c->t0;
    return vr;
}

int run_loop_hooked(struct run_ctx *c, uint64_t stop_at, const struct vcpu_hooks *h,
                    double spin_limit_s)
{
    RW_ASSERT(c->lockfd >= 0); /* invariant 1 */
    struct vcpu_limits lim = {.max_steps = stop_at, .hooks = h};
    return watched_run(c, &lim, spin_limit_s);
}

static void hash_done(hash_ctx **h, char hex[65])
{
    hash256 d;
    hash_final(*h, &d);
    *h = NULL;
    if (hex)
        hash_hex(&d, hex);
}

int run_settle(struct run_ctx *c)
{
    struct platform *p = c->p;
    struct run_sink *s = c->sink;
    struct rw_result *res = c->res;
    c->phase = PH_FINISH;
    hash_done(&s->trace, res->trace_hash);
    hash_done(&s->output, res->output_hash);
    res->perturbed = p->perturbed;
    res->refused = p->refused;
    res->outcome = (enum rw_outcome)p->outcome;
    res->job_status = p->job_status;
    res->steps = p->step;
    res->virt_ns = p->now_ns;
    res->exit_code = exit_code_of(p);
    res->inspected = s->inspected;
    res->inspect_status = s->inspect_status;
    if (c->inspect && !s->inspected)
        return ctx_fail(c, "the inspection did not finish: the run ended %s at step %llu",
                        rw_outcome_word(res->outcome), (unsigned long long)p->step);
    /* rewind-init's message explains its own failures, never the monitor's
     * verdicts (a job can forge INIT ERROR records too). */
    if (s->init_error[0] && p->outcome != PLATFORM_EXITED && p->outcome != PLATFORM_GUEST_ERROR &&
        p->outcome != PLATFORM_TIMEOUT && p->outcome != PLATFORM_STALLED)
        snprintf(res->message, sizeof(res->message), "%s", s->init_error);
    else
        snprintf(res->message, sizeof(res->message), "%s", p->message);
    if ((p->outcome == PLATFORM_PANIC || p->outcome == PLATFORM_GUEST_ERROR ||
         p->outcome == PLATFORM_INIT_FAILED || p->outcome == PLATFORM_STALLED) &&
        !c->o->show_console && s->console_len) {
        run_notice(s->obs, "last kernel console lines:");
        emit(s->obs, RW_CONSOLE, s->console, s->console_len);
        if (s->console[s->console_len - 1] != '\n')
            emit(s->obs, RW_CONSOLE, "\n", 1);
    }
    timing(c, "vm");
    hash256 rh;
    /* The join before the keyframes are read or published (kfcap.h
     * invariant 6): every capture stored and its record appended. */
    char kerr[512];
    if (c->kf_ready && c->kf.writing && kfcap_sync(&c->kf, kerr, sizeof(kerr)) < 0)
        keyframes_stop(s, p->step, kerr);
    /* A throwaway (cat) is compared with nothing and kept nowhere: its RAM
     * hash would be thrown away with it (res->ram_hash stays ""). */
    const char *audit = getenv("REWIND_AUDIT_DIRTY");
    if (c->kf_ready && audit) {
        fprintf(stderr, "rewind: audit: %ld stale pages\n", kfcap_audit(&c->kf, stderr));
        if (*audit == '/') { /* and the final RAM itself, to compare two runs' */
            FILE *f = fopen(audit, "w");
            int bad = !f || fwrite(c->vm.ram, 1, c->vm.ram_size, f) != c->vm.ram_size;
            if ((f && fclose(f) != 0) || bad)
                fprintf(stderr, "rewind: audit: cannot write the final RAM to %s\n", audit);
        }
    }
    if (c->keep != RUN_KEEP_NOTHING) {
        if ((c->kf_ready ? kfcap_ram_hash(&c->kf, rh.b) : kvm_ram_hash(&c->vm, rh.b)) < 0)
            return ctx_fail(c, "cannot hash guest RAM: %s", strerror(errno));
        hash_hex(&rh, res->ram_hash);
    }
    if (s->states) {
        fclose(s->states);
        s->states = NULL;
    }
    if (c->kf_ready) {
        res->keyframes = c->kf.taken;
        res->kf_pages = c->kf.delta_pages;
        res->kf_bytes = c->kf.w.bytes;
        res->kf_capture_s = c->kf.capture_s;
        if (c->kf.timed && c->kf.dirty_pages)
            fprintf(stderr,
                    "rewind: timing: keyframes  %llu taken, %llu dirty pages: capture %.2f us per "
                    "dirty page; hash + zstd -1 of the same pages alone %.2f us per page; ratio "
                    "%.2f\n",
                    (unsigned long long)c->kf.taken, (unsigned long long)c->kf.dirty_pages,
                    c->kf.capture_s * 1e6 / (double)c->kf.dirty_pages,
                    c->kf.anchor_s * 1e6 / (double)c->kf.dirty_pages,
                    c->kf.capture_s / (c->kf.anchor_s > 0 ? c->kf.anchor_s : 1e-9));
        if (c->kf.timed && c->kf.dirty_pages)
            fprintf(stderr,
                    "rewind: timing: keyframes  step path %.2f us per dirty page (the copy and "
                    "%llu waits for the worker), worker %.2f us per dirty page\n",
                    c->kf.capture_s * 1e6 / (double)c->kf.dirty_pages,
                    (unsigned long long)c->kf.waits,
                    c->kf.work_s * 1e6 / (double)c->kf.dirty_pages);
        if (c->kf.timed)
            fprintf(stderr, "rewind: timing: memo       %llu of %llu pages named by the memo%s\n",
                    (unsigned long long)c->kf.memo.hits, (unsigned long long)c->kf.memo.tries,
                    c->kf.memo.dirfd < 0 ? " (off)" : "");
        res->restore_s = c->kf.restore_s;
        /* The pages first, then the keyframes file that names them (invariant 4). */
        if (store_sync(c->store) < 0 || kf_close(&c->kf.w) < 0)
            return ctx_fail(c, "cannot write the keyframes of this run: %s", strerror(errno));
    }
    return 0;
}

/* Restore keyframe (l, pick) of ch, run it to the end, and compare it with
 * the run. Returns 0 (a line to the observer) or -1. */
static int verify_one(struct run_ctx *c, const struct kf_chain *ch, size_t l, size_t pick,
                      const char *trace_path)
{
    struct platform *p = c->p;
    struct run_sink *s = c->sink;
    struct rw_result *res = c->res;
    /* First restore and run a little (the same process stays current, so
     * its CR3 is the one restored next): the second restore below is the
     * case a missed TLB flush would break. */
    if (kfcap_restore(&c->kf, p, ch, l, pick, ERR) < 0)
        return -1;
    struct vcpu_limits warm = {.abort = c->o->abort, .max_steps = p->step + 64};
    s->trace = hash_new();
    if (!s->trace || vcpu_run(p, &warm) < 0)
        return ctx_fail(c, "%s", p->message);
    hash_done(&s->trace, NULL);
    if (kfcap_restore(&c->kf, p, ch, l, pick, ERR) < 0)
        return -1;
    uint64_t from = p->step;
    s->trace = hash_new();
    if (!s->trace || replay_prefix(trace_path, NULL, NULL, from, s, ERR) < 0)
        return -1;
    struct vcpu_limits lim = {.abort = c->o->abort};
    if (vcpu_run(p, &lim) < 0)
        return ctx_fail(c, "%s", p->message);
    char thx[65], rhx[65];
    hash_done(&s->trace, thx);
    hash256 rh;
    if (kfcap_ram_hash(&c->kf, rh.b) < 0)
        return ctx_fail(c, "cannot hash guest RAM");
    hash_hex(&rh, rhx);
    res->restores_checked++;
    const char *why = p->step != res->steps                  ? "other step count"
                      : (int)p->outcome != (int)res->outcome ? "other outcome"
                      : p->job_status != res->job_status     ? "other status"
                      : strcmp(thx, res->trace_hash)         ? "other trace"
                      : strcmp(rhx, res->ram_hash)           ? "other final RAM"
                                                             : NULL;
    if (why) {
        res->restores_failed++;
        run_notice(s->obs,
                   "restore at step %llu: DIFFERS (%s: %llu steps, %s, trace %.12s, "
                   "RAM %.12s)",
                   (unsigned long long)from, why, (unsigned long long)p->step,
                   rw_outcome_word((enum rw_outcome)p->outcome), thx, rhx);
    } else {
        run_notice(s->obs, "restore at step %llu: identical to the end (step %llu)",
                   (unsigned long long)from, (unsigned long long)p->step);
    }
    return 0;
}

int run_verify_restores(struct run_ctx *c, uint64_t n)
{
    RW_ASSERT(c->kf_ready);
    c->phase = PH_FINISH;
    const char *name = strrchr(c->dir.staging, '/');
    name = name ? name + 1 : c->dir.staging;
    trace_flush(&c->dir.trace);
    struct kf_chain ch;
    if (kf_chain_load(c->o->home, name, &ch, ERR) < 0)
        return -1;
    size_t total = 0;
    for (size_t l = 0; l < ch.nlinks; l++)
        total += ch.link[l].count;
    uint64_t want = n < total ? n : total;
    char tp[PATH_LEN];
    staging_path(c, "trace", tp, sizeof(tp));
    struct run_sink *s = c->sink;
    struct trace_writer *file = s->file;
    int quiet = s->quiet, rc = 0;
    s->file = NULL;
    s->quiet = 1;
    c->kf.writing = 0;
    for (uint64_t j = 0; j < want && rc == 0; j++) {
        /* Evenly spaced over the chain, last keyframe included. */
        size_t pick = want == 1 ? total - 1 : (size_t)(j * (total - 1) / (want - 1)), l = 0;
        while (pick >= ch.link[l].count)
            pick -= ch.link[l++].count;
        rc = verify_one(c, &ch, l, pick, tp);
    }
    kf_chain_free(&ch);
    s->file = file;
    s->quiet = quiet;
    c->res->restore_s = c->kf.restore_s;
    return rc;
}

/* A shell session's id covers its inputs, known only now: rename the run. */
static int session_rename(struct run_ctx *c)
{
    if (session_close(&c->sess, c->inputs_hex) < 0)
        return ctx_fail(c, "cannot write the session's inputs");
    c->sink->session = NULL;
    c->spec.inputs_hash = c->inputs_hex;
    free(c->spec_json);
    c->spec_json = spec_to_json(&c->spec);
    spec_id(&c->spec, c->res->id);
    char sp[PATH_LEN];
    staging_path(c, "spec.json", sp, sizeof(sp));
    if (!c->spec_json || rundir_write_file(sp, c->spec_json) < 0)
        return ctx_fail(c, "cannot write the session's spec");
    return 0;
}

int run_finish(struct run_ctx *c)
{
    struct rw_result *res = c->res;
    c->phase = PH_FINISH;
    if (c->kf_ready) {
        c->kf_ready = 0;
        if (kfcap_end_run(&c->kf) < 0)
            return ctx_fail(c, "cannot write the keyframes of this run: %s", strerror(errno));
    }
    if (c->keep == RUN_KEEP_NOTHING) { /* cat: the look must not change anything stored */
        rundir_abort(&c->dir);
        return 0;
    }
    if (c->sink->session && session_rename(c) < 0)
        return -1;
    char name[RW_ID_MAX];
    /* The comparison below reads this run's trace from its file: every
     * record must be there, not only those up to the last flush (a
     * divergence was once reported as "step 0 here" at a flush boundary). */
    trace_flush(&c->dir.trace);
    /* A complete fork replaces a cut run of its spec, as a complete run
     * does (docs/reliability.md), unless that run is its own parent. */
    int replace_cut = check_against_stored(c, name, sizeof(name)) && c->keep == RUN_KEEP &&
                      !(c->parent && !strcmp(c->parent, res->id));
    res->events = c->dir.trace.count;
    if (c->keep == RUN_KEEP_IF_DIFFERENT &&
        (res->outcome == RW_TIMEOUT || res->outcome == RW_LIMIT || res->outcome == RW_SPIN)) {
        /* a replay cut by --timeout or a limit compares nothing: not kept */
        res->diverged = 0;
        rundir_abort(&c->dir);
        return 0;
    }
    if ((c->keep == RUN_KEEP_IF_DIFFERENT || c->parent) && res->had_stored && !res->diverged &&
        !replace_cut) {
        /* Identical to the stored run: nothing new to keep (invariant 5). */
        rundir_abort(&c->dir);
        return 0;
    }
    RW_ASSERT(c->lockfd >= 0);                                                 /* invariant 1 */
    RW_ASSERT(!c->parent || !res->had_stored || res->diverged || replace_cut); /* invariant 5 */
    json_t *names = runnames_merged(c->o->home, name, c->o->name);
    char *mj = manifest_json(c->spec_json, res, c->dir.trace.count, c->o->name, names);
    json_decref(names);
    int fr = mj ? rundir_finish_as(&c->dir, name, mj, ERR) : ctx_fail(c, "out of memory");
    free(mj);
    if (fr < 0)
        return -1;
    timing(c, "ram+save");
    return 0;
}

int run_body(struct run_ctx *c, int rc)
{
    if (rc == 0)
        rc = run_keyframes_begin(c);
    if (rc == 0 && c->inspect)
        rc = run_inspect_start(c);
    if (rc == 0)
        rc = run_loop(c, 0);
    if (rc == 0)
        rc = run_settle(c);
    if (rc == 0 && c->verify)
        rc = run_verify_restores(c, c->verify);
    if (rc == 0)
        rc = run_finish(c);
    return rc;
}

int run_through(struct run_ctx *c, int rc)
{
    return run_close(c, run_body(c, rc));
}

int run_end(struct run_ctx *c, int rc)
{
    RW_ASSERT(rc == 0 || rc == -1);
    /* from PH_INSPECT on, the platform is set up and has an outcome */
    int cut = !c->p || c->phase < PH_INSPECT      ? 0
              : c->p->outcome == PLATFORM_TIMEOUT ? RW_ETIMEOUT
              : c->p->outcome == PLATFORM_LIMIT   ? RW_ELIMIT
                                                  : 0;
    if (c->sink && c->sink->session)
        session_close(&c->sess, c->inputs_hex);
    if (c->kf_ready && rc < 0)
        kfcap_abort(&c->kf); /* the join of an error: nothing more appended */
    else if (c->kf_ready)
        kfcap_end_run(&c->kf);
    c->kf_ready = 0;
    if (rc < 0)
        rundir_abort(&c->dir);
    if (c->sink) {
        if (c->sink->trace)
            hash_done(&c->sink->trace, NULL);
        if (c->sink->output)
            hash_done(&c->sink->output, NULL);
        if (c->sink->states)
            fclose(c->sink->states);
        free(c->sink);
        c->sink = NULL;
    }
    free(c->p);
    c->p = NULL;
    free(c->spec_json);
    c->spec_json = NULL;
    if (rc < 0)
        c->err->code = run_phase_code(c->phase); /* invariant 2: the one place */
    if (rc < 0 && cut)
        c->err->code = cut; /* an inspection cut by --timeout or a disk limit */
    return rc;
}

int run_close(struct run_ctx *c, int rc)
{
    rc = run_end(c, rc);
    if (c->kf_alloc)
        kfcap_free(&c->kf);
    c->kf_alloc = 0;
    store_close(c->store);
    c->store = NULL;
    kvm_close(&c->vm);
    initrd_free(&c->rd);
    if (c->lockfd >= 0)
        homelock_release(c->lockfd);
    c->lockfd = -1;
    io_set_abort(NULL);
    return rc;
}
