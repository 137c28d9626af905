#!/usr/bin/env bash
# bench/soak.sh N: run the soak suite N times through the command line and
# count divergences (docs/reliability.md, "Soak"). The suite is one guest
# program that does a little of everything (tests/guest/soak.c: threads on a
# lock, files, sleeps, signals, forks, stdout and stderr) run in two ways
# that alternate: as is, and perturbed by a schedule (--schedule 5). Run k
# is compared with the first run of its kind: its id, its trace hash
# (rewind show --json) and its output (stdout and stderr, byte for byte)
# must be the same, it must exit 0, and rewind must report no determinism
# violation. One line per divergence, a progress line every 50 runs, and a
# last line "soak: R runs, D divergences, S s". Exit 0 iff D is 0.
# Where KVM is not native, run it in the test host:
#   tools/kvm-host -- bench/soak.sh 20
# Environment: REWIND_HOME (default: a temp home, removed), SOAK_ROOT,
# REWIND (the rewind to test), SOAK_STATE (a directory: makes the soak
# resumable, see below).
# Resuming: with SOAK_STATE=DIR the first run of each kind, the count of runs
# done, the divergences and the wall time so far are kept in DIR (and the
# home in DIR/home unless REWIND_HOME is set); the same command started again
# goes on from the last completed run to N, and its figures count every run
# since the first start. Kill it at any time: a run cut short is run again.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
N=${1:-20}
case "$N" in '' | *[!0-9]*) echo "usage: bench/soak.sh N" >&2; exit 2 ;; esac
R=${REWIND:-$PWD/build/rewind}
ROOT=${SOAK_ROOT:-$PWD/build/roots/test.erofs}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/soak.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# st: where the first runs and the progress live (the temp dir, or SOAK_STATE)
st=$tmp
if [ -n "${SOAK_STATE:-}" ]; then
    mkdir -p "$SOAK_STATE" || exit 2
    st=$(cd "$SOAK_STATE" && pwd)
fi
export REWIND_HOME=${REWIND_HOME:-$st/home}
kinds=("" "--schedule 5")
# less RAM to map and hash per run (the suite needs little), and a fixed
# epoch: the default one is today's midnight, so a soak that runs past
# midnight would otherwise see a new spec (a new id) for every later run;
# the spin limit (wall time with no step) far above the default 60 s: on a
# host shared by many VMs a run can stall that long and is no divergence
flags=${SOAK_FLAGS:---mem 256 --epoch 2026-11-30 --spin-limit 900}
start=0 div=0 past=0 # runs done, divergences and seconds spent before this start
if [ -f "$st/progress" ]; then
    read -r start div past <"$st/progress" || true
    case "$start$div$past" in '' | *[!0-9]*) echo "soak: $st/progress is damaged" >&2; exit 2 ;; esac
    echo "soak: resuming after $start runs ($div divergences, $past s)"
fi
t0=$(($(date +%s) - past))
trace_of() { "$R" show "$1" --json | sed -n 's/^ *"trace_hash": "\([0-9a-f]*\)".*/\1/p'; }
for ((k = start; k < N; k++)); do
    v=$((k % ${#kinds[@]}))
    # shellcheck disable=SC2086 # the schedule flags split on purpose
    "$R" run --root "$ROOT" $flags ${kinds[$v]} -- /usr/bin/soak >"$tmp/out" 2>"$tmp/err"
    rc=$?
    id=$(sed -n 's/^rewind: run \([0-9a-f~]*\) .*/\1/p' "$tmp/err" | tail -n 1)
    why=""
    [ "$rc" -eq 0 ] || why="exit $rc"
    [ -n "$id" ] || why="${why:+$why; }no run id"
    ! grep -q 'DETERMINISM VIOLATION' "$tmp/err" || why="${why:+$why; }rewind reports a determinism violation"
    # the output without rewind's own lines (the closing line holds wall time)
    grep -v '^rewind: ' "$tmp/err" >"$tmp/joberr"
    th=$([ -n "$id" ] && trace_of "$id")
    [ -n "$th" ] || why="${why:+$why; }no trace hash"
    if [ ! -f "$st/first.$v.id" ]; then
        echo "$th" >"$st/first.$v.trace"
        cp "$tmp/out" "$st/first.$v.out"
        cp "$tmp/joberr" "$st/first.$v.err"
        echo "$id" >"$st/first.$v.id" # last: its presence says the others are whole
        [ -z "$why" ] || why="the first run of its kind failed: $why"
    else
        [ "$id" = "$(cat "$st/first.$v.id")" ] || why="${why:+$why; }id $id, first $(cat "$st/first.$v.id")"
        [ "$th" = "$(cat "$st/first.$v.trace")" ] || why="${why:+$why; }trace hash differs"
        cmp -s "$tmp/out" "$st/first.$v.out" || why="${why:+$why; }stdout differs"
        cmp -s "$tmp/joberr" "$st/first.$v.err" || why="${why:+$why; }stderr differs"
    fi
    if [ -n "$why" ]; then
        div=$((div + 1))
        line="soak: run $((k + 1)) (${kinds[$v]:-plain}) DIVERGES: $why: $(tail -n 1 "$tmp/err")"
        echo "$line"
        [ "$st" = "$tmp" ] || echo "$line" >>"$st/divergences"
    fi
    if [ "$st" != "$tmp" ]; then # the run is counted once its verdict is kept
        echo "$((k + 1)) $div $(($(date +%s) - t0))" >"$st/progress.tmp" && mv "$st/progress.tmp" "$st/progress"
    fi
    if [ $(((k + 1) % 50)) -eq 0 ] || [ $((k + 1)) -eq 2 ]; then
        echo "soak: $((k + 1)) runs, $div divergences, $(($(date +%s) - t0)) s"
    fi
done
echo "soak: $((k > N ? k : N)) runs, $div divergences, $(($(date +%s) - t0)) s"
[ "$div" -eq 0 ]
