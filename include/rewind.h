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
 *  - No function prints to stdout or stderr unless an option asks it to
 *    (a run streams its job's output only with rw_run_config.stream_output).
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

/* ---- Reading: runs, specs, events, processes, comparison, store upkeep ---- */

/* A stored run as its manifest and spec describe it. Strings are empty
 * when the manifest lacks the field (has_* say which optional ones exist). */
struct rw_run_info {
    char id[RW_ID_MAX];     /* the run's id (its directory name when complete) */
    char dir[256];          /* its directory name under runs/ */
    char path[4096];        /* that directory's path */
    char name[256];         /* the --name given to it, if has_name */
    int has_name;
    char parent[RW_ID_MAX]; /* the run it was forked from, if has_parent */
    int has_parent;
    int has_fork_step;      /* the manifest names "fork_step" (else "from_step" is used) */
    int64_t fork_step;      /* the step the fork starts from (0 if not a fork) */
    int64_t created;        /* seconds since 1970 */
    char outcome[64];       /* "exited", "panic", "timeout", ... */
    int64_t exit_code;      /* the job's exit status */
    uint64_t steps;         /* the run's length in steps */
    uint64_t events;        /* trace entries */
    int64_t virtual_ns;     /* virtual time at the end */
    uint64_t keyframes, keyframe_every;
    char trace_hash[80], ram_hash[80];
    char kernel[80], init[80], image[80], cpu[80]; /* the spec: kernel, init, image, cpu */
    char cwd[1024];
    int64_t mem_mib, seed, epoch, quantum_ns;
    char command[300];     /* the spec's argv joined by spaces (truncated) */
    int incomplete;        /* a run killed mid-way: only id, dir, path and outcome are set */
    int generation;        /* in rw_forks: 1 for a direct fork, 2 for its forks, ... */
    char *manifest_json;   /* the manifest, keys sorted, indented by 2 (NULL in listings) */
    char *spec_json;       /* the manifest's "spec" as compact JSON (NULL in listings) */
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
    uint64_t aux;          /* kind-specific: fd, child pid, exit code, ... */
    uint32_t flags;
    const uint8_t *payload;
    size_t payload_len;
};

/* Which events rw_events reports. Zeroed means none; use RW_EVENTS_ALL. */
struct rw_event_query {
    uint64_t from, to;             /* steps, inclusive; reading stops after to */
    uint64_t first_index, last_index; /* positions, inclusive; stops after last_index */
    unsigned kind;                 /* 0: every kind */
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
           int (*fn)(void *ctx, const struct rw_event *ev), void *ctx,
           struct rw_trace_status *st, struct rw_error *err);

/* The kind's name ("output", ...; "kind-N" if unknown; static storage). */
const char *rw_event_kind_name(unsigned kind);
/* The kind named name, or 0 if it names none. */
unsigned rw_event_kind(const char *name);
/* One line of words for ev ("output fd 1 pid 12/12: \"hi\\n\"") into out
 * (always NUL-terminated). */
void rw_event_describe(const struct rw_event *ev, char *out, size_t n);

/* A process alive at a step, as rw_ps reports it. */
struct rw_proc {
    uint32_t pid, ppid;
    int threads;    /* live threads, the leader included */
    int depth;      /* 0 for init, 1 for its children, ... */
    char argv[256]; /* the last exec's argv joined by spaces */
};

/* The process tree of run id alive after step upto (UINT64_MAX: the end),
 * rebuilt from the trace's fork, exec and exit events: fn gets init first,
 * then each process followed by its children (orphans under init, kernel
 * threads left out). Returns 0 with *st filled, or -1 with err. */
int rw_ps(rw_home *h, const char *id, uint64_t upto,
          int (*fn)(void *ctx, const struct rw_proc *p), void *ctx, struct rw_trace_status *st,
          struct rw_error *err);

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
    uint64_t runs, killed_runs;     /* run directories read; of them killed mid-way */
    uint64_t live_pages, dead_pages, corrupt_pages;
    uint64_t bytes_before, bytes_after; /* page store pack bytes (dry run: estimated after) */
    int no_store;                   /* there is no page store yet */
    uint64_t live_images, dead_images, dead_image_bytes;
    char dead_image_names[RW_GC_MAX_NAMES][65]; /* the first RW_GC_MAX_NAMES of them */
    int images_kept;                /* a run's manifest or spec was unreadable: images kept */
    char unreadable_run[256];       /* that run */
    uint64_t temp_files, temp_bytes, imports; /* leftovers removed */
};

/* Free the pages and root images no run of h needs. dry_run: change
 * nothing, report. wait: wait for rewind processes in flight (printing one
 * line on stderr), else fail. Returns 0 with *st, or -1 with err. */
int rw_gc(rw_home *h, int dry_run, int wait, struct rw_gc_stats *st, struct rw_error *err);

/* What an archive held or an export wrote. */
struct rw_archive_stats {
    char run[RW_ID_MAX]; /* the archive's run */
    uint64_t runs, events, keyframes, pages, images, bytes;
    int already;         /* import: the run was already here, identical */
};

/* Write run id (resolved) as one archive file to out ("-": stdout); with
 * replayable, also its keyframe chain, pages and root images. Returns 0
 * with *st, or -1 with err. */
int rw_export(rw_home *h, const char *id, int replayable, const char *out,
              struct rw_archive_stats *st, struct rw_error *err);
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

#ifdef __cplusplus
}
#endif

#endif
