#!/usr/bin/env bash
# bench/watch.sh [N]: `rewind watch` over a whole run against `rewind replay`
# of the same run, N times each (default 3), side by side in one run:
# watchctr (tests/guest/watchctr.c) recorded once, then
#   replay:  rewind replay RUN
#   watch:   rewind watch RUN counter --pid P   (a replay with watchpoints,
#            a read of the counter after every step, plus one `cat` of the
#            executable for its symbols, plus, where no hardware watchpoint
#            fires, the steps of the changes single-stepped to their writer)
# and the ratio of the medians. Where KVM is not native, run it inside the
# test host: tools/kvm-host -- bench/watch.sh
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-3}
R=${REWIND_UNDER_TEST:-build/rewind}
export REWIND_HOME=${REWIND_HOME:-$(mktemp -d)}
"$R" run --root build/roots/test.erofs -- /usr/bin/watchctr > "$REWIND_HOME/out" 2>/dev/null
pid=$(sed -n 's/^watchctr pid=\([0-9]*\).*/\1/p' "$REWIND_HOME/out")
secs() { local t0 t1; t0=$(date +%s.%N); "$@" > /dev/null 2>&1; t1=$(date +%s.%N); echo "$t1 - $t0" | bc; }
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
rep=$(for _ in $(seq "$N"); do secs "$R" replay @; done | median)
wat=$(for _ in $(seq "$N"); do secs "$R" watch @ counter --pid "$pid"; done | median)
"$R" watch @ counter --pid "$pid" --json > "$REWIND_HOME/w.json"
read -r inner stepped exits <<<"$(python3 -c '
import json, sys
w = json.load(open(sys.argv[1]))
print(w["wall_s"], w["single_stepped"], w["single_step_exits"])' "$REWIND_HOME/w.json")"
printf 'replay            %8.2f s (median of %d)\n' "$rep" "$N"
printf 'watch             %8.2f s (median of %d; its replay alone: %.2f s)\n' "$wat" "$N" "$inner"
# where no hardware watchpoint fires (the test host), each change is then
# single-stepped to its writer (src/run/watchstep.c): the rest of the time
printf 'single-stepped    %8d changes, %d debug exits\n' "$stepped" "$exits"
printf 'watch / replay    %8.2f\n' "$(echo "$wat / $rep" | bc -l)"
