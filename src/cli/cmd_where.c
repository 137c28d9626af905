/*
 * cmd_where: `rewind where RUN STEP [--pid P] [--kernel] [--json]`: the
 * stack of every thread of process P (default: the job) at STEP, each
 * frame with its function, file and line (rw_where: throwaway forks,
 * nothing stored changes); --kernel adds each thread's kernel stack.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_read.h"
#include "rewind.h"

static void help(void)
{
    puts("usage: rewind where RUN STEP [--pid P] [--kernel] [--json] [--timeout S]\n\n"
         "The stack of every thread of process P (default: the job) at STEP of RUN:\n"
         "each frame's function, source file and line, unwound from the registers the\n"
         "guest kernel saved, over the process's memory, with the program read from\n"
         "the guest's filesystem at that step. Read in throwaway forks of the run;\n"
         "nothing stored changes.\n\n"
         "  --pid P       the process (see rewind ps)\n"
         "  --kernel      the kernel stack of each thread too (return addresses found\n"
         "                on it, marked '?')\n"
         "  --json        one JSON object\n"
         "  --timeout S   give up after S seconds of wall time (default 600; exit 124)");
}

const char *cli_where_state(const struct rw_thread *t)
{
    if (t->current)
        return "on-cpu";
    /* the bits Linux itself reports (TASK_REPORT, 0x7f): a sleep may carry
     * flags above them (TASK_WAKEKILL 0x100, TASK_NOLOAD 0x400, ...) */
    switch (t->state & 0x7f) {
    case 0:
        return "runnable";
    case 1:
        return "sleeping";
    case 2:
        return "disk-wait";
    case 4:
        return "stopped";
    case 8:
        return "traced";
    default:
        return "other";
    }
}

static void frame_text(const struct rw_frame *f, int i)
{
    printf("  %s#%-2d 0x%016llx in %s", f->guess ? "?" : " ", i, (unsigned long long)f->pc,
           f->func[0] ? f->func : "??");
    if (f->func[0] && f->func_off)
        printf("+0x%llx", (unsigned long long)f->func_off);
    if (f->file[0] && f->line)
        printf(" at %s:%d", f->file, f->line);
    else if (f->file[0])
        printf(" from %s", f->file); /* the vDSO: no line information */
    putchar('\n');
}

static void frame_json(const struct rw_frame *f, int first)
{
    printf("%s{\"pc\":%llu,\"function\":", first ? "" : ",", (unsigned long long)f->pc);
    cli_read_json_str(f->func, strlen(f->func));
    printf(",\"offset\":%llu,\"file\":", (unsigned long long)f->func_off);
    cli_read_json_str(f->file, strlen(f->file));
    printf(",\"line\":%d", f->line);
    if (f->kernel)
        printf(",\"guess\":%s", f->guess ? "true" : "false");
    putchar('}');
}

/* w's fields as JSON members (no braces): pid, step, exe and threads, each
 * with its frames (and kernel frames with kernel). Also check's report. */
void cli_where_json(const struct rw_where *w, int kernel)
{
    printf("\"pid\":%u,\"step\":%llu,\"exe\":", w->pid, (unsigned long long)w->step);
    cli_read_json_str(w->exe, strlen(w->exe));
    printf(",\"threads\":[");
    for (size_t i = 0; i < w->nthreads; i++) {
        const struct rw_stack *s = &w->threads[i];
        printf("%s{\"tid\":%u,\"comm\":", i ? ",\n" : "\n", s->t.tid);
        cli_read_json_str(s->t.comm, strlen(s->t.comm));
        printf(",\"state\":\"%s\",\"why\":", cli_where_state(&s->t));
        cli_read_json_str(s->why, strlen(s->why));
        printf(",\"frames\":[");
        for (int j = 0; j < s->nframes; j++)
            frame_json(&s->frames[j], j == 0);
        printf("]");
        if (kernel) {
            printf(",\"kernel_frames\":[");
            for (int j = 0; j < s->nkframes; j++)
                frame_json(&s->kframes[j], j == 0);
            printf("]");
        }
        printf("}");
    }
    printf("]");
}

int cmd_where(int argc, char **argv)
{
    static const struct option opts[] = {
        {"pid", required_argument, 0, 'p'}, {"kernel", no_argument, 0, 'k'},
        {"json", no_argument, 0, 'j'},      {"timeout", required_argument, 0, 't'},
        {"help", no_argument, 0, 'h'},      {0, 0, 0, 0},
    };
    struct rw_options o;
    rw_options_init(&o);
    int kernel = 0, json = 0, c;
    double timeout = 600;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'p':
            if (cli_read_step(optarg, &o.pid) < 0 || o.pid == 0 || o.pid > 4194304)
                return cli_error(2, "--pid needs a process id (see rewind ps): %s", optarg);
            break;
        case 'k':
            kernel = 1;
            break;
        case 'j':
            json = 1;
            break;
        case 't':
            if (cli_read_seconds(optarg, &timeout) < 0)
                return cli_error(2, "--timeout must be a positive number of seconds: %s", optarg);
            break;
        case 'h':
            help();
            return 0;
        default:
            return cli_error(2, "see rewind where --help");
        }
    }
    if (optind != argc - 2)
        return cli_error(2, "where needs RUN STEP (see rewind where --help)");
    uint64_t step;
    if (cli_read_step(argv[optind + 1], &step) < 0 || step == 0)
        return cli_error(2, "STEP must be a positive step number: %s", argv[optind + 1]);
    rw_home *h = cli_open_home();
    if (!h)
        return RW_EINTERNAL;
    o.abort = cli_abort_on_signals(timeout);
    struct rw_where w;
    struct rw_error err;
    int rc = rw_where(h, argv[optind], step, &o, kernel, &w, &err);
    rw_home_close(h);
    if (rc < 0)
        return cli_fail_json(&err, json);
    if (json) {
        putchar('{');
        cli_where_json(&w, kernel);
        printf("}\n");
    } else {
        printf("process %u (%s) at step %llu: %zu thread%s\n", w.pid, w.exe,
               (unsigned long long)w.step, w.nthreads, w.nthreads == 1 ? "" : "s");
        for (size_t i = 0; i < w.nthreads; i++) {
            const struct rw_stack *s = &w.threads[i];
            printf("\nthread %u (%s) %s\n", s->t.tid, s->t.comm, cli_where_state(&s->t));
            for (int j = 0; j < s->nframes; j++)
                frame_text(&s->frames[j], j);
            if (s->why[0])
                printf("  (%s)\n", s->why);
            if (kernel && s->nkframes) {
                printf("  kernel:\n");
                for (int j = 0; j < s->nkframes; j++)
                    frame_text(&s->kframes[j], j);
            }
        }
    }
    rw_where_free(&w);
    return 0;
}
