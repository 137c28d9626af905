#!/usr/bin/env bash
# run.sh [PATTERN]: run every system test (tests/system/t_*.sh, functions
# test_*) whose name matches PATTERN; print PASS/FAIL per test and a final
# "N passed, N failed" line. Needs a KVM that runs guest kernels natively:
# the suite calls it through tools/kvm-host.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
pat=${1:-.}
pass=0; failn=0
export REWIND_HOME
base=$(mktemp -d "${TMPDIR:-/tmp}/rewind-systest.XXXXXX")
trap 'rm -rf "$base"' EXIT
for f in "$HERE"/t_*.sh; do
    for t in $(bash -c "source '$HERE/lib.sh'; source '$f'; declare -F" | awk '{print $3}' | grep '^test_' ); do
        name="$(basename "$f" .sh):$t"
        echo "$name" | grep -qE "$pat" || continue
        T="$base/$t"; mkdir -p "$T"
        start=$(date +%s.%N)
        ( set -e; export T REWIND_HOME="$base/home"; source "$HERE/lib.sh"; source "$f"; cd "$T"; "$t" ) 2>"$T/why"
        rc=$?
        secs=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}')
        if [ $rc -eq 0 ]; then pass=$((pass+1)); echo "PASS $name (${secs}s)"
        else failn=$((failn+1)); echo "FAIL $name (${secs}s)"; sed 's/^/    /' "$T/why" | tail -n 20; fi
    done
done
echo "$pass passed, $failn failed"
[ $failn -eq 0 ]
