#!/usr/bin/env bash
# tools/slurm-cluster.sh start DIR [NODES] | stop DIR | env DIR
#
# A throw-away Slurm cluster on this machine, for tests and benchmarks of
# `rewind check --via slurm` (docs/distributed.md): munged, slurmctld and
# NODES (default 2) slurmd daemons, each with its own NodeName (node1,
# node2, ...) and port on 127.0.0.1, every file (munge key, slurm.conf,
# state, logs) under DIR, the sockets' directories in /tmp (short paths). Runs as the calling user (root in
# the test host). `env DIR` prints the exports a client needs (SLURM_CONF).
# Needs Debian's slurm-wlm and munge (tools/deps.sh).
set -euo pipefail
cmd=${1:-}; dir=${2:-}
[ -n "$cmd" ] && [ -n "$dir" ] || { echo "usage: $0 start DIR [NODES] | stop DIR | env DIR" >&2; exit 2; }
mkdir -p "$dir"; dir=$(cd "$dir" && pwd)

# ours PID: the pid a pid file names, if it is still one of our daemons (a
# stale file after a reboot may name any process: never signal that one).
ours() {
    local pid=$1 comm
    comm=$(cat "/proc/$pid/comm" 2>/dev/null) || return 1
    case "$comm" in munged | slurmctld | slurmd | slurmstepd) return 0 ;; *) return 1 ;; esac
}

stop() {
    for f in "$dir"/run/*.pid; do
        [ -e "$f" ] || continue
        pid=$(cat "$f" 2>/dev/null || true)
        [ -n "$pid" ] && ours "$pid" && kill "$pid" 2>/dev/null || true
    done
    for _ in $(seq 50); do
        alive=0
        for f in "$dir"/run/*.pid; do
            [ -e "$f" ] || continue
            pid=$(cat "$f" 2>/dev/null || true)
            [ -n "$pid" ] && ours "$pid" && alive=1
        done
        [ $alive = 0 ] && break
        sleep 0.1
    done
    for f in "$dir"/run/*.pid; do
        [ -e "$f" ] || continue
        pid=$(cat "$f" 2>/dev/null || true)
        [ -n "$pid" ] && ours "$pid" && kill -9 "$pid" 2>/dev/null || true
        rm -f "$f"
    done
    if [ -s "$dir/run/munge.sockdir" ]; then
        sd=$(cat "$dir/run/munge.sockdir")
        case "$sd" in /tmp/rwmunge.*) rm -rf "$sd" ;; esac
        rm -f "$dir/run/munge.sockdir"
    fi
    if [ -s "$dir/run/spool.dir" ]; then
        sd=$(cat "$dir/run/spool.dir")
        case "$sd" in /tmp/rwspool.*) rm -rf "$sd" ;; esac
        rm -f "$dir/run/spool.dir"
    fi
}

case "$cmd" in
env) echo "export SLURM_CONF=$dir/slurm.conf"; exit 0 ;;
stop) stop; exit 0 ;;
start) ;;
*) echo "usage: $0 start DIR [NODES] | stop DIR | env DIR" >&2; exit 2 ;;
esac

nodes=${3:-2}
[[ $nodes =~ ^[1-9][0-9]{0,2}$ ]] || { echo "slurm-cluster: NODES must be a number from 1 to 999: $nodes" >&2; exit 2; }
for b in munged slurmctld slurmd sbatch; do
    command -v "$b" >/dev/null 2>&1 || [ -x "/usr/sbin/$b" ] ||
        { echo "slurm-cluster: $b not found (tools/deps.sh installs slurm-wlm and munge)" >&2; exit 1; }
done
PATH=$PATH:/usr/sbin
stop
mkdir -p "$dir/run" "$dir/log" "$dir/state" "$dir/munge"
chmod 700 "$dir/munge"
key=$dir/munge/munge.key
[ -s "$key" ] || { head -c 1024 /dev/urandom >"$key"; chmod 400 "$key"; }
# the socket's path must fit in 108 bytes: a short directory of its own
sockdir=$(mktemp -d /tmp/rwmunge.XXXXXX)
chmod 755 "$sockdir"
echo "$sockdir" >"$dir/run/munge.sockdir"
sock=$sockdir/munge.sock
# slurmd's spool holds slurmstepd's sockets (NODE_JOB.STEP), whose paths
# must fit in 108 bytes too: under a test's DIR they did not (the launch
# failed, the tasks stayed "launch failed requeued held"): a short one.
# RW_SLURM_SPOOL=DIR puts it there instead: tests/system/t_slurm.sh gives
# a path too long, so that every launch fails as it did then.
if [ -n "${RW_SLURM_SPOOL:-}" ]; then
    spool=$RW_SLURM_SPOOL
    mkdir -p "$spool"
else
    spool=$(mktemp -d /tmp/rwspool.XXXXXX)
fi
echo "$spool" >"$dir/run/spool.dir"
munged --force --socket="$sock" --key-file="$key" --pid-file="$dir/run/munged.pid" \
    --log-file="$dir/log/munged.log" --seed-file="$dir/munge/seed" 2>>"$dir/log/munged.log"

# Slurm resolves every address, numeric ones too, with AI_ADDRCONFIG, which
# finds nothing on a machine whose only IPv4 address is loopback: slurmctld
# then fails in getaddrinfo and slurmd cannot bind ("Address family not
# supported by protocol"). The test host VM boots with loopback down and no
# other interface, and an earlier test may have brought lo up (t_serve):
# whatever the state, lo is up and, when no IPv4 address outside 127/8
# exists, lo gets one more (root only; elsewhere say why it will fail).
netup() {
    ip -o link show lo 2>/dev/null | grep -q '[<,]UP[,>]' || ip link set lo up 2>/dev/null || true
    if ! ip -o -4 addr show 2>/dev/null | awk '{print $4}' | grep -qv '^127\.'; then
        if [ "$(id -u)" = 0 ]; then
            ip addr add 10.254.254.1/32 dev lo 2>/dev/null ||
                { echo "slurm-cluster: cannot add an IPv4 address to lo (Slurm needs one outside 127/8)" >&2; return 1; }
        else
            echo "slurm-cluster: no IPv4 address outside 127/8 and not root: Slurm's getaddrinfo (AI_ADDRCONFIG) will find no address" >&2
        fi
    fi
}
netup
# slurmd loads its cgroup plugin even with proctrack/linuxproc: the v1 one
# (cgroup.conf below) needs a writable /sys/fs/cgroup with the freezer
# hierarchy. The test host VM has none: mount them there (root only).
if [ "$(id -u)" = 0 ] && ! grep -q ' /sys/fs/cgroup ' /proc/mounts 2>/dev/null; then
    mount -t tmpfs -o mode=755 cgroup /sys/fs/cgroup 2>/dev/null || true
fi
if [ "$(id -u)" = 0 ] && ! grep -q ' /sys/fs/cgroup/freezer ' /proc/mounts 2>/dev/null; then
    mkdir -p /sys/fs/cgroup/freezer 2>/dev/null &&
        mount -t cgroup -o freezer cgroup /sys/fs/cgroup/freezer 2>/dev/null || true
fi
# slurmctld runs only where its short host name is SlurmctldHost's name;
# every address below is given as 127.0.0.1, so no name has to resolve. A
# machine with no host name (the test host VM: "(none)") is named localhost.
host=$(hostname -s 2>/dev/null || hostname)
if [ -z "$host" ] || [ "$host" = "(none)" ]; then
    [ "$(id -u)" = 0 ] && hostname localhost 2>/dev/null && host=localhost
fi
user=$(id -un)
base=$(( 17000 + ($$ % 500) * 20 ))
{
    echo "ClusterName=rewindtest"
    echo "SlurmctldHost=$host(127.0.0.1)"
    echo "SlurmctldPort=$base"
    echo "SlurmUser=$user"
    echo "SlurmdUser=$user"
    echo "AuthType=auth/munge"
    echo "CredType=cred/munge"
    echo "AuthInfo=socket=$sock"
    echo "StateSaveLocation=$dir/state"
    echo "SlurmdSpoolDir=$spool/%n"
    echo "SlurmctldPidFile=$dir/run/slurmctld.pid"
    echo "SlurmdPidFile=$dir/run/slurmd.%n.pid"
    echo "SlurmctldLogFile=$dir/log/slurmctld.log"
    echo "SlurmdLogFile=$dir/log/slurmd.%n.log"
    echo "ProctrackType=proctrack/linuxproc"
    echo "TaskPlugin=task/none"
    echo "SwitchType=switch/none"
    echo "MpiDefault=none"
    echo "SelectType=select/cons_tres"
    echo "SelectTypeParameters=CR_CPU"
    echo "SchedulerType=sched/builtin"
    echo "JobCompType=jobcomp/none"
    echo "AccountingStorageType=accounting_storage/none"
    echo "JobAcctGatherType=jobacct_gather/none"
    echo "ReturnToService=2"
    # generous: the test host's software CPU is slow, and slow pings must
    # not mark a node down while a task's guest runs beside its slurmd
    echo "SlurmdTimeout=300"
    echo "MessageTimeout=20"
    echo "MinJobAge=600"
    echo "KillWait=2"
    echo "SchedulerParameters=sched_interval=1"
    for i in $(seq "$nodes"); do
        echo "NodeName=node$i NodeHostname=$host NodeAddr=127.0.0.1 Port=$((base + i)) CPUs=1 State=UNKNOWN"
    done
    echo "PartitionName=rw Nodes=node[1-$nodes] Default=YES MaxTime=INFINITE State=UP"
} >"$dir/slurm.conf"
printf 'CgroupPlugin=cgroup/v1\nCgroupAutomount=yes\n' >"$dir/cgroup.conf"
export SLURM_CONF=$dir/slurm.conf
slurmctld -f "$SLURM_CONF" -i 2>>"$dir/log/slurmctld.err"
for i in $(seq "$nodes"); do
    mkdir -p "$spool/node$i"
    slurmd -f "$SLURM_CONF" -N "node$i" 2>>"$dir/log/slurmd.err"
done
# Up when every node is idle; a daemon that died is said at once, with
# the last lines of its log.
died() {
    echo "slurm-cluster: $1 exited at start; logs in $dir/log:" >&2
    tail -n 5 "$dir"/log/*.log "$dir"/log/*.err 2>/dev/null | grep -v '^$' >&2 || true
    exit 1
}
for _ in $(seq 300); do
    idle=$(sinfo -h -N -t idle -o '%N' 2>/dev/null | sort -u | wc -l)
    [ "$idle" -ge "$nodes" ] && { echo "export SLURM_CONF=$SLURM_CONF"; exit 0; }
    for f in "$dir"/run/slurmctld.pid "$dir"/run/slurmd.*.pid; do
        [ -s "$f" ] && ! kill -0 "$(cat "$f")" 2>/dev/null && died "$(basename "$f" .pid)"
    done
    sleep 0.2
done
echo "slurm-cluster: the nodes did not come up in 60 s; logs in $dir/log" >&2
sinfo -N >&2 || true
exit 1
