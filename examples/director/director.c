/*
 * director: a program that drives rewind through its public API alone
 * (include/rewind.h, build/librewind.a). It records a run of a small shell
 * job, reads a file inside that run near its end, seeks to that step and
 * reads the paused vCPU's registers, and forks the run at its middle step
 * (unperturbed after it, so the fork must end the same way).
 *
 *   director ROOT        (the guest kernel and rewind-init come from
 *                         $REWIND_KERNEL and $REWIND_INIT; the home from
 *                         $REWIND_HOME)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rewind.h"

/* The observer: each line of the job's output with a prefix ("job: "),
 * and rewind's notices. Output comes in pieces, not lines: at_bol says
 * whether the next byte starts a line. */
struct lines {
    const char *prefix;
    int at_bol;
};

static void show(void *ctx, enum rw_stream s, const void *buf, size_t len)
{
    struct lines *l = ctx;
    const char *p = buf;
    if (s == RW_NOTICE) {
        printf("notice: %.*s\n", (int)len, p);
        return;
    }
    if (s != RW_STDOUT)
        return;
    for (size_t i = 0; i < len; i++) {
        if (l->at_bol)
            printf("%s: ", l->prefix);
        putchar(p[i]);
        l->at_bol = p[i] == '\n';
    }
}

static int die(const char *what, const struct rw_error *err)
{
    fprintf(stderr, "director: %s: %s (code %d)\n", what, err->msg, err->code);
    return 1;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: director ROOT\n");
        return 2;
    }
    rw_home *home;
    struct rw_error err;
    if (rw_home_open(NULL, &home, &err) < 0)
        return die("home", &err);

    /* 1. Record: a job that writes a file, sleeps, appends and prints it. */
    char *job[] = {"sh", "-c", "echo one > /tmp/f; sleep 1; echo two >> /tmp/f; cat /tmp/f", NULL};
    struct rw_run_config cfg;
    rw_run_config_init(&cfg);
    cfg.root = argv[1];
    cfg.argv = job;
    cfg.epoch_s = 1767225600; /* fixed, so the run id does not depend on today */
    struct lines job_lines = {"job", 1}, cat_lines = {"cat", 1};
    cfg.observer = (struct rw_observer){.output = show, .ctx = &job_lines};
    struct rw_result run;
    if (rw_record(home, &cfg, &run, &err) < 0)
        return die("record", &err);
    printf("recorded %s: %s %d after %llu steps\n", run.id, rw_outcome_word(run.outcome),
           run.exit_code, (unsigned long long)run.steps);

    /* 2. Read /tmp/f as the job saw it a few steps before the end. */
    struct rw_options opt;
    rw_options_init(&opt);
    opt.observer = (struct rw_observer){.output = show, .ctx = &cat_lines};
    struct rw_result look;
    uint64_t at = run.steps - 5;
    if (rw_cat(home, run.id, at, "/tmp/f", &opt, &look, &err) < 0)
        return die("cat", &err);
    printf("cat at step %llu: status %d\n", (unsigned long long)at, look.inspect_status);

    /* 3. Seek to the same step: a paused machine whose registers we read. */
    rw_machine *m;
    struct rw_regs regs;
    if (rw_seek(home, run.id, at, &m, &err) < 0)
        return die("seek", &err);
    if (rw_machine_regs(m, &regs, &err) < 0)
        return die("regs", &err);
    printf("seek to step %llu: paused at step %llu, rip %#llx\n", (unsigned long long)at,
           (unsigned long long)rw_machine_step(m), (unsigned long long)regs.rip);
    rw_machine_close(m);

    /* 4. Fork at the middle step with no perturbation: it ends alike. */
    rw_options_init(&opt);
    struct rw_result fork;
    uint64_t mid = run.steps / 2;
    if (rw_fork(home, run.id, mid, &opt, &fork, &err) < 0)
        return die("fork", &err);
    printf("forked %s at step %llu: %s %d after %llu steps, %s\n", run.id, (unsigned long long)mid,
           rw_outcome_word(fork.outcome), fork.exit_code, (unsigned long long)fork.steps,
           strcmp(fork.output_hash, run.output_hash) ? "other output" : "same output");
    rw_home_close(home);
    return 0;
}
