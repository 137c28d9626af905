/*
 * cli: the command-line front end. Each subcommand is one cmd_<name>.c with
 * one entry point; main.c holds the table. Errors are one line on stderr,
 * "rewind: <what went wrong>", and a non-zero exit.
 */
#ifndef REWIND_CLI_H
#define REWIND_CLI_H

#include <jansson.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "rewind.h"

struct cli_command {
    const char *name;
    int (*fn)(int argc, char **argv);
    const char *summary;
};

int cmd_run(int argc, char **argv);
int cmd_doctor(int argc, char **argv);
int cmd_verify(int argc, char **argv);
int cmd_diverge(int argc, char **argv);
int cmd_ls(int argc, char **argv);
int cmd_show(int argc, char **argv);
int cmd_log(int argc, char **argv);
int cmd_ps(int argc, char **argv);
int cmd_events(int argc, char **argv);
int cmd_asserts(int argc, char **argv);
int cmd_sched(int argc, char **argv);
int cmd_diff(int argc, char **argv);
/* docs/nix.md: diff --files (cmd_diff_files.c), blame, repro. */
int cmd_diff_files(int argc, char **argv);
int cmd_blame(int argc, char **argv);
int cmd_repro(int argc, char **argv);
int cmd_nix(int argc, char **argv);
/* Print (or as JSON) who wrote byte offset of guest file path in run id;
 * content: the file's collected bytes or NULL. 0 blamed, 1 no write covers
 * it, -1 error (printed). */
int cli_blame(rw_home *h, const char *id, const char *path, uint64_t offset, const void *content,
              size_t clen, int json, const char *indent);
/* path relative to run ref's --collect PATH into rel. 0 or -1 (an error line
 * unless quiet). */
int cli_collect_rel(const char *ref, const char *path, char *rel, size_t rellen, int quiet);
int cli_diff_ranges(const unsigned char *a, size_t la, const unsigned char *b, size_t lb,
                    uint64_t from[], uint64_t to[], int max);
int cmd_replay(int argc, char **argv);
int cmd_remove(int argc, char **argv);
int cmd_gc(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_import(int argc, char **argv);
int cmd_fork(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_check_task(int argc, char **argv); /* hidden: a task of check --via slurm */
int cmd_cat(int argc, char **argv);
int cmd_shell(int argc, char **argv);
int cmd_image(int argc, char **argv);
int cmd_serve(int argc, char **argv);
int cmd_open(int argc, char **argv);
int cmd_checks(int argc, char **argv);
int cmd_where(int argc, char **argv);
/* cmd_where.c, also used by check's report: a thread's state in a word
 * ("on-cpu", "sleeping", ...), and w as JSON members (no braces). */
const char *cli_where_state(const struct rw_thread *t);
void cli_where_json(const struct rw_where *w, int kernel);
int cmd_gdb(int argc, char **argv);
int cmd_watch(int argc, char **argv);
/* `rewind show CHECK` (cmd_checks.c): -1 if ref names no check (nothing
 * printed), else the exit status after printing it. */
int cli_show_check(const char *ref, int json);

/* Parse `rewind run` options and the command into c (rw_run_config_init
 * first); *timeout_s gets --timeout (0: none). Returns 0, 1 after --help
 * was printed, or -1 after one error line. Used by run and check. */
int cli_run_args(int argc, char **argv, struct rw_run_config *c, double *timeout_s);

/* The installable of nix, check and repro among run options (cli_nix.c):
 * -f FILE [-A ATTR] or INSTALLABLE, the run options into c->run (with no
 * command). 0 with c set; 1 when argv names no installable (c untouched);
 * -1 after one error line. */
struct rw_nix_config;
int cli_nix_args(int argc, char **argv, struct rw_nix_config *c, double *timeout_s);

/* The derivation's job of check and repro (cli_nix.c): rw_nix_prepare with
 * the cli_stdio observer, then (unless json) its "derivation"/"output"
 * lines. 0, or the exit code after one error line. */
struct rw_nix_job;
int cli_nix_job(rw_home *h, struct rw_nix_config *c, struct rw_nix_job *j, int json);

/* The observer of every running command: the job's stdout and stderr to
 * ours, the console to stderr, notices as "rewind: <line>" on stderr. */
extern const struct rw_observer cli_stdio;
/* The same under --json: stdout holds only the answer object, so the job's
 * stdout goes to stderr with everything else. */
extern const struct rw_observer cli_stdio_json;

/* --json answers of the commands rewind serve starts (fork, cat, shell,
 * where; docs/serve.md "Answers"): one JSON object, one line, on stdout.
 * Print obj so and drop it. */
void cli_json_answer(json_t *obj);
/* cli_fail; under json also the answer {"error": msg, "code": code}. */
int cli_fail_json(const struct rw_error *err, int json);

/* The observer's progress callback (cli_progress.c): one updating line on
 * stderr when it is a terminal, nothing otherwise. */
void cli_progress(void *ctx, const char *what, uint64_t done, uint64_t total);
/* The text of that line (tests). */
void cli_progress_line(char *out, size_t n, const char *what, uint64_t done, uint64_t total,
                       double elapsed);

/* Open the home ($REWIND_HOME, else ~/.local/share/rewind). NULL after one
 * error line. */
rw_home *cli_open_home(void);

/* Print "rewind: <line>\n" on stderr without blocking past the abort flag
 * (a full pipe nobody reads must not keep rewind from exiting after
 * --timeout or SIGINT; docs/reliability.md). */
void cli_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* b bytes in words into buf ("512 B", "1.5 MiB"); returns buf. */
const char *cli_bytes_text(uint64_t b, char *buf, size_t n);
/* s made safe for a terminal and for JSON: each control character (C0,
 * DEL, and C1 as UTF-8) and each byte that is no part of a valid UTF-8
 * character as '?', cut to 4095 bytes at a character's start. Returns one
 * of 8 buffers used in turn (thread-local), so up to 8 results can go into
 * one printf. */
const char *cli_tty(const char *s);
/* cli_tty's text into b (n bytes, n > 0); returns its length. */
size_t cli_safe_text(const char *s, char *b, size_t n);
void cli_vsay(const char *fmt, va_list ap);
/* Write n bytes to fd as cli_say does: in slices, dropped once aborted. */
void cli_out_all(int fd, const char *b, size_t n);

/* Print "rewind: <err->msg>" and return err->code. */
int cli_fail(const struct rw_error *err);

/* --test-hole NAME: only with REWIND_TEST_HOLES=1 (rewind's own negative
 * tests). Returns 0, or -1 after one error line. */
int cli_test_hole(const char *name, struct rw_run_config *c);

/* Stop a run on SIGINT/SIGTERM and after timeout_s seconds (0: never).
 * Returns the abort flag for the run's config. */
volatile sig_atomic_t *cli_abort_on_signals(double timeout_s);

/* A command that starts from a stored run (replay, fork, cat, shell). */
struct cli_derived {
    const char *cmd;      /* "cat" */
    const char *accepted; /* its long options, "pid,timeout" (--help always) */
    int noperands;        /* RUN [STEP [PATH]]: 1, 2 or 3 */
    const char *operands; /* for the usage error: "RUN STEP PATH" */
    void (*help)(void);
};

/* Seconds of wall time command cmd gets without --timeout (0: none): cat
 * 600, shell 14400 (docs/reliability.md). */
double cli_default_timeout(const char *cmd);

/* A disk limit in MiB (--max-trace, --max-disk): 1..2^30. 0, or -1 after
 * one error line. */
int cli_read_limit(const char *flag, const char *arg, uint64_t *mb);

/* Start command d: parse its options into o (rw_options_init first, the
 * cli_stdio observer, the abort flag of cli_abort_on_signals(--timeout))
 * and its operands (from optind; *step from the second, if any), and open
 * the home into *h. json non-NULL: the command takes --json, which sets
 * *json and the cli_stdio_json observer. Returns -1 when the command goes
 * on, else the status to exit with (0 after d->help(), 2 after a usage
 * error line). */
int cli_start(int argc, char **argv, const struct cli_derived *d, struct rw_options *o,
              uint64_t *step, rw_home **h, int *json);

/* Print "rewind: <msg>\n" to stderr and return code. */
int cli_error(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
