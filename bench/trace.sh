#!/usr/bin/env bash
# bench/trace.sh: trace size per 1,000 events, and the time of the trace
# queries (log, ps, events, diff) on a run of about 100,000 steps.
# The run needs KVM (through tools/kvm-host where it is not native); the
# queries read only the trace and run directly on this machine.
set -euo pipefail
cd "$(dirname "$0")/.."
export REWIND_HOME=${REWIND_HOME:-$PWD/build/bench-home}
tools/kvm-host --timeout 900 -- build/rewind run --name trace-bench --root build/roots/test.erofs \
    -- /usr/bin/clockloop 90000 10 >/dev/null 2>"$REWIND_HOME.err" || true
tail -n 1 "$REWIND_HOME.err"
dir=$(build/rewind show trace-bench | sed -n 's/^dir: *//p')
events=$(build/rewind show trace-bench --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["events"])')
steps=$(build/rewind show trace-bench --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["steps"])')
size=$(stat -c %s "$dir/trace")
echo "run: $steps steps, $events events, trace $size bytes: $(( size * 1000 / events )) bytes per 1,000 events"
q() { # q LABEL CMD...: best of 5, in ms
    local label=$1 best=999999 t0 t1 ms; shift
    for _ in 1 2 3 4 5; do
        t0=$(date +%s%N); "$@" >/dev/null; t1=$(date +%s%N)
        ms=$(( (t1 - t0) / 1000000 )); [ $ms -lt $best ] && best=$ms
    done
    printf "  %-28s %5d ms\n" "$label" "$best"
}
echo "query times (best of 5):"
q "log" build/rewind log trace-bench
q "log --steps" build/rewind log trace-bench --steps
q "log up to step 50000" build/rewind log trace-bench 50000
q "ps at the end" build/rewind ps trace-bench
q "ps at step 50000" build/rewind ps trace-bench 50000
q "events --kind output --json" build/rewind events trace-bench --kind output --json
q "diff with itself" build/rewind diff trace-bench trace-bench
