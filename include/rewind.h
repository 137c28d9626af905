/*
 * rewind.h: librewind, the engine's public API (the Director API).
 *
 * This is the only engine header the CLI (src/cli), the example director
 * (examples/director) and the front ends still to come (gdb stub, web
 * timeline, SDK reports) include. Everything below it (src/vmm, src/image,
 * src/home, src/trace, src/store, src/archive, src/explore, src/run) is
 * private to the engine. docs/architecture.md draws the data path.
 *
 * Conventions:
 *  - Symbols are prefixed rw_. Functions return 0 on success, -1 on failure
 *    with struct rw_error filled: a one-line message and the exit code a
 *    command-line tool should end with (enum rw_code).
 *  - A home (rw_home) is one $REWIND_HOME opened for the life of a caller.
 *  - Run references are what a user types: an id, a unique id prefix (4+
 *    hex digits), a --name, "@" (newest) or "@N" (N-th newest).
 *  - No function prints to stdout or stderr: a run passes its job's output
 *    and its notices to the caller's struct rw_observer.
 */
#ifndef REWIND_H
#define REWIND_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Exit codes of rewind itself (a job's own status passes through as is). */
enum rw_code {
    RW_OK = 0,
    RW_EUSAGE = 2,      /* bad usage: a wrong argument, an unknown run or step */
    RW_EGUEST = 119,    /* the guest broke the platform contract or stalled */
    RW_ENOKVM = 120,    /* no usable /dev/kvm */
    RW_EROOT = 121,     /* root missing, unreadable or of an unknown kind */
    RW_EKERNEL = 122,   /* guest kernel or rewind-init missing or not loadable */
    RW_EPANIC = 123,    /* the guest kernel panicked */
    RW_ETIMEOUT = 124,  /* the wall-clock limit expired */
    RW_EINTERNAL = 125, /* anything else: I/O, out of memory, a corrupt file */
    RW_ENOTEXEC = 126,  /* the command exists in the root but cannot be run */
    RW_ENOTFOUND = 127, /* the command is not in the root */
};

struct rw_error {
    int code;       /* enum rw_code */
    char msg[1024]; /* one line, no trailing newline, no "rewind: " prefix */
};

#define RW_ID_MAX 64 /* a run's directory name: 16 hex digits, maybe "~N" */

typedef struct rw_home rw_home;

/* Open the home at path (NULL: $REWIND_HOME, else ~/.local/share/rewind),
 * creating it if missing. Returns 0 with *out set, or -1 with err. */
int rw_home_open(const char *path, rw_home **out, struct rw_error *err);
void rw_home_close(rw_home *h);
/* The home's absolute path (valid until rw_home_close). */
const char *rw_home_path(const rw_home *h);

/* Resolve a run reference to its directory name (id or id~N). Returns 0, or
 * -1 with err (code RW_EUSAGE: no such run, ambiguous prefix). */
int rw_resolve(rw_home *h, const char *ref, char id[RW_ID_MAX], struct rw_error *err);

/* ---- Running: record, replay, fork, inspect, check (src/run, src/explore) ---- */

/* How a run ended (the manifest's "outcome" word: rw_outcome_word). */
enum rw_outcome {
    RW_RUNNING = 0,
    RW_EXITED,      /* the job ended; status holds its wait status */
    RW_NOT_FOUND,   /* the command is not in the root */
    RW_NOT_EXEC,    /* the command could not be executed */
    RW_INIT_FAILED, /* rewind-init could not set the job up */
    RW_PANIC,       /* the guest kernel panicked */
    RW_GUEST_ERROR, /* the guest broke the platform contract */
    RW_STALLED,     /* idle with no timer armed */
    RW_TIMEOUT,     /* the caller's abort flag ended it (--timeout) */
    RW_STOPPED,     /* the guest halted without a job status (an inspection ended) */
};

/* The word for an outcome: "exited", "guest-error", "panic", ... */
const char *rw_outcome_word(enum rw_outcome o);

/* The one table of run defaults: what `rewind run` assumes for a flag not
 * given and what `rewind show` leaves out of the command line it prints. */
struct rw_run_defaults {
    const char *path_env; /* "PATH=..." every job gets unless -e PATH= */
    const char *home_env; /* "HOME=/root" */
    const char *cwd;      /* "/" */
    uint64_t mem_mib;     /* 512 */
    uint64_t mem_min_mib, mem_max_mib;
    uint64_t quantum_ns;  /* virtual ns per step: 5000 */
    uint64_t seed;        /* 0 */
    uint64_t keyframe_every; /* 4096 */
    uint64_t pct_horizon;    /* PCT change points over this many steps: 65536 */
    uint64_t schedules;      /* check: 64 */
    unsigned jobs;           /* check: 2 */
};
extern const struct rw_run_defaults rw_defaults;

/* The epoch rule: midnight UTC of the day holding t (seconds since 1970). */
int64_t rw_default_epoch(int64_t t);
/* Parse an epoch: seconds since 1970 or YYYY-MM-DD[THH:MM:SS] (UTC). 0 or -1. */
int rw_parse_epoch(const char *s, int64_t *out);

/* Where a run's output goes. Streams: the job's stdout and stderr, the
 * guest kernel's console, and rewind's own notices (one line, no newline,
 * no "rewind: " prefix: warnings, restore checks, progress). */
enum rw_stream { RW_STDOUT = 1, RW_STDERR = 2, RW_CONSOLE = 3, RW_NOTICE = 4 };
struct rw_observer {
    /* Called in order as the bytes are produced; NULL: dropped. */
    void (*output)(void *ctx, enum rw_stream stream, const void *buf, size_t len);
    void *ctx;
};

/* A run to record (`rewind run`). Fill with rw_run_config_init, then set
 * root and argv at least. Pointers are the caller's and must outlive the
 * call that uses the config. */
struct rw_run_config {
    const char *root;   /* a directory, a tarball or an erofs image */
    char **argv;        /* NULL-terminated */
    char **env;         /* NULL-terminated; init: the defaults' PATH and HOME */
    const char *cwd;
    uint64_t mem_mib, seed, quantum_ns;
    int64_t epoch_s;
    uint64_t schedule;  /* 0: unperturbed */
    uint64_t schedule_from, schedule_until; /* perturbed steps [from, until); until UINT64_MAX */
    const char *name;   /* a name to refer to the run by, or NULL */
    int no_keyframes;
    uint64_t keyframe_every;
    uint64_t state_log; /* 0, or register hashes each step and RAM every N steps */
    int show_console;   /* copy the kernel console to the observer (RW_CONSOLE) */
    int quiet;          /* do not pass the job's output to the observer */
    const char *kernel, *init; /* NULL: $REWIND_KERNEL / $REWIND_INIT, else beside the program */
    struct rw_observer observer;
    volatile sig_atomic_t *abort; /* set (e.g. by a signal handler) to stop the run */
    uint64_t test_holes;          /* tests only: rw_test_hole */
    unsigned snap_holes;          /* tests only: rw_test_hole */
};

/* The guest kernel and rewind-init a run uses when its config names none:
 * $REWIND_KERNEL / $REWIND_INIT if set, else kernel/vmlinux and
 * rewind-init beside the running program. Static storage. */
const char *rw_default_kernel(void);
const char *rw_default_init(void);

/* Fill c from rw_defaults (epoch: today's midnight UTC); env points to
 * static storage holding the default PATH and HOME. */
void rw_run_config_init(struct rw_run_config *c);

/* Tests only: open the named determinism hole in c ("host-tsc",
 * "timer-at-host-exit", "host-rng", "kf-no-io-completion",
 * "restore-no-tlb-flush"). 0, or -1 if the name is unknown. */
int rw_test_hole(struct rw_run_config *c, const char *name);

/* What a run did. */
struct rw_result {
    char id[RW_ID_MAX];       /* the run's id (its spec's hash) */
    enum rw_outcome outcome;
    uint64_t job_status;      /* wait status when outcome is RW_EXITED */
    int exit_code;            /* what `rewind run` exits with */
    uint64_t steps, virt_ns;
    double wall_s;
    char message[600];        /* why it ended, for outcomes other than RW_EXITED */
    char trace_hash[65], ram_hash[65], output_hash[65];
    uint64_t events;          /* records in the trace */
    int had_stored;           /* a stored run of the same spec existed */
    int diverged;             /* and this run differs from it (a determinism violation) */
    char divergence[512];     /* where they part, in words */
    uint64_t keyframes, kf_pages, kf_bytes, kf_every;
    double kf_capture_s, restore_s;
    char parent[RW_ID_MAX];   /* a run started from a keyframe: the run it came from */
    uint64_t from_step;       /* and the keyframe's step */
    uint64_t fork_step;       /* a fork: the step it parts from its parent */
    uint64_t restores_checked, restores_failed; /* replay with verify_restores */
    int inspected;            /* cat, shell: the inspector ran and ended */
    int inspect_status;       /* its exit status (cat: 3 when the file did not exist) */
    uint64_t perturbed;       /* perturbations applied */
};

/* Options of the modes that start from a stored run (replay, fork, cat,
 * shell). Fill with rw_options_init. */
struct rw_options {
    struct rw_observer observer;
    volatile sig_atomic_t *abort;
    int from;                 /* replay: start at the keyframe at or before from_step */
    uint64_t from_step;
    uint64_t verify_restores; /* replay: then restore this many keyframes in place */
    uint64_t schedule;        /* fork: the perturbation after the step (0: none) */
    uint64_t schedule_until;  /* fork: UINT64_MAX: to the end */
    const char *name;         /* fork: a name for the new run */
    uint64_t pid;             /* cat, shell: the process whose view (0: the job) */
    int input_fd;             /* shell: the keystrokes */
    const char *kernel, *init; /* NULL: $REWIND_KERNEL / $REWIND_INIT, else beside the program */
    unsigned snap_holes;      /* tests only: keyframe holes (rw_test_hole's kf-...) */
};
void rw_options_init(struct rw_options *o);

/* Record a run of c in h: boot, run the job to its end, keep the run.
 * Returns 0 when the VM ran (r filled; r->exit_code says how the job
 * ended) or -1 when it could not (err: the phase's code, e.g. RW_ENOKVM). */
int rw_record(rw_home *h, const struct rw_run_config *c, struct rw_result *r,
              struct rw_error *err);

/* Replay the stored run ref: its spec again from boot (or from its
 * keyframe at or before o->from_step), compared record by record with the
 * stored one (r->diverged). A shell session replays its keystrokes. 0 or
 * -1 with err. The job's output is not passed to the observer. */
int rw_replay(rw_home *h, const char *ref, const struct rw_options *o, struct rw_result *r,
              struct rw_error *err);

/* Fork the stored run ref at step: a new run identical through step and
 * perturbed by o->schedule after it, started from ref's keyframe before
 * step. 0 or -1 with err (RW_EUSAGE: a step not inside the run). */
int rw_fork(rw_home *h, const char *ref, uint64_t step, const struct rw_options *o,
            struct rw_result *r, struct rw_error *err);

/* Write the file path as it was at step of run ref, as process o->pid saw
 * it, to the observer (RW_STDOUT), from a throwaway fork: nothing stored
 * changes. 0 with r->inspect_status (3: no such file) or -1 with err. */
int rw_cat(rw_home *h, const char *ref, uint64_t step, const char *path,
           const struct rw_options *o, struct rw_result *r, struct rw_error *err);

/* A shell at step of run ref in process o->pid's view, fed from
 * o->input_fd (raw bytes) and written to the observer; kept as a run of its
 * own (r->id) that rw_replay re-runs. 0 with r->inspect_status or -1. */
int rw_shell(rw_home *h, const char *ref, uint64_t step, const struct rw_options *o,
             struct rw_result *r, struct rw_error *err);
/* Safe in a signal handler: the live shell sends the terminal size of its
 * input fd with its next keystrokes (call on SIGWINCH). */
void rw_shell_winch(void);

/* Safe in a signal handler: make a running VM leave KVM_RUN now, so it
 * sees the abort flag that the handler has just set. */
void rw_interrupt(void);

/* `rewind check`: schedule 0, then schedules 1..N until one ends
 * differently, narrowed to the deciding step. */
struct rw_check_config {
    struct rw_run_config run; /* the command (ignored with base_run) */
    const char *base_run;     /* a stored run to use as schedule 0, or NULL */
    uint64_t schedules;       /* N */
    unsigned jobs;            /* schedules run at once */
    /* One line per finished schedule or probe (no newline); NULL: none. */
    void (*progress)(void *ctx, const char *line);
    void *progress_ctx;
    volatile sig_atomic_t *abort;
};
void rw_check_config_init(struct rw_check_config *c);

struct rw_check_side {
    char id[RW_ID_MAX];
    char outcome[24];
    int exit_code;
    uint64_t steps;
    char output_hash[65];
};

#define RW_TAIL_MAX 8
struct rw_check_tail { /* the next events of one side after the runs part */
    int n;
    char lines[RW_TAIL_MAX][300];
    unsigned tid[RW_TAIL_MAX];
};

struct rw_check_report {
    struct rw_check_side base;    /* schedule 0 */
    uint64_t start;               /* the job-start step (perturbation starts after it) */
    uint64_t tried;               /* schedules run */
    int found;                    /* a schedule ended differently */
    uint64_t schedule;            /* the first that did */
    const char *strategy;         /* its strategy */
    struct rw_check_side failing; /* that schedule's run */
    int narrowed;                 /* narrowing reached a verdict */
    uint64_t window_from, window_until; /* the narrowed window */
    uint64_t perturbed_in_window; /* perturbed steps inside it */
    uint64_t deciding_step;
    char deciding_what[128];
    struct rw_check_side pass_run, fail_run; /* differ only by the deciding step */
    uint64_t probes;
    double explore_s, narrow_s;
    int parted;                   /* pass_run and fail_run part at event part_event */
    uint64_t part_event, part_step_pass, part_step_fail;
    struct rw_check_tail pass_next, fail_next;
};

/* Run the check. 0 (see rep->found) or -1 with err. */
int rw_check(rw_home *h, const struct rw_check_config *c, struct rw_check_report *rep,
             struct rw_error *err);

/* The strategy of a schedule number: "none", "random" (odd) or "pct" (even). */
const char *rw_schedule_strategy(uint64_t schedule);

/* The `rewind run` command line that recreates stored run ref's spec,
 * built from rw_defaults (malloc'd into *line, no newline). *exact is 0
 * when the run holds a perturbation no flag can say (a fork's or check's):
 * replay it instead. 0 or -1 with err. */
int rw_command_line(rw_home *h, const char *ref, char **line, int *exact, struct rw_error *err);

/* A machine paused at a step of a stored run (rw_seek). */
typedef struct rw_machine rw_machine;

/* General registers of a paused vCPU. */
struct rw_regs {
    uint64_t rax, rbx, rcx, rdx, rsi, rdi, rsp, rbp;
    uint64_t r8, r9, r10, r11, r12, r13, r14, r15;
    uint64_t rip, rflags;
};

/* Restore run ref's keyframe at or before step into a fresh VM and run it
 * forward to step, keeping nothing (a throwaway). 0 with *out, or -1 with
 * err (RW_EUSAGE: step not inside the run). */
int rw_seek(rw_home *h, const char *ref, uint64_t step, rw_machine **out, struct rw_error *err);
/* The step m is paused at. */
uint64_t rw_machine_step(const rw_machine *m);
/* m's vCPU registers into regs. 0 or -1 with err. */
int rw_machine_regs(rw_machine *m, struct rw_regs *regs, struct rw_error *err);
/* Free m and its VM (nothing of it is kept). */
void rw_machine_close(rw_machine *m);

/* ---- Reading: runs, specs, events, processes, comparison, store upkeep ---- */

#ifdef __cplusplus
}
#endif

#endif
