#!/usr/bin/env bash
# bench/strategies.sh: which perturbation strategy crashes examples/pool:
# 24 runs from boot, `rewind run --schedule S --schedule-from 24
# --schedule-until 73 -- /usr/bin/pool` (the job's steps), S = 1..24; odd S
# is "random", even S is "pct". Prints crashes per strategy.
# Usage: tools/kvm-host -- bench/strategies.sh [UNTIL]
set -uo pipefail
cd "$(dirname "$0")/.."
until=${1:-73}
export REWIND_HOME=${REWIND_HOME:-/tmp/rewind-bench-strat}
for s in $(seq 1 24); do
    build/rewind run --root build/roots/test.erofs --schedule "$s" --schedule-from 24 \
        --schedule-until "$until" -- /usr/bin/pool >/dev/null 2>&1
    echo "schedule $s rc $?"
done | awk '{k=($2%2)?"random":"pct"; n[k]++; if($4!=0) f[k]++}
            END{for(k in n) print k": "f[k]+0" of "n[k]" schedules crash"}'
