#!/usr/bin/env bash
# bench/all.sh: every benchmark of issue 17 in one command, and one table of
# figure, anchor, ratio and goal, from which the top of bench/RESULTS.md is
# regenerated (everything below the marker line there is the hand-written
# history, kept as it is).
#   In one test host session (tools/kvm-host --smp 2; KVMH=/work/notes/kvmh
#   to go through the slot limiter): bench/boot.sh (anchor: QEMU microvm),
#   bench/determinism.sh (anchor: the same program run directly),
#   bench/seek.sh (anchor: a full replay), bench/fork.sh (anchor: the same
#   fork with the parent's trace prefix copied in), bench/cadence.sh (anchor:
#   the fixed keyframe cadence), bench/step.sh (anchor: the bare
#   exit of kvm-probe), bench/check.sh's inside part (anchor: one process per
#   schedule, as check worked before its warm workers).
#   On this machine: bench/store.sh (anchor: the hash alone) and
#   bench/check.sh's native part (anchor: rerunning the pool natively).
# Usage: bench/all.sh            run everything, print the table, rewrite RESULTS.md
#        BENCH_QUICK=1 bench/all.sh   the same with every part smaller (boot 1
#                                round, 20,000 clock calls, primes below 10^6,
#                                2 seeks, 5,000-call steps, check 32 schedules)
#        bench/all.sh --table    only the table, from the last run's outputs
set -euo pipefail
cd "$(dirname "$0")/.."
out=$PWD/build/bench-all
if [ "${BENCH_ALL_INSIDE:-}" = 1 ]; then # inside the test host
    mkdir -p "$out"
    run() { local name=$1; shift; echo "== $name: $*"; "$@" >"$out/$name.txt" 2>"$out/$name.err" || echo "$name failed"; }
    if [ "${BENCH_QUICK:-}" = 1 ]; then # the size knob: every part, smaller
        run boot bench/boot.sh 1
        run determinism env CLOCK_CALLS=20000 PRIMES_BELOW=1000000 bench/determinism.sh
        run seek bench/seek.sh 2
        run fork bench/fork.sh 100
        run cadence bench/cadence.sh
        run step bench/step.sh 5000
        run check-inside env BENCH_CHECK_INSIDE=1 bench/check.sh 32
    else
        run boot bench/boot.sh 3
        run determinism bench/determinism.sh
        run seek bench/seek.sh 5
        run fork bench/fork.sh 100
        run cadence bench/cadence.sh
        run step bench/step.sh
        run check-inside env BENCH_CHECK_INSIDE=1 bench/check.sh 64
    fi
    exit 0
fi
if [ "${1:-}" != --table ]; then
    mkdir -p "$out"
    # BENCH_ALL_DONE=1: the test host part ran already (its outputs are in $out)
    if [ "${BENCH_ALL_DONE:-}" != 1 ]; then
        rm -f "$out"/*.txt "$out"/*.err
        make -s build/rewind build/rewind-init build/tools/kvm-probe build/roots/test.erofs
        BENCH_ALL_INSIDE=1 ${KVMH:-tools/kvm-host} --smp 2 --timeout 7200 --env BENCH_ALL_INSIDE \
            --env BENCH_QUICK -- bench/all.sh
    fi
    bench/store.sh >"$out/store.txt" 2>"$out/store.err" || echo "store failed"
    BENCH_CHECK_DONE=1 bench/check.sh "$([ "${BENCH_QUICK:-}" = 1 ] && echo 32 || echo 64)" >"$out/check.txt" 2>"$out/check.err" || echo "check failed"
fi
python3 - "$out" bench/RESULTS.md "$(git rev-parse --short HEAD 2>/dev/null || echo '?')" <<'PY'
import os, re, statistics, sys, datetime
out, results, commit = sys.argv[1], sys.argv[2], sys.argv[3]
def text(name):
    p = os.path.join(out, name + ".txt")
    return open(p).read() if os.path.exists(p) else ""
def num(pat, s, conv=float):
    m = re.search(pat, s)
    return conv(m.group(1)) if m else None
rows = []
def row(figure, value, unit, anchor_name, anchor, goal, ratio=None, better="lower", note=""):
    if ratio is None and value is not None and anchor:
        ratio = value / anchor
    rows.append((figure, value, unit, anchor_name, anchor, ratio, goal, note))
b = text("boot")
row("boot: rewind process (ms, median)", num(r"median: rewind .*? process (\d+) ms", b), "ms",
    "QEMU microvm process", num(r"qemu microvm process (\d+) ms \(", b), "ratio <= 1")
d = text("determinism")
row("cpu-bound job in rewind (s)", num(r"in rewind ([\d.]+) s", d), "s", "run directly",
    num(r"direct ([\d.]+) s", d), "ratio <= 1.2")
c = text("check")
w2 = num(r"warm workers, -j 2: \d+ schedules in [\d.]+ s \(([\d.]+) schedules/min", c)
w1 = num(r"warm workers, -j 1: \d+ schedules in [\d.]+ s \(([\d.]+) schedules/min", c)
c2 = num(r"one process per schedule, restored from the store, -j 2: \d+ schedules in [\d.]+ s \(([\d.]+) schedules/min", c)
same = re.search(r"identical \(timings aside\): (\w+)", c)
row("check pool-fixed, warm -j 2 (schedules/min)", w2, "/min", "one process per schedule, -j 2", c2,
    "ratio >= 4", note="reports identical: %s" % (same.group(1) if same else "?"))
row("check pool-fixed, warm -j 2 (schedules/min)", w2, "/min", "warm -j 1", w1,
    "ratio >= 1.6 (80% of linear)")
f2 = num(r"a fresh VM per schedule, -j 2: \d+ schedules in [\d.]+ s \(([\d.]+) schedules/min", c)
f1 = num(r"a fresh VM per schedule, -j 1: \d+ schedules in [\d.]+ s \(([\d.]+) schedules/min", c)
row("check pool-fixed, VM restored in place, -j 1 (schedules/min)", w1, "/min",
    "a fresh VM per schedule, -j 1", f1, "higher is better", better="higher")
row("check pool-fixed, VM restored in place, -j 2 (schedules/min)", w2, "/min",
    "a fresh VM per schedule, -j 2", f2, "higher is better", better="higher")
found = num(r"found and narrowed \(([\d.]+) s\)", c)
crashes = re.search(r"native, for as long as check found and narrowed \(([\d.]+) s\): (\d+) runs, (\d+) crashes", c)
row("check finds + narrows the pool race (s)", found, "s", "native reruns, same time: crashes",
    float(crashes.group(3)) if crashes else None, "found (native: 0 crashes)", ratio=float("nan"),
    note="%s native runs" % (crashes.group(2) if crashes else "?"))
s = text("seek")
full = num(r"full replay from boot: ([\d.]+) s", s)
seeks = [float(x) for x in re.findall(r"^seek to step \d+: ([\d.]+) s", s, re.M)]
rest = [float(x) for x in re.findall(r"^seek to step .* restore ([\d.]+) s \(", s, re.M)]
nocache = num(r"seek without the keyframe cache to step \d+: ([\d.]+) s", s)
ms = statistics.median(seeks) if seeks else None
mr = statistics.median(rest) if rest else None
row("seek to a random step, 100k-step run (s, median)", ms, "s", "full replay", full, "ratio <= 0.05")
row("restore within a seek (s, median)", mr, "s", "the seek", ms, "ratio <= 0.20")
row("seek, median (s)", ms, "s", "a seek without the keyframe cache", nocache, "lower is better")
kf = re.search(r"keyframes: (\d+) taken, (\d+) dirty pages: capture ([\d.]+) us per dirty page; hash \+ zstd -1 of the same pages alone ([\d.]+) us", s)
row("keyframe capture per dirty page (us)", float(kf.group(3)) if kf else None, "us",
    "hash + zstd -1 of the page alone", float(kf.group(4)) if kf else None, "ratio <= 2",
    note="%s keyframes, %s dirty pages" % (kf.group(1), kf.group(2)) if kf else "")
fk = text("fork")
fa = re.search(r"^fork \d+ before the end \(step \d+\):\s+after\s+(\d+) bytes.*before\s+(\d+) bytes", fk, re.M)
row("fork 100 steps before the end, 100k-step run (bytes on disk)", float(fa.group(1)) if fa else None,
    "B", "the fork with its parent's trace copied", float(fa.group(2)) if fa else None, "< 20000 bytes")
cd = text("cadence")
cr = re.search(r"replayed stretches, summed: fixed ([\d.]+) s, adaptive ([\d.]+) s", cd)
row("cadence: replay of the page-heavy stretches, adaptive (s)", float(cr.group(2)) if cr else None,
    "s", "fixed cadence (every 4,096 steps)", float(cr.group(1)) if cr else None,
    "lower is better", note=("run ids: the same" if "run ids: the same" in cd else "run ids: ?"))
st = text("step")
ex = num(r"bare exit \(kvm-probe\): ([\d.]+) us", st)
mon = num(r"clockloop \d+: \d+ steps; per step [\d.]+ us = inside KVM_RUN [\d.]+ us \+ monitor ([\d.]+) us", st)
row("monitor's work per step (us)", mon, "us", "bare exit round trip", ex, "ratio <= 0.10",
    note="keyframe captures and REWIND_TIMING's anchor included")
mon0 = num(r"--no-keyframes: \d+ steps; per step [\d.]+ us = inside KVM_RUN [\d.]+ us \+ monitor ([\d.]+) us", st)
row("monitor's work per step, --no-keyframes (us)", mon0, "us", "bare exit round trip", ex, "ratio <= 0.10",
    note="the step path alone")
g = text("store")
h = num(r"SHA-256 libcrypto, reused ctx \(store\)\s+(\d+) MB/s", g)
sec = g.split("store, random pages")[0]
row("ingest: new keyframe pages, text (MB/s per core)", num(r"put_batch, new pages\s+(\d+) MB/s", sec),
    "MB/s", "SHA-256 alone", h, ">= 1000 MB/s", better="higher")
row("ingest: pages already stored (MB/s per core)", num(r"put_batch, pages already present\s+(\d+) MB/s", sec),
    "MB/s", "SHA-256 alone", h, ">= 1300 MB/s", better="higher")
row("restore read: load, text (MB/s per core)", num(r"load \(restore: own checksummed frames\)\s+(\d+) MB/s", sec),
    "MB/s", "get + verify (re-hash)", num(r"get \+ verify\s+(\d+) MB/s", sec), "higher is better", better="higher")
def f(v):
    if v is None: return "n/a"
    if isinstance(v, float) and v != v: return "-"
    return ("%.3g" % v) if abs(v) < 100 else "%.0f" % v
lines = ["| figure | measured | anchor | anchor's figure | ratio | goal | note |",
         "|---|---|---|---|---|---|---|"]
for fig, v, unit, an, a, r, goal, note in rows:
    lines.append("| %s | %s | %s | %s | %s | %s | %s |" % (fig, f(v), an, f(a), f(r), goal, note))
table = "\n".join(lines)
print(table)
marker = "<!-- bench/all.sh writes everything above this line; the history below is kept -->"
old = open(results).read()
if marker in old:
    hist = old.split(marker, 1)[1]
else:  # the first time: the hand-written file, without its title, becomes the history
    hist = "\n" + (old.split("\n", 1)[1] if old.startswith("# Benchmark results") else old)
head = ("# Benchmark results\n\n## Summary: `bench/all.sh` (%s, commit %s)\n\n"
        "Every figure beside its anchor, measured side by side in one run (the test host\n"
        "figures in one `tools/kvm-host --smp 2` session, the store's on this machine).\n"
        "Each script's full output is in build/bench-all/; the sections below are the\n"
        "history, written by hand.\n\n" % (datetime.date.today().isoformat(), commit))
open(results, "w").write(head + table + "\n\n" + marker + hist)
PY
