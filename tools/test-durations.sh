#!/usr/bin/env bash
# test-durations.sh LOG...: the seconds each system test took, from the
# "PASS name (12.3s)" / "FAIL name (12.3s)" / "SKIP name (12.3s): why" lines
# of tests/system/run.sh's output (make check's log), as "name seconds"
# lines, the slowest first, for tests/system/durations (docs/testing.md,
# "Host VMs and the queue"). A test seen in several logs keeps its last time.
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: tools/test-durations.sh LOG..." >&2; exit 2; }
echo "# seconds each system test took in the test host (tools/test-durations.sh);"
echo "# tests/system/run.sh starts the longest first"
cat "$@" | sed -nE 's/^.*(PASS|FAIL|SKIP) (t_[a-z0-9_]+:test_[A-Za-z0-9_]+) \(([0-9.]+)s\).*$/\2 \3/p' |
    awk '{ t[$1] = $2 } END { for (n in t) print n, t[n] }' | sort -k2,2nr -k1,1
