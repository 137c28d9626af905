#!/usr/bin/env bash
# Transcript "schedule-points-point" of docs/tutorials/schedule-points.md:
# with rewind_point() between the read and the store, check finds the lost
# update, narrows it to one step, and the failing run says which assertion
# failed. -j 1: the schedules run in order, so the report is the same on
# every machine.
# Runs rewind from this work tree in a fresh home, in build/roots (the root
# is named without a host path); shows each command as "$ cmd" and its
# stdout; wall-clock times are cut from check's report (the only
# host-dependent part of it).
set -uo pipefail
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
REWIND_BIN=${REWIND_UNDER_TEST:-$TOP/build/rewind}
if [ -z "${REWIND_HOME:-}" ]; then
    REWIND_HOME=$(mktemp -d "${TMPDIR:-/tmp}/rewind-transcript.XXXXXX")
    trap 'rm -rf "$REWIND_HOME"' EXIT
fi
export REWIND_HOME
cd "$TOP/build/roots" || exit 1
rewind() { "$REWIND_BIN" "$@"; }
# show CMD...: print "$ CMD..." and CMD's stdout, times cut; keeps going
# when CMD exits non-zero (check exits 1 when it finds a difference).
show() {
    echo "\$ $*"
    "$@" 2>/dev/null | sed -E 's/, [0-9]+\.[0-9]+ s\)/)/; s/ \([0-9]+\.[0-9]+ s\)//'
    return 0
}
show rewind check --schedules 64 -j 1 --root test.erofs -- /usr/bin/sdk_race point
fail=$(rewind check --schedules 64 -j 1 --json --root test.erofs -- /usr/bin/sdk_race point 2>/dev/null |
    python3 -c 'import json,sys; r=json.load(sys.stdin); print(r["failing_run"]["id"], r["deciding_step"])')
read -r id step <<< "$fail"
show rewind events "$id" --from "$((step - 1))" --to "$((step + 1))"
show rewind asserts "$id"
show rewind replay "$id"
