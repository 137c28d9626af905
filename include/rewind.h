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

#ifdef __cplusplus
}
#endif

#endif
