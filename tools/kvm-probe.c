/*
 * kvm-probe: tell whether this machine's /dev/kvm runs guest kernel code
 * natively, by the probe guest of src/vmm/probe.c.
 *
 *   kvm-probe [--json]
 *
 * Prints the CPL 0 loop speed, the cost of one I/O exit and the verdict.
 * Exit status: 0 native, 1 not native (emulated), 2 error (no /dev/kvm,
 * permission denied, ...). tools/kvm-host uses it to choose between running
 * a command directly and running it inside a host VM.
 *
 * Build: make build/tools/kvm-probe (this file, src/vmm/probe.c and the
 * few engine files it uses: PROBE_SRC in the Makefile).
 */
#include "vmm/probe.h"

#include <stdio.h>
#include <string.h>

enum { EXIT_NATIVE = 0, EXIT_EMULATED = 1, EXIT_ERROR = 2 };

static void usage(FILE *f)
{
    fputs("usage: kvm-probe [--json]\n"
          "Measure whether /dev/kvm runs guest kernel code natively.\n"
          "Exit status: 0 native, 1 emulated, 2 error.\n",
          f);
}

/* Write s as a JSON string body (our strings are ASCII, but stay safe). */
static void json_string(const char *s)
{
    putchar('"');
    for (; *s != '\0'; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            printf("\\%c", c);
        else if (c < 0x20)
            printf("\\u%04x", c);
        else
            putchar(c);
    }
    putchar('"');
}

static void print_json(const struct probe_result *r, const char *err)
{
    if (err != NULL) {
        fputs("{\"error\": ", stdout);
        json_string(err);
        fputs("}\n", stdout);
        return;
    }
    printf("{\"cpl0_iters_per_s\": %.0f, \"exit_us\": %.2f, \"native\": %s, \"why\": ",
           r->cpl0_iters_per_s, r->exit_us, r->native ? "true" : "false");
    json_string(r->why);
    fputs("}\n", stdout);
}

static void print_text(const struct probe_result *r)
{
    printf("cpl0 loop: %.2f M iterations/s\n", r->cpl0_iters_per_s / 1e6);
    printf("I/O exit:  %.2f us round trip\n", r->exit_us);
    printf("native:    %s (%s)\n", r->native ? "yes" : "no", r->why);
}

int main(int argc, char **argv)
{
    struct probe_result r;
    char err[256];
    int json = 0;

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0) {
            json = 1;
        } else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            usage(stdout);
            return EXIT_NATIVE;
        } else {
            fprintf(stderr, "kvm-probe: unknown argument '%s'\n", argv[i]);
            usage(stderr);
            return EXIT_ERROR;
        }
    }
    if (probe_run(&r, err, sizeof(err)) < 0) {
        if (json)
            print_json(NULL, err);
        fprintf(stderr, "kvm-probe: %s\n", err);
        return EXIT_ERROR;
    }
    if (json)
        print_json(&r, NULL);
    else
        print_text(&r);
    if (fflush(stdout) != 0) {
        perror("kvm-probe: stdout");
        return EXIT_ERROR;
    }
    return r.native ? EXIT_NATIVE : EXIT_EMULATED;
}
