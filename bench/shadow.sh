#!/usr/bin/env bash
# bench/shadow.sh [RUNS] [WATCHDOG_MS]: how often the same etcd spec (three
# members, --schedule 6 --faults all; before restarts and disk faults) leaves other bytes in guest RAM than
# its first run (docs/determinism.md, "Interrupt shadows"). Each run writes
# its final RAM out (REWIND_AUDIT_DIRTY) and is compared page by page with
# the first; with WATCHDOG_MS the running vCPU is interrupted every that
# many ms of host time (REWIND_TEST_WATCHDOG_MS, _ALL), which made the
# difference show in 4 of 8 runs with STI after the idle step and in 0 of
# 10 with POPF. Prints one line per run and "N of M runs differ".
# Run it in the test host: tools/kvm-host --mem 6144 -- bench/shadow.sh 6 1
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-6}
if [ -n "${2:-}" ]; then export REWIND_TEST_WATCHDOG_MS=$2 REWIND_TEST_WATCHDOG_ALL=1; fi
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
export REWIND_HOME=$tmp/home
R=build/rewind; ROOT=build/roots/etcd.erofs
N=(--node "n1=/compat/node.sh n1" --node "n2=/compat/node.sh n2" --node "n3=/compat/node.sh n3")
differ=0
for i in $(seq 1 "$runs"); do
    ram=$tmp/ram.x; [ "$i" = 1 ] && ram=$tmp/ram.1
    REWIND_AUDIT_DIRTY=$ram $R run --root $ROOT --mem 1024 --timeout 300 "${N[@]}" \
        --schedule 6 --faults all --fault-rate 8 -- /compat/client.sh 5 >"$tmp/o" 2>"$tmp/e" || true
    line=$(grep '^rewind: run ' "$tmp/e" | tail -n 1)
    [ "$i" = 1 ] && { echo "run 1: $line"; continue; }
    pages=$(python3 - "$tmp/ram.1" "$tmp/ram.x" <<'PY'
import sys
a, b = open(sys.argv[1], 'rb').read(), open(sys.argv[2], 'rb').read()
print(" ".join(hex(o // 4096) for o in range(0, len(a), 4096) if a[o:o + 4096] != b[o:o + 4096]))
PY
)
    if [ -n "$pages" ]; then differ=$((differ + 1)); fi
    echo "run $i: $line; pages that differ from run 1: ${pages:-none}"
done
echo "$differ of $((runs - 1)) runs differ from run 1"
