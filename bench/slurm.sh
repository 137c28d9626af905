#!/usr/bin/env bash
# bench/slurm.sh [N]: the overhead of `check --via slurm` against `--via
# local` and the in-process workers on this machine (docs/distributed.md):
# schedules per minute on examples/pool-fixed with N schedules (default 8)
# and 2 at once each way, from the same schedule 0 (--run), and the time
# from sbatch to the first task's start on the cluster of
# tools/slurm-cluster.sh (two nodes). Needs KVM: run it through the test
# host, `tools/kvm-host --timeout 3600 -- bench/slurm.sh`.
# `bench/slurm.sh latency` measures only the time to the first task's
# start, which needs no KVM (any machine with slurm-wlm and munge).
set -euo pipefail
N=${1:-8}
[ "$N" = latency ] || [ "$N" -ge 1 ] 2>/dev/null || { echo "usage: bench/slurm.sh [N | latency]" >&2; exit 2; }
TOP=$(cd "$(dirname "$0")/.." && pwd)
RW=$TOP/build/rewind
W=$(mktemp -d "${TMPDIR:-/tmp}/rewind-bench-slurm.XXXXXX")
trap '"$TOP/tools/slurm-cluster.sh" stop "$W/slurm" >/dev/null 2>&1 || true; rm -rf "$W"' EXIT
export REWIND_HOME=$W/home
"$TOP/tools/slurm-cluster.sh" start "$W/slurm" 2 >/dev/null
export SLURM_CONF=$W/slurm/slurm.conf
now() { date +%s.%N; }
# submit to first start, a trivial array task (10 tries)
lat=()
for i in $(seq 10); do
    rm -f "$W/stamp.$i"
    t0=$(now)
    sbatch -Q --array=0-1 -o /dev/null --wrap "date +%s.%N >> $W/stamp.$i" >/dev/null
    while [ ! -s "$W/stamp.$i" ]; do sleep 0.02; done
    lat+=("$(awk -v a="$t0" -v b="$(head -n 1 "$W/stamp.$i")" 'BEGIN{printf "%.2f", b-a}')")
done
echo "submit to first task start: ${lat[*]} s (10 tries)"
printf '%s\n' "${lat[@]}" | sort -n | awk '{v[NR]=$1} END{printf "    min %.2f s, median %.2f s, max %.2f s\n", v[1], (v[int((NR+1)/2)]+v[int(NR/2)+1])/2, v[NR]}'
[ "$N" = latency ] && exit 0
"$RW" run --root "$TOP/build/roots/test.erofs" -- /usr/bin/pool-fixed >"$W/base.out" 2>"$W/base.err"
base=$(grep '^rewind: run ' "$W/base.err" | tail -n 1 | awk '{print $3}')
for via in none local slurm; do
    args=()
    [ "$via" = none ] || args=(--via "$via")
    t0=$(now)
    rc=0
    "$RW" check "${args[@]}" --run "$base" --schedules "$N" -j 2 --keep-going >"$W/$via.out" 2>"$W/$via.err" || rc=$?
    t1=$(now)
    # a rate only for a check that ran all N schedules
    if [ $rc != 0 ] || ! grep -q "^no difference: $N schedules" "$W/$via.out"; then
        echo "check via $via FAILED (exit $rc) after $(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.1f", b-a}') s:"
        tail -n 6 "$W/$via.out" "$W/$via.err" | sed 's/^/    /'
        continue
    fi
    awk -v a="$t0" -v b="$t1" -v n="$N" -v v="$via" \
        'BEGIN{printf "check via %-5s %d schedules in %.1f s: %.1f schedules/min\n", v, n, b-a, 60*n/(b-a)}'
    grep -E '^no difference|^the schedules ran on' "$W/$via.out" | sed 's/^/    /'
done
