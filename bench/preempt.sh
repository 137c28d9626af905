#!/usr/bin/env bash
# bench/preempt.sh: what memory-access points cost (docs/determinism.md,
# "Memory-access points"; issue 31: at most 1.5x on the compatibility
# suite's workloads). For each workload of tests/compat/workloads.txt and
# each race program named below, in one test host, side by side: rewind run
# with --preempt off and with --preempt memory; per run the steps, the
# access points and the run's wall time (its closing line), then the ratio
# memory/off of the wall times. The output must be the same both ways (a
# workload whose output differs is marked).
# Usage: bench/preempt.sh (it runs itself through tools/kvm-host).
# Knobs: BENCH_PREEMPT_ONLY (an extended regex over names; default every
# one), BENCH_PREEMPT_TIMEOUT (rewind run's --timeout, s; default 900).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" != --inside ]; then
    exec tools/kvm-host --timeout 3600 --env BENCH_PREEMPT_ONLY --env BENCH_PREEMPT_TIMEOUT \
        -- bench/preempt.sh --inside
fi
export REWIND_HOME
REWIND_HOME=$(mktemp -d /tmp/rewind-bench-preempt.XXXXXX)
w=$(mktemp -d /tmp/rewind-bench-preempt-w.XXXXXX)
only=${BENCH_PREEMPT_ONLY:-.} limit=${BENCH_PREEMPT_TIMEOUT:-900}
compat=build/roots/compat.erofs test=build/roots/test.erofs
build/rewind run --root "$compat" -- true >/dev/null 2>&1 # cache the images first
build/rewind run --root "$test" -- true >/dev/null 2>&1

# one NAME ROOT MODE CMD: a run; prints "steps points wall" and keeps the output.
one() {
    local name=$1 root=$2 mode=$3 cmd=$4
    build/rewind run --timeout "$limit" --preempt "$mode" --root "$root" -- sh -c "$cmd" \
        >"$w/$name.$mode.out" 2>"$w/$name.$mode.err" </dev/null || true
    local line id steps wall points
    line=$(grep '^rewind: run ' "$w/$name.$mode.err" | tail -n 1)
    id=$(echo "$line" | awk '{print $3}')
    steps=$(echo "$line" | sed -n 's/.* after \([0-9]*\) steps.*/\1/p')
    wall=$(echo "$line" | sed -n 's/.*virtual, \([0-9.]*\)s wall.*/\1/p')
    points=$(build/rewind events "$id" --kind access 2>/dev/null | wc -l)
    echo "${steps:-?} $points ${wall:-?} $(echo "$line" | awk '{print $4}')"
}

row() {
    local name=$1 root=$2 cmd=$3
    echo "$name" | grep -qE "$only" || return 0
    read -r s0 p0 w0 o0 <<<"$(one "$name" "$root" off "$cmd")"
    read -r s1 p1 w1 o1 <<<"$(one "$name" "$root" memory "$cmd")"
    local same=same
    cmp -s "$w/$name.off.out" "$w/$name.memory.out" || same=DIFFERENT
    printf '%-22s off: %8s steps %7ss (%s) | memory: %8s steps %7s points %7ss (%s) | x%s | output %s\n' \
        "$name" "$s0" "$w0" "$o0" "$s1" "$p1" "$w1" "$o1" \
        "$(awk -v a="$w0" -v b="$w1" 'BEGIN{ if (a > 0) printf "%.2f", b/a; else print "?" }')" "$same"
}

grep -v '^#' tests/compat/workloads.txt | while IFS='|' read -r name cmd; do
    row "$name" "$compat" "$cmd"
done
for p in race_lost_update race_spin_wait race_check_then_act; do
    row "$p" "$test" "/usr/bin/$p"
done
rm -rf "$REWIND_HOME" "$w"
