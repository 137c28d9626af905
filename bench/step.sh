#!/usr/bin/env bash
# bench/step.sh: what a step costs, against the bare exit it is made of,
# side by side in one run (issue 17 item 3):
#   1. build/tools/kvm-probe: one port-I/O exit to user space and back with
#      nothing done in between (the floor of a step);
#   2. rewind run of clockloop (a clock read per call, a line of output
#      every 10 calls) with REWIND_TIMING=1: the monitor's own timers split
#      each step into the time inside KVM_RUN (the guest and KVM) and the
#      time outside it (the monitor: records, clock, schedule decision,
#      dirty tracking, trace writes);
#   3. the same with keyframes captured on the vCPU's thread
#      (REWIND_KF_SYNC=1: src/run/kfpipe.h, what every capture did before
#      the worker thread), with --schedule 1 (every step asks the schedule)
#      and with --no-keyframes (issue 29's goal: keyframes at most 1.25x
#      the monitor's work without them).
# The goal: the monitor's share of a step <= 10% of the bare exit.
# Usage: tools/kvm-host -- bench/step.sh [CALLS]   (where KVM is not native)
set -euo pipefail
cd "$(dirname "$0")/.."
calls=${1:-20000}
export REWIND_HOME=${REWIND_HOME:-/tmp/rewind-bench-step}
rm -rf "$REWIND_HOME"
ROOT=build/roots/test.erofs
# exit status 1 = "emulated" (its CPL 0 loop was slow: a loaded test host);
# the exit's round trip is measured all the same
probe=$(build/tools/kvm-probe --json || true)
exit_us=$(python3 -c 'import json,sys; print("%.2f" % json.loads(sys.argv[1])["exit_us"])' "$probe")
echo "bare exit (kvm-probe): $exit_us us round trip"
build/rewind run --root $ROOT -- true >/dev/null 2>&1 # the image hashed and cached
one() {
    local what=$1; shift
    local line
    line=$(REWIND_TIMING=1 build/rewind run --root $ROOT "$@" -- /usr/bin/clockloop "$calls" 10 2>&1 >/dev/null |
        grep 'timing: loop' | tail -n 1)
    python3 - "$what" "$exit_us" "$line" <<'PY'
import re, sys
what, exit_us, line = sys.argv[1], float(sys.argv[2]), sys.argv[3]
m = re.search(r"loop\s+(\d+) steps, (\d+) KVM_RUN calls; per step: monitor ([\d.]+) us, inside KVM_RUN ([\d.]+) us", line)
if not m:
    print("%s: no timing line (%s)" % (what, line)); sys.exit(0)
steps, runs, mon, inside = int(m[1]), int(m[2]), float(m[3]), float(m[4])
print("%s: %d steps; per step %.2f us = inside KVM_RUN %.2f us + monitor %.2f us; monitor / bare exit: %.3f (goal <= 0.10)"
      % (what, steps, mon + inside, inside, mon, mon / exit_us))
PY
}
one "clockloop $calls" 
REWIND_KF_SYNC=1 one "clockloop $calls, keyframes on the vCPU's thread (REWIND_KF_SYNC=1)"
one "clockloop $calls, --schedule 1" --schedule 1
one "clockloop $calls, --no-keyframes" --no-keyframes
