/*
 * cpuid: the CPU model the guest sees. Starts from what KVM supports on this
 * host and hides every source of host time, host entropy and host-specific
 * behaviour (DESIGN.md rule 3), then replaces KVM's paravirtual leaves with
 * the rewind signature so the guest kernel finds its platform.
 */
#ifndef REWIND_VMM_CPUID_H
#define REWIND_VMM_CPUID_H

#include <stddef.h>
#include <stdint.h>

/* Build the guest CPUID table from KVM_GET_SUPPORTED_CPUID and set it on the
 * vCPU. Returns 0 or -1 with one line in err. */
int cpuid_setup(int kvm_fd, int vcpu_fd, char *err, size_t errlen);

#endif
