/*
 * probe: does this /dev/kvm run guest kernel code natively?
 *
 * Some hosts expose a /dev/kvm that runs guest user mode natively but
 * emulates guest kernel mode one instruction at a time (see docs/test-host.md):
 * a Linux guest then takes minutes to boot or dies. The probe runs a few
 * bytes of hand-made 64-bit code at CPL 0 in a throw-away VM and measures
 * (a) a DEC/JNZ loop in iterations per second and (b) the round trip of one
 * port-I/O exit to user space. It is bounded in wall time (about 0.8 s in
 * all) by a timer signal, so it cannot hang. Used by `rewind doctor` and by
 * tools/kvm-probe (which tools/kvm-host runs to choose direct or nested).
 */
#ifndef REWIND_VMM_PROBE_H
#define REWIND_VMM_PROBE_H

#include <stddef.h>

/* A CPL 0 loop faster than this runs natively (hardware-assisted). Measured:
 * emulated ~0.8 M/s, nested KVM inside QEMU TCG ~240 M/s, hardware > 1000 M/s. */
#define PROBE_NATIVE_ITERS_PER_S 50e6

struct probe_result {
    double cpl0_iters_per_s; /* DEC/JNZ iterations per second at CPL 0 */
    double exit_us;          /* one OUT exit to user space and back, microseconds */
    int native;              /* 1 if cpl0_iters_per_s >= PROBE_NATIVE_ITERS_PER_S */
    char why[256];           /* one line explaining the verdict */
};

/* Create a tiny VM on /dev/kvm, measure it and fill *r. Takes about 0.8 s of
 * wall time at most; installs and then restores a SIGALRM handler and uses a
 * per-thread timer, so call it from one thread at a time. Returns 0, or -1
 * with a one-line reason in err (errlen bytes, always NUL-terminated). */
int probe_run(struct probe_result *r, char *err, size_t errlen);

#endif
