/*
 * ctx_test: the run context (src/run/ctx.c: prepare, boot, loop, settle,
 * finish, close, and the record callbacks behind them) driven in-process
 * over a scripted machine: run_opts.seam (src/run/seam.h) opens a fake VM
 * (anonymous RAM, no fds) and boots nothing, and the loop's kvm_vm.enter
 * plays a script of the exits the guest kernel and rewind-init make
 * (guest/include/rewind_abi.h): the shared page registered, records written
 * into guest RAM and their address OUT to REWIND_PORT_RECORD, the job's
 * status written to the shared page before REWIND_PORT_STOP. Everything
 * else is the real engine: a temporary home, the lock, the image (a file
 * with erofs's magic), the hashes, the initramfs, the run directory, the
 * trace, the comparison with a stored run and publishing.
 *
 * Invariants:
 *  1. Each case asserts what the context made of the script: the outcome
 *     and exit code, what reached the observer and at which step, the
 *     stored trace and manifest, the trace hash and what it tells apart.
 *  2. A script that runs out fails the loop (EIO), and so does any script
 *     past FAKE_MAX_STEPS (one that repeats its last exit): a run that
 *     should have ended shows as a failure, never as a hang.
 *  3. The fake guest writes RAM only through guest_write, which records
 *     the pages it wrote for kvm_vm.dirty_log, as KVM's dirty log would.
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "unit.h"
#include "run/ctx.h"
#include "run/seam.h"
#include "trace/trace.h"
#include "trace/tracehash.h"
#include "util/io.h"

#define MEM_MIB 64
#define QUANTUM 5000
#define SHARED_GPA 0x2000u
#define REC_GPA 0x10000u
#define RUN_SIZE 8192
#define FAKE_MAX_STEPS 100000

/* One exit the fake guest makes. */
enum act_kind {
    A_SHARED,  /* register the shared page */
    A_REC,     /* a record at gpa (0: REC_GPA), OUT to the record port */
    A_CLOCK,   /* read the clock: a step and nothing else */
    A_STOP,    /* job_status = status, then OUT REWIND_STOP_POWEROFF */
    A_FOREVER, /* the CLOCK step, again and again: a job that never ends */
    A_MARKS,   /* a 4000-byte MARK record, again and again: a runaway trace */
};

struct act {
    enum act_kind k;
    uint16_t kind; /* A_REC: the record's kind */
    uint64_t aux;
    const char *text; /* A_REC: payload */
    size_t n;         /* its bytes */
    uint32_t gpa;     /* A_REC: where (0: REC_GPA) */
    uint32_t len;     /* A_REC: the header's len (0: the true length) */
    uint64_t status;  /* A_STOP: the job's wait status */
};

#define REC(kd, ax, lit)                                                                           \
    {                                                                                              \
        .k = A_REC, .kind = (kd), .aux = (ax), .text = (lit), .n = sizeof(lit) - 1                 \
    }
#define STOP(st)                                                                                   \
    {                                                                                              \
        .k = A_STOP, .status = (st)                                                                \
    }

/* The job "hello" as the guest runs it: it prints hello and exits 3. The
 * OUTPUT record is step 6; the run ends at step 9 with 6 records. */
#define HELLO_SCRIPT(line)                                                                         \
    {                                                                                              \
        {.k = A_SHARED}, REC(REWIND_REC_CONSOLE, 0, "Linux version 6.1 (fake)\n"),                 \
            REC(REWIND_REC_INIT, REWIND_INIT_JOB_START, "/bin/hello"),                             \
            REC(REWIND_REC_EXEC, 0, "/bin/hello\0hello"), {.k = A_CLOCK},                          \
            REC(REWIND_REC_OUTPUT, 1, line), REC(REWIND_REC_EXIT, 3 << 8, "hello"),                \
            REC(REWIND_REC_INIT, REWIND_INIT_JOB_EXIT, ""), STOP(3 << 8),                          \
    }
static const struct act HELLO[] = HELLO_SCRIPT("hello\n");
static const struct act HELLP[] = HELLO_SCRIPT("hellp\n"); /* one output byte apart */
#define HELLO_OUT_STEP 6
#define HELLO_STEPS 9
#define HELLO_EVENTS 6

/* The fake machine and guest (one at a time: a process drives one machine). */
static struct {
    struct kvm_vm *vm;
    const struct act *script, *on_inspect;
    int n, n_inspect, pos, steps;
    int irq; /* a vector was sent: the guest takes it at its next entry */
    uint64_t dirty[MEM_MIB * 256 / 64]; /* pages the guest wrote since the last dirty_log */
    int open_fail, boot_fail;
    uint64_t abort_at; /* the --timeout's signal arrives after this many steps (0: never) */
    volatile sig_atomic_t *abort;
    char cmdline[1024], req[64];
    size_t initrd_size, req_len;
    int job_in_initrd;
    uint8_t rng_seed[32];
} G;

/* What the observer saw. */
static struct {
    char out[8192], console[8192], notice[2048];
    size_t nout, nconsole;
    uint64_t out_step; /* the platform's step when the first job output arrived */
    int nout_calls;
} OBS;
static struct run_ctx *CUR; /* the context under test, for the observer's step */

static void guest_write(uint64_t gpa, const void *p, size_t n)
{
    if (gpa >= G.vm->ram_size)
        return;
    if (n > G.vm->ram_size - gpa)
        n = G.vm->ram_size - gpa;
    memcpy(G.vm->ram + gpa, p, n);
    for (uint64_t pg = gpa / 4096; n && pg <= (gpa + n - 1) / 4096; pg++)
        G.dirty[pg / 64] |= 1ull << (pg % 64);
}

static struct rewind_shared *shared(void)
{
    return (struct rewind_shared *)(G.vm->ram + SHARED_GPA);
}

static void out(struct kvm_run *run, uint16_t port, uint32_t value)
{
    run->exit_reason = KVM_EXIT_IO;
    run->io.direction = KVM_EXIT_IO_OUT;
    run->io.size = 4;
    run->io.count = 1;
    run->io.port = port;
    run->io.data_offset = 4096;
    memcpy((uint8_t *)run + 4096, &value, 4);
}

static void put_record(const struct act *a)
{
    uint8_t buf[REWIND_RECORD_MAX];
    struct rewind_record r = {.kind = a->kind, .aux = a->aux};
    r.pid = r.tid = a->kind == REWIND_REC_INIT || a->kind == REWIND_REC_CONSOLE ? 1 : 2;
    size_t n = a->n < sizeof(buf) - sizeof(r) ? a->n : sizeof(buf) - sizeof(r);
    r.len = a->len ? a->len : (uint32_t)(sizeof(r) + n);
    memcpy(buf, &r, sizeof(r));
    if (a->text)
        memcpy(buf + sizeof(r), a->text, n);
    guest_write(a->gpa ? a->gpa : REC_GPA, buf, sizeof(r) + n);
}

/* The guest's interrupt handler: it takes the pending reasons; an
 * inspection request switches to the inspector's script (rewind-init's). */
static void take_interrupt(void)
{
    uint64_t pending = shared()->pending, zero = 0;
    guest_write(SHARED_GPA + offsetof(struct rewind_shared, pending), &zero, 8);
    if (!(pending & REWIND_PENDING_INSPECT) || !G.on_inspect)
        return;
    G.req_len = shared()->req_len < sizeof(G.req) ? shared()->req_len : sizeof(G.req);
    memcpy(G.req, shared()->req, G.req_len);
    G.script = G.on_inspect;
    G.n = G.n_inspect;
    G.pos = 0;
}

static int fake_enter(struct kvm_vm *vm)
{
    struct kvm_run *run = vm->run;
    if (G.irq) {
        G.irq = 0;
        take_interrupt();
    }
    if (G.abort_at && (uint64_t)G.steps == G.abort_at && !*G.abort) {
        *G.abort = 1; /* what --timeout's timer does, then KVM_RUN returns EINTR */
        errno = EINTR;
        return -1;
    }
    if (G.pos >= G.n || G.steps >= FAKE_MAX_STEPS) { /* invariant 2 */
        errno = EIO;
        return -1;
    }
    const struct act *a = &G.script[G.pos];
    G.steps++;
    switch (a->k) {
    case A_SHARED: {
        uint64_t magic = REWIND_SHARED_MAGIC;
        guest_write(SHARED_GPA, &magic, 8);
        out(run, REWIND_PORT_SHARED, SHARED_GPA);
        break;
    }
    case A_REC:
        put_record(a);
        out(run, REWIND_PORT_RECORD, a->gpa ? a->gpa : REC_GPA);
        break;
    case A_CLOCK:
    case A_FOREVER:
        out(run, REWIND_PORT_CLOCK, 0);
        break;
    case A_STOP:
        guest_write(SHARED_GPA + offsetof(struct rewind_shared, job_status), &a->status, 8);
        out(run, REWIND_PORT_STOP, REWIND_STOP_POWEROFF);
        break;
    case A_MARKS: {
        static const char big[4000];
        struct act m = {.k = A_REC, .kind = REWIND_REC_MARK, .text = big, .n = sizeof(big)};
        put_record(&m);
        out(run, REWIND_PORT_RECORD, REC_GPA);
        break;
    }
    }
    if (a->k != A_FOREVER && a->k != A_MARKS)
        G.pos++;
    return 0;
}

static int fake_send(struct kvm_vm *vm, uint8_t vector)
{
    (void)vm;
    G.irq = vector == REWIND_VECTOR;
    return 1;
}

static int fake_dirty_log(struct kvm_vm *vm, uint64_t *bitmap)
{
    size_t words = (vm->ram_size / 4096 + 63) / 64;
    for (size_t i = 0; i < words && i < sizeof(G.dirty) / 8; i++)
        bitmap[i] |= G.dirty[i];
    memset(G.dirty, 0, sizeof(G.dirty));
    return 0;
}

static int fake_open(void *ctx, struct kvm_vm *vm, uint64_t ram_size, char *model, size_t model_len,
                     char *err, size_t errlen)
{
    (void)ctx;
    kvm_init(vm);
    if (G.open_fail || ram_size != (uint64_t)MEM_MIB << 20) {
        snprintf(err, errlen, "fake: no machine here");
        return -1;
    }
    vm->ram = mmap(NULL, ram_size, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    vm->run = mmap(NULL, RUN_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (vm->ram == MAP_FAILED || vm->run == MAP_FAILED)
        abort();
    vm->ram_size = ram_size;
    vm->run_size = RUN_SIZE;
    vm->written = calloc(ram_size / 4096 / 64, 8);
    vm->dirty = calloc(ram_size / 4096 / 64, 8);
    if (!vm->written || !vm->dirty)
        abort();
    vm->enter = fake_enter;
    vm->send_vector = fake_send;
    vm->dirty_log = fake_dirty_log;
    snprintf(model, model_len, "fake-cpu");
    G.vm = vm;
    memset(G.dirty, 0, sizeof(G.dirty));
    return 0;
}

static int fake_boot(void *ctx, struct kvm_vm *vm, const struct boot_config *bc, char *err,
                     size_t errlen)
{
    (void)ctx;
    (void)vm;
    if (G.boot_fail) {
        snprintf(err, errlen, "fake: no kernel here");
        return -1;
    }
    snprintf(G.cmdline, sizeof(G.cmdline), "%s", bc->cmdline);
    G.initrd_size = bc->initrd_size;
    G.job_in_initrd = memmem(bc->initrd, bc->initrd_size, "/bin/hello", 10) != NULL &&
                      memmem(bc->initrd, bc->initrd_size, "fake rewind-init", 16) != NULL;
    memcpy(G.rng_seed, bc->rng_seed, 32);
    return 0;
}

static const struct run_seam SEAM = {fake_open, fake_boot, NULL};

static void obs_output(void *ctx, enum rw_stream s, const void *buf, size_t n)
{
    (void)ctx;
    if (s == RW_STDOUT || s == RW_STDERR) {
        if (!OBS.nout_calls++)
            OBS.out_step = CUR && CUR->p ? CUR->p->step : 0;
        if (OBS.nout + n < sizeof(OBS.out)) {
            memcpy(OBS.out + OBS.nout, buf, n);
            OBS.nout += n;
        }
    } else if (s == RW_CONSOLE && OBS.nconsole + n < sizeof(OBS.console)) {
        memcpy(OBS.console + OBS.nconsole, buf, n);
        OBS.nconsole += n;
    } else if (s == RW_NOTICE) {
        snprintf(OBS.notice, sizeof(OBS.notice), "%.*s", (int)n, (const char *)buf);
    }
}

static const struct rw_observer OBSERVER = {obs_output, NULL, NULL};
static char HOME[4096], ROOT[4200], KERNEL[4200], INIT[4200];
static char *ARGV[] = {"/bin/hello", NULL};
static char *ENV[] = {"PATH=/bin", NULL};
static volatile sig_atomic_t ABORT;

static void opts(struct run_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->root = ROOT;
    o->argv = ARGV;
    o->env = ENV;
    o->cwd = "/";
    o->mem_mib = MEM_MIB;
    o->seed = 1;
    o->quantum_ns = QUANTUM;
    o->epoch_s = 1700000000;
    o->home = HOME;
    o->kernel = KERNEL;
    o->init = INIT;
    o->obs = &OBSERVER;
    o->abort = &ABORT;
    o->no_keyframes = 1; /* a keyframe needs the vCPU's registers: not over this fake */
    o->cpus = 1;
    o->seam = &SEAM;
}

/* Arm the fake with a script; clear what the observer saw. */
static void play(const struct act *s, int n)
{
    memset(&G, 0, sizeof(G));
    memset(&OBS, 0, sizeof(OBS));
    G.script = s;
    G.n = n;
    G.abort = &ABORT;
    ABORT = 0;
}

#define PLAY(s) play((s), (int)(sizeof(s) / sizeof((s)[0])))

/* The record mode's phases (record.c): prepare, boot, the common tail. */
static int record(const struct run_opts *o, enum run_keep keep, const struct run_inspect *ins,
                  struct rw_result *res, struct rw_error *err)
{
    struct run_ctx c;
    CUR = &c;
    int rc = run_prepare(&c, o, ins, keep, 0, res, err);
    if (rc == 0)
        rc = run_boot(&c);
    rc = run_through(&c, rc);
    CUR = NULL;
    return rc;
}

static int exists(const char *run, const char *file)
{
    char p[4400];
    snprintf(p, sizeof(p), "%s/runs/%s%s%s", HOME, run, file ? "/" : "", file ? file : "");
    return access(p, F_OK) == 0;
}

/* The number of entries under runs/ whose name starts with '.' (staging). */
static int staged(void)
{
    char p[4200];
    snprintf(p, sizeof(p), "%s/runs", HOME);
    DIR *d = opendir(p);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        n += e->d_name[0] == '.' && strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    if (d)
        closedir(d);
    return n;
}

static int manifest_has(const char *run, const char *text)
{
    char p[4400], buf[8192] = {0};
    snprintf(p, sizeof(p), "%s/runs/%s/manifest.json", HOME, run);
    FILE *f = fopen(p, "r");
    if (!f)
        return 0;
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = 0;
    return strstr(buf, text) != NULL;
}

/* Entry i of run's trace: its step, kind and payload (into pay, n bytes). */
static int trace_entry_at(const char *run, uint64_t i, uint64_t *step, uint16_t *kind, char *pay,
                          size_t n)
{
    char p[4400];
    snprintf(p, sizeof(p), "%s/runs/%s/trace", HOME, run);
    struct trace_reader *r = malloc(sizeof(*r));
    if (!r || trace_open_read(r, p) != 0) {
        free(r);
        return -1;
    }
    struct trace_entry e;
    int found = -1;
    for (uint64_t k = 0; found < 0 && trace_next(r, &e) == 1; k++)
        if (k == i) {
            *step = e.step;
            *kind = e.rec.kind;
            snprintf(pay, n, "%.*s", (int)e.payload_len, (const char *)e.payload);
            found = 0;
        }
    trace_close_read(r);
    free(r);
    return found;
}

/* Record: the outcome and exit code from the job's status at the STOP
 * step, the output at the step it arrived, the stored run. */
static void test_record(struct rw_result *first)
{
    struct run_opts o;
    struct rw_result res;
    struct rw_error err;
    opts(&o);
    PLAY(HELLO);
    CHECK(record(&o, RUN_KEEP, NULL, &res, &err) == 0, "the run ran");
    CHECK(res.outcome == RW_EXITED && res.job_status == 3 << 8 && res.exit_code == 3,
          "exited, status and exit code 3 from the STOP step's job_status");
    CHECK(res.steps == HELLO_STEPS && res.virt_ns == HELLO_STEPS * QUANTUM && G.pos == G.n,
          "nine steps, one quantum each, the whole script and no more");
    CHECK(OBS.nout == 6 && !memcmp(OBS.out, "hello\n", 6) && OBS.nout_calls == 1,
          "the observer got the job's stdout once");
    CHECK(OBS.out_step == HELLO_OUT_STEP, "at the step its record arrived, not at the end");
    CHECK(OBS.nconsole == 0, "no console without show_console and a clean end");
    CHECK(res.events == HELLO_EVENTS && !res.had_stored && !res.diverged, "six events, new");
    CHECK(exists(res.id, "manifest.json") && staged() == 0, "published, no staging left");
    CHECK(manifest_has(res.id, "\"outcome\": \"exited\"") &&
              manifest_has(res.id, "\"exit_code\": 3") && manifest_has(res.id, res.trace_hash),
          "the manifest: outcome, exit code, trace hash");
    uint64_t step = 0;
    uint16_t kind = 0;
    char pay[64];
    CHECK(trace_entry_at(res.id, 3, &step, &kind, pay, sizeof(pay)) == 0 &&
              step == HELLO_OUT_STEP && kind == REWIND_REC_OUTPUT && !strcmp(pay, "hello\n"),
          "the trace's 4th entry: the output at its step");
    char p[4400], hex[65];
    uint64_t events = 0;
    snprintf(p, sizeof(p), "%s/runs/%s/trace", HOME, res.id);
    CHECK(tracehash_file(p, NULL, hex, &events) == 0 && !strcmp(hex, res.trace_hash) &&
              events == HELLO_EVENTS,
          "the trace hash is that of the stored trace (what verify computes)");
    CHECK(strlen(res.ram_hash) == 64 && strlen(res.output_hash) == 64, "RAM and output hashes");
    CHECK(!strncmp(G.cmdline, "console=rewind ", 15) && G.job_in_initrd,
          "booted with the command line and an initramfs holding the job and rewind-init");
    *first = res;
}

/* The determinism twin in miniature: the same script again is the same
 * run; one output byte apart is a violation named at its event. */
static void test_twin(const struct rw_result *first)
{
    struct run_opts o;
    struct rw_result res;
    struct rw_error err;
    opts(&o);
    PLAY(HELLO);
    CHECK(record(&o, RUN_KEEP, NULL, &res, &err) == 0, "ran again");
    CHECK(!strcmp(res.id, first->id) && !strcmp(res.trace_hash, first->trace_hash) &&
              !strcmp(res.ram_hash, first->ram_hash) &&
              !strcmp(res.output_hash, first->output_hash),
          "same spec, same trace, RAM and output hashes");
    char kept[80];
    snprintf(kept, sizeof(kept), "%s~1", first->id);
    CHECK(res.had_stored && !res.diverged && !exists(kept, NULL), "no violation");
    PLAY(HELLP);
    CHECK(record(&o, RUN_KEEP, NULL, &res, &err) == 0, "ran one byte apart");
    CHECK(!strcmp(res.id, first->id) && strcmp(res.trace_hash, first->trace_hash) &&
              strcmp(res.output_hash, first->output_hash),
          "same id, other trace and output hashes");
    CHECK(res.had_stored && res.diverged && exists(kept, "manifest.json"),
          "a determinism violation, kept beside the stored run as <id>~1");
    CHECK(strstr(res.divergence, "their traces part at event 3 (step 6 there, step 6 here)") !=
              NULL,
          "named at the output's event and step");
    /* Replay (keep only if different): the same script keeps nothing. */
    PLAY(HELLO);
    CHECK(record(&o, RUN_KEEP_IF_DIFFERENT, NULL, &res, &err) == 0 && res.had_stored &&
              !res.diverged && staged() == 0,
          "a replay equal to the stored run: nothing kept");
    snprintf(kept, sizeof(kept), "%s~2", first->id);
    CHECK(!exists(kept, NULL), "no <id>~2");
    PLAY(HELLP);
    CHECK(record(&o, RUN_KEEP_IF_DIFFERENT, NULL, &res, &err) == 0 && res.diverged &&
              exists(kept, "manifest.json"),
          "a replay that differs is kept as <id>~2");
}

/* Stopped at a step (what seek and an inspection do first), then run on:
 * the same run as one uninterrupted loop. */
static void test_stop_at(const struct rw_result *first)
{
    struct run_opts o;
    struct rw_result res;
    struct rw_error err;
    struct run_ctx c;
    opts(&o);
    PLAY(HELLO);
    CUR = &c;
    int rc = run_prepare(&c, &o, NULL, RUN_KEEP_IF_DIFFERENT, 0, &res, &err);
    rc = rc ? rc : run_boot(&c);
    rc = rc ? rc : run_keyframes_begin(&c);
    rc = rc ? rc : run_loop(&c, 5);
    CHECK(rc == 0 && c.p->step == 5 && c.p->outcome == PLATFORM_RUNNING && OBS.nout == 0,
          "paused at step 5, running, no output yet");
    rc = rc ? rc : run_loop(&c, 5);
    CHECK(rc == 0 && c.p->step == 5 && G.pos == 5, "a loop to where it is runs nothing");
    rc = rc ? rc : run_loop(&c, 0);
    CHECK(rc == 0 && c.p->outcome == PLATFORM_EXITED && OBS.out_step == HELLO_OUT_STEP,
          "run on to the end, the output at its step");
    rc = rc ? rc : run_settle(&c);
    rc = rc ? rc : run_finish(&c);
    rc = run_close(&c, rc);
    CUR = NULL;
    CHECK(rc == 0 && !strcmp(res.trace_hash, first->trace_hash) && res.had_stored && !res.diverged,
          "the same trace as the run never stopped");
}

/* A job that never ends: --timeout ends it (124) and the cut run is kept
 * until a complete run of its spec replaces it; a runaway trace ends at
 * its cap (118). */
static void test_cut(void)
{
    static const struct act forever[] = {{.k = A_SHARED}, {.k = A_FOREVER}};
    static const struct act marks[] = {{.k = A_SHARED}, {.k = A_MARKS}};
    struct run_opts o;
    struct rw_result res;
    struct rw_error err;
    opts(&o);
    o.seed = 2; /* a spec of its own */
    PLAY(forever);
    G.abort_at = 1000;
    CHECK(record(&o, RUN_KEEP, NULL, &res, &err) == 0, "the run ran");
    CHECK(res.outcome == RW_TIMEOUT && res.exit_code == RW_ETIMEOUT && res.steps == 1000,
          "timeout at the step the abort flag was seen, exit code 124");
    CHECK(strstr(res.message, "timed out after 1000 steps") && manifest_has(res.id, "timeout"),
          "its message; kept as a cut run");
    PLAY(HELLO);
    CHECK(record(&o, RUN_KEEP, NULL, &res, &err) == 0 && res.outcome == RW_EXITED &&
              !res.diverged && manifest_has(res.id, "\"exited\""),
          "a complete run of the spec replaces the cut one");
    o.seed = 3;
    o.max_trace_mb = 1;
    PLAY(marks);
    CHECK(record(&o, RUN_KEEP, NULL, &res, &err) == 0, "the run ran");
    CHECK(res.outcome == RW_LIMIT && res.exit_code == RW_ELIMIT && strstr(res.message, "trace"),
          "a runaway trace ends at its cap, exit code 118");
    CHECK(res.steps > 200 && res.steps < 300 && res.events == res.steps - 1,
          "at the step of the record that crossed 1 MiB, that record kept");
}

/* The guest is untrusted: a record it cannot parse ends the run as a
 * guest error (119) at that step, is counted, never reaches the trace,
 * and the kernel's last console lines reach the observer. */
static void test_bad_records(void)
{
    const uint32_t end = (uint32_t)MEM_MIB << 20;
    const struct act bad[] = {
        {.k = A_REC, .kind = REWIND_REC_OUTPUT, .aux = 1, .gpa = end - 24, .len = 100},
        {.k = A_REC, .kind = 99, .text = "x", .n = 1},
        {.k = A_REC, .kind = REWIND_REC_OUTPUT, .gpa = end + 4096},
        {.k = A_REC, .kind = REWIND_REC_OUTPUT, .len = 8},
        {.k = A_REC, .kind = REWIND_REC_SCHED, .text = "x", .n = 1},
    };
    const char *want[] = {"runs past guest RAM", "unknown kind 99", "outside guest RAM",
                          "bad length 8", "only the monitor writes"};
    for (int i = 0; i < 5; i++) {
        struct act s[] = {{.k = A_SHARED},
                          REC(REWIND_REC_CONSOLE, 0, "kernel says hi\n"),
                          REC(REWIND_REC_OUTPUT, 1, "before\n"),
                          bad[i],
                          STOP(0)};
        struct run_opts o;
        struct rw_result res;
        struct rw_error err;
        opts(&o);
        o.seed = 10 + (uint64_t)i;
        PLAY(s);
        CHECK(record(&o, RUN_KEEP, NULL, &res, &err) == 0, "the run ran");
        CHECK(res.outcome == RW_GUEST_ERROR && res.exit_code == RW_EGUEST && res.steps == 4 &&
                  res.refused == 1 && G.pos == 4,
              "a guest error at the bad record's step, counted once, nothing played after");
        CHECK(strstr(res.message, want[i]) != NULL, want[i]);
        CHECK(res.events == 2 && manifest_has(res.id, "\"refused\": 1"), "not in the trace");
        CHECK(!strcmp(OBS.notice, "last kernel console lines:") &&
                  !strcmp(OBS.console, "kernel says hi\n") && !strcmp(OBS.out, "before\n"),
              "the console's last lines and the output before it reached the observer");
    }
}

/* An inspection (cat's phases over a booted guest): run to the step, ask
 * the guest, stream the inspector's output, end at INSPECT_DONE, keep
 * nothing. A forged INSPECT_DONE before any request ends nothing. */
static void test_inspect(void)
{
    static const struct act inspector[] = {REC(REWIND_REC_OUTPUT, 1, "motd\n"),
                                           REC(REWIND_REC_INIT, REWIND_INIT_INSPECT_DONE, "0")};
    struct run_opts o;
    struct rw_result res;
    struct rw_error err;
    struct run_inspect ins = {.kind = "cat", .at = 5, .pid = 0, .path = "/etc/motd"};
    opts(&o);
    o.seed = 20;
    PLAY(HELLO);
    G.on_inspect = inspector;
    G.n_inspect = 2;
    CHECK(record(&o, RUN_KEEP_NOTHING, &ins, &res, &err) == 0, "the inspection ran");
    CHECK(res.inspected && res.inspect_status == 0 && res.outcome == RW_STOPPED && res.steps == 7,
          "it ended at the inspector's INSPECT_DONE, two steps after step 5");
    CHECK(G.req_len == 16 && !memcmp(G.req,
                                     "cat\0"
                                     "0\0"
                                     "/etc/motd",
                                     16),
          "the guest got the request: kind, pid, path");
    CHECK(OBS.nout == 5 && !memcmp(OBS.out, "motd\n", 5), "only the inspector's output shown");
    CHECK(!exists(res.id, NULL) && staged() == 0 && res.ram_hash[0] == 0, "nothing kept");
    /* The forged INSPECT_DONE: a record any root job can make. */
    struct act forged[] = HELLO_SCRIPT("hello\n");
    forged[4] = (struct act)REC(REWIND_REC_INIT, REWIND_INIT_INSPECT_DONE, "0");
    PLAY(forged);
    o.seed = 21;
    CHECK(record(&o, RUN_KEEP, NULL, &res, &err) == 0 && res.outcome == RW_EXITED &&
              res.exit_code == 3 && !res.inspected,
          "a forged INSPECT_DONE ends nothing");
}

/* A machine that cannot be opened is KVM's exit code (120); a guest that
 * cannot be booted the kernel's (122); neither leaves a run behind. */
static void test_phases(void)
{
    struct run_opts o;
    struct rw_result res;
    struct rw_error err;
    opts(&o);
    o.seed = 30;
    PLAY(HELLO);
    G.open_fail = 1;
    CHECK(record(&o, RUN_KEEP, NULL, &res, &err) == -1 && err.code == RW_ENOKVM &&
              !strcmp(err.msg, "fake: no machine here"),
          "no machine: 120 with its message");
    PLAY(HELLO);
    G.boot_fail = 1;
    CHECK(record(&o, RUN_KEEP, NULL, &res, &err) == -1 && err.code == RW_EKERNEL &&
              !strcmp(err.msg, "fake: no kernel here") && !exists(res.id, NULL) && staged() == 0,
          "no boot: 122, no run kept, no staging left");
    PLAY(HELLO);
    uint8_t seed1[32];
    CHECK(record(&o, RUN_KEEP, NULL, &res, &err) == 0, "seed 30");
    memcpy(seed1, G.rng_seed, 32);
    o.seed = 31;
    PLAY(HELLO);
    CHECK(record(&o, RUN_KEEP, NULL, &res, &err) == 0 && memcmp(seed1, G.rng_seed, 32),
          "the guest's RNG seed comes from --seed");
}

/* One machine, two runs (ctx.h invariant 6): the second is the run a
 * fresh machine gives. */
static void test_reuse(const struct rw_result *first)
{
    struct run_opts o;
    struct rw_result res[2];
    struct rw_error err;
    struct run_ctx c;
    opts(&o);
    CUR = &c;
    int rc = run_machine_open(&c, &o, 0, &res[0], &err);
    for (int k = 0; k < 2 && rc == 0; k++) {
        PLAY(HELLO);
        G.vm = &c.vm;
        rc = run_begin(&c, &o, NULL, RUN_KEEP_IF_DIFFERENT, &res[k], &err);
        rc = rc ? rc : run_boot(&c);
        rc = run_end(&c, run_body(&c, rc));
        CHECK(rc == 0 && !strcmp(res[k].id, first->id) &&
                  !strcmp(res[k].trace_hash, first->trace_hash) &&
                  !strcmp(res[k].output_hash, first->output_hash) && res[k].had_stored &&
                  !res[k].diverged && OBS.out_step == HELLO_OUT_STEP,
              "a run on a reused machine equals the first run");
    }
    run_close(&c, rc);
    CUR = NULL;
}

static int write_file(const char *path, const void *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    int ok = f && fwrite(p, 1, n, f) == n;
    return f && fclose(f) == 0 && ok ? 0 : -1;
}

int main(void)
{
    snprintf(HOME, sizeof(HOME), "/tmp/rewind-ctx-test-XXXXXX");
    if (!mkdtemp(HOME))
        return 1;
    char cache[4200];
    snprintf(cache, sizeof(cache), "%s/cache", HOME); /* the hash keys stay in the test's home */
    setenv("REWIND_CACHE", cache, 1);
    uint8_t img[4096] = {0};
    memcpy(img + 1024, "\xe2\xe1\xf5\xe0", 4); /* erofs's magic: the root, never mounted */
    snprintf(ROOT, sizeof(ROOT), "%s/root.erofs", HOME);
    snprintf(KERNEL, sizeof(KERNEL), "%s/vmlinux", HOME);
    snprintf(INIT, sizeof(INIT), "%s/rewind-init", HOME);
    if (write_file(ROOT, img, sizeof(img)) || write_file(KERNEL, "fake kernel", 11) ||
        write_file(INIT, "fake rewind-init", 16))
        return 1;
    struct rw_result first;
    test_record(&first);
    test_twin(&first);
    test_stop_at(&first);
    test_cut();
    test_bad_records();
    test_inspect();
    test_phases();
    test_reuse(&first);
    char cmd[4200];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", HOME);
    if (system(cmd) != 0)
        fprintf(stderr, "cannot remove %s\n", HOME);
    return unit_done();
}
