#!/usr/bin/env bash
# Transcript "schedule-points-nopoint" of docs/tutorials/schedule-points.md:
# without a schedule point, 64 schedules never split the read from the store.
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
show rewind run --root test.erofs -- /usr/bin/sdk_race
show rewind check --schedules 64 --root test.erofs -- /usr/bin/sdk_race
