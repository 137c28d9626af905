#!/usr/bin/env bash
# run-all.sh: every test of the project (tests/README.md). Unit tests (pure
# modules, with sanitizers) run directly; system tests run through
# tools/kvm-host, which uses this machine's KVM when it runs guest kernels
# natively and a nested host VM otherwise. Ends with exactly one line
# "N passed, N failed, N skipped" (CI reads it); exits nonzero if anything
# failed.
#
# Invariants:
#  1. The closing line adds up the closing lines of every unit binary and of
#     tests/system/run.sh.
#  2. A part that crashes, is killed, or exits nonzero without reporting a
#     failure (e.g. a sanitizer's report at exit) counts one more failure:
#     no crash is ever hidden by a tally printed before it.
set -uo pipefail
cd "$(dirname "$0")/.."
pass=0; failn=0; skipn=0
tally() { # tally FILE STATUS: add the counts of FILE's "N passed, N failed, N skipped" line
    local line p f s
    line=$(grep -E '^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' "$1" | tail -n 1)
    if [ -z "$line" ]; then
        failn=$((failn+1)); echo "  (no tally line, status $2: counted as one failure)"; return
    fi
    read -r p _ f _ s _ <<<"$line"
    pass=$((pass+p)); failn=$((failn+f)); skipn=$((skipn+s))
    if [ "$2" -ne 0 ] && [ "$f" -eq 0 ]; then
        failn=$((failn+1)); echo "  (exit status $2 with no failure counted: counted as one failure)"
    fi
}
log=$(mktemp); trap 'rm -f "$log"' EXIT
for t in build/unit/*_test; do
    [ -x "$t" ] || continue
    echo "== unit: $(basename "$t")"
    "$t" >"$log" 2>&1; rc=$?
    tail -n 30 "$log"
    tally "$log" $rc
done
echo "== fuzz: every target replays its seeds, then fuzzes ${FUZZ_CHECK_S:-5} s (tests/fuzz/run.sh)"
tests/fuzz/run.sh "${FUZZ_CHECK_S:-5}" --check >"$log" 2>&1; rc=$?
cat "$log"
tally "$log" $rc
# The long tests (tests/system/LONG) belong to `make check-long`
# (REWIND_LONG=1: only those, with a longer limit).
long=$(grep -v '^#' tests/system/LONG | grep . | paste -sd'|')
if [ "${REWIND_LONG:-0}" = 1 ]; then
    echo "== long system tests (through tools/kvm-host)"
    tools/kvm-host --mem 6144 --timeout 10800 -- tests/system/run.sh "$long" 2>&1 | tee "$log"
else
    echo "== system tests (through tools/kvm-host; the long ones are make check-long's)"
    REWIND_SYSTEST_EXCLUDE="$long" tools/kvm-host --mem 6144 --timeout 3600 -- tests/system/run.sh "${SYSTEST:-.}" 2>&1 | tee "$log"
fi
tally "$log" "${PIPESTATUS[0]}"
echo "$pass passed, $failn failed, $skipn skipped"
[ $failn -eq 0 ]
