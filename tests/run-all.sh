#!/usr/bin/env bash
# run-all.sh: every test of the project. Unit tests (pure modules, with
# sanitizers) run directly; system tests run through tools/kvm-host, which
# uses this machine's KVM when it runs guest kernels natively and a nested
# host VM otherwise. Ends with one line "N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/.."
pass=0; failn=0
tally() { # add the counts of a "N passed, N failed" line found in file $1
    local line; line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$1" | tail -n 1)
    if [ -z "$line" ]; then failn=$((failn+1)); echo "  (no tally line: counted as a failure)"; return; fi
    pass=$((pass + $(echo "$line" | awk '{print $1}')))
    failn=$((failn + $(echo "$line" | awk '{print $3}')))
}
log=$(mktemp); trap 'rm -f "$log"' EXIT
for t in build/unit/*_test; do
    [ -x "$t" ] || continue
    echo "== unit: $(basename "$t")"
    "$t" >"$log" 2>&1; cat "$log" | tail -n 30; tally "$log"
done
echo "== system tests (through tools/kvm-host)"
tools/kvm-host --timeout 3000 -- tests/system/run.sh "${SYSTEST:-.}" 2>&1 | tee "$log"
tally "$log"
echo "$pass passed, $failn failed"
[ $failn -eq 0 ]
