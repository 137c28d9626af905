#!/usr/bin/env bash
# testhost-bin.sh [N]: in the test host, what it costs that the program under
# test is read from the work tree, which the host VM mounts as a 9p share that
# keeps no page cache (as make check mounts it: tools/kvm-host --rw TREE),
# against a copy on the host VM's own tmpfs (tests/system/run.sh, step 2).
# Each case N times (default 10), the two alternating: `rewind --version`,
# and a first run of `true` in a fresh home with the test root's image
# linked in (what every system test's first run is). Prints the medians and
# their ratios. Run it as make check runs the tests:
#   tools/kvm-host --mem 4096 --rw "$PWD" -- bench/testhost-bin.sh 10
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-10}
src=$PWD/build
ROOT=$src/roots/test.erofs
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/bin/kernel"
cp "$src/rewind" "$src/rewind-init" "$work/bin/"
cp "$src"/kernel/* "$work/bin/kernel/"
export REWIND_CACHE=$work/cache
mkdir -p -m 700 "$REWIND_CACHE"
# the image cached, and the key cache knowing both copies' kernel and init
for r in "$src/rewind" "$work/bin/rewind"; do
    REWIND_HOME=$work/prime "$r" run --root "$ROOT" -- true >"$work/prime.out" 2>&1 ||
        { echo "testhost-bin: the first run failed:"; tail -n 3 "$work/prime.out"; exit 1; }
done
ms() { # ms CMD...: wall milliseconds of one CMD (the clock is bash's: no process)
    local s e
    s=${EPOCHREALTIME/[.,]/}
    "$@" >/dev/null 2>"$work/ms.err" || { echo "testhost-bin: $* failed: $(tail -n 1 "$work/ms.err")" >&2; return 1; }
    e=${EPOCHREALTIME/[.,]/}
    echo $(((e - s) / 1000))
}
median() { sort -n | awk '{a[NR]=$1} END{print (NR % 2 ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2)}'; }
k=0
first_run() { # first_run REWIND: a first run in a fresh home, images linked
    k=$((k + 1))
    mkdir -p "$work/h$k"
    cp -al "$work/prime/images" "$work/h$k/images"
    REWIND_HOME=$work/h$k ms "$1" run --root "$ROOT" -- true || return 1
    rm -rf "$work/h$k"
}
for c in version run; do : >"$work/$c.share"; : >"$work/$c.tmpfs"; done
for ((i = 0; i < N; i++)); do
    ms "$src/rewind" --version >>"$work/version.share"
    ms "$work/bin/rewind" --version >>"$work/version.tmpfs"
    first_run "$src/rewind" >>"$work/run.share"
    first_run "$work/bin/rewind" >>"$work/run.tmpfs"
done
echo "median of $N, ms: from the work tree (9p) / from a tmpfs copy / ratio"
for c in version run; do
    a=$(median <"$work/$c.share") b=$(median <"$work/$c.tmpfs")
    printf '  %-28s %6s %6s   %s\n' "$([ $c = version ] && echo 'rewind --version' || echo 'first run of true')" \
        "$a" "$b" "$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.2f", a / b }')"
done
