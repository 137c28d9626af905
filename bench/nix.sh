#!/usr/bin/env bash
# bench/nix.sh: what the reproducible-builds tools cost (docs/nix.md), in a
# fresh home and a fresh offline store (tests/nix/setup.sh). Run it where
# KVM runs guests: /work/notes/kvmh --timeout 1800 -- bench/nix.sh
#   1. nix-build of the hello derivation on the host, then rewind nix of it
#      twice (the first makes the closure's image, the second finds it);
#   2. a job of 2000 appending writes, without and with --track-writes:
#      steps, records, wall time;
#   3. find over a directory of 2000 entries, ten times, in the
#      filesystem's order and with --dirorder 1: steps and wall time.
# Prints one line per figure. Wall times are the test host's (software CPU).
set -euo pipefail
cd "$(dirname "$0")/.."
TOP=$PWD
R=${REWIND_UNDER_TEST:-$TOP/build/rewind}
ROOT=$TOP/build/roots/test.erofs
w=$(mktemp -d "${TMPDIR:-/tmp}/bench-nix.XXXXXX")
trap 'rm -rf "$w"' EXIT
export REWIND_HOME=$w/home
eval "$(tests/nix/setup.sh "$w/nixs")"
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN{printf "%.1f", b-a}'; }
# closing line fields of a run's stderr: steps and wall
field() { sed -n "s/^rewind: run [0-9a-f]* .* after \([0-9]*\) steps, .*, \([0-9.]*\)s wall.*/\\$2/p" "$1" | tail -n 1; }
events() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["events"])' "$REWIND_HOME/runs/$1/manifest.json"; }
id_of() { sed -n 's/^rewind: run \([0-9a-f]*\) .*/\1/p' "$1" | tail -n 1; }

t=$(now)
nix-build "$w/nixs/default.nix" -A hello --no-out-link >/dev/null 2>&1
echo "nix-build hello (host, fresh store): $(since "$t") s"
for k in 1 2; do
    t=$(now)
    "$R" nix -f "$w/nixs/default.nix" -A hello >"$w/n$k.out" 2>"$w/n$k.err"
    echo "rewind nix hello ($k): $(since "$t") s, $(grep -c 'matches the store' "$w/n$k.out") match"
done

W='mkdir /o; i=0; while [ $i -lt 2000 ]; do echo $i >> /o/f; i=$((i+1)); done'
for mode in plain tracked; do
    opt=()
    [ $mode = plain ] || opt=(--track-writes '/o/*')
    "$R" run --root "$ROOT" "${opt[@]}" -- sh -c "$W" >/dev/null 2>"$w/w-$mode.err"
    id=$(id_of "$w/w-$mode.err")
    echo "2000 writes, $mode: $(field "$w/w-$mode.err" 1) steps, $(events "$id") records, $(field "$w/w-$mode.err" 2) s wall"
done

D='mkdir /d; cd /d; i=0; while [ $i -lt 2000 ]; do : > f$i; i=$((i+1)); done; for k in 1 2 3 4 5 6 7 8 9 10; do /usr/bin/find /d > /dev/null; done'
for mode in fs dirorder; do
    opt=()
    [ $mode = fs ] || opt=(--dirorder 1)
    "$R" run --root "$ROOT" "${opt[@]}" -- sh -c "$D" >/dev/null 2>"$w/d-$mode.err"
    echo "find over 2000 entries x10, $mode order: $(field "$w/d-$mode.err" 1) steps, $(field "$w/d-$mode.err" 2) s wall"
done
