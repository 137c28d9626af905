/*
 * runner: one run from its options to its outcome: prepare the root image,
 * write the spec, boot the VM, run the step loop, stream the job's output,
 * and keep the run's directory under $REWIND_HOME/runs/<id>/.
 */
#ifndef REWIND_RUN_RUNNER_H
#define REWIND_RUN_RUNNER_H

#include <jansson.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "vmm/platform.h"

/* Exit codes of rewind itself (the job's own status passes through). */
enum {
    RUN_EXIT_USAGE = 2,
    RUN_EXIT_GUEST_ERROR = 119,
    RUN_EXIT_NO_KVM = 120,
    RUN_EXIT_ROOT = 121,
    RUN_EXIT_KERNEL = 122,
    RUN_EXIT_PANIC = 123,
    RUN_EXIT_TIMEOUT = 124,
    RUN_EXIT_INTERNAL = 125,
    RUN_EXIT_NOT_EXEC = 126,
    RUN_EXIT_NOT_FOUND = 127,
};

struct run_opts {
    const char *root;
    char **argv, **env; /* NULL-terminated */
    const char *cwd;
    uint64_t mem_mib;
    double timeout_s; /* 0: none */
    uint64_t seed;
    int64_t epoch_s;
    uint64_t quantum_ns;
    int show_console; /* copy kernel console lines to stderr */
    int quiet;        /* do not copy the job's output to our stdout/stderr */
    int replay;       /* re-run of a stored run: compare, keep it only if it differs */
    const char *name; /* --name for the manifest, or NULL */
    const char *home; /* $REWIND_HOME */
    const char *kernel, *init;
    volatile sig_atomic_t *abort; /* set asynchronously to stop the run */
    uint64_t test_holes;          /* REWIND_HOLE_* | PLATFORM_HOLE_*: tests only */
    uint64_t state_log;           /* 0: off; else log register hashes every step and a
                                     RAM hash every state_log steps */
    struct sched sched;           /* schedule perturbation segments (seed: from .seed) */
    int no_keyframes;             /* --no-keyframes */
    uint64_t kf_every;            /* keyframe cadence in steps (0: RUN_KF_EVERY) */
    unsigned snap_holes;          /* SNAP_HOLE_*: tests only */
    const char *from_run;         /* start at this run's keyframe at or before from_step */
    uint64_t from_step;
    uint64_t fork_step;           /* a fork: the step it parts from from_run (manifest) */
    uint64_t verify_restores;     /* after the run, restore this many of its keyframes in
                                     place, run each to the end and compare */
    /* Inspection (cat, shell): run to step inspect_at, freeze the guest's
     * processes and run an inspector of kind "cat" or "shell" in process
     * inspect_pid (0: the job). */
    const char *inspect_kind;
    uint64_t inspect_at, inspect_pid;
    const char *inspect_path;     /* cat: the file */
    int session_fd;               /* shell: keystrokes from this fd (live) */
    const char *session_replay;   /* shell replay: the recorded inputs file */
    int throwaway;                /* keep nothing of this run (cat) */
};

/* Default keyframe cadence: a keyframe every this many steps (and one at the
 * step the job starts). Measured: see bench/RESULTS.md. */
#define RUN_KF_EVERY 4096

struct run_result {
    char id[17];
    enum platform_outcome outcome;
    uint64_t job_status, steps, virt_ns;
    double wall_s;
    char message[600];
    char trace_hash[65];
    char ram_hash[65];
    int diverged;          /* differs from a stored run of the same spec */
    int had_stored;        /* a stored run of the same spec existed */
    uint64_t events;       /* records in the trace */
    char divergence[512];
    int exit_code; /* what `rewind run` exits with */
    uint64_t keyframes, kf_pages, kf_bytes, kf_every; /* keyframes this run wrote */
    double kf_capture_s, restore_s;
    uint64_t from_step;        /* the keyframe step the run started from (from_run) */
    char parent[64];           /* from_run's directory name, or empty */
    uint64_t fork_step;        /* o->fork_step */
    uint64_t restores_checked, restores_failed; /* verify_restores */
    char output_hash[65];      /* SHA-256 of the job's output records (fd, bytes) in order */
    int inspected;             /* the inspector ran and ended */
    int inspect_status;        /* its exit status */
    uint64_t perturbed;        /* perturbations this process applied */
};

/* Execute a run. Returns 0 when the VM ran (outcome in res), or -1 when it
 * could not start: one line in err and res->exit_code set. */
int run_execute(const struct run_opts *o, struct run_result *res, char *err, size_t errlen);

/* Parse a test hole name ("host-tsc", "timer-at-host-exit", "host-rng") to
 * its bit; 0 if unknown. */
uint64_t run_hole_bit(const char *name);

/* Parse a keyframe test hole name to its SNAP_HOLE_* bit; 0 if unknown.
 * These do not change the run itself, only its keyframes or restores. */
unsigned run_snap_hole_bit(const char *name);

/* Fill o (root, argv, env, cwd, mem, seed, epoch, quantum) from a stored
 * spec (a jansson object). Returns 0 or -1 with one line in err. */
int run_opts_from_spec(json_t *spec, const char *home, struct run_opts *o, char *err,
                       size_t errlen);

/* Check that o->kernel and o->init are the ones spec names. 0 or -1 + err. */
int run_check_artifacts(const struct run_opts *o, json_t *spec, char *err, size_t errlen);

/* Short word for an outcome: "exited", "guest-error", "panic", ... */
const char *run_outcome_word(enum platform_outcome o);

/* Publish the kvm_run of the running VM so a signal handler can set
 * immediate_exit (NULL when no VM runs). */
extern struct kvm_run *volatile run_active_kvm_run;

#endif
