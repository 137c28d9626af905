#!/usr/bin/env bash
# bench/check.sh: rewind check on examples/pool against rerunning the pool
# natively until it crashes, and check's throughput, side by side in one run.
#   1. rewind check --schedules N -j 2 on /usr/bin/pool (in the test host
#      where KVM is not native): schedules per minute, time to find, time to
#      narrow;
#   2. the same static binary run natively in a loop for as long as check
#      took in all: how many crashes that found;
#   3. check on pool-fixed, 16 schedules (every schedule runs): one child
#      process per schedule restoring from the store (REWIND_CHECK_COLD=1,
#      the way check worked before its warm workers) with -j 2, against the
#      warm workers (src/explore/cworker.c) with -j 1 and -j 2, each with the
#      VM kept and restored in place (REWIND_CHECK_INPLACE=1) and with a
#      fresh VM per schedule (=0), side by side; each check in
#      a fresh home whose image is already cached; every warm report must
#      equal the cold one (timings and the check's id aside).
# Usage: bench/check.sh [N]   (runs itself through tools/kvm-host --smp 2)
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-64}
out=$PWD/build/bench-check
if [ "${BENCH_CHECK_INSIDE:-}" != 1 ]; then
    mkdir -p "$out"
    t0=$(date +%s.%N)
    # BENCH_CHECK_DONE=1: the inside part ran already (bench/all.sh runs it
    # in its own test host session); only the native part and the figures.
    [ "${BENCH_CHECK_DONE:-}" = 1 ] ||
        BENCH_CHECK_INSIDE=1 ${KVMH:-tools/kvm-host} --smp 2 --timeout 3000 --env BENCH_CHECK_INSIDE \
            -- bench/check.sh "$n"
    t1=$(date +%s.%N)
    total=$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.1f", b-a}')
    [ "${BENCH_CHECK_DONE:-}" != 1 ] || total=$(cat "$out/inside_s")
    python3 - "$out/pool.json" "$total" <<'PY'
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
print("  wall time in all (every check below and the test host's boot included): %.1f s" % total)
PY
    bin=build/guest/pool
    check_s=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print("%.1f" % (r["explore_s"] + r.get("narrow_s", 0)))' "$out/pool.json")
    runs=0; crashes=0; end=$(awk -v a="$(date +%s.%N)" -v t="$check_s" 'BEGIN{printf "%.3f", a+t}')
    while awk -v e="$end" -v n="$(date +%s.%N)" 'BEGIN{exit !(n < e)}'; do
        "$bin" >/dev/null 2>&1 || crashes=$((crashes + 1))
        runs=$((runs + 1))
    done
    echo "native, for as long as check found and narrowed ($check_s s): $runs runs, $crashes crashes"
    cat "$out/fixed.txt"
    exit 0
fi
# Inside the test host.
mkdir -p "$out"
ROOT=build/roots/test.erofs
t_in=$(date +%s.%N)
fresh() { # a fresh home with the root image already hashed and cached
    export REWIND_HOME=/tmp/rewind-bench-check-$1
    rm -rf "$REWIND_HOME"
    build/rewind run --root $ROOT -- true >/dev/null 2>&1
}
fresh pool
build/rewind check --schedules "$n" -j 2 --json --root $ROOT -- /usr/bin/pool >"$out/pool.json" 2>"$out/pool.err" || true
one() { # label env... : a pool-fixed check of 16 schedules
    local label=$1 jobs=$2; shift 2
    fresh "$label"
    env "$@" build/rewind check --schedules 16 -j "$jobs" --json --root $ROOT -- /usr/bin/pool-fixed \
        >"$out/fixed-$label.json" 2>"$out/fixed-$label.err" || true
}
one cold2 2 REWIND_CHECK_COLD=1
one fresh1 1 REWIND_CHECK_COLD=0 REWIND_CHECK_INPLACE=0
one fresh2 2 REWIND_CHECK_COLD=0 REWIND_CHECK_INPLACE=0
one warm1 1 REWIND_CHECK_COLD=0 REWIND_CHECK_INPLACE=1
one warm2 2 REWIND_CHECK_COLD=0 REWIND_CHECK_INPLACE=1
python3 - "$out" >"$out/fixed.txt" <<'PY'
import json, sys
d = sys.argv[1]
def load(l): return json.load(open("%s/fixed-%s.json" % (d, l)))
def strip(o):
    if isinstance(o, dict):
        return {k: strip(v) for k, v in o.items() if not k.endswith("_s") and k != "check"}
    if isinstance(o, list):
        return [strip(v) for v in o]
    return o
rate = {}
for l, what in (("cold2", "one process per schedule, restored from the store, -j 2"),
                ("fresh1", "warm workers with a fresh VM per schedule, -j 1"),
                ("fresh2", "warm workers with a fresh VM per schedule, -j 2"),
                ("warm1", "warm workers, -j 1"), ("warm2", "warm workers, -j 2")):
    r = load(l)
    rate[l] = 60 * r["schedules_tried"] / r["explore_s"]
    print("check on pool-fixed, %s: %d schedules in %.1f s (%.1f schedules/min, schedule 0 included), found: %s"
          % (what, r["schedules_tried"], r["explore_s"], rate[l], r["found"]))
print("ratio warm -j 2 / cold -j 2: %.2f (goal >= 4); warm -j 2 / warm -j 1: %.2f (linear: 2)"
      % (rate["warm2"] / rate["cold2"], rate["warm2"] / rate["warm1"]))
print("in place against a fresh VM per schedule: -j 1 %.2f, -j 2 %.2f"
      % (rate["warm1"] / rate["fresh1"], rate["warm2"] / rate["fresh2"]))
print("reports of warm -j 2 and cold -j 2 identical (timings aside): %s"
      % ("yes" if all(strip(load(l)) == strip(load("cold2")) for l in ("fresh1", "fresh2", "warm1", "warm2")) else "NO"))
PY
awk -v a="$t_in" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f\n", b-a}' >"$out/inside_s"
