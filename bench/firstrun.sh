#!/usr/bin/env bash
# firstrun.sh [RUNS]: the first run in a fresh home (as every system test
# makes one) with the user's shared key cache empty and filled (src/image/
# image.c invariant 8), and a second run in the same home, side by side.
# Each case RUNS times (default 3), each in a new home; prints the median
# wall time and the timing lines' image and hashes phases. Runs where it
# is started (the test host: tools/kvm-host -- bench/firstrun.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
R=${REWIND:-build/rewind}
ROOT=build/roots/test.erofs
N=${1:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
one() { # one CACHE: wall seconds of a first run in a new home, then its phases
    local home; home=$(mktemp -d -p "$work")
    local s e
    s=$(date +%s.%N)
    REWIND_CACHE=$1 REWIND_HOME=$home REWIND_TIMING=1 "$R" run --root "$ROOT" -- true >/dev/null 2>"$home.err"
    e=$(date +%s.%N)
    local img hs
    img=$(sed -n 's/.*timing: image *\([0-9.]*\) s/\1/p' "$home.err")
    hs=$(sed -n 's/.*timing: hashes *\([0-9.]*\) s/\1/p' "$home.err")
    s2=$(date +%s.%N)
    REWIND_CACHE=$1 REWIND_HOME=$home "$R" run --root "$ROOT" -- true >/dev/null 2>&1
    e2=$(date +%s.%N)
    echo "$(echo "$e - $s" | bc) $img $hs $(echo "$e2 - $s2" | bc)"
}
median() { sort -n | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}'; }
for mode in empty filled; do
    : >"$work/$mode"
    for i in $(seq "$N"); do
        cache=$work/cache-$mode-$i
        mkdir -m 700 "$cache"
        [ "$mode" = empty ] || one "$cache" >/dev/null # fill it from another home
        one "$cache" >>"$work/$mode"
    done
    printf '%-7s shared cache: first run %.2f s (image %.3f s, hashes %.3f s); second run in that home %.2f s\n' \
        "$mode" "$(cut -d' ' -f1 "$work/$mode" | median)" "$(cut -d' ' -f2 "$work/$mode" | median)" \
        "$(cut -d' ' -f3 "$work/$mode" | median)" "$(cut -d' ' -f4 "$work/$mode" | median)"
done
