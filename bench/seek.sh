#!/usr/bin/env bash
# bench/seek.sh: seeking in a run of about 100,000 steps against replaying it
# whole, side by side in one run (issue 17 item 2):
#   - the run (clockloop 90000 10, default keyframe cadence), then a full
#     replay from boot (the anchor);
#   - SEEKS seeks to random steps, each `rewind cat RUN STEP /proc/uptime`
#     (restore the keyframe before the step, run to it, freeze, read) with
#     REWIND_TIMING=1, so the restore's own time is split out: restore, and
#     the seek's wall time, as shares of the seek and of the full replay;
#     the first seek caches its keyframe (src/run/kfcache.c), later ones copy
#     the pages they share with it; the last step is sought once more with
#     the cache off (REWIND_NO_FRAME_CACHE=1), side by side.
#   - the recording run's keyframe capture cost per dirty page against
#     hashing + compressing the same pages alone (REWIND_TIMING, kfcap.c).
# Goals: restore <= 20% of a seek; a seek <= 0.05x a full replay; capture
# per dirty page within 2x of hash + compress.
# Usage: tools/kvm-host -- bench/seek.sh [SEEKS]   (where KVM is not native)
set -euo pipefail
cd "$(dirname "$0")/.."
seeks=${1:-5}
export REWIND_HOME=${REWIND_HOME:-/tmp/rewind-bench-seek}
rm -rf "$REWIND_HOME"
R=build/rewind
ROOT=build/roots/test.erofs
now() { date +%s.%N; }
el() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.3f", b-a}'; }
REWIND_TIMING=1 $R run --root $ROOT -- /usr/bin/clockloop 90000 10 >/dev/null 2>"$REWIND_HOME.err"
# keyframe capture per dirty page against hashing and compressing those pages alone (item 4)
sed -n 's/^rewind: timing: keyframes */keyframes: /p' "$REWIND_HOME.err"
id=$(awk '/^rewind: run/{print $3}' "$REWIND_HOME.err" | tail -n 1)
steps=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["steps"])' "$REWIND_HOME/runs/$id/manifest.json")
every=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["keyframe_every"])' "$REWIND_HOME/runs/$id/manifest.json")
t0=$(now); $R replay "$id" >/dev/null; t1=$(now)
full=$(el "$t0" "$t1")
echo "run $id: $steps steps, a keyframe every $every steps; full replay from boot: $full s"
seek() { # seek LABEL STEP [ENV...]
    local label=$1 at=$2; shift 2
    t0=$(now)
    env REWIND_TIMING=1 "$@" $R cat "$id" "$at" /proc/uptime 2>"$REWIND_HOME.cat.err" >/dev/null
    t1=$(now)
    s=$(el "$t0" "$t1")
    rs=$(sed -n 's/.*timing: restore *\([0-9.]*\) s.*/\1/p' "$REWIND_HOME.cat.err" | head -n 1)
    pages=$(sed -n 's/.*pages [0-9.]* s (\([0-9]*\) from the store.*/\1/p' "$REWIND_HOME.cat.err" | head -n 1)
    copied=$(sed -n 's/.*, \([0-9]*\) copied).*/\1/p' "$REWIND_HOME.cat.err" | head -n 1)
    echo "$label to step $at: $s s, restore ${rs:-?} s (${pages:-?} pages from the store, ${copied:-?} from the cached keyframe)," \
         "$((at % every)) steps run after the keyframe;" \
         "restore/seek $(awk -v a="${rs:-0}" -v b="$s" 'BEGIN{printf "%.2f", a/b}')," \
         "seek/full replay $(awk -v a="$s" -v b="$full" 'BEGIN{printf "%.3f", a/b}')"
}
for i in $(seq 1 "$seeks"); do
    at=$(python3 -c "import random; random.seed($i); print(random.randrange(2000, $steps))")
    seek seek "$at"
done
# side by side: the last step again without the cached keyframe (every page from the store)
seek "seek without the keyframe cache" "$at" REWIND_NO_FRAME_CACHE=1
