#!/usr/bin/env bash
# bench/fork.sh: the disk cost of a fork (issue 17, item 5), on a run of
# about 100,000 steps (the one bench/keyframes.sh seeks in): a fork 100
# steps before the end under schedule 1, and one at the middle. For each,
# side by side, in one go:
#   after   what the fork adds to the home: its run directory (a trace that
#           refers to its parent's prefix, src/trace/trace.h version 2, its
#           manifest, spec and own keyframes) plus the bytes it added to
#           the page store;
#   before  the same with the trace a fork used to have: the whole trace,
#           the parent's prefix copied in (the bytes `rewind export` puts
#           in an archive for it, measured on the fork itself).
# Usage: tools/kvm-host -- bench/fork.sh [STEPS_BEFORE_END]
set -euo pipefail
cd "$(dirname "$0")/.."
back=${1:-100}
export REWIND_HOME=${REWIND_HOME:-/tmp/rewind-bench-fork}
rm -rf "$REWIND_HOME"
R=${REWIND:-build/rewind}
ROOT=build/roots/test.erofs
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

$R run --root $ROOT -- /usr/bin/clockloop 90000 10 >/dev/null 2>"$tmp/a.err"
id=$(awk '/^rewind: run/{print $3}' "$tmp/a.err" | tail -n 1)
steps=$(sed -n 's/.* after \([0-9]*\) steps.*/\1/p' "$tmp/a.err" | tail -n 1)
echo "parent $id: $steps steps, trace $(stat -c %s "$REWIND_HOME/runs/$id/trace") bytes"

# fork_cost WHAT STEP SCHEDULE: one fork, its cost after and before
fork_cost() {
    local what=$1 at=$2 sched=$3 s0 s1 fid dir tr flat
    s0=$(du -sb "$REWIND_HOME/store" | awk '{print $1}')
    $R fork "$id" "$at" --schedule "$sched" >/dev/null 2>"$tmp/f.err" || true
    fid=$(awk '/^rewind: run/{print $3}' "$tmp/f.err" | tail -n 1)
    [ -n "$fid" ] || { echo "fork at $at failed: $(tail -n 1 "$tmp/f.err")"; return 1; }
    s1=$(du -sb "$REWIND_HOME/store" | awk '{print $1}')
    dir=$(du -sb "$REWIND_HOME/runs/$fid" | awk '{print $1}')
    tr=$(stat -c %s "$REWIND_HOME/runs/$fid/trace")
    # the whole trace: the "trace" entry of a (non-replayable) export
    $R export "$fid" -o "$tmp/f.rewind" >/dev/null
    flat=$(python3 - "$tmp/f.rewind" <<'PY'
import struct, sys
# archive: an 80-byte header, then entries (kind u32, name length u32, data
# length u64, name, data); the fork's "<id>/trace" entry is its whole trace
b = open(sys.argv[1], "rb").read()
off = 80
while off + 16 <= len(b):
    kind, nl, dl = struct.unpack_from("<IIQ", b, off)
    name = b[off + 16:off + 16 + nl]
    if kind == 1 and name.endswith(b"/trace"):
        print(dl)
        break
    off += 16 + nl + dl
PY
)
    printf '%-26s after %8d bytes (dir %d: trace %d; store +%d)   before %8d bytes (trace %d)   %.1fx\n' \
        "$what (step $at):" $((dir + s1 - s0)) "$dir" "$tr" $((s1 - s0)) \
        $((dir - tr + flat + s1 - s0)) "$flat" \
        "$(awk -v a=$((dir + s1 - s0)) -v b=$((dir - tr + flat + s1 - s0)) 'BEGIN{print b/a}')"
}
fork_cost "fork $back before the end" $((steps - back)) 1
fork_cost "fork at the middle" $((steps / 2)) 2
