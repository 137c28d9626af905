/*
 * main: dispatch `rewind <command> ...` through the command table. With no
 * command, the three commands a new user wants first; `rewind --help` is
 * the table, which tools/mkman.py also reads to generate the man pages and
 * shell completions from every command's --help (docs/install.md).
 */

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cli_read.h"

#ifndef REWIND_VERSION
#define REWIND_VERSION "unknown"
#endif

static const struct cli_command commands[] = {
    {"run", cmd_run, "run a command in a deterministic VM"},
    {"replay", cmd_replay, "run a stored run again and compare every event"},
    {"ls", cmd_ls, "list runs, newest first"},
    {"show", cmd_show, "a run's spec, outcome and the command that recreates it"},
    {"log", cmd_log, "a run's output up to a step"},
    {"ps", cmd_ps, "the processes alive at a step"},
    {"events", cmd_events, "a run's events with their steps"},
    {"asserts", cmd_asserts, "a run's SDK assertions: catalog, hits, failures"},
    {"sched", cmd_sched, "which thread held the CPU between steps (per-thread lanes)"},
    {"diff", cmd_diff, "the first event where two runs part"},
    {"remove", cmd_remove, "delete runs"},
    {"gc", cmd_gc, "free pages and images no run needs"},
    {"export", cmd_export, "write a run as one file (--replayable: with pages and image)"},
    {"import", cmd_import, "add a run from a file written by export, verified first"},
    {"cat", cmd_cat, "print a file as it was at a step of a run (a throwaway fork)"},
    {"shell", cmd_shell, "an interactive shell inside a run at a step (kept as a run)"},
    {"fork", cmd_fork, "a new run identical to RUN through STEP, perturbed by a schedule after"},
    {"check", cmd_check, "try N schedules of a command; narrow a difference to the deciding step"},
    {"checks", cmd_checks, "list stored checks, newest first (rewind show CHECK)"},
    {"diverge", cmd_diverge, "find where two runs that should be equal part"},
    {"doctor", cmd_doctor, "check that this machine can run rewind"},
    {"verify", cmd_verify, "re-hash every stored page; check every run's pages are there"},
    {"image", cmd_image, "make a root's image ahead of a run (cached) and print its id"},
    {"serve", cmd_serve, "the timeline in a browser: a local web server with a token"},
    {"nix", cmd_nix, "build a Nix derivation in the VM; does its NAR hash match the store's?"},
    {"repro", cmd_repro,
     "build K times with varied seeds, dir orders, epochs; what differs, who wrote it"},
    {"blame", cmd_blame, "the process that wrote a byte of a file (runs with --track-writes)"},
    {"open", cmd_open, "print the URL of a run at a step (starts rewind serve if needed)"},
    {"where", cmd_where, "the stack of every thread of a process at a step"},
    {"gdb", cmd_gdb, "gdb on a process at a step: forward and reverse (a throwaway)"},
    {"watch", cmd_watch, "every write to a process's memory over a run (hardware watchpoints)"},
};

#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static void usage(FILE *f)
{
    fprintf(f, "usage: rewind <command> [options]\n\ncommands:\n");
    for (size_t i = 0; i < NCOMMANDS; i++)
        fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "\n`rewind <command> --help` describes each command.\n");
}

/* `rewind` alone: where to start. The bundled example is named when it was
 * installed beside the program (PREFIX/share/rewind/examples). */
static void first_contact(void)
{
    char exe[PATH_MAX - 64], ex[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    ex[0] = 0;
    if (n > 0) {
        exe[n] = 0;
        char *slash = strrchr(exe, '/');
        if (slash)
            *slash = 0;
        snprintf(ex, sizeof ex, "%s/../share/rewind/examples/pool.erofs", exe);
        char real[PATH_MAX];
        if (realpath(ex, real))
            snprintf(ex, sizeof ex, "%s", real);
        else
            ex[0] = 0;
    }
    printf(
        "rewind runs a Linux command in a deterministic VM. Start with:\n\n"
        "  rewind doctor                        can this machine run rewind's guests?\n"
        "  rewind run --root ROOT -- CMD ARGS   run CMD in ROOT (a directory, tarball or erofs "
        "image)\n"
        "  rewind check --root ROOT -- CMD      try schedules; narrow a difference to one step\n");
    if (ex[0])
        printf("\nThe bundled example (a thread pool with a race):\n"
               "  rewind run --root %s -- pool\n"
               "  rewind check --root %s -- pool\n",
               ex, ex);
    printf("\n`rewind --help` lists every command; `man rewind` describes them.\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        first_contact();
        return 0;
    }
    if (!strcmp(argv[1], "--version")) {
        printf("rewind %s\n", REWIND_VERSION);
        return 0;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(argv[1], "check-task")) /* hidden: run by check --via slurm's jobs */
        return cmd_check_task(argc - 1, argv + 1);
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (!strcmp(argv[1], commands[i].name)) {
            int rc = commands[i].fn(argc - 1, argv + 1);
            cli_read_home_close();
            return rc;
        }
    return cli_error(2, "unknown command '%s' (see rewind --help)", argv[1]);
}
