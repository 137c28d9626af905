#!/usr/bin/env bash
# bench/inplace.sh [N] [PROGRAM] [J]: the diagnosis of check's in-place
# restore (bench/RESULTS.md, "Speed (issue 17)"). Runs `check --schedules N -j J` on PROGRAM
# twice in fresh homes, once with a fresh VM per fork and once with the VM
# kept and restored in place (REWIND_CHECK_INPLACE=1), both dumping the
# whole machine after every fork's restore and at its end
# (REWIND_TEST_STATE_DUMP, src/run/warm.c), then compares: the runs both
# made (same id: the same trace and final RAM hash?), and the dumps of the
# same fork, line by line (vCPU state, MSRs, LAPIC, kvm_run, platform,
# every page's hash; "stale" lines name pages whose bytes are not what the
# keyframe code believes). Run inside the test host:
#   /work/notes/kvmh --smp 2 --timeout 2400 -- bench/inplace.sh 64 /usr/bin/pool 2
set -uo pipefail
cd "$(dirname "$0")/.."
n=${1:-64}
prog=${2:-/usr/bin/pool}
j=${3:-2}
out=$PWD/build/inplace
rm -rf "$out"
mkdir -p "$out"
ROOT=build/roots/test.erofs
for mode in fresh inplace; do
    ip=0
    [ "$mode" = inplace ] && ip=1
    mkdir -p "$out/$mode-dump"
    t0=$(date +%s.%N)
    REWIND_HOME=$out/$mode-home REWIND_CHECK_INPLACE=$ip REWIND_TEST_STATE_DUMP=$out/$mode-dump \
        timeout 1200 build/rewind check --schedules "$n" -j "$j" --json --root "$ROOT" -- "$prog" \
        > "$out/$mode.json" 2> "$out/$mode.err"
    rc=$?
    t1=$(date +%s.%N)
    echo "$mode: check exit $rc in $(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.1f", b-a}') s"
    python3 -c 'import json,sys
for p in sys.argv[1:]:
    m = json.load(open(p))
    print(m["id"], m["trace_hash"], m["ram_hash"], m["outcome"], m["exit_code"], m["steps"])' \
        "$out/$mode-home"/runs/*/manifest.json | sort > "$out/$mode.runs"
done
python3 - "$out" <<'PY'
import json, os, sys
out = sys.argv[1]
def runs(mode):
    d = {}
    for line in open(os.path.join(out, mode + ".runs")):
        f = line.split()
        d[f[0]] = f[1:]
    return d
fr, ip = runs("fresh"), runs("inplace")
both = sorted(set(fr) & set(ip))
bad = [i for i in both if fr[i] != ip[i]]
print("runs: fresh %d, in place %d, both %d, differing %d" % (len(fr), len(ip), len(both), len(bad)))
for i in bad[:10]:
    print("  %s fresh   %s\n  %s inplace %s" % (i, " ".join(fr[i]), i, " ".join(ip[i])))
for mode in ("fresh", "inplace"):
    try:
        r = json.load(open(os.path.join(out, mode + ".json")))
        print("%s: tried %s found %s schedule %s deciding step %s probes %s explore %.1f s narrow %.1f s" % (
            mode, r.get("schedules_tried"), r.get("found"), r.get("schedule"), r.get("deciding_step"),
            r.get("probes"), r.get("explore_s", 0), r.get("narrow_s", 0)))
    except Exception as e:
        print("%s: no report (%s)" % (mode, e))
# dumps of the same fork
fd, idd = os.path.join(out, "fresh-dump"), os.path.join(out, "inplace-dump")
names = sorted(n[:-6] for n in os.listdir(fd) if n.endswith(".fresh"))
common = [n for n in names if os.path.exists(os.path.join(idd, n + ".inplace"))]
print("dumps: fresh %d, in place %d, same fork %d" % (len(names), len(os.listdir(idd)), len(common)))
def parts(path):
    """{when: {key: value}} with key = 'name offset' (or the page's pfn)."""
    d, cur = {}, None
    for line in open(path):
        f = line.split()
        if not f:
            continue
        if f[0] == "when":
            cur = d.setdefault(f[1], {})
            continue
        if f[0] in ("platform", "run"):
            cur[" ".join(f[:2])] = " ".join(f[2:])
        elif len(f) >= 3:
            cur[f[0] + " " + f[1]] = " ".join(f[2:])
        else:
            cur[" ".join(f)] = ""
    return d
# Host time, different in any two dumps and never seen by the guest (its
# CPUID has no TSC and no Hyper-V leaves, src/vmm/cpuid.c): the TSC, the
# Hyper-V VP runtime and reference counter, the LAPIC timer's current count.
HOST_TIME = {"msr 00000010", "msr 40000010", "msr 40000020", "lapic 0380"}
kinds = {}
stale = 0
shown = 0
for n in common:
    a, b = parts(os.path.join(fd, n + ".fresh")), parts(os.path.join(idd, n + ".inplace"))
    for when in ("restored", "end"):
        x, y = a.get(when, {}), b.get(when, {})
        keys = sorted(set(x) | set(y))
        diff = [k for k in keys if x.get(k) != y.get(k) and k not in HOST_TIME]
        stale += sum(1 for k in y if k.startswith("stale"))
        for k in diff:
            kinds.setdefault((when, k.split()[0]), []).append(n)
        if diff and shown < 6:
            shown += 1
            print("fork %s, %s: %d lines differ" % (n, when, len(diff)))
            for k in diff[:12]:
                print("   %-14s fresh   %s\n   %-14s inplace %s" % (k, x.get(k, "-"), "", y.get(k, "-")))
print("stale pages in the in-place dumps: %d" % stale)
for (when, kind), ns in sorted(kinds.items()):
    print("differs at %-8s %-8s in %d forks (first %s)" % (when, kind, len(set(ns)), ns[0]))
PY
