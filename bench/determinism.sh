#!/usr/bin/env bash
# bench/determinism.sh: (1) steps per second of wall time for a syscall-heavy
# guest program (clock_gettime in a loop: one step per call), and (2) the
# wall time of a CPU-bound static program inside rewind against the same
# binary run directly on this machine, side by side in one run. Where KVM is
# not native, run it inside the test host: tools/kvm-host -- bench/determinism.sh
set -euo pipefail
cd "$(dirname "$0")/.."
export REWIND_HOME=${REWIND_HOME:-$PWD/build/bench-home}
R=build/rewind; ROOT=build/roots/test.erofs
N=${CLOCK_CALLS:-100000}; P=${PRIMES_BELOW:-3000000}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
now() { date +%s.%N; }

$R run --root $ROOT -- /usr/bin/clockloop "$N" >/dev/null 2>"$tmp/c.err"
steps=$(sed -n 's/.* after \([0-9]*\) steps.*/\1/p' "$tmp/c.err")
wall=$(sed -n 's/.*virtual, \([0-9.]*\)s wall.*/\1/p' "$tmp/c.err")
$R run --root $ROOT -- /bin/true 2>"$tmp/t.err"
bwall=$(sed -n 's/.*virtual, \([0-9.]*\)s wall.*/\1/p' "$tmp/t.err")
bsteps=$(sed -n 's/.* after \([0-9]*\) steps.*/\1/p' "$tmp/t.err")
echo "syscall-heavy: clockloop $N: $steps steps in $wall s in the VM loop (boot alone: $bsteps steps, $bwall s)"
awk -v s="$steps" -v w="$wall" -v bs="$bsteps" -v bw="$bwall" \
    'BEGIN{printf "  steps/s of wall time: %.0f (excluding boot: %.0f)\n", s/w, (s-bs)/(w-bw)}'

t0=$(now); build/guest/cpu "$P" >/dev/null; t1=$(now)
direct=$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.3f", b-a}')
$R run --root $ROOT -- /usr/bin/cpu "$P" >/dev/null 2>"$tmp/p.err"
inwall=$(sed -n 's/.*virtual, \([0-9.]*\)s wall.*/\1/p' "$tmp/p.err")
echo "cpu-bound: primes below $P: direct $direct s, in rewind $inwall s (VM loop, boot $bwall s included)"
awk -v d="$direct" -v r="$inwall" -v b="$bwall" \
    'BEGIN{printf "  ratio rewind/direct: %.2f (boot excluded: %.2f)\n", r/d, (r-b)/d}'
