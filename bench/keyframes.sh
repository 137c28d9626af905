#!/usr/bin/env bash
# bench/keyframes.sh: keyframe cost and seeking, on a run of about 100,000
# steps, measured in one go inside the test host:
#   - the run with keyframes against the same run with --no-keyframes
#     (capture time, keyframes, bytes per keyframe, pages per keyframe);
#   - seeking (replay --from) to random steps against a full replay from
#     boot: restore time, wall time, and the ratio;
#   - the disk cost of a fork sharing its parent's keyframes.
# Usage: tools/kvm-host -- bench/keyframes.sh [SEEKS]
# (A seek is `rewind cat` at a random step: restore, run to the step, read.)
set -euo pipefail
cd "$(dirname "$0")/.."
seeks=${1:-3}
export REWIND_HOME=${REWIND_HOME:-/tmp/rewind-bench-kf}
rm -rf "$REWIND_HOME"
R=build/rewind
ROOT=build/roots/test.erofs
now() { date +%s.%N; }
el() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.2f", b-a}'; }
mf() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$REWIND_HOME/runs/$1/manifest.json" "$2"; }

t0=$(now); $R run --no-keyframes --root $ROOT -- /usr/bin/clockloop 90000 10 >/dev/null 2>"$REWIND_HOME.nk.err"; t1=$(now)
$R remove @ >/dev/null
t2=$(now); $R run --root $ROOT -- /usr/bin/clockloop 90000 10 >/dev/null 2>"$REWIND_HOME.k.err"; t3=$(now)
id=$(awk '/^rewind: run/{print $3}' "$REWIND_HOME.k.err" | tail -n 1)
steps=$(mf "$id" steps); kfs=$(mf "$id" keyframes); kbytes=$(mf "$id" keyframe_bytes)
echo "run: $steps steps; without keyframes $(el $t0 $t1) s, with $(el $t2 $t3) s wall"
echo "keyframes: $kfs (every $(mf "$id" keyframe_every) steps), file $kbytes bytes: $((kbytes / kfs)) bytes per keyframe;" \
     "capture $(mf "$id" keyframe_capture_s) s in all ($(python3 -c "print('%.1f' % (1000 * $(mf "$id" keyframe_capture_s) / $kfs))") ms per keyframe, the first holds every boot page)"
du -sb "$REWIND_HOME/store" | awk '{print "page store: " $1 " bytes (zstd packs + index), shared by every run"}'

t4=$(now); $R replay "$id" >/dev/null; t5=$(now)
full=$(el $t4 $t5)
echo "full replay from boot: $full s"
every=$(mf "$id" keyframe_every)
for i in $(seq 1 "$seeks"); do
    at=$(python3 -c "import random; random.seed($i); print(random.randrange(2000, $steps))")
    # A seek as users meet it: `rewind cat` restores the keyframe before the
    # step, runs to it, freezes the guest and reads a file there.
    t6=$(now); $R cat "$id" "$at" /proc/uptime >/dev/null; t7=$(now)
    echo "seek to step $at (cat /proc/uptime there): $(el $t6 $t7) s," \
         "$((at % every)) steps replayed after the keyframe; $(awk -v a="$(el $t6 $t7)" -v b="$full" 'BEGIN{printf "%.2f", a/b}')x a full replay"
done
for i in 1; do
    at=$((steps / 2))
    t8=$(now); out=$($R replay "$id" --from "$at"); t9=$(now)
    echo "replay --from $at to the end: $(el $t8 $t9) s ($(echo "$out" | sed -n 's/.*restored in \([0-9.]*\) s.*/restore \1 s/p'))"
done

$R fork "$id" $((steps / 2)) --schedule 1 >/dev/null 2>"$REWIND_HOME.f.err" || true
fid=$(awk '/^rewind: run/{print $3}' "$REWIND_HOME.f.err" | tail -n 1)
du -sb "$REWIND_HOME/runs/$fid" | awk -v f="$fid" '{print "fork " f " at mid-run: " $1 " bytes on disk (trace, manifest, own keyframes)"}'
ls -l "$REWIND_HOME/runs/$fid"
# A small fork: the pool example, forked mid-job.
$R run --root $ROOT -- /usr/bin/pool >/dev/null 2>"$REWIND_HOME.p.err"
pid=$(awk '/^rewind: run/{print $3}' "$REWIND_HOME.p.err" | tail -n 1)
psteps=$(mf "$pid" steps)
$R fork "$pid" $((psteps / 2)) --schedule 2 >/dev/null 2>"$REWIND_HOME.pf.err" || true
pfid=$(awk '/^rewind: run/{print $3}' "$REWIND_HOME.pf.err" | tail -n 1)
du -sb "$REWIND_HOME/runs/$pfid" | awk -v f="$pfid" -v s="$psteps" '{print "small fork " f " of a " s "-step run: " $1 " bytes on disk"}'
