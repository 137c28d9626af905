#!/usr/bin/env bash
# testhost-procs.sh [N]: what one program started costs a system test in the
# test host (tools/kvm-host -- bench/testhost-procs.sh), where every process
# start runs under QEMU's software CPU: /bin/true, and the programs the tests'
# helpers use most (grep, sed, tail, awk, dirname), each in the user's locale
# (the machine's LANG) and in the C locale (LC_ALL=C, as tests/system/run.sh
# runs the tests), side by side, N rounds of 10 calls (default 3); prints the
# median milliseconds per call and the ratio.
set -euo pipefail
N=${1:-3}
f=$(mktemp)
trap 'rm -f "$f" "$f".*' EXIT
printf 'root:x:0:0:root:/root:/bin/sh\nrewind: run 1234 exited:0 after 3 steps\n' >"$f"
per_call() { # per_call CMD...: milliseconds per call over 10 calls (bash's clock)
    local s e i
    s=${EPOCHREALTIME/[.,]/}
    for i in 1 2 3 4 5 6 7 8 9 10; do "$@" >/dev/null 2>&1 || true; done
    e=${EPOCHREALTIME/[.,]/}
    echo $(((e - s) / 10000))
}
median() { sort -n | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}'; }
echo "LANG=${LANG:-} (user locale) against LC_ALL=C; median of $N x 10 calls, ms per call"
k=0
for cmd in "/bin/true" "grep -q root $f" "sed -n 1p $f" "tail -n 1 $f" "awk NR==1 $f" "dirname /a/b"; do
    k=$((k + 1))
    : >"$f.u$k"; : >"$f.c$k"
    for ((i = 0; i < N; i++)); do
        # shellcheck disable=SC2086 # the command's words
        per_call $cmd >>"$f.u$k"
        # shellcheck disable=SC2086
        LC_ALL=C per_call $cmd >>"$f.c$k"
    done
    a=$(median <"$f.u$k") b=$(median <"$f.c$k")
    printf '  %-22s %5s %5s   %s\n' "${cmd%% *}" "$a" "$b" "$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.2f", (b ? a / b : 0) }')"
done
