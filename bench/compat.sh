#!/usr/bin/env bash
# bench/compat.sh: the compatibility suite's figures (tests/compat/README.md).
# For each workload of tests/compat/workloads.txt, in one test host:
#   1. rewind run on build/roots/compat.erofs (its image cached first): steps,
#      virtual time and wall time of the run (the closing line), and the
#      rewind process's whole wall time;
#   2. rewind check --schedules 8 --run that run: wall time and verdict;
#   3. the same command run directly in the test host, with this machine's
#      own python3.11, node, gcc and bash and the workload's Go program built
#      by this machine's go ("n/a" where this machine lacks what it needs).
# Usage: bench/compat.sh (it runs itself through tools/kvm-host).
# Knobs (extended regexes over workload names): BENCH_COMPAT_ONLY (default:
# every workload), BENCH_COMPAT_CHECK (default: every workload run; others
# print "check: not run"); BENCH_COMPAT_TIMEOUT: rewind run's --timeout (s,
# default 900). A line is printed as each workload ends.
set -euo pipefail
cd "$(dirname "$0")/.."
top=$PWD
if [ "${1:-}" != --inside ]; then
    mkdir -p build/bench-compat
    (cd tests/compat/go/workload && CGO_ENABLED=0 GOPROXY=off go build -trimpath \
        -o "$top/build/bench-compat/go-workload" .)
    exec tools/kvm-host --timeout 3000 --env BENCH_COMPAT_ONLY --env BENCH_COMPAT_CHECK \
        --env BENCH_COMPAT_TIMEOUT -- bench/compat.sh --inside
fi
export REWIND_HOME
REWIND_HOME=$(mktemp -d /tmp/rewind-bench-compat.XXXXXX)
root=build/roots/compat.erofs
w=$(mktemp -d /tmp/rewind-bench-compat-w.XXXXXX)
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.1f", b-a}'; }
t0=$(now)
build/rewind run --root "$root" -- true >/dev/null 2>&1
echo "compat image: $(du -m "$root" | cut -f1) MiB, first use (hash + cache + boot): $(secs "$t0" "$(now)") s"
only=${BENCH_COMPAT_ONLY:-.} checks=${BENCH_COMPAT_CHECK:-.} limit=${BENCH_COMPAT_TIMEOUT:-900}
grep -v '^#' tests/compat/workloads.txt | while IFS='|' read -r name cmd; do
    echo "$name" | grep -qE "$only" || continue
    t0=$(now)
    build/rewind run --timeout "$limit" --root "$root" -- sh -c "$cmd" >"$w/$name.out" 2>"$w/$name.err" </dev/null || true
    t1=$(now)
    line=$(grep '^rewind: run ' "$w/$name.err" | tail -n 1)
    id=$(echo "$line" | awk '{print $3}')
    steps=$(echo "$line" | sed -n 's/.* after \([0-9]*\) steps.*/\1/p')
    virt=$(echo "$line" | sed -n 's/.* steps, \([0-9.]*\)s virtual.*/\1/p')
    wall=$(echo "$line" | sed -n 's/.*virtual, \([0-9.]*\)s wall.*/\1/p')
    ok=different
    cmp -s "$w/$name.out" "tests/compat/expected/$name.out" && ok=expected
    t2=$(now)
    if echo "$name" | grep -qE "$checks" && [ -n "$id" ]; then
        build/rewind check --schedules 8 -j 2 --run "$id" >"$w/$name.check" 2>&1 && verdict="no difference" || verdict="rc $?"
        t3=$(now)
        ctime="$(secs "$t2" "$t3") s"
    else
        verdict="not run" ctime="-"
    fi
    direct=n/a
    case $name in
        go) dcmd="$top/build/bench-compat/go-workload" ;;
        c) dcmd="cp -r '$top/tests/compat/c' '$w/c' && make -s -C '$w/c' check" ;;
        cpython-tests) dcmd="" ;;
        *) dcmd=${cmd//\/compat\//$top/tests/compat/} ;;
    esac
    if [ -n "$dcmd" ]; then
        t4=$(now)
        if (cd "$w" && sh -c "$dcmd") >"$w/$name.direct" 2>&1 </dev/null; then
            direct="$(secs "$t4" "$(now)") s"
        else
            direct="failed"
        fi
    fi
    printf '%-14s %7s steps %7ss virtual %7ss wall (process %s s, output %s; %s) | check --schedules 8: %s, %s | direct: %s\n' \
        "$name" "$steps" "$virt" "$wall" "$(secs "$t0" "$t1")" "$ok" "$(echo "$line" | awk '{print $4}')" "$ctime" "$verdict" "$direct"
done
rm -rf "$REWIND_HOME" "$w"
