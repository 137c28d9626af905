#!/usr/bin/env bash
# bench/cadence.sh: the adaptive keyframe cadence (src/run/kfcap.h invariant
# 5, issue 17 item 6) against the fixed cadence it replaced
# (REWIND_KF_CADENCE=fixed: a keyframe every 4,096 steps), side by side in
# one run, on a job that changes more pages than it runs steps (400 files
# of 192 KB written in a loop) and then only runs steps (clockloop):
#   - each run's keyframes: how many, at which cadence, capture time;
#   - seeks (`rewind cat RUN STEP /proc/uptime`) to the last step before
#     each of the fixed run's keyframes in the page-heavy part (the longest
#     replay the fixed cadence leaves there) and one step after a keyframe
#     (the shortest: what a seek costs besides the replay), in both runs:
#     the replayed stretch's wall time = the seek's minus the short one's.
# Usage: tools/kvm-host -- bench/cadence.sh   (where KVM is not native)
set -euo pipefail
cd "$(dirname "$0")/.."
R=build/rewind
ROOT=build/roots/test.erofs
JOB='i=0; while [ $i -lt 400 ]; do yes abcdefgh | head -c 196608 >/tmp/z$i; i=$((i + 1)); done; /usr/bin/clockloop 20000 10'
now() { date +%s.%N; }
el() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.3f", b-a}'; }
declare -A ID
for mode in fixed adaptive; do
    export REWIND_HOME=/tmp/rewind-bench-cadence-$mode
    rm -rf "$REWIND_HOME"
    t0=$(now)
    REWIND_KF_CADENCE=$mode REWIND_TIMING=1 $R run --root $ROOT -- sh -c "$JOB" >/dev/null 2>"$REWIND_HOME.err"
    t1=$(now)
    ID[$mode]=$(awk '/^rewind: run/{print $3}' "$REWIND_HOME.err" | tail -n 1)
    python3 - "$REWIND_HOME/runs/${ID[$mode]}/keyframes" "$mode" "$(el "$t0" "$t1")" \
        "$(sed -n 's/^rewind: timing: keyframes *//p' "$REWIND_HOME.err")" <<'PY'
import subprocess, sys
out = subprocess.run(["tools/kfrecords.py", sys.argv[1]], capture_output=True, text=True,
                     check=True).stdout.split("\n")[1:]  # "STEP NPAGES" lines
recs = [tuple(map(int, l.split())) for l in out if l]
gaps = [recs[i][0] - recs[i - 1][0] for i in range(1, len(recs))]
print("%s: run %.1f s wall, %d keyframes (%s), stretches of %d to %d steps; %s"
      % (sys.argv[2], float(sys.argv[3]), len(recs), ", ".join("%d:%d" % r for r in recs),
         min(gaps), max(gaps), sys.argv[4]))
open(sys.argv[1] + ".steps", "w").write("\n".join(str(r[0]) for r in recs) + "\n")
PY
done
kf_fixed=/tmp/rewind-bench-cadence-fixed/runs/${ID[fixed]}/keyframes.steps
kf_adapt=/tmp/rewind-bench-cadence-adaptive/runs/${ID[adaptive]}/keyframes.steps
[ "${ID[fixed]}" = "${ID[adaptive]}" ] && echo "run ids: the same (${ID[fixed]})" || echo "run ids DIFFER"
seek() { # seek MODE STEP: prints "SECONDS RESTORE_S REPLAYED_STEPS"
    local mode=$1 at=$2 t0 t1 rs kf steps=$kf_fixed
    [ "$mode" = fixed ] || steps=$kf_adapt
    export REWIND_HOME=/tmp/rewind-bench-cadence-$mode
    t0=$(now)
    REWIND_TIMING=1 REWIND_NO_FRAME_CACHE=1 $R cat "${ID[$mode]}" "$at" /proc/uptime >/dev/null 2>"$REWIND_HOME.cat.err"
    t1=$(now)
    rs=$(sed -n 's/.*timing: restore *\([0-9.]*\) s.*/\1/p' "$REWIND_HOME.cat.err" | head -n 1)
    kf=$(awk -v s="$at" '$1 <= s {k = $1} END {print k}' "$steps")
    echo "$(el "$t0" "$t1") ${rs:-0} $((at - kf))"
}
# the page-heavy part: the fixed run's keyframes after the job's start, up to
# the first 3 whose stretch starts before clockloop (the second half of the run)
targets=$(awk 'NR > 2 {print $1 - 1}' "$kf_fixed" | head -n 3)
short=$(($(sed -n 3p "$kf_fixed") + 1))
read -r sf rf nf <<<"$(seek fixed "$short")"
read -r sa ra na <<<"$(seek adaptive "$short")"
echo "seek one step after a keyframe (step $short): fixed $sf s (restore $rf s, $nf steps replayed), adaptive $sa s (restore $ra s, $na steps replayed)"
tot_f=0; tot_a=0
for at in $targets; do
    read -r tf rf nf <<<"$(seek fixed "$at")"
    read -r ta ra na <<<"$(seek adaptive "$at")"
    echo "seek to step $at: fixed $tf s (restore $rf s, $nf steps replayed: stretch $(el "$sf" "$tf") s)," \
         "adaptive $ta s (restore $ra s, $na steps replayed: stretch $(el "$sa" "$ta") s)"
    tot_f=$(awk -v a="$tot_f" -v b="$tf" -v c="$sf" 'BEGIN{print a + b - c}')
    tot_a=$(awk -v a="$tot_a" -v b="$ta" -v c="$sa" 'BEGIN{print a + b - c}')
done
awk -v f="$tot_f" -v a="$tot_a" 'BEGIN{printf "replayed stretches, summed: fixed %.3f s, adaptive %.3f s (ratio %.2f)\n", f, a, a / (f > 0 ? f : 1e-9)}'
