#!/usr/bin/env bash
# bench/gdb.sh: time to the gdb prompt at random steps of a run of about
# 100,000 steps, against `rewind cat` at the same steps (both restore the
# keyframe before the step and run to it; gdb also copies the program out
# of the guest and reads the guest kernel's tasks), and a reverse-continue
# across keyframes (one replay to count, one to land).
# With `pool` instead of SEEKS: only the reverse-continue from the pool's
# crash (issue 14), counting replays over windows that do not overlap and
# landing from the hit's step (src/gdbstub/stub.c invariants 6, 7) against
# the strategy before them (REWIND_GDB_REVERSE=overlap), side by side,
# and the windows without their exit budget (REWIND_GDB_REVERSE=nobudget:
# session 7's windows, which trapped through every step of a window);
# `pool windows,nobudget` (a comma list) runs only those; a session is
# killed after GDB_POOL_LIMIT seconds (default 1800), and then only that
# lower bound is printed.
# Usage: tools/kvm-host -- bench/gdb.sh [SEEKS | pool [windows,nobudget,overlap]]
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

if [ "$seeks" = pool ]; then
    # the failing run of a check of pool-g and its SIGSEGV step, as in
    # tests/system/t_gdb.sh test_gdb_reverse_continue_from_the_pool_crash
    set +e
    $R check --schedules 64 -j 2 --json --root $ROOT -- /usr/bin/pool-g >"$REWIND_HOME.c.json" 2>/dev/null
    rc=$?
    set -e
    [ "$rc" -eq 1 ] || { echo "check of pool-g found no crash (rc $rc)"; exit 1; }
    failr=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["failing_run"]["id"])' "$REWIND_HOME.c.json")
    crash=$($R events "$failr" --kind signal --json | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["step"])')
    line=$(grep -n '^ *done++;' examples/pool/pool.c | cut -d: -f1)
    limit=${GDB_POOL_LIMIT:-1800} # seconds per session
    echo "pool-g failing run $failr: SIGSEGV at step $crash; break pool.c:$line (done++)"
    t0=$(now)
    $R gdb "$failr" "$crash" -- -batch -ex "break pool.c:$line" -ex 'bt 1' \
        >"$REWIND_HOME.p.out" 2>"$REWIND_HOME.p.err"; t1=$(now)
    b=$(el $t0 $t1)
    echo "gdb at the crash, to the prompt: $b s"
    # the cost of one debug exit: `continue` from the step before the crash
    # to the SIGSEGV traps every user instruction of pool-g in that step;
    # with the registers read by two ioctls per exit, then from kvm_run
    # (KVM_CAP_SYNC_REGS, src/run/debug.c invariant 13)
    for sync in 0 1; do
        t0=$(now)
        REWIND_GDB_LOG=2 REWIND_GDB_SYNC_REGS=$sync $R gdb "$failr" "$((crash - 1))" -- -batch \
            -ex continue >"$REWIND_HOME.s$sync.out" 2>"$REWIND_HOME.s$sync.err"
        t1=$(now)
        grep -q SIGSEGV "$REWIND_HOME.s$sync.out" || { echo "continue to the crash: no SIGSEGV:"; tail -n 3 "$REWIND_HOME.s$sync.out"; }
        echo "REWIND_GDB_SYNC_REGS=$sync: gdb at step $((crash - 1)), continue to the SIGSEGV: $(el $t0 $t1) s;" \
            "$(grep -h 'debug resume:' "$REWIND_HOME.s$sync.err" | sed 's/^rewind: debug resume: //' | tail -n 1)"
    done
    for strat in windows nobudget overlap; do
        [ -z "${2:-}" ] || [[ ",$2," == *",$strat,"* ]] || continue
        t0=$(now)
        set +e
        REWIND_GDB_LOG=2 REWIND_GDB_REVERSE=$strat timeout -k 10 "$limit" $R gdb "$failr" "$crash" -- -batch \
            -ex "break pool.c:$line" -ex 'reverse-continue' -ex 'bt 1' \
            >"$REWIND_HOME.$strat.out" 2>"$REWIND_HOME.$strat.err"
        rc=$?
        set -e
        t1=$(now)
        if [ "$rc" -eq 124 ]; then
            echo "$strat: the session did not end within $limit s (killed): more than $(awk -v a="$limit" -v b="$b" 'BEGIN{printf "%.1f", a-b}') s"
            continue
        fi
        grep -q "Breakpoint 1, worker (.*pool.c:$line" "$REWIND_HOME.$strat.out" ||
            { echo "$strat: reverse-continue did not stop at pool.c:$line"; cat "$REWIND_HOME.$strat.out" "$REWIND_HOME.$strat.err"; exit 1; }
        r=$(el $t0 $t1)
        echo "$strat: with one reverse-continue $r s: the reverse-continue" \
            "$(awk -v a="$r" -v b="$b" 'BEGIN{printf "%.1f", a-b}') s; $(grep 'gdb session' "$REWIND_HOME.$strat.err")"
        # the windows (REWIND_GDB_LOG=2: one line per stop of each replay)
        # and where a debug exit's time went (src/run/debug.c)
        grep -o 'replay from [0-9]* to [0-9]*+*' "$REWIND_HOME.$strat.err" | uniq -c | sed 's/^/    /'
        awk '/debug resume:/ { n += $4; k += $4 * $7; m += $4 * $12 }
             END { if (n) printf "    %d debug exits: %.1f us each in KVM_RUN, %.1f us in the monitor\n", n, k / n, m / n }' \
            "$REWIND_HOME.$strat.err"
    done
    exit 0
fi

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
