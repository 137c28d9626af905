#!/usr/bin/env bash
# bench/check_where.sh: what the threads at the deciding step add to
# rewind check (issue 14: rw_where on each side), side by side in one run:
#   1. rewind check --schedules 64 -j 2 on /usr/bin/pool-g, which prints
#      the threads; its progress line "where: both sides in S s" is the
#      added time, set against the check's own time (find + narrow);
#   2. one rewind cat at the deciding step of each side (a seek and a guest
#      read, the cost the brief compares a side with) and one rewind where
#      there, each a process of its own.
# Usage: bench/check_where.sh   (runs itself through tools/kvm-host)
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${BENCH_CW_INSIDE:-}" != 1 ]; then
    exec env BENCH_CW_INSIDE=1 ${KVMH:-tools/kvm-host} --timeout 1800 --env BENCH_CW_INSIDE \
        -- bench/check_where.sh
fi
R=build/rewind ROOT=build/roots/test.erofs
export REWIND_HOME=/tmp/rewind-bench-check-where
rm -rf "$REWIND_HOME"
$R run --root $ROOT -- true >/dev/null 2>&1 # the root's image cached
out=$(mktemp -d)
secs() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.1f", b-a}'; }
t0=$(date +%s.%N)
$R check --schedules 64 -j 2 --root $ROOT -- /usr/bin/pool-g >"$out/c.out" 2>"$out/c.err" || true
t1=$(date +%s.%N)
d=$(sed -n 's/^deciding step: \([0-9]*\),.*/\1/p' "$out/c.out")
set -- $(sed -n 's/^passing run: \([0-9a-f~]*\) .*failing run: \([0-9a-f~]*\) .*/\1 \2/p' "$out/c.out")
[ -n "$d" ] && [ $# -eq 2 ] || { echo "check narrowed nothing: $(cat "$out/c.out")" >&2; exit 1; }
w=$(sed -n 's/^rewind: where: both sides in \([0-9.]*\) s$/\1/p' "$out/c.err")
ex=$(sed -n 's/.* schedules tried, \([0-9.]*\) s)$/\1/p' "$out/c.out")
nr=$(sed -n 's/^deciding step: .* probes, \([0-9.]*\) s)$/\1/p' "$out/c.out")
echo "rewind check on pool-g: $(secs "$t0" "$t1") s in all (find $ex s, narrow $nr s), deciding step $d"
echo "  the threads at step $d of both sides (2 rw_where): $w s"
for run in "$1" "$2"; do
    a=$(date +%s.%N); $R cat "$run" "$d" /etc/hostname >/dev/null 2>&1 || true; b=$(date +%s.%N)
    $R where "$run" "$d" >/dev/null 2>&1 || true; c=$(date +%s.%N)
    echo "  run $run at step $d: rewind cat $(secs "$a" "$b") s, rewind where $(secs "$b" "$c") s"
done
rm -rf "$out" "$REWIND_HOME"
