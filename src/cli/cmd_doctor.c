/*
 * cmd_doctor: `rewind doctor [--json]`. Says whether this machine can run
 * rewind guests: /dev/kvm present and usable, guest kernel code native (by a
 * small probe guest, with its figures), the guest kernel and rewind-init
 * built, mkfs.erofs installed; and, when something is missing, what to do
 * about it (the kvm group, nested virtualization, a cloud instance type).
 */

#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "cli_read.h"
#include "rewind.h"

static int have_exec(const char *name)
{
    char cmd[256];
    snprintf(cmd, sizeof(cmd), "command -v %s >/dev/null 2>&1", name);
    return system(cmd) == 0;
}

#define NESTED_ADVICE                                                                              \
    "in a VM: turn on nested virtualization on its host (kvm_intel/kvm_amd nested=1),"
#define CLOUD_ADVICE                                                                               \
    "or use a bare-metal machine or a cloud instance type with nested virtualization"
#define MISSING_ADVICE                                                                             \
    "MISSING (reinstall rewind, or `make` in its source tree; REWIND_KERNEL and REWIND_INIT "      \
    "override)"

/* What to do when /dev/kvm cannot be opened, by why (docs/install.md,
 * "Without root"): missing, or not the user's to open. */
static void kvm_advice(void)
{
    struct stat st;
    if (stat("/dev/kvm", &st) != 0) {
        printf("            no /dev/kvm: enable VT-x or AMD-V in the firmware, load kvm_intel or "
               "kvm_amd;\n"
               "            %s\n            %s\n",
               NESTED_ADVICE, CLOUD_ADVICE);
        return;
    }
    /* Not the user's: the engine's message names the kvm group (Debian's);
     * here /dev/kvm's own group, when it is another. */
    struct group *g = getgrgid(st.st_gid);
    if (access("/dev/kvm", R_OK | W_OK) != 0 && g && strcmp(g->gr_name, "kvm") != 0)
        printf("            here /dev/kvm belongs to group %s: sudo usermod -aG %s $USER\n",
               g->gr_name, g->gr_name);
}

int cmd_doctor(int argc, char **argv)
{
    int json = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json"))
            json = 1;
        else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            puts("usage: rewind doctor [--json]\n\nCheck /dev/kvm (with a probe guest that "
                 "measures whether guest kernel code\nruns natively), the guest kernel, "
                 "rewind-init and mkfs.erofs.\nExit 0 when rewind can run guests here, 1 "
                 "when it cannot.");
            return 0;
        } else
            return cli_error(2, "doctor: unknown option %s", argv[i]);
    }
    struct rw_kvm_probe pr;
    struct rw_error err = {0};
    int probe_ok = rw_kvm_probe(&pr, &err) == 0;
    const char *kernel = rw_default_kernel();
    const char *init = rw_default_init();
    int k = access(kernel, R_OK) == 0, in = access(init, R_OK) == 0;
    int mk = have_exec("mkfs.erofs");
    int ok = probe_ok && pr.native && k && in && mk;
    if (json) {
        printf("{\"kvm\":%s,\"native\":%s,\"cpl0_iters_per_s\":%.0f,\"exit_us\":%.2f,"
               "\"kernel\":%s,\"init\":%s,\"mkfs_erofs\":%s,\"ok\":%s}\n",
               probe_ok ? "true" : "false", probe_ok && pr.native ? "true" : "false",
               probe_ok ? pr.cpl0_iters_per_s : 0, probe_ok ? pr.exit_us : 0, k ? "true" : "false",
               in ? "true" : "false", mk ? "true" : "false", ok ? "true" : "false");
        return ok ? 0 : 1;
    }
    if (!probe_ok) {
        printf("kvm:        NOT USABLE: %s\n", err.msg);
        kvm_advice();
    } else
        printf("kvm:        %s: guest CPL0 loop %.1f M iter/s, port exit %.1f us\n            %s\n",
               pr.native ? "native" : "NOT NATIVE (guest kernel code is emulated)",
               pr.cpl0_iters_per_s / 1e6, pr.exit_us, pr.why);
    if (probe_ok && !pr.native)
        printf("            guest kernel code is emulated (a VM without nested virtualization):\n"
               "            %s\n            %s\n",
               NESTED_ADVICE, CLOUD_ADVICE);
    printf("kernel:     %s (%s)\n", k ? "ok" : MISSING_ADVICE, kernel);
    printf("init:       %s (%s)\n", in ? "ok" : MISSING_ADVICE, init);
    printf("mkfs.erofs: %s\n", mk ? "ok" : "MISSING (apt-get install erofs-utils)");
    printf("verdict:    %s\n", ok ? "rewind can run guests here" : "rewind cannot run guests here");
    return ok ? 0 : 1;
}
