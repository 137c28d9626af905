# t_races.sh: memory-access schedule points (issue 31, docs/determinism.md
# "Memory-access points"): races with no system call in their window are
# found by check, a spin-wait progresses, runs stay deterministic, the
# negative twin is caught, and with the option off runs are those of before.


# The spin-wait exits 0 with --preempt memory, identically when replayed
# (watch's replay below equals the stored run); with the option off the
# same program never gives up the CPU: spin.
# tier: vm
test_spin_wait_progresses() {
    run_rw a run --root "$ROOT" --preempt memory --spin-limit 60 -- /usr/bin/race_spin_wait
    expect_rc 0
    expect_grep a.out 'spin-wait: result 499500'
    local id; id=$(run_id a.err)
    # the points are access events, and show's command line carries the option
    "$REWIND" events "$id" --kind exec > ex.out
    "$REWIND" events "$id" --kind access > ev.out || fail "events --kind access failed"
    [ "$(grep -c ' access pid ' ev.out)" -gt 10 ] || fail "few access points: $(head -3 ev.out)"
    expect_grep ev.out 'access pid [0-9/]* read 0x'
    run_rw s show "$id"
    expect_grep s.out -- '--preempt memory'
    run_rw c run --root "$ROOT" --spin-limit 8 -- /usr/bin/race_spin_wait
    expect_rc 117
    # watch gives the guest kernel's own single-step traps back to it
    # (debugreg.h invariant 4): the replay under watchpoints is the stored
    # run, and the flag's one write is caught at its line, by the setter
    # thread, inside a burst (watch.c invariant 5)
    local pid; pid=$(sed -n 's/^ *[0-9]*  exec pid \([0-9]*\)\/.*race_spin_wait.*/\1/p' ex.out | head -n 1)
    [ -n "$pid" ] || fail "no exec of race_spin_wait: $(head -3 ex.out)"
    run_rw w watch "$id" ready --pid "$pid"
    expect_rc 0
    expect_grep w.out 'the replay equals the stored run'
    expect_grep w.out '^1 write to 4 bytes at '
    expect_grep w.out "^ *[0-9]* *[0-9]* *0 -> 1 *setter+0x[0-9a-f]* (race_spin_wait.c:18)\$"
    # gdb resumes such a run too (test_gdb_on_preempt_runs): here the
    # spin-wait's setter stops at its flag's store, and the session's run
    # is the stored run
    command -v gdb >/dev/null || return 0 # t_gdb skips without it too
    local at; at=$(awk 'NR == 1 {print $1}' ev.out)
    set +e
    timeout -k 5 300 "$REWIND" gdb "$id" "$at" --pid "$pid" --verify -- -batch \
        -ex 'break race_spin_wait.c:18' -ex continue -ex 'print ready' -ex continue >g.out 2>g.err
    set -e
    expect_grep g.out 'hit Breakpoint 1, setter (arg=0x0) at tests/guest/race_spin_wait.c:18'
    expect_grep g.out '^\$1 = 0$'
    expect_grep g.err "trace [0-9a-f]* equal to run $id"
}

# gdb on a run made with --preempt memory (debug.c invariant 17,
# docs/determinism.md "The debugger on such runs"): the guest kernel's
# single-step bursts use the debugger's trap flag. burst_gdb's worker makes
# a point at its store, runs its burst, then computes on its own stack and
# calls mark(): the breakpoint there is hit only because the guest kernel
# tells the monitor where the burst ended (D3), and the session's run is
# the stored run because each trap of a burst is given back (D1, D2). Two
# negative twins open each hole: without the notice mark() is never
# reached; without the give-back the session's run is another.
# tier: vm
test_gdb_on_preempt_runs() {
    command -v gdb >/dev/null || skip "gdb is not installed (tools/deps.sh)"
    run_rw a run --root "$ROOT" --preempt memory --spin-limit 60 -- /usr/bin/burst_gdb
    expect_rc 0
    expect_grep a.out '^burst_gdb: result 124751$'
    local id; id=$(run_id a.err)
    "$REWIND" events "$id" --kind exec > ex.out
    "$REWIND" events "$id" --kind access > ev.out
    local pid at
    pid=$(sed -n 's/^ *[0-9]*  exec pid \([0-9]*\)\/.*burst_gdb.*/\1/p' ex.out | head -n 1)
    at=$(awk 'NR == 1 {print $1}' ev.out)
    [ -n "$pid" ] && [ -n "$at" ] || fail "no exec or no access point: $(head -3 ex.out ev.out)"
    local hole
    for hole in none notice keep; do
        set +e
        REWIND_TEST_HOLES=1 REWIND_TEST_HOLE_GDB_BURST=$hole timeout -k 5 300 "$REWIND" gdb "$id" "$at" \
            --pid "$pid" --verify --spin-limit 10 -- -batch -ex 'break mark' -ex continue -ex bt \
            -ex continue >"g-$hole.out" 2>"g-$hole.err"
        set -e
    done
    expect_grep g-none.out 'hit Breakpoint 1, 0x[0-9a-f]* in mark ()'
    expect_grep g-none.out '^#1  0x[0-9a-f]* in worker ()'
    expect_grep g-none.err "trace [0-9a-f]* equal to run $id"
    # twin D3: the worker runs unseen from its burst's end, past mark()
    expect_no_grep g-notice.out 'Breakpoint 1, '
    expect_grep g-notice.err "trace [0-9a-f]* equal to run $id"
    # twin D1: the guest's traps kept from it: another run
    expect_grep g-keep.err "DIFFERS from run $id"
    # the whole machine (the debug registers) is refused in one line (gdb
    # is told E01 and stays where it was)
    run_rw k gdb "$id" "$at" --kernel -- -batch -ex continue
    expect_grep k.err 'cannot be debugged as a whole machine (--kernel) yet'
}

# M9 (docs/determinism.md): a PCT stall of the thread that holds a lock
# or will set a flag does not end a correct spin-wait as spin: the spinner
# makes points through the stall, so virtual time reaches its end. Schedule
# 2 of each of these fixed twins stalls that thread while the other spins
# (without 60-stallpoints.patch both end as spin, exit 117).
# tier: vm
test_stall_is_no_false_spin() {
    local p
    for p in race_tas_lock_fixed race_handoff_flag_fixed; do
        run_rw "c-$p" check --schedules 2 -j 2 --no-where --root "$ROOT" --expect exit=0 -- "/usr/bin/$p"
        [ "$RC" -eq 0 ] || fail "$p: a schedule failed (exit $RC): $(tail -n 4 "c-$p.out" "c-$p.err" | tr '\n' '|')"
    done
}

# Negative twin (M9): with --test-hole mem-stall-host-time a stall counts
# (its siblings make points through it) only when the host's TSC says so.
# Schedule 2 over the job's steps, [start+1, start+1+horizon) as check
# draws it, stalls the lock holder while the other thread spins: without the
# hole the run exits 0, the same run twice; with it, runs of one spec end
# differently (spin in some, exit 0 in others). A spin run is never a
# reference, so the test compares the runs' ends itself.
# tier: vm
test_stall_hole_is_caught() {
    run_rw p run --root "$ROOT" --preempt memory -- /usr/bin/race_tas_lock_fixed
    expect_rc 0
    local id steps start; id=$(run_id p.err); steps=$(steps_of p.err)
    start=$("$REWIND" events "$id" --kind init --json |
        python3 -c 'import json,sys; print(min(e["step"] for e in json.load(sys.stdin) if e["aux"] == 1))')
    local w=(--schedule 2 --schedule-from $((start + 1)) --schedule-until $((steps + 1)))
    run_rw a run --root "$ROOT" --preempt memory --spin-limit 3 "${w[@]}" -- /usr/bin/race_tas_lock_fixed
    expect_rc 0
    run_rw b run --root "$ROOT" --preempt memory --spin-limit 3 "${w[@]}" -- /usr/bin/race_tas_lock_fixed
    expect_rc 0
    same_run a.err b.err || fail "two ids for one spec"
    [ "$(mf "$(run_id a.err)" trace_hash)" = "$(mf "$(run_id b.err)" trace_hash)" ] || fail "two traces"
    export REWIND_TEST_HOLES=1
    local i ends=""
    for i in $(seq 12); do # all alike by chance: about 2 in 2^12
        run_rw "h$i" run --root "$ROOT" --preempt memory --spin-limit 3 "${w[@]}" \
            --test-hole mem-stall-host-time -- /usr/bin/race_tas_lock_fixed
        ends="$ends $RC/$(steps_of "h$i.err")"
        [ "$(echo "$ends" | tr ' ' '\n' | sort -u | grep -c .)" -gt 1 ] && return 0
        grep -q 'DETERMINISM VIOLATION' "h$i.err" && return 0
    done
    fail "12 runs of one spec with the stall hole open all ended alike:$ends"
}

# Two hazards of bursts (memburst.c): an 8-byte store across a page
# boundary (one instruction, two taken pages: no livelock), and signals that
# land during bursts (no stray SIGTRAP); identical on a second run.
# tier: vm
test_bursts_across_pages_and_signals() {
    run_rw a run --root "$ROOT" --preempt memory --timeout 600 -- /usr/bin/memburst
    expect_rc 0
    expect_grep a.out 'memburst: crossing stores done, last [12]$'
    expect_grep a.out 'signals handled, worker alive'
    run_rw b run --root "$ROOT" --preempt memory --timeout 600 -- /usr/bin/memburst
    expect_rc 0
    same_run a.err b.err || fail "two ids for one spec"
    expect_no_grep b.err 'DETERMINISM VIOLATION'
}

# The lost update on a plain global is found by check (whose default is
# --preempt memory), and the failing schedule replays to the same failure;
# the fixed twin passes as many schedules; with --preempt off check finds
# nothing (the points are what reaches the race).
# tier: vm
test_lost_update_found() {
    run_rw c check --schedules 16 -j 2 --json --root "$ROOT" --expect exit=0 -- /usr/bin/race_lost_update
    expect_rc 1
    local bad; bad=$(failing_run c.out) || fail "check names no failing run: $(tail -5 c.out c.err)"
    echo "lost update: $(step_words c.out)" >&2
    run_rw r replay "$bad"
    expect_rc 0
    expect_grep r.out '^identical: '
    run_rw l log "$bad"
    expect_grep l.out 'counter [0-9]* of 200'
    expect_no_grep l.out 'counter 200 of 200'
    run_rw f check --schedules 16 -j 2 --no-where --root "$ROOT" --expect exit=0 -- /usr/bin/race_lost_update_fixed
    expect_rc 0
    run_rw o check --schedules 8 -j 2 --no-where --preempt off --root "$ROOT" --expect exit=0 -- /usr/bin/race_lost_update
    expect_rc 0
}

# --cpus N (docs/determinism.md, "CPUs the job sees"): the job sees N CPUs
# (nproc, sysfs, /proc/cpuinfo, /proc/stat; an affinity to any of them is
# taken) while one vCPU runs them; a Go program with GOMAXPROCS at its
# NumCPU and a CPU-bound goroutine per CPU finishes under memory-access
# points, the same twice. Part of the spec above 1 only; 65 is refused.
# tier: vm
test_cpus_seen() {
    local sh='nproc; cat /sys/devices/system/cpu/online; grep -c ^processor /proc/cpuinfo; grep -c "^cpu[0-9]" /proc/stat; taskset -c 3 nproc'
    run_rw a run --root "$ROOT" --cpus 4 -- sh -c "$sh"
    expect_rc 0
    [ "$(tr '\n' ' ' < a.out)" = "4 0-3 4 4 4 " ] || fail "the job saw: $(tr '\n' ' ' < a.out)"
    run_rw s show "$(run_id a.err)"
    expect_grep s.out -- '--cpus 4'
    run_rw o run --root "$ROOT" -- sh -c 'nproc; cat /sys/devices/system/cpu/online'
    [ "$(tr '\n' ' ' < o.out)" = "1 0 " ] || fail "without --cpus the job saw: $(tr '\n' ' ' < o.out)"
    run_rw one run --root "$ROOT" --cpus 1 -- sh -c 'nproc; cat /sys/devices/system/cpu/online'
    same_run o.err one.err || fail "--cpus 1 changed the id"
    run_rw x run --root "$ROOT" --cpus 65 -- /bin/true
    expect_rc 2
    expect_grep x.err -- '--cpus takes 1 to 64: 65'
    # the epoch on which the Go program did not finish before M10 (its
    # goroutines re-faulted on their own buffers: docs/determinism.md)
    local go=(--cpus 4 --preempt memory --epoch 2026-12-04 --timeout 600)
    run_rw g run --root "$ROOT" "${go[@]}" -- /usr/bin/gocpus
    expect_rc 0
    expect_grep g.out '^cpus 4 gomaxprocs 4$'
    expect_grep g.out '^done [0-9a-f]*$'
    run_rw h run --root "$ROOT" "${go[@]}" -- /usr/bin/gocpus
    expect_rc 0
    same_run g.err h.err || fail "two ids for one spec"
    expect_no_grep h.err 'DETERMINISM VIOLATION'
    cmp -s g.out h.out || fail "two outputs"
}

# M10: threads that compute on pages of their own make no points there.
# private (2 threads, 40 rounds over 16 pages each, a yield between rounds,
# so each round's pages are taken back) exits with few points: 417 in the
# test host, nearly all on the stack pages their creator set up; before
# M10 it made a point every few instructions (555,959 steps and a 300-s
# timeout).
# tier: vm
test_private_pages_make_no_points() {
    run_rw a run --root "$ROOT" --preempt memory --timeout 300 -- /usr/bin/private
    expect_rc 0
    expect_grep a.out '^private: [0-9a-f]* [0-9a-f]*$'
    "$REWIND" events "$(run_id a.err)" --kind access > ev.out
    local n; n=$(grep -c ' access pid ' ev.out || true)
    [ "$n" -gt 0 ] && [ "$n" -lt 2000 ] || fail "$n access points (M10: its pages are its own)"
}

# M10 over more specs: the Go program of test_cpus_seen finishes at several
# seeds and epochs (each interleaves its goroutines differently; before
# M10 some never finished), with few points on its buffers' pages.
# tier: long
test_cpus_go_specs() {
    local s e
    for s in 0 1 2 3; do
        for e in 2026-12-03 2026-12-04; do
            run_rw "g$s-$e" run --root "$ROOT" --cpus 4 --preempt memory --seed "$s" --epoch "$e" \
                --timeout 600 -- /usr/bin/gocpus
            expect_rc 0
            expect_grep "g$s-$e.out" '^done [0-9a-f]*$'
        done
    done
}

# Negative twin (M4): burst lengths from the host's TSC make runs of one
# spec differ, and the determinism check names a step.
# tier: vm
test_mem_hole_is_caught() {
    export REWIND_TEST_HOLES=1
    hole_caught h 4 --root "$ROOT" --preempt memory --test-hole mem-host-time -- /usr/bin/race_lost_update
}

# Negative twin (M7): a window's point bound from the host's TSC makes the
# spin-wait's runs differ (its yields move), and the check names a step.
# tier: vm
test_window_hole_is_caught() {
    export REWIND_TEST_HOLES=1
    hole_caught h 4 --root "$ROOT" --preempt memory --test-hole mem-window-host-time -- /usr/bin/race_spin_wait
}

# Negative twin of the wait limit (docs/determinism.md, "A guest that
# waits"): the lock-order deadlock stops at a step chosen by the host's TSC.
# tier: vm
test_wait_hole_is_caught() {
    run_rw a run --root "$ROOT" --preempt memory -- /usr/bin/race_lock_order
    expect_rc 119
    expect_grep a.err 'no process ran for a day of virtual time'
    export REWIND_TEST_HOLES=1
    hole_caught h 4 --root "$ROOT" --preempt memory --test-hole wait-host-time -- /usr/bin/race_lock_order
}

# events_digest RUN: the number of non-console events of RUN and a hash of
# them (the console holds the kernel's own boot messages, which name its
# size); steps, events and output together are what M5 keeps.
events_digest() {
    "$REWIND" events "$1" --json | python3 -c '
import hashlib, json, sys
m = hashlib.sha256(); n = 0
for x in json.load(sys.stdin):
    if x.get("kind") == "console":
        continue
    m.update(json.dumps(x, sort_keys=True).encode()); n += 1
print(n, m.hexdigest()[:16])'
}

# M5: with the option off a threaded run has the steps, the events and the
# output it had with the kernel before memory-access points (figures taken
# with that kernel, 5cd9624bb90e..., on 2026-12-02: steps, non-console
# events and their digest, md5 of the output), no access event and no
# "preempt" in its spec; with it on the same program's run is another (its
# own id).
# tier: vm
test_preempt_off_keeps_runs() {
    local p want got
    for p in "race_check_then_act 48 31 03ceba6485078e0d 55cdf91d" "handoff 156 234 49f95f8e8bcd7324 3d995438"; do
        set -- $p
        run_rw "o-$1" run --root "$ROOT" -- "/usr/bin/$1"
        expect_rc 0
        want="$2 $3 $4 $5"
        got="$(steps_of "o-$1.err") $(events_digest "$(run_id "o-$1.err")") $(md5sum < "o-$1.out" | cut -c1-8)"
        [ "$got" = "$want" ] || fail "$1 with the option off: steps, events, digest, output $got; before: $want"
    done
    run_rw a run --root "$ROOT" -- /usr/bin/race_check_then_act
    expect_rc 0
    local id; id=$(run_id a.err)
    "$REWIND" events "$id" --kind access > ev.out
    [ ! -s ev.out ] || fail "access events with the option off: $(head -3 ev.out)"
    grep -q '"preempt"' "$REWIND_HOME/runs/$id/spec.json" && fail "spec names preempt"
    run_rw b run --root "$ROOT" --preempt memory -- /usr/bin/race_check_then_act
    [ "$(run_id b.err)" != "$id" ] || fail "the option did not change the id"
    grep -q '"preempt":"memory"' "$REWIND_HOME/runs/$(run_id b.err)/spec.json" ||
        fail "spec lacks preempt: $(cat "$REWIND_HOME/runs/$(run_id b.err)/spec.json")"
    run_rw u run --root "$ROOT" --preempt sometimes -- /bin/true
    expect_rc 2
    expect_grep u.err '--preempt takes memory or off'
}

# failing_run FILE: the failing run's id in check --json's report FILE: the
# narrowed one, or the failing schedule's own (schedule 0's when it fails:
# nothing to narrow).
failing_run() {
    python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert r["found"]; print(r["failing_run"]["id"] or r["failing"]["id"])' "$1"
}
step_words() {
    python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print("schedule", r.get("schedule"), "deciding step", r.get("deciding_step"))' "$1"
}

# Every race program of the set is found by check --schedules 64 -j 2 and
# its failing run replays to the same failure; every fixed twin passes 64.
race_found() {
    local p=$1
    run_rw "c-$p" check --schedules 64 -j 2 --json --no-where --root "$ROOT" --expect exit=0 -- "/usr/bin/$p"
    [ "$RC" -eq 1 ] || fail "$p: not found (exit $RC): $(tail -3 "c-$p.err")" || return 1
    local bad; bad=$(failing_run "c-$p.out") || fail "$p: no failing run named" || return 1
    echo "$p: $(step_words "c-$p.out")" >&2
    run_rw "r-$p" replay "$bad"
    [ "$RC" -eq 0 ] || fail "$p: the failing run does not replay: $(tail -3 "r-$p.err")" || return 1
    run_rw "f-$p" check --schedules 64 -j 2 --no-where --root "$ROOT" --expect exit=0 -- "/usr/bin/${p}_fixed"
    [ "$RC" -eq 0 ] || fail "${p}_fixed failed a schedule (exit $RC): $(tail -3 "f-$p.out")"
}

# races_found NAME...: race_found for each; fails naming every one not found.
races_found() {
    local p missed=""
    for p in "$@"; do
        race_found "$p" 2>>missed.txt || missed="$missed $p"
    done
    [ -z "$missed" ] || fail "not found or not fixed:$missed: $(cat missed.txt)"
}

# tier: long
test_races_memory() {
    races_found race_lost_update race_check_then_act race_use_before_init race_publish
}

# tier: long
test_races_locks() {
    races_found race_double_checked race_two_sections race_lock_order race_tas_lock
}

# tier: long
test_races_spins() {
    races_found race_aba_stack race_handoff_flag race_counter_barrier race_pool_shutdown || return 1
    run_rw s check --schedules 8 --root "$ROOT" --expect exit=0 -- /usr/bin/race_spin_wait
    expect_rc 0
}

# With the option on, a loop that touches no page another thread shares
# still ends as spin, and the message says why.
# tier: long
test_spin_without_sharing_still_spins() {
    run_rw r run --root "$ROOT" --preempt memory --spin-limit 5 -- /usr/bin/spin
    expect_rc 117
    expect_grep r.err 'spinning in user mode at 0x.*(--preempt memory: it touches no page another thread shares'
}
