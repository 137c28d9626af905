#!/usr/bin/env bash
# run.sh SECONDS [--check]: run every libFuzzer target build/fuzz/fuzz_* for
# SECONDS seconds each, FUZZ_JOBS of them side by side, starting from its seeds
# (build/fuzz/seeds/<target>, made by mkseeds, and the committed
# tests/fuzz/corpus/<target>, which holds every crash ever found), and print
# one table: executions, executions per second, corpus size and crashes per
# target. Crash inputs land in build/fuzz/crashes/<target>-*.
#
# Plain mode (`make fuzz FUZZ_S=N`) keeps a growing corpus per target in
# build/fuzz/corpus/<target>. --check (tests/run-all.sh) uses a fresh corpus
# each time and ends with "N passed, N failed, 0 skipped", one pass per
# target that ran with no crash.
#
# Invariants:
#  1. A target counts as crashed if libFuzzer left a crash, leak, timeout or
#     oom artifact or exited nonzero: no crash is hidden by a missing stat.
#  2. Every seed (so every past crash input) is replayed before fuzzing.
#  3. Targets run side by side, but the table lists them in name order and a
#     target whose shell left no result counts as crashed.
set -uo pipefail
cd "$(dirname "$0")/../.."
secs=${1:?usage: run.sh SECONDS [--check]}
check=0; [ "${2:-}" = "--check" ] && check=1
# FUZZ_JOBS: targets fuzzed side by side (default: one per core)
jobs=${FUZZ_JOBS:-$(nproc)}
case "$jobs" in '' | *[!0-9]* | 0) echo "run.sh: FUZZ_JOBS=$jobs is not a count" >&2; exit 2 ;; esac
B=build/fuzz
mkdir -p "$B/crashes" "$B/logs"
scratch=$(mktemp -d "${TMPDIR:-/tmp}/rwfuzz-run.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
pass=0; failn=0; total_execs=0; total_crash=0
printf '%-10s %6s %12s %9s %7s %8s  %s\n' target seconds executions exec/s corpus crashes status
# one_target BIN: fuzz one target; its table row goes to $scratch/row.T,
# "crashes execs" to $scratch/sum.T (targets run side by side: invariant 3)
one_target() {
    local bin=$1 t work seeds before log start rc took after crashes execs corpus rate status
    t=${bin##*/fuzz_}
    if [ $check -eq 1 ]; then work="$scratch/corpus-$t"; else work="$B/corpus/$t"; fi
    mkdir -p "$work"
    seeds=()
    for d in "$B/seeds/$t" "tests/fuzz/corpus/$t"; do [ -d "$d" ] && seeds+=("$d"); done
    before=$(ls "$B/crashes" | grep -c "^$t-" || true)
    log="$B/logs/$t.log"
    start=$(date +%s)
    "$bin" -max_total_time="$secs" -print_final_stats=1 -timeout=10 \
        -rss_limit_mb=2048 -max_len=65536 -artifact_prefix="$B/crashes/$t-" \
        "$work" "${seeds[@]}" >"$log" 2>&1
    rc=$?
    took=$(( $(date +%s) - start ))
    after=$(ls "$B/crashes" | grep -c "^$t-" || true)
    crashes=$((after - before))
    [ $rc -ne 0 ] && [ $crashes -eq 0 ] && crashes=1
    execs=$(grep -o 'stat::number_of_executed_units: [0-9]*' "$log" | tail -n 1 | grep -o '[0-9]*$')
    execs=${execs:-0}
    corpus=$(ls "$work" | wc -l)
    rate=$(( took > 0 ? execs / took : execs ))
    if [ $crashes -eq 0 ]; then status=ok; else status="CRASH (see $log)"; fi
    {
        printf '%-10s %6s %12s %9s %7s %8s  %s\n' "$t" "$took" "$execs" "$rate" "$corpus" "$crashes" "$status"
        if [ $crashes -ne 0 ]; then
            grep -E 'ERROR: |SUMMARY: |runtime error|Test unit written' "$log" | head -n 5 | sed 's/^/    /'
        fi
    } >"$scratch/row.$t"
    echo "$crashes $execs" >"$scratch/sum.$t"
}
bins=()
for bin in "$B"/fuzz_*; do [ -x "$bin" ] && bins+=("$bin"); done
running=0
for bin in "${bins[@]}"; do
    if [ "$running" -ge "$jobs" ]; then wait -n; running=$((running - 1)); fi
    one_target "$bin" &
    running=$((running + 1))
done
wait
for bin in "${bins[@]}"; do
    t=${bin##*/fuzz_}
    if [ -f "$scratch/row.$t" ] && read -r crashes execs <"$scratch/sum.$t"; then
        cat "$scratch/row.$t"
    else
        crashes=1 execs=0; echo "$t: no result (the fuzzing shell died): counted as a crash"
    fi
    if [ "$crashes" -eq 0 ]; then pass=$((pass+1)); else failn=$((failn+1)); fi
    total_execs=$((total_execs + execs)); total_crash=$((total_crash + crashes))
done
printf '%-10s %6s %12s %9s %7s %8s\n' total "" "$total_execs" "" "" "$total_crash"
if [ $check -eq 1 ]; then
    skipn=0; [ $((pass + failn)) -eq 0 ] && { skipn=1; echo "no fuzz target built (make fuzz-build)"; }
    echo "$pass passed, $failn failed, $skipn skipped"
fi
[ $failn -eq 0 ]
