/*
 * cpuid: the CPU model the guest sees: a fixed x86-64-v3 model per vendor,
 * independent of the host, with every source of host time and entropy
 * hidden (docs/determinism.md) and the rewind signature at 0x40000000.
 */
#ifndef REWIND_VMM_CPUID_H
#define REWIND_VMM_CPUID_H

#include <stddef.h>
#include <stdint.h>

/* Set the model on the vCPU. Returns 0, or -1 with one line in err (a host
 * missing model features gets them named). */
int cpuid_setup(int kvm_fd, int vcpu_fd, char *err, size_t errlen);

/* The model's name for the spec, e.g. "x86-64-v3/AuthenticAMD/1". */
int cpuid_model_name(int kvm_fd, char *out, size_t n);

#endif
