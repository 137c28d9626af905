/*
 * cli: the command-line front end. Each subcommand is one cmd_<name>.c with
 * one entry point; main.c holds the table. Errors are one line on stderr,
 * "rewind: <what went wrong>", and a non-zero exit.
 */
#ifndef REWIND_CLI_H
#define REWIND_CLI_H

struct cli_command {
    const char *name;
    int (*fn)(int argc, char **argv);
    const char *summary;
};

int cmd_run(int argc, char **argv);
int cmd_doctor(int argc, char **argv);
int cmd_diverge(int argc, char **argv);
int cmd_ls(int argc, char **argv);
int cmd_show(int argc, char **argv);
int cmd_log(int argc, char **argv);
int cmd_ps(int argc, char **argv);
int cmd_events(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_replay(int argc, char **argv);
int cmd_remove(int argc, char **argv);
int cmd_gc(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_import(int argc, char **argv);
int cmd_fork(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_cat(int argc, char **argv);
int cmd_shell(int argc, char **argv);

struct run_opts;
/* Parse `rewind run` options and the command into o. Returns 0, 1 after
 * --help was printed, or -1 after one error line. */
int cli_run_args(int argc, char **argv, struct run_opts *o);

/* Print "rewind: <msg>\n" to stderr and return code. */
int cli_error(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* $REWIND_HOME, or ~/.local/share/rewind. Static storage. */
const char *cli_home(void);

/* Path of a file installed next to the rewind binary (build/<name>), or the
 * value of the environment variable env if it is set. Static storage. */
const char *cli_artifact(const char *env, const char *name);

#endif
