#!/bin/sh
# The etcd example's client (docs/faults.md, "etcd"): writes keys through
# any member that takes them, then reads each acknowledged key back from
# every member that answers; exit 1 if a member that answers lacks an
# acknowledged write (a lost write), 0 otherwise. A cluster that never
# becomes healthy (two members killed before it had a leader: no quorum, and
# a killed member is not restarted) acknowledges nothing, so nothing can be
# lost: it says so and exits 0.
E1=http://n1:2379 E2=http://n2:2379 E3=http://n3:2379
ALL=$E1,$E2,$E3
n=${1:-10}
i=0
until etcdctl --endpoints=$ALL --command-timeout=2s endpoint health >/dev/null 2>&1; do
    i=$((i+1)); [ $i -lt 60 ] || { echo "client: no member became healthy: 0 writes acknowledged, none lost"; exit 0; }
    sleep 0.5
done
acked=""
i=0
while [ $i -lt "$n" ]; do
    i=$((i+1))
    if etcdctl --endpoints=$ALL --command-timeout=3s put "k$i" "v$i" >/dev/null 2>&1; then
        acked="$acked $i"
    fi
done
echo "client: $(echo $acked | wc -w) of $n writes acknowledged"
sleep 1
lost=0
for e in $E1 $E2 $E3; do
    have=0 total=0 answered=1
    for k in $acked; do
        total=$((total+1))
        v=$(etcdctl --endpoints=$e --command-timeout=2s get --print-value-only "k$k" 2>/dev/null) || { answered=0; break; }
        [ "$v" = "v$k" ] && have=$((have+1))
    done
    [ $answered = 1 ] || { echo "client: $e does not answer"; continue; }
    echo "client: $e has $have of the $total acknowledged writes"
    [ $have = $total ] || lost=1
done
exit $lost
