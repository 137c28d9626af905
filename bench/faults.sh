#!/usr/bin/env bash
# bench/faults.sh: the two fault examples of docs/faults.md, each a check
# with faults, their outcomes and figures in one run:
#   1. examples/kv: check --faults kill on the buggy store (schedules to the
#      failure, the deciding fault, narrowing's probes and time), and
#      check --faults all on kv-fixed over N schedules (all must pass);
#   2. etcd (Debian's etcd-server, three members, tests/etcd): check
#      --preempt off --faults all over M schedules (the long test's command:
#      outcome, time, schedules run again after a wall-clock cut, the faults
#      carried out), then the same check again in the same home, which runs
#      every schedule's spec again and names any run that differs from its
#      stored twin (each run deterministic), and one schedule run twice.
# The host VM has one vCPU unless SMP says otherwise: with --smp 2 its own
# kernel panicked twice in three etcd checks on 2026-12-03 (a stack guard
# page hit in the rewind process, bench/RESULTS.md).
# Usage: bench/faults.sh [N [M]]  (defaults 64 and 32; through tools/kvm-host)
# M may be a range A..B (check --schedules A..B): `bench/faults.sh 64 1..16`
# and `bench/faults.sh 64 17..32`, side by side, are the 32 schedules in two
# host VMs (bench/RESULTS.md, "etcd's 32 schedules pass").
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-64}
m=${2:-32}
if [ "${BENCH_FAULTS_INSIDE:-}" != 1 ]; then
    make --no-print-directory build/roots/etcd.erofs >/dev/null
    exec env BENCH_FAULTS_INSIDE=1 ${KVMH:-tools/kvm-host} --smp ${SMP:-1} --mem 6144 --timeout 7200 \
        --env BENCH_FAULTS_INSIDE -- bench/faults.sh "$n" "$m"
fi
R=$PWD/build/rewind
KV=$PWD/build/roots/test.erofs ETCD=$PWD/build/roots/etcd.erofs
w=$(mktemp -d)
export REWIND_HOME=$w/home
cd "$w"
secs() { python3 -c 'import sys; print(f"{float(sys.argv[2]) - float(sys.argv[1]):.1f}")' "$1" "$2"; }
kvnodes() { echo "n1=$1 server n1 n1 n2 n3" "n2=$1 server n2 n1 n2 n3" "n3=$1 server n3 n1 n2 n3"; }
set +e
echo "== examples/kv (test host, -j 2)"
t0=$(date +%s.%N)
"$R" check --schedules "$n" -j 2 --faults kill --expect exit=0 --root "$KV" \
    --node "n1=kv server n1 n1 n2 n3" --node "n2=kv server n2 n1 n2 n3" \
    --node "n3=kv server n3 n1 n2 n3" -- kv client n1 n2 n3 >kv.out 2>kv.err
rc=$?
t1=$(date +%s.%N)
echo "kv, --faults kill, up to $n schedules: exit $rc in $(secs "$t0" "$t1") s"
grep -E '^schedule [0-9]+ .* fails|^deciding step' kv.out
"$R" check --schedules "$n" -j 2 --faults all --expect exit=0 --root "$KV" \
    --node "n1=kv-fixed server n1 n1 n2 n3" --node "n2=kv-fixed server n2 n1 n2 n3" \
    --node "n3=kv-fixed server n3 n1 n2 n3" -- kv-fixed client n1 n2 n3 >kvf.out 2>kvf.err
rcf=$?
t2=$(date +%s.%N)
echo "kv-fixed, --faults all, $n schedules: exit $rcf in $(secs "$t1" "$t2") s"
grep -E '^no failure|^schedule [0-9]+ .* fails' kvf.out
echo "== etcd, three members (test host, -j 2)"
E=(--mem 1024 --node "n1=/compat/node.sh n1" --node "n2=/compat/node.sh n2" --node "n3=/compat/node.sh n3"
    --restart "n1=/compat/node.sh n1" --restart "n2=/compat/node.sh n2" --restart "n3=/compat/node.sh n3"
    --disk-glob '/tmp/etcd-*')
"$R" run --root "$ETCD" "${E[@]}" --schedule 3 --faults all --fault-rate 8 -- /compat/client.sh 5 >r1.out 2>r1.err
"$R" run --root "$ETCD" "${E[@]}" --schedule 3 --faults all --fault-rate 8 -- /compat/client.sh 5 >r2.out 2>r2.err
echo "one faulty schedule twice:"
grep '^rewind: run' r1.err r2.err | sed 's/^r[12].err://'
echo "determinism violations on the second run: $(grep -c 'DETERMINISM VIOLATION' r2.err)"
"$R" events "$(grep '^rewind: run' r1.err | awk '{print $3}')" --kind fault | head -12
for pass in 1 2; do
    t3=$(date +%s.%N)
    "$R" check --preempt off --schedules "$m" -j 2 --probe-timeout 2400 --faults all --expect exit=0 --root "$ETCD" "${E[@]}" \
        -- /compat/client.sh 5 >etcd$pass.out 2>etcd$pass.err
    rce=$?
    t4=$(date +%s.%N)
    echo "etcd, --preempt off --faults all, $m schedules, check $pass: exit $rce in $(secs "$t3" "$t4") s"
    grep -E '^schedule 0:|^no failure|fails|^deciding step|^  (ok|FAILED)|run once more|DETERMINISM' etcd$pass.out
    grep -E 'cut by a wall-clock limit' etcd$pass.err | sed 's/^rewind: //'
done
echo "steps of the $m schedules (first check): $(sed -n 's/.*check: schedule [0-9]* ([a-z]*): run [0-9a-f]* exited 0, \([0-9]*\) steps.*/\1/p' etcd1.err |
    sort -n | awk '{a[NR]=$1; s+=$1} END{printf "min %d, median %d, max %d, mean %d", a[1], a[int((NR+1)/2)], a[NR], s/NR}')"
set -e
rm -rf "$w"
