#!/usr/bin/env bash
# guest/linux/audit.sh VMLINUX
#
# Lists every function in VMLINUX that contains RDTSC, RDTSCP, RDRAND, RDSEED,
# HLT, MONITOR or MWAIT and fails if one is not in the allowlist below. Each
# allowed site was checked to be unreachable (or harmless) in the rewind guest;
# a new site (a config change, a new hook) must be checked the same way.
set -euo pipefail

[ $# -eq 1 ] || { echo "usage: guest/linux/audit.sh VMLINUX" >&2; exit 2; }

# function:instruction  -- why it never runs in the rewind guest
allow='
.altinstr_replacement:rdtsc    -- alternatives of rdtsc_ordered() at the sites below
.altinstr_replacement:rdtscp   -- same
delay_tsc:rdtsc                -- TSC delay only if X86_FEATURE_TSC (hidden, cleared)
delay_halt:rdtsc               -- TPAUSE delay only if X86_FEATURE_WAITPKG (hidden)
read_current_timer:rdtsc       -- only when delay_fn is delay_tsc
read_tsc:rdtsc                 -- TSC clocksource, never registered without TSC
native_sched_clock:rdtsc       -- only with __use_tsc; sched_clock is rewind_sched_clock
tsc_enable_sched_clock:rdtsc   -- TSC init, skipped without TSC
hpet_enable:rdtsc              -- no HPET (no ACPI; timer_init replaced)
lapic_cal_handler:rdtsc        -- LAPIC timer calibration, setup_percpu_clockev is a noop
setup_boot_APIC_clock:rdtsc    -- same
lapic_next_deadline:rdtsc      -- TSC deadline timer hidden and cleared
timer_irq_works:rdtsc          -- IO-APIC timer check, there is no IO-APIC
msr_read_counter:rdtsc         -- perf MSR PMU, not registered without TSC
trace_clock_x86_tsc:rdtsc      -- ftrace clock, tracing is off
vmware_platform_setup:rdtsc    -- VMware only (CPUID signature)
vmware_sched_clock:rdtsc       -- VMware only
rewind_emulate_tsc:rdtsc       -- only with the test hole REWIND_HOLE_HOST_TSC (negative tests)
rewind_emulate_tsc:rdtscp      -- same
rewind_hostile_hlt:hlt         -- only with the test hole REWIND_HOLE_HOSTILE (hostile-guest tests)
rewind_mem_host_time:rdtsc     -- only with the test holes REWIND_HOLE_*_HOST_TIME (negative tests)
rewind_mem_host_time:rdtscp    -- same
arch_get_random_longs:rdrand   -- gated by X86_FEATURE_RDRAND (hidden, cleared)
arch_get_random_seed_longs:rdseed -- gated by X86_FEATURE_RDSEED (hidden, cleared)
x86_init_rdrand:rdrand         -- gated by X86_FEATURE_RDRAND
early_fixup_exception:hlt      -- early boot crash: HLT = guest error, as it should be
fpu__init_system:hlt           -- no FPU: cannot happen on x86_64
native_safe_halt:hlt           -- default_idle/amd_e400_idle; x86_idle is rewind_idle
stop_this_cpu:hlt              -- native halt/SMP stop; machine_ops are rewind_*
mwait_idle:monitor             -- x86_idle is rewind_idle
mwait_idle:mwait               -- same
'

found=$(objdump -d --no-show-raw-insn "$1" | awk '
	/^[0-9a-f]+ <.*>:$/ { fn = $2; gsub(/[<>:]/, "", fn); sub(/\.(isra|constprop|part|cold|llvm)\..*$/, "", fn); sub(/\.cold$/, "", fn) }
	/\t(rdtsc|rdtscp|rdrand|rdseed|hlt|monitor|mwait)( |$)/ { print fn ":" $2 }' | sort -u)

bad=0
for site in $found; do
	if ! grep -qE "^${site//./\\.}[[:space:]]" <<<"$allow"; then
		echo "audit: unexpected ${site#*:} in ${site%%:*}()" >&2
		bad=1
	fi
done
[ $bad -eq 0 ] || { echo "audit: $1 has TSC/RNG/HLT sites nobody checked (see guest/linux/audit.sh)" >&2; exit 1; }
echo "audit: $(wc -w <<<"$found") TSC/RNG/HLT sites, all known"
