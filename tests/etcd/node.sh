#!/bin/sh
# node.sh NAME: one member of the three-member etcd cluster of the etcd
# example (docs/faults.md, "etcd"); nodes n1, n2, n3 at 10.77.0.1..3.
n=$1
i=${n#n}
exec etcd --name "$n" --data-dir "/tmp/etcd-$n" \
    --listen-peer-urls "http://10.77.0.$i:2380" --initial-advertise-peer-urls "http://$n:2380" \
    --listen-client-urls "http://10.77.0.$i:2379" --advertise-client-urls "http://$n:2379" \
    --initial-cluster "n1=http://n1:2380,n2=http://n2:2380,n3=http://n3:2380" \
    --initial-cluster-state new --initial-cluster-token rewind --logger zap --log-level error
