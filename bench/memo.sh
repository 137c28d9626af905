#!/usr/bin/env bash
# memo.sh [N]: the memo of page names (src/run/kfmemo.c) side by side with
# REWIND_NO_PAGE_MEMO=1: N runs of each (default 5), alternating, each the
# first run of a fresh home (as every system test's is) with the user's
# memo warm, then a second run in each of those homes; prints the median wall time of each, their ratio, and what the
# keyframes' captures cost per dirty page (REWIND_TIMING, one run of each).
# Runs where it is started (the test host: tools/kvm-host -- bench/memo.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
R=${REWIND:-build/rewind}
ROOT=build/roots/test.erofs
N=${1:-5}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export REWIND_CACHE=$work/cache
ms() { # ms HOME ENV...: wall ms of one `run -- true` in a new home HOME
    local h=$1 s e
    shift
    s=$(date +%s%N)
    env REWIND_HOME="$h" "$@" "$R" run --root "$ROOT" -- true >/dev/null 2>&1
    e=$(date +%s%N)
    echo $(((e - s) / 1000000))
}
median() { sort -n | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}'; }
ms "$work/warm" X=1 >/dev/null # fills the memo (and the shared key cache)
for ((i = 0; i < N; i++)); do
    ms "$work/m$i" X=1 >>"$work/memo"
    ms "$work/n$i" REWIND_NO_PAGE_MEMO=1 >>"$work/none"
done
a=$(median <"$work/memo") b=$(median <"$work/none")
echo "first run of a fresh home, median of $N: memo $a ms, no memo $b ms, ratio $(echo "scale=2; $a / $b" | bc)"
: >"$work/memo2"; : >"$work/none2"
for ((i = 0; i < N; i++)); do # again in the same homes: the pages are in the store
    ms "$work/m$i" X=1 >>"$work/memo2"
    ms "$work/n$i" REWIND_NO_PAGE_MEMO=1 >>"$work/none2"
done
a=$(median <"$work/memo2") b=$(median <"$work/none2")
echo "second run in a home, median of $N: memo $a ms, no memo $b ms, ratio $(echo "scale=2; $a / $b" | bc)"
for mode in memo none; do
    if [ $mode = none ]; then export REWIND_NO_PAGE_MEMO=1; fi
    REWIND_HOME=$work/t$mode REWIND_TIMING=1 "$R" run --root "$ROOT" -- true 2>&1 >/dev/null |
        sed -n "s/^rewind: timing: \(keyframes .*capture [0-9.]* us per dirty page\).*/$mode: \1/p;s/^rewind: timing: \(memo .*\)/$mode: \1/p"
done
