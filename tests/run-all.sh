#!/usr/bin/env bash
# run-all.sh: every test of the project (tests/README.md). Unit tests (pure
# modules, with sanitizers) run directly; system tests run through
# tools/kvm-host, which uses this machine's KVM when it runs guest kernels
# natively and a nested host VM otherwise. Ends with exactly one line
# "N passed, N failed, N skipped" (CI reads it); exits nonzero if anything
# failed.
#
# Invariants:
#  1. The closing line adds up the closing lines of every unit binary, of
#     tools/archcheck.sh, of the fuzz stage and of tests/system/run.sh.
#  2. A part that crashes, is killed, or exits nonzero without reporting a
#     failure (e.g. a sanitizer's report at exit) counts one more failure:
#     no crash is ever hidden by a tally printed before it.
set -uo pipefail
cd "$(dirname "$0")/.."
pass=0; failn=0; skipn=0
tally() { # tally FILE STATUS: add the counts of FILE's "N passed, N failed, N skipped" line
    local line p f s
    line=$(grep -E '^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' "$1" | tail -n 1)
    if [ -z "$line" ]; then
        failn=$((failn+1)); echo "  (no tally line, status $2: counted as one failure)"; return
    fi
    read -r p _ f _ s _ <<<"$line"
    pass=$((pass+p)); failn=$((failn+f)); skipn=$((skipn+s))
    if [ "$2" -ne 0 ] && [ "$f" -eq 0 ]; then
        failn=$((failn+1)); echo "  (exit status $2 with no failure counted: counted as one failure)"
    fi
}
log=$(mktemp); queue=""
# at: seconds since this script started, for the section lines (where the
# time goes: the build before it is make's)
at() { echo "(at ${SECONDS}s)"; }
pids=()
# on an early exit the host VMs started below stop too
stop_vms() { local p; for p in "${pids[@]}"; do pkill -TERM -P "$p" 2>/dev/null; kill "$p" 2>/dev/null; done; }
trap 'stop_vms; rm -f "$log" "$log".*; [ -z "$queue" ] || rm -rf "$queue"' EXIT
ujobs=${UNIT_JOBS:-$(nproc)}
case "$ujobs" in '' | *[!0-9]* | 0) echo "UNIT_JOBS=$ujobs: not a count" >&2; exit 2 ;; esac
# The host VMs start first (below), so that the unit, engine and fuzz stages
# run while they boot and take their first tests: the fuzzers run for a fixed
# time whatever the CPU gives them, and several unit tests wait on sockets,
# so the VMs fill those gaps instead of waiting for them. Their lines are
# shown after the stages that ran beside them.
# The system tests of one tier (tests/system/run.sh invariant 5): `make
# check` runs the vm tier, `make check-long` (REWIND_LONG=1) the long one.
# They run in REWIND_SYSTEST_JOBS copies of run.sh side by side, one host VM
# each, taking tests from one queue (run.sh invariant 6): a host VM's software
# CPU keeps one core busy, so on a 2-core machine two take about half the time
# of one. Default: one per core, at most 2, and only as many as 7 GiB each allows
# after 4 GiB kept for the unit binaries and fuzzers that run beside them.
nsh=${REWIND_SYSTEST_JOBS:-}
if [ -z "$nsh" ]; then
    avail=$(awk '/^MemAvailable:/ {print int(($2 / 1024 - 4096) / 7168)}' /proc/meminfo)
    nsh=$(nproc); [ "$nsh" -le 2 ] || nsh=2
    [ "${avail:-1}" -ge "$nsh" ] || nsh=${avail:-1}
    [ "$nsh" -ge 1 ] || nsh=1
fi
case "$nsh" in '' | *[!0-9]* | 0) echo "REWIND_SYSTEST_JOBS=$nsh: not a count" >&2; exit 2 ;; esac
if [ "${REWIND_LONG:-0}" = 1 ]; then
    vmhead="tier long (through tools/kvm-host, $nsh host VMs"
    tier=long limit=10800
else
    vmhead="tier vm (through tools/kvm-host, $nsh host VMs; tier long is make check-long's"
    tier=vm limit=4800 # a host VM's ceiling, not its budget (CI allows 90 min in all)
fi
vmstart=$SECONDS
pat=${SYSTEST:-.}
# the queue lives in the work tree, which every host VM shares writable
queue=$(mktemp -d "$PWD/build/systest-queue.XXXXXX")
# the list every host VM walks, made once here (run.sh, step 1)
REWIND_TIER=$tier REWIND_SYSTEST_LIST_ONLY=1 tests/system/run.sh "$pat" >"$queue/.list" ||
    { echo "tests/system/run.sh could not list the tests"; failn=$((failn+1)); }
for ((k = 0; k < nsh; k++)); do
    (
        REWIND_SYSTEST_QUEUE="$queue" REWIND_SYSTEST_LIST="$queue/.list" REWIND_TIER="$tier" \
            tools/kvm-host --mem 6144 --timeout "$limit" -- tests/system/run.sh "$pat" >"$log.$k" 2>&1
        echo $? >"$log.$k.rc"
        echo "$SECONDS" >"$log.$k.at"
    ) &
    pids+=($!)
done
# Tier unit (pure modules), then tier engine (the engine's paths in-process
# over fakes): docs/testing.md, "Tiers".
# They run UNIT_JOBS at a time (default: one per core; several wait on
# sockets or mkfs.erofs), and report in name order.
units=()
for t in build/unit/*_test build/engine/*_test; do [ -x "$t" ] && units+=("$t"); done
# in a subshell of its own, whose wait sees the unit binaries alone (not
# the host VMs started above)
(
    running=0
    for ((k = 0; k < ${#units[@]}; k++)); do
        if [ "$running" -ge "$ujobs" ]; then wait -n; running=$((running - 1)); fi
        ( "${units[$k]}" >"$log.u$k" 2>&1; echo $? >"$log.u$k.rc" ) &
        running=$((running + 1))
    done
    wait
)
for ((k = 0; k < ${#units[@]}; k++)); do
    t=${units[$k]}
    echo "== $(basename "$(dirname "$t")"): $(basename "$t")"
    tail -n 30 "$log.u$k"
    tally "$log.u$k" "$(cat "$log.u$k.rc" 2>/dev/null || echo 1)"
done
echo "== layout: tools/archcheck.sh (docs/architecture.md#the-layering-rule) $(at)"
tools/archcheck.sh >"$log" 2>&1; rc=$?
cat "$log"
tally "$log" $rc
# The engine tier's system tests (light: shell and the CLI) run beside the
# fuzzers, and report after them.
( REWIND_TIER=engine tests/system/run.sh "${SYSTEST:-.}" >"$log.eng" 2>&1; echo $? >"$log.eng.rc" ) &
engpid=$!
echo "== fuzz: every target replays its seeds, then fuzzes ${FUZZ_CHECK_S:-3} s (tests/fuzz/run.sh) $(at)"
tests/fuzz/run.sh "${FUZZ_CHECK_S:-3}" --check >"$log" 2>&1; rc=$?
cat "$log"
tally "$log" $rc
# The system tests that boot no guest (tier engine: the runner, the
# transcript tool, the SDKs outside rewind) ran here directly, beside the
# fuzzers, in both targets.
wait "$engpid"
echo "== system tests, tier engine (no guest: on this machine) $(at)"
cat "$log.eng"
tally "$log.eng" "$(cat "$log.eng.rc" 2>/dev/null || echo 1)"
echo "== system tests, $vmhead; started at ${vmstart}s) $(at)"
# progress: every shard's lines as they come (tail names the shard's file
# when it switches from one to the other)
for ((k = 0; k < nsh; k++)); do : >>"$log.$k"; done
tail -n +1 -f $(for ((k = 0; k < nsh; k++)); do echo "$log.$k"; done) &
tailpid=$!
wait "${pids[@]}"
pids=() # all ended: nothing for the trap to stop
sleep 1 # let tail print the last lines
kill "$tailpid" 2>/dev/null; wait "$tailpid" 2>/dev/null
for ((k = 0; k < nsh; k++)); do
    echo "== system tests, host VM $((k+1)) of $nsh: $(grep -E '^[0-9]+ passed' "$log.$k" | tail -n 1) (done at $(cat "$log.$k.at" 2>/dev/null)s)"
    tally "$log.$k" "$(cat "$log.$k.rc" 2>/dev/null || echo 1)"
    rm -f "$log.$k" "$log.$k.rc" "$log.$k.at"
done
echo "$pass passed, $failn failed, $skipn skipped"
[ $failn -eq 0 ]
