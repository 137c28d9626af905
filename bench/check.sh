#!/usr/bin/env bash
# bench/check.sh: rewind check on examples/pool against rerunning the pool
# natively until it crashes, side by side in one run.
#   1. rewind check --schedules N -j 2 on /usr/bin/pool (through the test
#      host where KVM is not native): schedules per minute, time to find,
#      time to narrow;
#   2. the same static binary run natively in a loop for as long as check
#      took in all: how many crashes that found.
#   3. check on pool-fixed, 16 schedules: throughput when every schedule runs.
# Usage: bench/check.sh [N]
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-64}
export REWIND_HOME=${REWIND_HOME:-$PWD/build/bench-check-home}
rm -rf "$REWIND_HOME"
t0=$(date +%s.%N)
tools/kvm-host --timeout 3000 -- build/rewind check --schedules "$n" -j 2 --json \
    --root build/roots/test.erofs -- /usr/bin/pool > "$REWIND_HOME.json" 2> "$REWIND_HOME.err" || true
t1=$(date +%s.%N)
total=$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.1f", b-a}')
python3 - "$REWIND_HOME.json" "$total" <<'PY'
import json, sys
r = json.load(open(sys.argv[1])); total = float(sys.argv[2])
tried, ex = r["schedules_tried"], r["explore_s"]
print("rewind check: %d schedules in %.1f s (%.1f schedules/min with -j 2)" % (tried, ex, 60 * tried / ex))
if r["found"]:
    print("  found: schedule %d (%s) ends %s:%d" % (r["schedule"], r["strategy"],
          r["failing"]["outcome"], r["failing"]["exit_code"]))
    print("  narrowed to step %d in %.1f s (%d probes): %s" % (r["deciding_step"], r["narrow_s"],
          r["probes"], r["perturbation"]))
else:
    print("  no difference found")
print("  wall time in all, test host boot included: %.1f s" % total)
PY
bin=build/guest/pool
runs=0; crashes=0; end=$(awk -v a="$(date +%s.%N)" -v t="$total" 'BEGIN{printf "%.3f", a+t}')
while awk -v e="$end" -v n="$(date +%s.%N)" 'BEGIN{exit !(n < e)}'; do
    "$bin" >/dev/null 2>&1 || crashes=$((crashes + 1))
    runs=$((runs + 1))
done
echo "native, same wall time ($total s): $runs runs, $crashes crashes"
# Throughput on a run where nothing differs: every schedule runs.
tools/kvm-host --timeout 3000 -- build/rewind check --schedules 16 -j 2 --json \
    --root build/roots/test.erofs -- /usr/bin/pool-fixed > "$REWIND_HOME.fixed.json" 2>/dev/null || true
python3 - "$REWIND_HOME.fixed.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print("rewind check on pool-fixed: %d schedules in %.1f s (%.1f schedules/min with -j 2), found: %s"
      % (r["schedules_tried"], r["explore_s"], 60 * r["schedules_tried"] / r["explore_s"], r["found"]))
PY
