#!/usr/bin/env bash
# startup.sh [N]: what a `rewind` command costs before it does anything, with
# libmicrohttpd (and through it GnuTLS and eight more libraries) linked, as
# every build before src/serve/mhd.c, against build/rewind, which loads it
# only in `rewind serve`. The linked twin is build/rewind's own objects linked
# again with -lmicrohttpd, so the libraries loaded are the only difference.
# Each command N times (default 20), the two binaries alternating; prints
# the median wall time of each and their ratio. Runs where it is started:
# here, or in the test host (tools/kvm-host -- bench/startup.sh), where a
# command's start is what every system test pays per CLI call.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-20}
mkdir -p build/bench
if [ ! -x build/bench/rewind-linked ] || [ build/rewind -nt build/bench/rewind-linked ]; then
    make --no-print-directory -s build/rewind
    objs=$(make --no-print-directory -s -p build/rewind 2>/dev/null |
        sed -n 's/^build\/rewind: \(.*\)$/\1/p' | head -n 1)
    # shellcheck disable=SC2086 # the object list
    cc -O2 -g -o build/bench/rewind-linked $objs -lcrypto -ljansson -lzstd -ldw -lelf -pthread -lm \
        -Wl,--no-as-needed -lmicrohttpd
fi
home=$(mktemp -d)
trap 'rm -rf "$home"' EXIT
export REWIND_HOME=$home
ms() { # ms CMD...: wall milliseconds of one CMD
    local s e
    s=$(date +%s%N)
    "$@" >/dev/null 2>&1 || true
    e=$(date +%s%N)
    echo $(((e - s) / 1000))
}
median() { sort -n | awk '{a[NR]=$1} END{printf "%.1f", a[int((NR+1)/2)] / 1000}'; }
echo "libraries loaded: linked $(ldd build/bench/rewind-linked | grep -c '=>'), build/rewind $(ldd build/rewind | grep -c '=>')"
for args in "--version" "ls"; do
    : >"$home/a"; : >"$home/b"
    for ((i = 0; i < N; i++)); do
        ms build/bench/rewind-linked $args >>"$home/a"
        ms build/rewind $args >>"$home/b"
    done
    a=$(median <"$home/a"); b=$(median <"$home/b")
    echo "rewind $args: linked $a ms, loaded by serve $b ms, ratio $(echo "scale=2; $b / $a" | bc)"
done
