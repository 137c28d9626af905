/*
 * rewind.h: librewind, the engine's public API (the Director API).
 *
 * With rewind_check.h (RW_ASSERT) this is the only engine header the
 * front ends (src/cli, src/serve, src/gdbstub) and the example director
 * (examples/director) include: they compile with -Iinclude alone (the
 * Makefile checks it). Everything below it (src/util, src/input, ...,
 * src/run, src/explore) is private to the engine; what only rewind's own
 * tests use is in rewind_test.h. docs/architecture.md draws the layout.
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
 *  - Reentrant: no function returns a pointer to a static buffer or keeps
 *    scratch data in one; a result goes into the caller's buffer (or an
 *    object the caller frees), and what a function returns as "constant
 *    storage" never changes. Two threads may call the reading API at once,
 *    on one home (rewind serve does, one thread per request). A process
 *    drives at most one machine at a time (rw_interrupt names it):
 *    docs/architecture.md, "Reentrancy".
 */
#ifndef REWIND_H
#define REWIND_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

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
    RW_ELIMIT = 118,    /* a disk limit (--max-trace, --max-disk) ended the run */
    RW_ESPIN = 117,     /* the guest made no step for --spin-limit seconds */
};

struct rw_error {
    int code;       /* enum rw_code */
    char msg[1024]; /* one line, no trailing newline, no "rewind: " prefix */
};

#define RW_ID_MAX 64 /* a run's directory name: 16 hex digits, maybe "~N" */

typedef struct rw_home rw_home;

/* What only rewind's own tests set (include/rewind_test.h). */
struct rw_test_knobs;

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
    RW_LIMIT,       /* a disk limit ended it (--max-trace, --max-disk): "limit" */
    RW_SPIN,        /* no step for the spin limit: ended where the guest spun */
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
    uint64_t quantum_ns;     /* virtual ns per step: 5000 */
    uint64_t seed;           /* 0 */
    uint64_t keyframe_every; /* 4096 */
    uint64_t pct_horizon;    /* PCT change points over this many steps: 65536 */
    uint64_t schedules;      /* check: 64 */
    unsigned jobs;           /* check: 2 */
    uint64_t max_trace_mb;   /* a run's trace at most (MiB): 4096 */
    uint64_t max_disk_mb;    /* a run's trace + keyframes + new pages at most (MiB): 16384 */
    double spin_limit_s;     /* a run with no step for this long ends as spin: 60 */
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
    /* Progress of a long preparation step ("hashing", "building image"):
     * bytes done of total, called as they go by; what == NULL: the step
     * ended. NULL: not reported. */
    void (*progress)(void *ctx, const char *what, uint64_t done, uint64_t total);
};

/* A run to record (`rewind run`). Fill with rw_run_config_init, then set
 * root and argv at least. Pointers are the caller's and must outlive the
 * call that uses the config. */
/* The most nodes a run can have (--node). */
#define RW_NODES_MAX 16u
/* The most CPUs a job can be shown (--cpus). */
#define RW_CPUS_MAX 64u

struct rw_run_config {
    const char *root; /* a directory, a tarball or an erofs image */
    char **argv;      /* NULL-terminated */
    char **env;       /* NULL-terminated; init: the defaults' PATH and HOME */
    const char *cwd;
    uint64_t mem_mib, seed, quantum_ns;
    int64_t epoch_s;
    uint64_t schedule;                      /* 0: unperturbed */
    uint64_t schedule_from, schedule_until; /* perturbed steps [from, until); until UINT64_MAX */
    const char *name;                       /* a name to refer to the run by, or NULL */
    int no_keyframes;
    uint64_t keyframe_every;
    uint64_t state_log;        /* 0, or register hashes each step and RAM every N steps */
    int show_console;          /* copy the kernel console to the observer (RW_CONSOLE) */
    int quiet;                 /* do not pass the job's output to the observer */
    const char *kernel, *init; /* NULL: $REWIND_KERNEL / $REWIND_INIT, else beside the program */
    struct rw_observer observer;
    volatile sig_atomic_t *abort;       /* set (e.g. by a signal handler) to stop the run */
    const struct rw_test_knobs *test;   /* NULL (rewind's own tests: include/rewind_test.h) */
    uint64_t max_trace_mb, max_disk_mb; /* disk limits in MiB (0: rw_defaults) */
    double spin_limit_s;                /* no step for this many seconds of wall time: outcome
                                           RW_SPIN (not an input: the id does not change); 0: off */
    /* Properties (part of the spec): --expect strings ("exit=N",
     * "outcome=WORD", "output~ERE", "file:/path~ERE"), NULL-terminated or
     * NULL, and a --property command run in the VM after the job (or NULL). */
    char **expect;
    const char *property;
    /* Variation and outputs (docs/nix.md; part of the spec only when set):
     * dirorder_on: the guest kernel returns directory entries in an order
     * drawn from dirorder; track_writes: a glob, each write to a matching
     * regular file is a record (rewind blame); collect: a path in the job's
     * root whose files are kept with the run (rewind diff --files). */
    int dirorder_on;
    uint64_t dirorder;
    const char *track_writes;
    const char *collect;
    const char *nix_drv; /* rewind nix: the derivation built (part of the spec) */
    /* Memory-access schedule points (docs/determinism.md): "memory" or "off";
     * NULL is the command's default (run: off, check: memory). Part of the
     * spec only when on. */
    const char *preempt;
    /* The CPUs the job sees (docs/determinism.md, "CPUs the job sees"):
     * 1..64, one vCPU runs them in turn; 0 is 1. Part of the spec only
     * above 1. */
    unsigned cpus;
    /* Nodes (docs/faults.md, "Nodes"): "NAME=COMMAND" strings,
     * NULL-terminated, or NULL; each node runs COMMAND under /bin/sh -c in
     * a network and UTS namespace of its own, started before the job. Part
     * of the spec only when given. */
    char **nodes;
    /* Restarts (docs/faults.md): "NAME=COMMAND" strings, NULL-terminated,
     * or NULL; at most one for each node NAME. A kill fault of node NAME
     * then has rewind-init run COMMAND as the node's new leader (in its
     * namespaces, as its first command ran) after a delay the schedule
     * draws. Part of the spec (in the node's entry) only when given. */
    char **restarts;
    /* Faults (docs/faults.md, "Faults"): "kill,pause" (or "all"), or NULL;
     * injected into the nodes at steps of the schedule's windows, each a
     * schedule decision. Needs nodes and a schedule (check: every schedule
     * but 0). fault_rate: faults per horizon on average (0: the default,
     * 2). Part of the spec only when given. */
    const char *faults;
    unsigned fault_rate;
    /* Disk faults (docs/faults.md): the files whose writes or syncs a disk
     * fault fails, a glob ('*' matches '/' too, '?' one byte) of 1..200
     * printable bytes without spaces or quotes; NULL: "*". Only with disk
     * among faults. Part of the spec (the faults' "disk_glob") exactly when
     * the faults have disk. */
    const char *disk_glob;
};

/* The guest kernel and rewind-init a run uses when its config names none:
 * $REWIND_KERNEL / $REWIND_INIT if set, else kernel/vmlinux and
 * rewind-init beside the running program. Constant storage (the
 * environment's, or computed once per process): any thread may call. */
const char *rw_default_kernel(void);
const char *rw_default_init(void);

/* Fill c from rw_defaults (epoch: today's midnight UTC); env points to
 * constant storage holding the default PATH and HOME (replace it, never
 * write into it). */
void rw_run_config_init(struct rw_run_config *c);

/* What a run did. */
struct rw_result {
    char id[RW_ID_MAX]; /* the run's id (its spec's hash) */
    enum rw_outcome outcome;
    uint64_t job_status; /* wait status when outcome is RW_EXITED */
    int exit_code;       /* what `rewind run` exits with */
    uint64_t steps, virt_ns;
    double wall_s;
    char message[600]; /* why it ended, for outcomes other than RW_EXITED */
    char trace_hash[65], ram_hash[65], output_hash[65]; /* ram_hash "" after rw_cat */
    uint64_t events;                                    /* records in the trace */
    int had_stored;                                     /* a stored run of the same spec existed */
    int diverged;         /* and this run differs from it (a determinism violation) */
    char divergence[512]; /* where they part, in words */
    uint64_t keyframes, kf_pages, kf_bytes, kf_every;
    double kf_capture_s, restore_s;
    char parent[RW_ID_MAX]; /* a run started from a keyframe: the run it came from */
    uint64_t from_step;     /* and the keyframe's step */
    uint64_t fork_step;     /* a fork: the step it parts from its parent */
    uint64_t restores_checked, restores_failed; /* replay with verify_restores */
    int inspected;                              /* cat, shell: the inspector ran and ended */
    int inspect_status; /* its exit status (cat: 3 when the file did not exist) */
    uint64_t perturbed; /* perturbations applied */
    uint64_t refused;   /* port writes refused as breaches of the guest ABI */
};

/* Options of the modes that start from a stored run (replay, fork, cat,
 * shell). Fill with rw_options_init. */
struct rw_options {
    struct rw_observer observer;
    volatile sig_atomic_t *abort;
    int from; /* replay: start at the keyframe at or before from_step */
    uint64_t from_step;
    uint64_t verify_restores;  /* replay: then restore this many keyframes in place */
    uint64_t schedule;         /* fork: the perturbation after the step (0: none) */
    uint64_t schedule_until;   /* fork: UINT64_MAX: to the end */
    const char *name;          /* fork: a name for the new run */
    uint64_t pid;              /* cat, shell: the process whose view (0: the job) */
    int input_fd;              /* shell: the keystrokes */
    const char *kernel, *init; /* NULL: $REWIND_KERNEL / $REWIND_INIT, else beside the program */
    const struct rw_test_knobs *test;   /* NULL (rewind's own tests: include/rewind_test.h) */
    uint64_t max_trace_mb, max_disk_mb; /* disk limits in MiB (0: rw_defaults) */
    double spin_limit_s;                /* as in struct rw_run_config */
};
void rw_options_init(struct rw_options *o);

/* Record a run of c in h: boot, run the job to its end, keep the run.
 * Returns 0 when the VM ran (r filled; r->exit_code says how the job
 * ended) or -1 when it could not (err: the phase's code, e.g. RW_ENOKVM). */
int rw_record(rw_home *h, const struct rw_run_config *c, struct rw_result *r, struct rw_error *err);

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
int rw_cat(rw_home *h, const char *ref, uint64_t step, const char *path, const struct rw_options *o,
           struct rw_result *r, struct rw_error *err);

/* A shell at step of run ref in process o->pid's view, fed from
 * o->input_fd (raw bytes) and written to the observer; kept as a run of its
 * own (r->id) that rw_replay re-runs. 0 with r->inspect_status or -1. */
int rw_shell(rw_home *h, const char *ref, uint64_t step, const struct rw_options *o,
             struct rw_result *r, struct rw_error *err);
/* Safe in a signal handler: the live shell sends the terminal size of its
 * input fd with its next keystrokes (call on SIGWINCH). */
void rw_shell_winch(void);
/* Safe in a signal handler: the live shell ends its input as at end of
 * file (the guest's shell exits; the session is kept). Call on SIGINT. */
void rw_shell_end_input(void);

/* Safe in a signal handler: make a running VM leave KVM_RUN now, so it
 * sees the abort flag that the handler has just set. */
void rw_interrupt(void);

/* ---- Properties (src/explore/props.h; docs/tutorials/properties.md) ---- */

#define RW_PROPS_MAX 32
struct rw_prop_verdict {
    char what[300];   /* "exit=0", "output~ERE", "file:/p~ERE", "property: CMD" */
    int reached;      /* the run got far enough to judge it */
    int passed;       /* 1: holds; 0: fails (see detail) */
    char detail[300]; /* why, in words: "exit 3", "no match", ... */
    uint64_t step;    /* the step where it was decided */
};

/* Judge the stored run ref by its spec's properties: up to max verdicts in
 * v, their count in *n (0: it has none). 0 or -1 with err. */
int rw_props_judge(rw_home *h, const char *ref, struct rw_prop_verdict *v, int max, int *n,
                   struct rw_error *err);

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
    /* Properties (docs/tutorials/properties.md): */
    uint64_t from_step;     /* with base_run: fork the schedules after this step
                               (0: where the job starts) */
    int keep_going;         /* run all N schedules, counting failures */
    int vary_seed;          /* schedule k also gets seed base+k (a run from boot) */
    int vary_dirorder;      /* schedule k also gets directory order k (docs/nix.md) */
    int vary_epoch;         /* schedule k also gets epoch base + k * RW_VARY_EPOCH_STEP */
    double probe_timeout_s; /* wall limit of each schedule and probe (0: default) */
    /* Where the schedules run (docs/distributed.md): NULL for this process's
       workers; "local" or "slurm" for an engine (src/explore/engine.h). */
    const char *via;
    const char *share;    /* slurm: a directory every node sees (NULL: in the home) */
    const char *via_args; /* slurm: extra sbatch arguments, split at blanks */
    /* 0 or 1: schedules 1..N; else only schedules first_schedule..N (one
       schedule of an earlier check again, a range per machine) */
    uint64_t first_schedule;
};
void rw_check_config_init(struct rw_check_config *c);
/* --vary epoch: schedule or build k starts its wall clock this many seconds
 * times k after the base epoch (a bit over 11 days, not a whole day). */
#define RW_VARY_EPOCH_STEP 1000003

struct rw_check_side {
    char id[RW_ID_MAX];
    char outcome[24];
    int exit_code;
    uint64_t steps;
    char output_hash[65];
    int props_failed; /* with properties: one of them fails in this run */
    char why[300];    /* and the first that does, in words */
};

/* One property's or SDK assertion's tally over a check's runs (schedule 0
 * included). */
struct rw_check_prop {
    char what[300];
    int sdk_kind; /* -1: a property from outside; else enum rw_sdk_kind (below) */
    int unmet;    /* a sometimes never true, a reachable never reached: a failure */
    uint64_t reached, passed, failed;
    char first_fail[RW_ID_MAX]; /* the first failing run ("" if none) */
    uint64_t first_fail_schedule, first_fail_step;
};

#define RW_TAIL_MAX 8
struct rw_check_tail { /* the next events of one side after the runs part */
    int n;
    char lines[RW_TAIL_MAX][300];
    unsigned tid[RW_TAIL_MAX];
};

struct rw_check_report {
    struct rw_check_side base;          /* schedule 0 */
    uint64_t start;                     /* the job-start step (perturbation starts after it) */
    uint64_t tried;                     /* schedules run */
    int found;                          /* a schedule ended differently */
    uint64_t schedule;                  /* the first that did */
    const char *strategy;               /* its strategy */
    struct rw_check_side failing;       /* that schedule's run */
    int narrowed;                       /* narrowing reached a verdict */
    uint64_t window_from, window_until; /* the narrowed window */
    uint64_t perturbed_in_window;       /* perturbed steps inside it */
    uint64_t deciding_step;
    char deciding_what[160];
    int deciding_fault; /* the deciding step injects a fault (docs/faults.md) */
    /* What the guest did at the deciding step, when it was a memory-access
     * point (--preempt memory): "access pid P/T write 0x... at ip 0x..."; "" if not. */
    char deciding_access[160];
    struct rw_check_side pass_run, fail_run; /* differ only by the deciding step */
    uint64_t probes;
    double explore_s, narrow_s;
    int parted; /* pass_run and fail_run part at event part_event */
    uint64_t part_event, part_step_pass, part_step_fail;
    struct rw_check_tail pass_next, fail_next;
    /* Properties: */
    int judged; /* schedules were judged by properties (else: by
                   ending like schedule 0) */
    int keep_going, vary_seed;
    uint64_t failures; /* schedules that failed (schedule 0 included) */
    uint64_t timeouts; /* schedules and probes ended by the wall limit */
    uint64_t rerun;    /* schedules cut by a wall-clock limit (spin, timeout) and so
                          run once more before they counted (docs/determinism.md) */
    uint64_t diverged; /* runs that differ from the stored run of their spec: a
                          determinism violation (the first in divergence) */
    char divergence[560];
    double fail_lo, fail_hi; /* 95% Wilson interval of failures / tried */
    int nprops;
    struct rw_check_prop props[RW_PROPS_MAX + RW_PROPS_MAX];
    uint64_t unmet;           /* rows with unmet set: the check fails too */
    int seed_decides;         /* vary_seed: the failing schedule's seed fails (or
                                 differs) with no perturbation: fail_run is that
                                 run, nothing to narrow */
    int bursts_decide;        /* the failing schedule's bursts with none of its
                                 actions fail (or differ) too: fail_run is that
                                 run, pass_run schedule 0, no step decides */
    char check_id[RW_ID_MAX]; /* the check's record (rw_checks_list), "" if unsaved */
    /* With an engine (via): */
    uint64_t lost;   /* schedules whose task died twice (not in tried) */
    char where[256]; /* where the schedules ran: "node1 16, node2 16" */
};

/* Run the check. 0 (see rep->found) or -1 with err. */
int rw_check(rw_home *h, const struct rw_check_config *c, struct rw_check_report *rep,
             struct rw_error *err);

/* One task of a check --via slurm (`rewind check-task DIR K`, src/explore/
 * slurm_task.c): run slice K of the plan in DIR, outcomes into DIR/out. */
int rw_check_task(const char *dir, uint64_t task, struct rw_error *err);

/* A stored check (src/explore/checkrec.h): `rewind checks`, `rewind show CHECK`. */
struct rw_check_info {
    char id[RW_ID_MAX];
    char base[RW_ID_MAX]; /* schedule 0's run */
    int64_t created;      /* seconds since 1970 */
    uint64_t start;       /* the schedules fork after this step */
    uint64_t schedules, tried, failures;
    uint64_t first; /* the first schedule: 1, or A of --schedules A..B */
    int found, narrowed, judged;
    uint64_t unmet;    /* assertions never met across the check (a failure) */
    uint64_t schedule; /* the first failing schedule (found) */
    char failing[RW_ID_MAX], deciding[32];
    const char *const *runs; /* the runs it made (valid during the callback) */
    size_t nruns;
};
/* Every stored check, newest first, to fn (nonzero from fn stops: returned).
 * Unreadable records are skipped. Count, or -1 with err. */
int rw_checks_list(rw_home *h, int (*fn)(void *ctx, const struct rw_check_info *c), void *ctx,
                   struct rw_error *err);
/* The stored record of check ref (its id or a unique prefix of 4+ hex
 * digits) as JSON text (malloc'd into *json). 0, or -1 with err
 * (RW_EUSAGE: no such check). */
int rw_check_record(rw_home *h, const char *ref, char **json, struct rw_error *err);

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

/* ---- Debugging a paused machine (src/run/debug.c, docs/debugging.md) ---- */

/* A thread of the guest as its kernel lists it. */
struct rw_thread {
    uint32_t tid, pid; /* the thread's id and its process's (tgid) */
    char comm[17];
    unsigned state; /* the kernel's __state: 0 running, 1 sleeping, 2 disk wait, ... */
    int current;    /* on the CPU */
    int kernel;     /* a kernel thread (no user memory) */
};
/* Every thread of m's guest now, up to max, into out; *n gets how many
 * there are. 0 or -1 with err. */
int rw_machine_threads(rw_machine *m, struct rw_thread *out, size_t max, size_t *n,
                       struct rw_error *err);
/* A thread's user-mode registers: the vCPU's when it is on the CPU in user
 * mode, else those its kernel saved (in_kernel 1). */
struct rw_uregs {
    struct rw_regs r;
    uint64_t cs, ss, orig_rax, fs_base;
    int in_kernel;
};
/* Thread tid's user registers. 0 or -1 with err (RW_EUSAGE: no such thread
 * or a kernel thread). */
int rw_machine_user_regs(rw_machine *m, uint32_t tid, struct rw_uregs *r, struct rw_error *err);
/* Write thread tid's user registers (the general ones, rip, rflags) where
 * rw_machine_user_regs reads them. The machine then runs differently from
 * the stored run (a debugger's `set $reg`, `jump`, `return`, `call`).
 * 0 or -1 with err. */
int rw_machine_set_user_regs(rw_machine *m, uint32_t tid, const struct rw_regs *r,
                             struct rw_error *err);
/* Process pid's memory at addr through its page tables: bytes read or
 * written (fewer when a page is not mapped; 0 when pid is not there).
 * pid 0: through the vCPU's current page tables (the kernel, and the
 * process on the CPU). Writes reach read-only pages too. */
size_t rw_machine_read(rw_machine *m, uint32_t pid, uint64_t addr, void *buf, size_t n);
size_t rw_machine_write(rw_machine *m, uint32_t pid, uint64_t addr, const void *buf, size_t n);
/* Process pid's auxiliary vector as its kernel saved it at exec (8-byte
 * type/value pairs, AT_NULL included: what /proc/PID/auxv shows): up to
 * max bytes into buf. Bytes, or -1 with err (RW_EUSAGE: no such process,
 * or its vector was not found). */
long rw_machine_auxv(rw_machine *m, uint32_t pid, void *buf, size_t max, struct rw_error *err);

/* gdb's writes kept as a run's input (`rewind gdb --keep`,
 * docs/debugging.md "Keeping a session"): an ordered list of memory writes
 * (process, address, bytes) and register writes (thread, the general
 * registers, rip, rflags) applied when the machine stands at step `at` (as
 * `rewind gdb RUN at` finds it), before it runs on. Part of the spec
 * (docs/formats.md, "gdb_writes"), so of the run's id. A plain struct:
 * copy it as a whole. */
#define RW_PATCH_OPS_MAX 256
#define RW_PATCH_BYTES_MAX 65536 /* the memory writes' bytes, all together */
struct rw_patch_op {
    int regs;         /* 0: a memory write; 1: a register write */
    uint32_t id;      /* the process (memory) or the thread (registers) */
    uint64_t addr;    /* memory: the virtual address */
    uint32_t off;     /* memory: where its bytes start in rw_patch.bytes */
    uint32_t len;     /* memory: how many (1 or more) */
    struct rw_regs r; /* registers: all of them, as written */
};
struct rw_patch {
    uint64_t at; /* the step (1 or more) */
    unsigned n;
    uint32_t nbytes;
    struct rw_patch_op op[RW_PATCH_OPS_MAX];
    uint8_t bytes[RW_PATCH_BYTES_MAX];
};
/* Append a memory write or a register write. 0, or -1 when p is full
 * (p unchanged). rw_patch_fits: would a memory write of n bytes fit
 * (n 0: a register write)? */
int rw_patch_fits(const struct rw_patch *p, size_t n);
int rw_patch_mem(struct rw_patch *p, uint32_t pid, uint64_t addr, const void *buf, size_t n);
int rw_patch_regs(struct rw_patch *p, uint32_t tid, const struct rw_regs *r);
/* Start the writes of a session at step of run ref: p->at = step and p
 * holds ref's own writes when they are at that step (a session on a kept
 * run adds to them). -1 with err (RW_EUSAGE) when ref holds writes at
 * another step (a run holds the writes of one step) or step is not inside
 * it. */
int rw_patch_base(rw_home *h, const char *ref, uint64_t step, struct rw_patch *p,
                  struct rw_error *err);
/* Keep a session: a new run, ref's spec with p as its gdb writes, started
 * from ref's keyframe before p->at, unperturbed after p->at, run to its
 * end and stored like a fork (r->id). 0 or -1 with err. */
int rw_fork_patched(rw_home *h, const char *ref, const struct rw_patch *p,
                    const struct rw_options *o, struct rw_result *r, struct rw_error *err);

/* Running a paused machine on under a debugger's control: hardware
 * breakpoints and watchpoints (the CPU's four debug registers) and
 * single-stepping one thread's user instructions. A debug exit is never a
 * step: the machine runs exactly as it would without them. */
#define RW_DEBUG_SLOTS 3 /* breakpoints and watchpoints at once (one register is rewind's) */
/* A process (pid non-zero) runs under the trap flag, not the debug
 * registers: its breakpoints and watchpoints are checked in software, so
 * it takes more of them (gdb's next/finish insert several of their own). */
#define RW_DEBUG_POINTS 32
enum rw_watch_kind { RW_BREAK = 0, RW_WATCH_WRITE = 1, RW_WATCH_ACCESS = 3 };
struct rw_watch {
    uint64_t addr;
    enum rw_watch_kind kind;
    unsigned len; /* watchpoints: 1, 2, 4 or 8 (addr aligned to it) */
};
struct rw_resume {
    uint32_t pid; /* stop only in a thread of this process, in user mode;
                     0: anywhere (the whole machine) */
    struct rw_watch w[RW_DEBUG_POINTS];
    int nw;                   /* at most RW_DEBUG_SLOTS for pid 0, RW_DEBUG_POINTS for a process */
    uint32_t step_tid;        /* non-zero: stop after one user instruction of this thread */
    uint64_t step_skip;       /* with step_tid and a process: run that many user
                                 instructions of step_tid first (counted in
                                 rw_stop.tid_steps), stopping only for the rest of
                                 r's conditions; UINT64_MAX: count them all */
    int cpu_step;             /* stop after one instruction of the vCPU, whatever runs
                                 (with pid 0: the whole machine) */
    uint64_t until_step;      /* non-zero: stop when the run reaches this step */
    uint64_t max_debug_exits; /* a process only, non-zero: stop (RW_STOP_BUDGET)
                                 once this call took that many debug exits */
    volatile sig_atomic_t *abort;
    double spin_limit_s; /* non-zero: the run ends as spin (RW_STOP_ENDED) when it makes
                            no step for this many seconds of wall time, as a run's
                            --spin-limit does; 0: no such limit */
};
enum rw_stop_why {
    RW_STOP_BREAK,   /* a breakpoint: w[slot] */
    RW_STOP_WATCH,   /* a watchpoint: w[slot] was written (or read) */
    RW_STOP_STEPPED, /* step_tid made its one instruction */
    RW_STOP_STEP,    /* until_step reached */
    RW_STOP_ENDED,   /* the run ended (outcome in the machine) */
    RW_STOP_ABORTED, /* *abort was set */
    RW_STOP_BUDGET,  /* max_debug_exits reached, at no position one can name */
};
struct rw_stop {
    enum rw_stop_why why;
    uint32_t tid;  /* the thread stopped in (BREAK, WATCH, STEPPED) */
    uint64_t step; /* the machine's step */
    uint64_t pc;   /* its user pc */
    int slot;
    uint64_t debug_exits; /* debug exits taken by this call */
    uint64_t tid_steps;   /* user instructions of step_tid this call ran */
    int direct;           /* WATCH after a user instruction: the thread's previous exit was its
                             previous instruction, so that instruction made the change */
};
/* Run m on until one of r's conditions. 0 with *s, or -1 with err. */
int rw_machine_resume(rw_machine *m, const struct rw_resume *r, struct rw_stop *s,
                      struct rw_error *err);
/* How the run of m ended or stands: its outcome, steps, the trace hash of
 * its records from step 0 and the job's exit status; ran to its end first
 * when run_to_end. 0 or -1 with err. */
int rw_machine_finish(rw_machine *m, int run_to_end, struct rw_result *r, struct rw_error *err);

/* `rewind where`: the stack of every thread of a process at a step. */
#define RW_FRAMES_MAX 64
struct rw_frame {
    uint64_t pc;    /* a caller's frame: the call site (return address - 1) */
    char func[128]; /* "" if unknown */
    uint64_t func_off;
    char file[256]; /* "" without line information */
    int line;
    int kernel; /* a frame of the guest kernel */
    int guess;  /* kernel: a return address found on the stack, not unwound */
};
struct rw_stack {
    struct rw_thread t;
    int nframes, nkframes;
    struct rw_frame frames[RW_FRAMES_MAX];  /* user mode, innermost first */
    struct rw_frame kframes[RW_FRAMES_MAX]; /* kernel (with kernel set) */
    char why[300];                          /* why the user stack is short or empty ("" if not) */
};
struct rw_where {
    uint32_t pid; /* the process (o->pid, else the job) */
    uint64_t step;
    char exe[256]; /* the program it exec'd, as the trace names it */
    size_t nthreads;
    struct rw_stack *threads; /* rw_where_free */
};
/* The stacks of process o->pid (0: the job) at step of run ref, from
 * throwaway forks (nothing stored changes); kernel: the kernel stacks too.
 * 0 with *w (rw_where_free), or -1 with err (RW_EUSAGE: no such process
 * or step). */
int rw_where(rw_home *h, const char *ref, uint64_t step, const struct rw_options *o, int kernel,
             struct rw_where *w, struct rw_error *err);
void rw_where_free(struct rw_where *w);
/* The process a debugger looks at: *pid (0: the job's, filled in) alive at
 * step, and the program it last exec'd (its path in the guest) into path.
 * 0 or -1 with err (RW_EUSAGE: none, or it has exited). */
int rw_process_program(rw_home *h, const char *ref, uint64_t step, uint32_t *pid, char *path,
                       size_t n, struct rw_error *err);
/* Copy the file path, as process pid saw it at step, out of the guest (a
 * throwaway rw_cat) into a new temporary file whose name goes into tmp
 * (the caller removes it; tmp[0] == 0 when none was made). 0 or -1. */
int rw_program_copy(rw_home *h, const char *ref, uint64_t step, uint32_t pid, const char *path,
                    const struct rw_options *o, char tmp[64], struct rw_error *err);

/* ---- Reading: runs, specs, events, processes, comparison, store upkeep ---- */

/* A stored run as its manifest and spec describe it. Strings are empty
 * when the manifest lacks the field (has_* say which optional ones exist). */
struct rw_run_info {
    char id[RW_ID_MAX]; /* the run's id (its directory name when complete) */
    char dir[256];      /* its directory name under runs/ */
    char path[4096];    /* that directory's path */
    char name[256];     /* the --name given to it, if has_name */
    int has_name;
    char parent[RW_ID_MAX]; /* the run it was forked from, if has_parent */
    int has_parent;
    int has_fork_step;  /* the manifest names "fork_step" (else "from_step" is used) */
    int64_t fork_step;  /* the step the fork starts from (0 if not a fork) */
    int64_t created;    /* seconds since 1970 */
    char outcome[64];   /* "exited", "panic", "timeout", ... */
    int64_t exit_code;  /* the job's exit status */
    uint64_t steps;     /* the run's length in steps */
    uint64_t events;    /* trace entries */
    int64_t virtual_ns; /* virtual time at the end */
    uint64_t keyframes, keyframe_every;
    char trace_hash[80], ram_hash[80];
    char kernel[80], init[80], image[80], cpu[80]; /* the spec: kernel, init, image, cpu */
    char cwd[1024];
    int64_t mem_mib, seed, epoch, quantum_ns;
    char command[300];   /* the spec's argv joined by spaces (truncated) */
    int incomplete;      /* a run killed mid-way: only id, dir, path and outcome are set */
    int generation;      /* in rw_forks: 1 for a direct fork, 2 for its forks, ... */
    char *manifest_json; /* the manifest, keys sorted, indented by 2 (NULL in listings) */
    char *spec_json;     /* the manifest's "spec" as compact JSON (NULL in listings) */
    char names[2048];    /* every --name given to it, oldest first, each ending in '\n' */
};

/* Load the run ref names into *info, with the raw manifest and spec text.
 * Returns 0 (release with rw_run_info_free), or -1 with err: no such run
 * (RW_EUSAGE) or an unreadable manifest (RW_EINTERNAL). */
int rw_run_info(rw_home *h, const char *ref, struct rw_run_info *info, struct rw_error *err);
/* Free the raw texts of info (info itself is the caller's). */
void rw_run_info_free(struct rw_run_info *info);

/* Parse a time: seconds since 1970, or YYYY-MM-DD[THH:MM:SS] in UTC.
 * Returns 0 with *out, or -1 if s is neither. */
int rw_parse_time(const char *s, int64_t *out);

/* Which runs rw_runs_list reports; NULL or zeroed fields match every run. */
struct rw_run_filter {
    const char *name;   /* only runs given this --name */
    const char *status; /* only runs of this outcome */
    int64_t since;      /* only runs created at or after (seconds since 1970; 0: any) */
};

/* Called once per listed run; a non-zero return stops the listing. A run
 * whose manifest cannot be read is passed as info NULL with why set. */
typedef int (*rw_run_fn)(void *ctx, const struct rw_run_info *info, const struct rw_error *why);

/* Call fn for the complete runs of h matching f, newest first, then (only
 * when f matches every run) once per run killed mid-way, with incomplete
 * set. Returns 0, or -1 with err when runs/ cannot be read. */
int rw_runs_list(rw_home *h, const struct rw_run_filter *f, rw_run_fn fn, void *ctx,
                 struct rw_error *err);

/* The family tree under the run ref: first fn gets every run whose
 * manifest cannot be read (info NULL, why set), then every run whose parent
 * chain reaches ref, depth first (a fork's forks follow it; info->generation
 * is 1 for a direct fork). root gets the resolved run's id. Returns the
 * number of forks, or -1 with err when ref does not name a readable run. */
int rw_forks(rw_home *h, const char *ref, char root[RW_ID_MAX], rw_run_fn fn, void *ctx,
             struct rw_error *err);

/* One decoded trace entry. payload and the kind's name stay valid only
 * during the callback that receives it. */
struct rw_event {
    uint64_t index;        /* 0-based position in the trace */
    uint64_t step;         /* the step it happened at */
    unsigned kind;         /* enum rewind_record_kind of the guest ABI */
    const char *kind_name; /* "output", "exec", ... or "kind-N" */
    uint32_t pid, tid;
    uint64_t aux; /* kind-specific: fd, child pid, exit code, ... */
    uint32_t flags;
    const uint8_t *payload;
    size_t payload_len;
    const char *node; /* the node of process pid (docs/faults.md), or NULL: none; like
                         payload, valid only during the callback */
};

/* Which events rw_events reports. Zeroed means none; use RW_EVENTS_ALL. */
struct rw_event_query {
    uint64_t from, to;                /* steps, inclusive; reading stops after to */
    uint64_t first_index, last_index; /* positions, inclusive; stops after last_index */
    unsigned kind;                    /* 0: every kind */
};
#define RW_EVENTS_ALL ((struct rw_event_query){0, UINT64_MAX, 0, UINT64_MAX, 0})

/* How a trace read ended: torn means the file was cut or corrupt after
 * records whole entries (those were reported). path is the trace file. */
struct rw_trace_status {
    int torn;
    uint64_t records;
    char path[4200];
};

/* Call fn for each event of run id (a resolved id, see rw_resolve) that q
 * selects, in order, until fn returns non-zero. Returns 0 with *st filled
 * (st may be NULL), or -1 with err when the trace is missing or foreign. */
int rw_events(rw_home *h, const char *id, const struct rw_event_query *q,
              int (*fn)(void *ctx, const struct rw_event *ev), void *ctx,
              struct rw_trace_status *st, struct rw_error *err);

/* The output events (stdout and stderr, aux = fd) of run id up to step
 * upto, in order: rw_events restricted to kind output. Same returns. */
int rw_log(rw_home *h, const char *id, uint64_t upto,
           int (*fn)(void *ctx, const struct rw_event *ev), void *ctx, struct rw_trace_status *st,
           struct rw_error *err);

/* The kind's name: "output", ... in constant storage; if the kind is
 * unknown, "kind-N" written into buf and buf returned (no static buffer:
 * the engine is reentrant, docs/architecture.md). */
#define RW_KIND_NAME_MAX 16
const char *rw_event_kind_name(unsigned kind, char buf[RW_KIND_NAME_MAX]);
/* The kind named name, or 0 if it names none. */
unsigned rw_event_kind(const char *name);
/* One line of words for ev ("output fd 1 pid 12/12: \"hi\\n\"") into out
 * (always NUL-terminated). */
void rw_event_describe(const struct rw_event *ev, char *out, size_t n);
/* A wait status (an exit event's aux: exit(1) is 256) as a person reads it:
 * "exited 1", "killed by SIGSEGV (core)", "killed by signal 77" (always
 * NUL-terminated; the same words on every host). */
void rw_wait_status_text(uint64_t status, char *out, size_t n);

/* A fault event's parts (docs/faults.md, "What shows the faults"): what the
 * guest kernel did to which node. */
struct rw_fault_event {
    const char *kind;     /* "kill", "pause", "continue", "partition", "heal", "clock", "net",
                             "clear", "restart", "disk", "mend", "split", "join", "power"
                             (a power cut: a kill whose node's unsynced writes are undone),
                             "lost" (those writes undone) (constant storage) */
    unsigned node;        /* 1..RW_NODES_MAX, the node's place in the spec (a split: the
                             lowest node of its first side) */
    uint64_t ns;          /* a pause's, partition's, net, disk or split fault's length; a
                             clock's step (int64_t); a kill's or a power cut's delay before
                             its restart (0: none); lost: 0 */
    uint32_t procs;       /* the processes signalled (a split: the processes of every node;
                             lost: 0) */
    const char *net_mode; /* net: "delay", "loss", "duplicate", "reorder"; else NULL */
    unsigned net_percent, net_delay_ms; /* net: the share of packets, the delay; else 0 */
    uint32_t leader_pid;                /* restart: the node's new leader; else 0 */
    const char *disk_mode; /* disk: "eio" (writes and syncs fail with EIO), "enospc" (writes
                              fail with ENOSPC), "sync" (syncs fail with EIO); else NULL */
    uint32_t split_side;   /* split: the first side, bit i - 1 set for node i (no packet
                              crosses between it and the other nodes; the job reaches both);
                              else 0 */
    uint64_t lost_bytes;   /* lost: the bytes of writes undone (restored or cut off); else 0 */
    uint32_t lost_files;   /* lost: the files put back to their last sync; else 0 */
    uint32_t lost_kept;    /* lost: the bytes written that could not be undone (over the
                              kernel's limit); else 0 */
};
/* ev's fault: 0 with f filled, or -1 (f zeroed) when ev is no fault event or
 * a malformed one (a trace is untrusted: its payload is read only within
 * payload_len). */
int rw_event_fault(const struct rw_event *ev, struct rw_fault_event *f);

/* SDK assertions (docs/sdk.md): what a program running under rewind asserted
 * from inside with the guest SDK (guest/sdk), read from its run's trace. An
 * assertion is identified by its kind and message; file and line are those
 * of its first evaluation, else of its catalog entry. */
enum rw_sdk_kind {
    RW_SDK_ALWAYS,
    RW_SDK_ALWAYS_OR_UNREACHABLE,
    RW_SDK_SOMETIMES,
    RW_SDK_REACHABLE,
    RW_SDK_UNREACHABLE,
};
struct rw_sdk_assertion {
    enum rw_sdk_kind kind;
    const char *msg, *file; /* valid during the callback */
    unsigned line;
    int catalogued;               /* seen in the catalog */
    uint64_t hits, passes, fails; /* evaluations in this run (pass = cond true) */
    uint64_t first_fail_step;     /* UINT64_MAX when none */
    int failed;                   /* this run violates it: always/always_or_unreachable with a false
                                     evaluation; unreachable hit; (sometimes / reachable are judged
                                     across a check, not per run) */
};
/* "always", "always_or_unreachable", "sometimes", "reachable", "unreachable"
 * (the protocol's words); "?" for a value out of range. */
const char *rw_sdk_kind_name(enum rw_sdk_kind k);
/* Every assertion of run id (a resolved id; catalog merged with evaluations),
 * in a stable order (file, line, kind, message), until fn returns non-zero.
 * Returns the number of assertions reported, or -1 with err when the trace
 * is missing or foreign. */
int rw_sdk_assertions(rw_home *h, const char *id,
                      int (*fn)(void *ctx, const struct rw_sdk_assertion *a), void *ctx,
                      struct rw_error *err);

/* A process alive at a step, as rw_ps reports it. */
struct rw_proc {
    uint32_t pid, ppid;
    int threads;    /* live threads, the leader included */
    int depth;      /* 0 for init, 1 for its children, ... */
    char argv[256]; /* the last exec's argv joined by spaces */
    char node[17];  /* its node (docs/faults.md), or "": none */
};

/* The process tree of run id alive after step upto (UINT64_MAX: the end),
 * rebuilt from the trace's fork, exec and exit events: fn gets init first,
 * then each process followed by its children (orphans under init, kernel
 * threads left out). Returns 0 with *st filled, or -1 with err. */
int rw_ps(rw_home *h, const char *id, uint64_t upto, int (*fn)(void *ctx, const struct rw_proc *p),
          void *ctx, struct rw_trace_status *st, struct rw_error *err);

/* Which thread held the guest's CPU (docs/guest-abi.md, "Context
 * switches"): the guest kernel reports every context switch, and the
 * monitor writes those made between step S-1 and step S as one sched event
 * at step S. */
struct rw_sched_thread {
    uint32_t tid;  /* 0: the idle task (nothing runnable) */
    uint32_t pid;  /* its process (thread group); 0 if the trace does not say */
    char name[32]; /* its process's program (last exec's file name), "idle",
                    * "[kernel]" for kernel threads, "?" if the trace does not say */
};
struct rw_sched_switch {
    struct rw_sched_thread prev, next; /* prev stopped, next ran */
};
/* The switches of one step, in order. */
struct rw_sched_step {
    uint64_t step;                    /* made after step - 1, before step */
    size_t n;                         /* 0..64 */
    const struct rw_sched_switch *sw; /* valid during the callback */
    uint64_t lost;                    /* more switches, past the guest's ring (not listed) */
};
struct rw_sched_stats {
    uint64_t records, switches, lost; /* over the steps reported */
};

/* Call fn for each step in [from, to] of run id at which the guest switched
 * threads, in order, until fn returns non-zero. Returns 0 with *stats and
 * *st filled (either may be NULL), or -1 with err when the trace is missing,
 * foreign, or holds a malformed sched record. */
int rw_sched_switches(rw_home *h, const char *id, uint64_t from, uint64_t to,
                      int (*fn)(void *ctx, const struct rw_sched_step *s), void *ctx,
                      struct rw_sched_stats *stats, struct rw_trace_status *st,
                      struct rw_error *err);

/* The thread that ran at step (made the port write that was step): the next
 * of the last switch at or before it. Returns 1 with *out, 0 when the trace
 * has no switch by then, or -1 with err as rw_sched_switches. */
int rw_sched_running(rw_home *h, const char *id, uint64_t step, struct rw_sched_thread *out,
                     struct rw_trace_status *st, struct rw_error *err);

/* Where two runs' traces part. */
struct rw_diff {
    int identical;           /* 1: every event equal, same length */
    uint64_t common;         /* equal events before the difference */
    uint64_t event;          /* 0-based index of the first differing event */
    uint64_t step_a, step_b; /* its step on each side (0 if that side ended) */
};

/* Compare the traces of runs a and b (resolved ids). Returns 0 with *d, or
 * -1 with err whose message is "missing" or "not a trace file". */
int rw_diff(rw_home *h, const char *a, const char *b, struct rw_diff *d, struct rw_error *err);

/* Where two runs' state logs (made with --state-log) part. */
struct rw_state_diff {
    int recorded;            /* 0: one of the runs has no state log */
    uint64_t regs_step;      /* first step whose register hash differs (0: none) */
    uint64_t ram_step;       /* first RAM checkpoint that differs (0: none) */
    uint64_t ram_equal_step; /* the last equal RAM checkpoint before it */
};

/* Compare the state logs of runs a and b (resolved ids) up to the first
 * register or RAM difference. Returns 0 with *d (recorded 0 when a log is
 * missing). */
int rw_diff_states(rw_home *h, const char *a, const char *b, struct rw_state_diff *d);

/* Delete the runs refs[0..n) (n <= RW_REMOVE_MAX). All are resolved first
 * and, unless force, none may be the keyframes parent of a run that stays:
 * either failing removes nothing and returns -1 with err. Then each is
 * removed and reported to fn (removed 0: only partly). Returns 0, or 1 if
 * some run was only partly removed. */
#define RW_REMOVE_MAX 64
int rw_remove(rw_home *h, const char *const *refs, int n, int force,
              void (*fn)(void *ctx, const char *id, const char *path, int removed), void *ctx,
              struct rw_error *err);

#define RW_GC_MAX_NAMES 64
/* What rw_gc found and freed (a dry run: would free). */
struct rw_gc_stats {
    uint64_t runs, killed_runs; /* run directories read; of them killed mid-way */
    uint64_t live_pages, dead_pages, corrupt_pages;
    uint64_t bytes_before, bytes_after; /* page store pack bytes (dry run: estimated after) */
    int no_store;                       /* there is no page store yet */
    uint64_t live_images, dead_images, dead_image_bytes;
    char dead_image_names[RW_GC_MAX_NAMES][65]; /* the first RW_GC_MAX_NAMES of them */
    int images_kept;          /* a run's manifest or spec was unreadable: images kept */
    char unreadable_run[256]; /* that run */
    uint64_t temp_files, temp_bytes, imports; /* leftovers removed */
};

/* Free the pages and root images no run of h needs. dry_run: change
 * nothing, report. wait: wait for rewind processes in flight (printing one
 * line on stderr), else fail. Returns 0 with *st, or -1 with err. */
int rw_gc(rw_home *h, int dry_run, int wait, struct rw_gc_stats *st, struct rw_error *err);

/* What rw_verify found (src/home/verifyapi.c). */
struct rw_verify_report {
    uint64_t pages;        /* distinct pages in the page store, each re-hashed */
    uint64_t summed;       /* of which stored with a content checksum (restores trust it) */
    uint64_t bad;          /* of which no stored copy re-hashes to its name */
    char first_bad[65];    /* the first bad page's name */
    uint64_t runs, named;  /* runs with keyframes; pages their keyframes name (with repeats) */
    uint64_t missing;      /* of which the store has none */
    char missing_run[256]; /* the first run with a missing page, and that page */
    char first_missing[65];
    uint64_t unreadable_runs; /* keyframes files that could not be read, or damaged */
    int no_store;             /* there is no page store yet */
    /* Every file of every run (docs/reliability.md, "What verify checks"):
     * the manifest and spec parse, the trace reads whole and hashes to the
     * manifest's trace_hash, the keyframes hold no damage, the root image
     * hashes to its name. */
    uint64_t runs_checked; /* run directories read */
    uint64_t damaged_runs; /* of which one or more files are damaged */
    char damaged_run[256]; /* the first, and what is wrong with it */
    char damage[512];
    uint64_t images_checked; /* distinct root images re-hashed */
    uint64_t bad_images;     /* of which the bytes do not hash to the name */
    char first_bad_image[65];
};

/* Re-hash every page of h's store with SHA-256 (a keyframe restore trusts
 * the content checksum of the pages this store compressed instead), check
 * that every page a run's keyframes name is there, and check every file of
 * every run and every root image a run names. Changes nothing.
 * Returns 0 with *r (bad or missing pages are counted, not errors), or -1
 * with err if the store cannot be read. */
int rw_verify(rw_home *h, struct rw_verify_report *r, struct rw_error *err);

/* What an archive held or an export wrote. */
struct rw_archive_stats {
    char run[RW_ID_MAX]; /* the archive's run */
    uint64_t runs, events, keyframes, pages, images, bytes;
    int already; /* import: the run was already here, identical */
};

/* rw_export's flags: RW_EXPORT_REPLAYABLE adds the keyframe chain, its
 * pages and the root images; with RW_EXPORT_NO_IMAGE too, the root images
 * are left out (an import then needs them in its home already). */
#define RW_EXPORT_REPLAYABLE 1
#define RW_EXPORT_NO_IMAGE 2
/* Write run id (resolved) as one archive file to out ("-": stdout), with
 * what flags (RW_EXPORT_*) add (0: the run alone; any other value, and
 * RW_EXPORT_NO_IMAGE alone, is refused as RW_EUSAGE). Returns 0 with *st,
 * or -1 with err. */
int rw_export(rw_home *h, const char *id, int flags, const char *out, struct rw_archive_stats *st,
              struct rw_error *err);
/* Add the run in the archive at in ("-": stdin) to h after verifying all
 * of it. Returns 0 with *st, or -1 with err and nothing added. */
int rw_import(rw_home *h, const char *in, struct rw_archive_stats *st, struct rw_error *err);

/* Whether this machine's /dev/kvm runs guest kernel code natively. */
struct rw_kvm_probe {
    double cpl0_iters_per_s; /* a CPL 0 loop's iterations per second */
    double exit_us;          /* one port-I/O exit round trip, microseconds */
    int native;              /* fast enough to be hardware-assisted */
    char why[256];           /* one line explaining the verdict */
};

/* Run a throw-away probe guest on /dev/kvm (about 0.8 s). Returns 0 with
 * *p, or -1 with err (RW_ENOKVM: no usable /dev/kvm). */
int rw_kvm_probe(struct rw_kvm_probe *p, struct rw_error *err);

/* ---- Starting a program: the engine's one spawner (src/util/spawn.c) ---- */

#define RW_SPAWN_NULL (-1) /* the child's stream is /dev/null */
#define RW_SPAWN_KEEP (-2) /* the child's stream is the caller's own */
#define RW_SPAWN_SIGS 8    /* signals sigdefault holds at most */

/* How rw_spawn starts a program. rw_spawn_init: argv[0] searched in PATH,
 * the caller's environment and streams, nothing else changed. */
struct rw_spawn {
    const char *path;              /* the program's exact path (NULL: argv[0] searched in PATH) */
    char *const *env;              /* the child's environment (NULL: the caller's) */
    int in, out, err;              /* its stdin, stdout, stderr: a caller's fd, RW_SPAWN_NULL or
                                      RW_SPAWN_KEEP (out and err may be one fd) */
    int new_session;               /* the child leads a new session: no controlling terminal, out
                                      of the caller's process group (a server left running) */
    int unblock_all;               /* the child starts with no signal blocked */
    int sigdefault[RW_SPAWN_SIGS]; /* signals at their default action in the child (one the
                                      caller ignores stays ignored otherwise), up to a 0 */
};
void rw_spawn_init(struct rw_spawn *s);
/* Start argv (argv[0] its name) as s says. The child gets fds 0, 1 and 2
 * and no other fd of the caller's, close-on-exec or not. A program that
 * cannot be run is an error of this call, never a child that exits: 0 with
 * *pid, or -1 with err and errno (RW_ENOTFOUND: no such program, ENOENT;
 * RW_ENOTEXEC: not runnable, EACCES or ENOEXEC; RW_EINTERNAL: no process
 * could be made). err's message is "cannot run NAME: WHY". */
int rw_spawn(char *const argv[], const struct rw_spawn *s, pid_t *pid, struct rw_error *err);
/* Reap child pid (a wait interrupted by a signal is retried): 1 with its
 * wait status in *status, 0 when it is still running and block is 0, or
 * -1 with err (may be NULL) and errno (ECHILD: not a child of the caller,
 * or reaped already). */
int rw_spawn_wait(pid_t pid, int *status, int block, struct rw_error *err);

/* ---- Watching memory over a run (src/run/watch.c; docs/tutorials/debugging.md) ---- */

#define RW_WATCH_MAX_LEN 32 /* bytes: four hardware watchpoints of 8 */

struct rw_watch_config {
    const char *what;       /* an address (0x... or decimal) or a symbol of pid's executable */
    uint64_t pid;           /* the process (thread group) whose memory is watched */
    uint64_t len;           /* bytes, 1..RW_WATCH_MAX_LEN (0: the symbol's size, else 8) */
    uint64_t from, to;      /* steps, inclusive (to UINT64_MAX: the end of the run) */
    int exact;              /* single-step every seen change's stretch, with no budget */
    struct rw_options opts; /* observer, abort, kernel, init */
};

/* One write to the watched memory. */
struct rw_watch_hit {
    uint64_t step; /* steps taken before the write */
    uint8_t old_val[RW_WATCH_MAX_LEN], new_val[RW_WATCH_MAX_LEN];
    int old_known;  /* 0: the memory was not readable before this write */
    int exact;      /* 1: a watchpoint hit (thread and rip exact); 0: the change
                     * was seen at the end of step `step`'s stretch (no hit) */
    int by_step;    /* exact, found by single-stepping the stretch (no hardware
                     * watchpoint fired): the write may have rewritten the same
                     * value before, which only a watchpoint sees */
    uint32_t tid;   /* the writing thread (exact), else a guess: the thread of pid
                     * that made the next step; 0: unknown */
    int user;       /* exact: the write was made in user mode */
    uint64_t rip;   /* exact: the address after the writing instruction */
    char func[128]; /* exact: the function of the writing instruction ("" unknown) */
    uint64_t func_off;
    char file[256]; /* exact, with debug info: its source file and line */
    int line;
};

struct rw_watch_result {
    uint64_t addr, len; /* what was watched, in pid's address space */
    char exe[256];      /* pid's executable in the guest ("" unknown) */
    struct rw_watch_hit *hits;
    size_t n;
    uint64_t watchpoint_hits; /* debug exits counted (pid's and others') */
    uint64_t stepped, left;   /* seen changes single-stepped to their writer / left seen */
    uint64_t step_exits;      /* debug exits of that single-stepping */
    char step_error[1024];    /* why that single-stepping failed ("": it did not) */
    uint64_t steps;           /* steps run (the replay's end, or to + 1) */
    int trace_verified;       /* 1: replayed to the end and equal to the stored run */
    char trace_hash[65];
    double wall_s;
};

/* Every write to [what, what + len) in process pid's address space over
 * steps [from, to] of run ref: a replay with hardware watchpoints, where a
 * debug exit is never a step, checked against the stored run at its end.
 * 0 with *r (rw_watch_free) or -1 with err (RW_EUSAGE: no such process,
 * symbol or step). */
int rw_watch(rw_home *h, const char *ref, const struct rw_watch_config *c,
             struct rw_watch_result *r, struct rw_error *err);
void rw_watch_free(struct rw_watch_result *r);

/* ---- Images: a root made ready ahead of a run (src/image) ---- */

struct rw_image_info {
    char id[65];     /* the image's id: SHA-256 of its bytes (the spec's "image") */
    char path[4096]; /* images/<id>.erofs in the home */
    uint64_t size;   /* bytes */
    int built;       /* 1: built now; 0: the root was unchanged and found in the cache */
};

/* Turn root (a directory, a tarball or an erofs image) into its image in
 * h, as `rewind run --root` would, and keep it there. Progress goes to
 * obs->progress (obs may be NULL). 0, or -1 with err (RW_EROOT). */
int rw_image(rw_home *h, const char *root, const struct rw_observer *obs, struct rw_image_info *out,
             struct rw_error *err);

/* ---- Collected outputs and write tracking (docs/nix.md) ---- */

/* One entry a run kept with --collect PATH. */
struct rw_collected {
    char path[1024]; /* relative to PATH ("." for PATH itself) */
    char type;       /* 'f' file, 'd' directory, 'l' symlink (content: its target) */
    unsigned mode;   /* permission bits */
    uint64_t size;   /* bytes of content */
    char sha256[65]; /* of the content */
};
/* The entries run id (resolved) collected, sorted by path: a malloc'd array
 * in *out (free it), its length in *n, and in status "ok", "truncated", or
 * why the collection is incomplete. Built from the run's trace on first use
 * (the content kept as pages in the store). 0 or -1 with err (RW_EUSAGE:
 * the run collected nothing). */
int rw_collect_list(rw_home *h, const char *id, struct rw_collected **out, size_t *n, char *status,
                    size_t statuslen, struct rw_error *err);
/* The content of the collected entry path of run id (malloc'd into *data,
 * *len bytes, verified against its SHA-256). 0 or -1 with err (RW_EUSAGE:
 * no such entry). */
int rw_collect_read(rw_home *h, const char *id, const char *path, void **data, size_t *len,
                    struct rw_error *err);
/* The first and last offsets where bytes a (la) and b (lb) differ into
 * *first and *last (past the shorter one's end every byte differs): 1, or
 * 0 when they are equal (*first and *last untouched). */
int rw_diff_range(const unsigned char *a, size_t la, const unsigned char *b, size_t lb,
                  uint64_t *first, uint64_t *last);

/* One write a run made with --track-writes GLOB recorded (REWIND_REC_WRITE). */
struct rw_write {
    uint64_t index, step; /* the event's index in the trace, and its step */
    uint32_t pid, tid;
    uint64_t offset, length; /* where in the file, how many bytes */
    uint64_t fnv;            /* FNV-1a-64 of the bytes (rw_fnv64) */
    unsigned flags;          /* bit 0: the hash covers a prefix only; bit 1: the
                                run's last tracked write (limit reached) */
    char path[1024];         /* as the writer saw it */
};
/* Call fn for each write record of run id in trace order (fn returning
 * nonzero stops; < 0 makes this return -1). 0 with *st or -1 with err. */
int rw_writes(rw_home *h, const char *id, int (*fn)(void *ctx, const struct rw_write *w), void *ctx,
              struct rw_trace_status *st, struct rw_error *err);
/* The FNV-1a-64 hash the guest kernel gives the bytes of a write. */
uint64_t rw_fnv64(const void *p, size_t n);

/* Who wrote one byte of a file (`rewind blame`, `rewind repro`;
 * src/trace/writes.c). */
#define RW_BLAME_CHAIN 64
struct rw_blame {
    int found;         /* a tracked write covers the byte */
    uint64_t writes;   /* tracked writes to the file in the run */
    struct rw_write w; /* the last write covering the byte (found) */
    int holds;         /* the content given still holds w's bytes: 1, 0, or -1 unknown */
    size_t chain_n;    /* chain[0] the writer, then its parents up to init; 0 when the
                          writer is not in the process tree at w's step */
    struct rw_proc chain[RW_BLAME_CHAIN];
};
/* Blame byte offset of guest file path in run id (made with --track-writes
 * matching path); content (clen bytes): the file's collected bytes, or NULL
 * (then b->holds is -1). 0 with *b (b->found says whether a tracked write
 * covers the byte), or -1 with err. */
int rw_blame(rw_home *h, const char *id, const char *path, uint64_t offset, const void *content,
             size_t clen, struct rw_blame *b, struct rw_error *err);

/* `rewind repro`: K builds of one command with varied inputs (src/run/repro.c). */
#define RW_REPRO_MAX 64
struct rw_repro_config {
    struct rw_run_config run;                      /* the command; run.collect is required */
    uint64_t builds;                               /* K, 2..RW_REPRO_MAX */
    int vary_seed, vary_dirorder, vary_epoch;      /* build k: seed+k, dirorder k, epoch+k*step */
    void (*progress)(void *ctx, const char *line); /* one line per build, or NULL */
    void *progress_ctx;
    volatile sig_atomic_t *abort;
};
struct rw_repro_build {
    char id[RW_ID_MAX];
    enum rw_outcome outcome;
    int exit_code;
    uint64_t seed, dirorder;
    int dirorder_on;
    int64_t epoch_s;
};
/* Fill c: 2 builds, every variation on. */
void rw_repro_config_init(struct rw_repro_config *c);
/* Record the builds into b[0..builds-1]. 0, or -1 with err. */
int rw_repro(rw_home *h, const struct rw_repro_config *c, struct rw_repro_build *b,
             struct rw_error *err);
/* The guest path the builds collect, c->run.collect made absolute against
 * c->run.cwd, into base (bn bytes); when c->run.track_writes is NULL it is
 * set to glob (gn bytes, outliving c): nix_out (a derivation's output, a
 * file or a directory) then '*' when nix_out is not NULL, else base, '/'
 * and '*'. */
void rw_repro_paths(struct rw_repro_config *c, const char *nix_out, char *base, size_t bn,
                    char *glob, size_t gn);
/* 1 when every build ended as build 1 did (outcome and exit code), else 0. */
int rw_repro_ended_alike(const struct rw_repro_build *b, uint64_t builds);
/* One collected entry where build k differs from build 1 (rw_repro_compare). */
struct rw_repro_diff {
    uint64_t build;  /* k, an index into the builds (1..builds-1) */
    char path[3400]; /* the entry's guest path (under base) */
    char change;     /* '+' only in build k, '-' missing in build k, '~' differs */
    int ranged;      /* both regular files, both read: bytes first..last differ */
    uint64_t first, last;
    const void *data0, *datak; /* build 1's and build k's bytes when ranged */
    size_t len0, lenk;
};
/* Compare the collected files of builds 2..K with build 1's, build by
 * build in path order (base: rw_repro_paths): fn gets each difference (d
 * and its bytes valid during the call). The number of differences, -1
 * with err when build 1's files cannot be listed (nothing compared), or -2
 * with err when build k's cannot (builds before k were compared). */
long rw_repro_compare(rw_home *h, const struct rw_repro_build *b, uint64_t builds, const char *base,
                      void (*fn)(void *ctx, const struct rw_repro_diff *d), void *ctx,
                      struct rw_error *err);

/* `rewind nix`: a derivation built in the VM from its input closure, its
 * output's NAR hash compared with the store's copy (src/nix/build.c). */
struct rw_nix_config {
    const char *installable;  /* ".#attr", "FLAKE#attr" or a .drv path (or NULL with file) */
    const char *file, *attr;  /* -f FILE [-A attr] */
    struct rw_run_config run; /* mem, seed, epoch, dirorder, track_writes, kernel, init,
                                 observer, abort: root, argv, env, cwd, collect are set here */
};
struct rw_nix_report {
    char drv[1100];                    /* the derivation */
    char out_name[64], out_path[1100]; /* its output (one: "out" or the only one) */
    struct rw_result run;              /* the build's run */
    char nar_hash[80];   /* "sha256:<nix base-32>" of the output built ("" if it failed) */
    int in_store;        /* the store holds a valid copy of the output */
    char store_hash[80]; /* and its hash */
    int matches;         /* the two are equal */
    int network;         /* a fixed-output or impure derivation (it may need the network) */
    char message[400];   /* why the build failed, in words ("" if it did not) */
};
void rw_nix_config_init(struct rw_nix_config *c);
/* Evaluate, realise the inputs, build in the VM, hash. 0 with *r (the build
 * may have failed: r->message), or -1 with err. */
int rw_nix_build(rw_home *h, const struct rw_nix_config *c, struct rw_nix_report *r,
                 struct rw_error *err);
/* A derivation made ready to build (rw_nix_prepare): run is c->run with the
 * root (a temporary directory of the input closure), argv, env, cwd
 * (/build), collect (the output path) and nix_drv set, so rw_record,
 * rw_check and rw_repro build it as rewind nix does. */
struct rw_nix_job {
    char drv[1100], out_name[64], out_path[1100];
    int network; /* fixed-output or impure (it may need the network) */
    struct rw_run_config run;
    char root[4096];    /* owned: removed by rw_nix_job_free */
    char **argv, **env; /* owned */
};
/* Evaluate c's installable, realise its inputs, make the root. 0, or -1
 * with err (nothing left behind). rw_nix_job_free when done with j->run. */
int rw_nix_prepare(rw_home *h, const struct rw_nix_config *c, struct rw_nix_job *j,
                   struct rw_error *err);
void rw_nix_job_free(struct rw_nix_job *j);
/* The NAR hash ("sha256:<nix base-32>") of what run collected. 0 or -1. */
int rw_nix_output_hash(rw_home *h, const char *run, char out[80], struct rw_error *err);
/* 1 with the store's NAR hash of path in out when the store holds a valid
 * copy of it, else 0. */
int rw_nix_store_hash(const char *path, char out[80]);

#ifdef __cplusplus
}
#endif

#endif
