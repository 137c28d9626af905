#!/usr/bin/env bash
# bench/gdb.sh: time to the gdb prompt at random steps of a run of about
# 100,000 steps, against `rewind cat` at the same steps (both restore the
# keyframe before the step and run to it; gdb also copies the program out
# of the guest and reads the guest kernel's tasks), and a reverse-continue
# across keyframes (one replay to count, one to land).
# Usage: tools/kvm-host -- bench/gdb.sh [SEEKS]
set -euo pipefail
cd "$(dirname "$0")/.."
seeks=${1:-3}
export REWIND_HOME=${REWIND_HOME:-/tmp/rewind-bench-gdb}
rm -rf "$REWIND_HOME"
R=${REWIND_UNDER_TEST:-build/rewind}
ROOT=build/roots/test.erofs
now() { date +%s.%N; }
el() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.2f", b-a}'; }
mf() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$REWIND_HOME/runs/$1/manifest.json" "$2"; }

$R run --root $ROOT -- /usr/bin/clockloop 90000 10 >/dev/null 2>"$REWIND_HOME.err"
id=$(awk '/^rewind: run/{print $3}' "$REWIND_HOME.err" | tail -n 1)
steps=$(mf "$id" steps)
echo "run: $steps steps, keyframe every $(mf "$id" keyframe_every)"
tc=0; tg=0
for i in $(seq 1 "$seeks"); do
    at=$(python3 -c "import random; random.seed($i); print(random.randrange(2000, $steps - 10))")
    t0=$(now); $R cat "$id" "$at" /etc/hostname >/dev/null; t1=$(now)
    # the prompt: gdb connected, the stop shown (bt), then it quits
    $R gdb "$id" "$at" -- -batch -ex bt >"$REWIND_HOME.g.out" 2>&1; t2=$(now)
    grep -q 'main' "$REWIND_HOME.g.out" || { echo "gdb at $at: no main in bt"; cat "$REWIND_HOME.g.out"; exit 1; }
    c=$(el $t0 $t1); g=$(el $t1 $t2)
    echo "step $at: cat $c s, gdb to the prompt $g s (x$(awk -v a="$g" -v b="$c" 'BEGIN{printf "%.2f", a/b}'))"
    tc=$(awk -v a="$tc" -v b="$c" 'BEGIN{print a+b}'); tg=$(awk -v a="$tg" -v b="$g" 'BEGIN{print a+b}')
done
echo "mean ratio gdb/cat: $(awk -v a="$tg" -v b="$tc" 'BEGIN{printf "%.2f", a/b}')"
# reverse-continue across one keyframe: gdb starts at the first step after
# a keyframe (its seek restores that keyframe), a breakpoint on the
# clock_gettime every step calls; the reverse-continue replays from the
# step before, i.e. from the keyframe before that one. Its cost is the
# session with one reverse-continue minus the same session without it.
ke=$(mf "$id" keyframe_every)
at=$(( (steps - 100) / ke * ke + 1 ))
t0=$(now)
$R gdb "$id" "$at" -- -batch -ex 'break clock_gettime' -ex 'bt' \
    >"$REWIND_HOME.b.out" 2>"$REWIND_HOME.b.err"; t1=$(now)
$R gdb "$id" "$at" -- -batch -ex 'break clock_gettime' -ex 'reverse-continue' -ex 'bt' \
    >"$REWIND_HOME.r.out" 2>"$REWIND_HOME.r.err"; t2=$(now)
grep -q 'Breakpoint 1, .*clock_gettime' "$REWIND_HOME.r.out" ||
    { echo "reverse-continue at $at did not stop at clock_gettime"; cat "$REWIND_HOME.r.out" "$REWIND_HOME.r.err"; exit 1; }
b=$(el $t0 $t1); r=$(el $t1 $t2)
echo "gdb at step $at (keyframe every $ke): to the prompt $b s; with one reverse-continue $r s:" \
    "the reverse-continue $(awk -v a="$r" -v b="$b" 'BEGIN{printf "%.2f", a-b}') s;" \
    "$(grep 'gdb session' "$REWIND_HOME.r.err")"
