#!/usr/bin/env bash
# bench/serve.sh [ITERATIONS]: rewind serve's page on a large run, measured by
# the page's own timers in headless chromium (tests/browser/bench.mjs): the
# first paint of the whole timeline and playhead moves across the run.
#
# The run (named serve-bench, kept in $BENCH_HOME, default build/bench-serve)
# is recorded once: a shell loop of ITERATIONS rounds (default 48000, about
# 100,000 steps) that echoes and writes a file each round and runs /bin/true
# every 500th, so the timeline has output, open, fork, exec and exit events
# and a lane per process. Recording needs KVM: run this script
# under tools/kvm-host the first time (RECORD_ONLY=1 ... --env RECORD_ONLY:
# stop after recording); the browser part needs none.
set -euo pipefail
TOP=$(cd "$(dirname "$0")/.." && pwd)
R=$TOP/build/rewind
ROOT=$TOP/build/roots/test.erofs
export REWIND_HOME=${BENCH_HOME:-$TOP/build/bench-serve}
N=${1:-48000}
mkdir -p "$REWIND_HOME"
if [ "$("$R" ls --name serve-bench --json 2>/dev/null | tr -d ' \n')" = "[]" ]; then
    echo "recording serve-bench ($N rounds)..." >&2
    "$R" run --name serve-bench --root "$ROOT" -- sh -c \
        "i=0; while [ \$i -lt $N ]; do echo round \$i; echo \$i > /tmp/f\$((i % 8)); [ \$((i % 500)) = 0 ] && /bin/true; i=\$((i+1)); done" \
        >/dev/null
fi
if [ -n "${RECORD_ONLY:-}" ]; then "$R" ls --name serve-bench; exit 0; fi
out=$(mktemp -d)
trap 'kill $SPID 2>/dev/null || true; rm -rf "$out"' EXIT
"$R" serve >"$out/url" 2>"$out/err" &
SPID=$!
for _ in $(seq 100); do [ -s "$out/url" ] && break; sleep 0.1; done
url=$(head -n 1 "$out/url")
[ -n "$url" ] || { echo "serve did not start: $(cat "$out/err")" >&2; exit 1; }
run=$("$R" ls --name serve-bench --json | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["id"])')
node "$TOP/tests/browser/bench.mjs" "$url" "$run"
