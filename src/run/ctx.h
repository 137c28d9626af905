/*
 * ctx: one run's context and the phases every mode of the engine is made
 * of (docs/architecture.md). A mode (record.c, replay.c,
 * fork.c, inspect.c) is a short sequence of these phases over one struct
 * run_ctx, as Firecracker builds a VM for boot or from a snapshot:
 *
 *   run_prepare --> run_boot ----+--> [run_inspect_start] --> run_loop
 *               \-> run_restore -/                               |
 *                                                           run_settle
 *                                                               |
 *                                  [replay: run_verify_restores]
 *                                                               |
 *   run_close (always, last) <------------------------------ run_finish
 *
 * run_through is the common tail of every mode (keyframes, inspection,
 * loop, settle, restores verified, finish, close).
 *
 * Invariants:
 *  1. The home lock is held from run_prepare to run_close, so gc never
 *     takes an image or page this run wrote but has not named yet.
 *  2. A failed run's exit code is the code of the phase it failed in,
 *     decided in one place: run_close maps c->phase with run_phase_code.
 *  3. The trace hash covers every record from step 0: a run restored from
 *     a keyframe first hashes its source's trace up to the keyframe, so
 *     equal hashes mean equal histories.
 *  4. The pages of the keyframes are synced before the keyframes file that
 *     names them is closed (kfcap.h invariant 2).
 *  5. A run restored from a keyframe never replaces the run its keyframes
 *     name: it is kept only when it differs from a stored run of its spec,
 *     or replaces a stored run of its spec that was cut (timeout, limit).
 *  6. A machine (run_machine_open .. run_close: lock, image, KVM, store,
 *     keyframe pages) carries one run at a time (run_begin .. run_end);
 *     everything a run's id, trace or keyframes depend on is reset by
 *     run_begin, so a run on a reused machine equals the same run on a
 *     fresh one (the restore rewrites every page and register that may
 *     differ: kfcap.h invariant 3).
 */
#ifndef REWIND_RUN_CTX_H
#define REWIND_RUN_CTX_H

#include <jansson.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "input/sched.h"
#include "home/rundir.h"
#include "image/image.h"
#include "rewind.h"
#include "run/kfcap.h"
#include "run/session.h"
#include "input/spec.h"
#include "util/hash.h"
#include "vmm/initrd.h"
#include "vmm/kvm.h"
#include "vmm/platform.h"

/* The inputs of a run, resolved: what its spec is made of, and how it is
 * run (output, keyframes, limits). Modes add their own arguments. */
struct run_opts {
    const char *root;
    char **argv, **env; /* NULL-terminated */
    const char *cwd;
    uint64_t mem_mib, seed, quantum_ns;
    int64_t epoch_s;
    struct sched sched; /* perturbation segments (seed: from .seed) */
    const char *home, *kernel, *init;
    const char *name; /* --name for the manifest, or NULL */
    int show_console; /* kernel console lines to the observer */
    int quiet;        /* the job's output not to the observer */
    const struct rw_observer *obs;
    volatile sig_atomic_t *abort;
    uint64_t state_log; /* 0: off; else register hashes every step, RAM every N */
    int no_keyframes;
    uint64_t kf_every;                  /* 0: rw_defaults.keyframe_every */
    uint64_t test_holes;                /* REWIND_HOLE_* | PLATFORM_HOLE_*: tests only */
    unsigned snap_holes;                /* SNAP_HOLE_*: tests only */
    uint64_t max_trace_mb, max_disk_mb; /* disk limits (src/input/limits.h; 0: defaults) */
    double spin_limit_s;  /* no step for this long (wall time): outcome spin; 0: off */
    char **expect;        /* properties: --expect strings (NULL: none) */
    const char *property; /* properties: --property command (NULL: none) */
    int dirorder_on;      /* docs/nix.md: directory order drawn from dirorder */
    uint64_t dirorder;
    const char *track_writes;     /* a glob (NULL: none) */
    const char *collect;          /* a path in the job's root (NULL: none) */
    const char *nix_drv;          /* rewind nix: the .drv path (NULL: none) */
    const struct rw_patch *patch; /* gdb's writes (src/input/patch.h; NULL: none) */
    int preempt_memory;           /* memory-access points (docs/determinism.md) */
    unsigned cpus;                /* the CPUs the job sees, 1..RW_CPUS_MAX */
    char **nodes;                 /* "NAME=COMMAND", NULL-terminated, or NULL (input/nodes.h) */
    char **restarts;              /* the nodes' restarts, "NAME=COMMAND", or NULL (nodes.h) */
    const struct run_seam *seam;  /* test seam: a fake machine (run/seam.h); NULL in real runs */
};

/* An inspection (cat, shell): run to step `at`, freeze the guest's
 * processes and run an inspector of `kind` in process pid (0: the job). */
struct run_inspect {
    const char *kind; /* "cat" or "shell" */
    uint64_t at, pid;
    const char *path;           /* cat: the file */
    int session_fd;             /* shell live: keystrokes */
    const char *session_replay; /* shell replay: the recorded inputs file */
};

/* The phases, in order; run_phase_code gives each one's exit code. */
enum run_phase {
    PH_LOCK,
    PH_IMAGE,     /* the root image */
    PH_ARTIFACTS, /* kernel and init hashes, the image kept */
    PH_INITRD,
    PH_KVM,   /* /dev/kvm and the host's CPU model */
    PH_SETUP, /* run directory, platform, page store */
    PH_BOOT,
    PH_KEYFRAME_FIND, /* restore: the user's run and step name no keyframe */
    PH_RESTORE,
    PH_INSPECT, /* the inspection cannot start at that step */
    PH_LOOP,
    PH_FINISH,
};

/* What keeping a run means at its end. */
enum run_keep {
    RUN_KEEP,              /* record, fork: keep it (as <id>~N if it differs) */
    RUN_KEEP_IF_DIFFERENT, /* replay: only a run that differs from the stored one */
    RUN_KEEP_NOTHING,      /* cat, seek: a throwaway */
};

struct run_sink; /* the record callbacks' state (ctx.c) */
struct run_seam; /* a test's fake machine (run/seam.h) */

struct run_ctx {
    const struct run_opts *o;
    struct rw_result *res;
    struct rw_error *err;
    enum run_phase phase;
    enum run_keep keep;
    struct run_spec spec;
    char model[64];
    char *spec_json;
    int lockfd;
    struct image img;
    struct initrd rd;
    struct kvm_vm vm;
    const struct run_seam *seam; /* the machine's o->seam (run/seam.h): NULL in real runs */
    struct platform *p;
    struct run_sink *sink;
    struct rundir dir;
    struct store *store;
    struct kfcap kf;
    int kf_alloc;       /* kf holds the machine's resources (kfcap_free frees them) */
    int kf_ready;       /* kf is in use by the current run (kfcap_end_run ends it) */
    const char *parent; /* the keyframes' source run (restore), or NULL */
    uint64_t parent_upto;
    const struct run_inspect *inspect;
    uint64_t verify; /* replay: keyframes to restore in place after the run */
    struct session sess;
    char inputs_hex[65];
    double t0;
    double timing_last; /* REWIND_TIMING: when the last phase ended (0: none yet) */
};

/* Exit code of a failure in phase ph (invariant 2). */
int run_phase_code(enum run_phase ph);

/* Start c: lock the home, prepare the image, hash kernel and init, build
 * the initramfs, open KVM, name the run from its spec, open its staging
 * directory and the platform; with_store: open the page store and the
 * keyframe capture (needed to take or restore keyframes). 0 or -1. */
int run_prepare(struct run_ctx *c, const struct run_opts *o, const struct run_inspect *ins,
                enum run_keep keep, int with_store, struct rw_result *res, struct rw_error *err);
/* run_prepare in two halves (invariant 6): the machine (lock, image,
 * hashes, initramfs, KVM, image memslot, [page store and keyframe pages]),
 * opened once; and a run on it (spec, id, staging directory, platform),
 * begun again for every run the machine carries. 0 or -1. */
int run_machine_open(struct run_ctx *c, const struct run_opts *o, int with_store,
                     struct rw_result *res, struct rw_error *err);
int run_begin(struct run_ctx *c, const struct run_opts *o, const struct run_inspect *ins,
              enum run_keep keep, struct rw_result *res, struct rw_error *err);
/* Load the kernel and initramfs for a fresh boot. 0 or -1. */
int run_boot(struct run_ctx *c);
/* The guest kernel's command line for o into buf (len bytes): the fixed
 * words, then rewind.dirorder=, rewind.track=, rewind.diskglob= (only when
 * the fault kinds have disk or power), rewind.power (only when they have
 * power), rewind.preempt=, rewind.cpus=, each only when o sets it. Its
 * length, or -1 when it does not fit in len. */
int run_kernel_cmdline(const struct run_opts *o, char *buf, size_t len);
/* Restore run `from`'s keyframe at or before step into the VM and feed the
 * new run from's trace up to it (invariant 3). fork_step goes into the
 * manifest. 0 or -1. */
int run_restore(struct run_ctx *c, const char *from, uint64_t step, uint64_t fork_step);
/* Start writing this run's keyframes (unless o->no_keyframes). 0 or -1. */
int run_keyframes_begin(struct run_ctx *c);
/* Run to step c->inspect->at and ask the guest to inspect. 0 or -1. */
int run_inspect_start(struct run_ctx *c);
/* The step loop: run until the run ends, or until step stop_at (0: no
 * stop). 0 or -1 (the VM could not run). */
int run_loop(struct run_ctx *c, uint64_t stop_at);
/* The same loop for a debugger (src/run/debug.c): vcpu_run with its hooks
 * and a spin limit of its own (0: off), up to step stop_at (0: no stop).
 * c->o->abort is not read: the hooks read the debugger's (an interrupt
 * stops the machine, it does not end the run). 0, or -1 (c->err; a hook's
 * FAIL keeps the hook's own message). */
struct vcpu_hooks;
int run_loop_hooked(struct run_ctx *c, uint64_t stop_at, const struct vcpu_hooks *h,
                    double spin_limit_s);
/* After the loop: outcome, hashes, console, keyframe statistics, keyframes
 * synced (invariant 4). 0 or -1. */
int run_settle(struct run_ctx *c);
/* Restore n of this run's keyframes in place, run each to the end and
 * compare with the run (the restore differential). 0 or -1. */
int run_verify_restores(struct run_ctx *c, uint64_t n);
/* Close the keyframes, compare with a stored run of the spec, and keep or
 * discard the run as c->keep says. 0 or -1. */
int run_finish(struct run_ctx *c);
/* The common tail of a mode: if rc is 0, run_keyframes_begin, [the
 * inspection], run_loop to the end, run_settle, [run_verify_restores of
 * c->verify], run_finish; then run_close. Returns the result. */
int run_through(struct run_ctx *c, int rc);
/* run_through without run_close: the machine stays open. Returns rc. */
int run_body(struct run_ctx *c, int rc);
/* End the current run (its staging directory removed if rc < 0) and keep
 * the machine for another run_begin; a failure (rc < 0) sets err->code
 * from the phase. Returns rc. */
int run_end(struct run_ctx *c, int rc);
/* run_end, then release the machine. Returns rc. */
int run_close(struct run_ctx *c, int rc);

/* Send a notice line (printf format, no newline) to the observer. */
void run_notice(const struct rw_observer *obs, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Fill o's spec part from a stored spec (a jansson object): root (the
 * image kept in the home), argv, env, cwd, mem, seed, epoch, quantum,
 * perturbation; ins gets a shell session's inspection. 0 or -1 + err. */
int run_opts_from_spec(json_t *spec, const char *home, struct run_opts *o, struct run_inspect *ins,
                       char *err, size_t errlen);
/* Check that o->kernel and o->init are the ones spec names. 0 or -1. */
int run_check_artifacts(const struct run_opts *o, json_t *spec, char *err, size_t errlen);

/* The vCPU's kvm_run while a VM runs (rw_interrupt sets immediate_exit). */
extern struct kvm_run *volatile run_active_kvm_run;

/* A program a pid exec'd (from the EXEC records), for naming a spin. */
struct run_exec {
    uint32_t pid;
    char path[256];
};

/* A run ended as spin: put where it spun (pid, comm, mode, rip, function)
 * into its platform's message (src/run/spinreport.c). */
void run_spin_describe(struct run_ctx *c, double limit_s, const struct run_exec *execs, unsigned n);

/* Keep img in home as images/<hash>.erofs (a link, else a copy). 0 or -1 + err. */
int run_keep_image(const char *home, const struct image *img, char *err, size_t errlen);

/* The observer's progress callback as the image module wants it, built in
 * the caller's ip (NULL: none). ip must outlive the image call. */
const struct image_progress *run_image_progress(const struct rw_observer *obs,
                                                struct image_progress *ip);

#endif
