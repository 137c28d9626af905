/*
 * serve: `rewind serve`, the timeline in a browser (docs/serve.md). A front
 * end like src/cli: it includes only include/rewind.h from the engine.
 *
 *   http.c    libmicrohttpd, the token, routing, the embedded page
 *   mhd.c     libmicrohttpd loaded with dlopen when serve starts
 *   api.c     the JSON reading API (runs, lanes, events, at a step, diff)
 *   action.c  fork, cat and shell as child processes of this binary
 *   where.c   the stacks at a step: `rewind where` as a child, cancelled
 *             when the page hangs up
 *   child.c   a child run to its end, its output captured; ended at exit
 *   state.c   $REWIND_HOME/serve.json: the running server `rewind open` reuses
 *   assets    build/gen/serve_assets.c, generated from web/ at build time
 */
#ifndef REWIND_SERVE_H
#define REWIND_SERVE_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "rewind.h"
#include "rewind_check.h"

#define SERVE_TOKEN_LEN 32 /* hex digits */

/* The assertion of a numbered invariant: RW_ASSERT of
 * include/rewind_check.h, on in every build. */
#define SERVE_ASSERT(c) RW_ASSERT(c)

struct serve_opts {
    const char *bind;  /* "127.0.0.1" */
    unsigned port;     /* 0: any free port */
    int read_only;     /* refuse every POST */
    const char *state; /* write this state file while serving (NULL: none) */
};

/* Serve h until SIGINT/SIGTERM. Prints the URL on stdout. Exit code. */
int serve_run(rw_home *h, const struct serve_opts *o);

/* ---- api.c: the reading API, no lock around the engine (api.c inv. 1) ---- */
#include <pthread.h>

/* The result of one API call: HTTP status and a JSON body (owned). */
struct serve_reply {
    unsigned status;
    json_t *body;
};
/* A GET under /api/: path after "api/", the query's getter. */
typedef const char *(*serve_arg_fn)(void *ctx, const char *key);
void serve_api_get(rw_home *h, const char *path, serve_arg_fn arg, void *ctx,
                   struct serve_reply *r);
/* The error body {"error": msg} with status. */
void serve_reply_error(struct serve_reply *r, unsigned status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* 1 if ref may name a run: [0-9A-Za-z@~_.-], 1..200 chars, no "..". */
int serve_ref_ok(const char *ref);
/* The query's number key: decimal digits only, below 2^64. 0 with *out
 * (dflt if absent or empty), or -1 (the caller answers 400). */
int serve_arg_u64(serve_arg_fn arg, void *ctx, const char *key, uint64_t dflt, uint64_t *out);

/* ---- action.c ---- */
/* A POST under /api/ with a JSON body (may be NULL). */
void serve_action_post(rw_home *h, const char *path, json_t *body, struct serve_reply *r);
/* GET api/shell/ID?from=N (long poll); in action.c. */
void serve_shell_get(const char *sid, serve_arg_fn arg, void *ctx, struct serve_reply *r);
/* End every shell session (at exit). */
void serve_action_shutdown(void);
/* Spawn this binary with argv, stdin from in_fd (-1: /dev/null), stdout
 * and stderr to pipes (*out, *err; err NULL: merged into out). The pid, or
 * -1 with errno. */
pid_t serve_spawn(char *const argv[], int in_fd, int *out, int *err);
/* Note the binary the server runs (at its start): serve_spawn refuses
 * (errno ESTALE) once that file was replaced. */
void serve_spawn_init(void);
/* Words for serve_spawn's errno e (ESTALE: the binary was replaced). */
const char *serve_spawn_error(int e);

/* ---- child.c: a child of this binary run to its end, output captured ---- */
/* At most cap bytes kept (the head; the tail if tail is set), total
 * counted, p NUL-terminated. */
struct serve_buf {
    char *p;
    size_t len, cap, total;
    int tail;
};
int serve_buf_init(struct serve_buf *b, size_t cap); /* 0, or -1: out of memory */
void serve_buf_add(struct serve_buf *b, const char *p, size_t n);
/* Run argv (serve_spawn) to its end: stdout into out, stderr into err.
 * sock >= 0: a client whose hang-up ends the child (*gone set). The exit
 * status (128+N for signal N), or -1 with errno (ECANCELED: the server is
 * stopping). */
int serve_child_run(char *const argv[], int sock, struct serve_buf *out, struct serve_buf *err,
                    int *gone);
/* End every running child and start no more (at exit). */
void serve_child_shutdown(void);
/* A child's answer (child.c inv. 4): the JSON object its stdout holds
 * (owned), or NULL if there is none whole (it died first, wrote more than
 * out's cap, or not one object). */
json_t *serve_child_json(const struct serve_buf *out);
/* The last line of a child's stderr, without "rewind: ", into line (n
 * bytes): valid UTF-8 whatever the child wrote. */
void serve_child_err_line(const struct serve_buf *err, char *line, size_t n);
/* The words of a child's failure into buf (n bytes, valid UTF-8): its
 * answer's "error" if any (answer may be NULL), else its stderr's last
 * line. Returns buf. */
const char *serve_child_error(json_t *answer, const struct serve_buf *err, char *buf, size_t n);

/* ---- where.c ---- */
/* GET api/run/REF/where?step=S[&pid=P]: the stack of each thread of
 * process P (default: the job) at S. sock is the request's connection,
 * watched while `rewind where` runs: a client that hangs up ends it. */
void serve_where_get(rw_home *h, const char *ref, serve_arg_fn arg, void *ctx, int sock,
                     struct serve_reply *r);

/* ---- state.c ---- */
struct serve_state {
    long pid;
    unsigned port;
    char bind[64];
    char token[SERVE_TOKEN_LEN + 1];
};
/* Write st to path atomically. 0 or -1. */
int serve_state_write(const char *path, const struct serve_state *st);
/* Read path into st. 0 or -1 (missing, malformed). */
int serve_state_read(const char *path, struct serve_state *st);
/* 1 if the server st names answers its ping with its token. */
int serve_state_alive(const struct serve_state *st);
/* path of the state file of home into out. */
void serve_state_path(rw_home *h, char *out, size_t n);

/* ---- generated from web/ ---- */
struct serve_asset {
    const char *path; /* "index.html" */
    const char *type; /* "text/html; charset=utf-8" */
    const unsigned char *data;
    size_t len;
};
extern const struct serve_asset serve_assets[];
extern const size_t serve_nassets;

#endif
