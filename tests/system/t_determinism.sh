# Determinism: the same inputs give the same run, step for step; each check
# has a negative twin that opens one hole on purpose and sees it fail.
# A real run's id is pinned run to run (the same inputs, the same id), not as
# a literal: it hashes the kernel, init and root image builds, which differ
# between machines. tests/unit/golden_test.c pins the ids of fixed specs.

manifest_fields() { # manifest_fields RUN-ID FIELD...: the values, space-separated
    python3 -c 'import json,sys; m=json.load(open(sys.argv[1])); print(" ".join(str(m[f]) for f in sys.argv[2:]))' \
        "$REWIND_HOME/runs/$1/manifest.json" "${@:2}"
}

# tier: vm
test_demo_is_byte_identical() {
    for i in 1 2 3; do run_rw r$i run --root "$ROOT" -- /usr/bin/demo; expect_rc 0; done
    cmp r1.out r2.out || fail "run 2 printed something else"
    cmp r1.out r3.out || fail "run 3 printed something else"
    same_run r1.err r3.err
    [ "$(steps_of r1.err)" = "$(steps_of r3.err)" ] || fail "step counts differ"
    expect_no_grep r3.err 'DETERMINISM VIOLATION'
    # the second clock reading is 1.00x s after the first, in virtual time
    python3 - r1.out <<'PY' || fail "second time is not 1.00x s after the first: $(cat r1.out)"
import sys
t = [float(l.split()[1]) for l in open(sys.argv[1]) if l.startswith("time ")]
d = t[1] - t[0]
sys.exit(0 if 1.0 <= d < 1.01 else 1)
PY
}

# tier: vm
test_seed_changes_random_and_stack() {
    run_rw a run --root "$ROOT" -- /usr/bin/demo
    expect_rc 0
    run_rw b run --root "$ROOT" --seed 1 -- /usr/bin/demo
    expect_rc 0
    local ia ib; ia=$(run_id a.err); ib=$(run_id b.err)
    [ "$(grep random a.out)" != "$(grep random b.out)" ] || fail "same random number with another seed"
    [ "$(grep stack a.out)" != "$(grep stack b.out)" ] || fail "same stack address with another seed"
    [ "$ia" != "$ib" ] || fail "same run id with another seed"
    [ "$(grep '^time' a.out | head -1)" = "$(grep '^time' b.out | head -1)" ] || fail "epoch differs"
}

# tier: vm
test_epoch_is_the_clock() {
    run_rw r run --root "$ROOT" --epoch 2030-01-02 -- date -u +%Y-%m-%d
    expect_rc 0
    expect_file r.out 2030-01-02
}

# tier: vm
test_threads_handoff_10_runs() {
    for i in $(seq 1 10); do
        run_rw h$i run --root "$ROOT" -- /usr/bin/handoff
        [ "$RC" -eq 0 ] || fail "run $i: status $RC"
        cmp h1.out h$i.out || fail "run $i printed another interleaving"
    done
    expect_grep h1.out '^done 100$'
}

# tier: vm
test_user_rdtsc_is_virtual() {
    run_rw a run --root "$ROOT" -- /usr/bin/rdtsc
    expect_rc 0
    grep -Eq '^rdtsc [0-9]+ [0-9]+ rdtscp [0-9]+ aux [0-9]+$' a.out || fail "no rdtsc line: $(cat a.out a.err)"
    run_rw b run --root "$ROOT" -- /usr/bin/rdtsc
    [ "$RC" -eq 0 ] || fail "rdtsc program failed: $(cat b.out b.err)"
    cmp a.out b.out || fail "rdtsc differs between runs: $(cat a.out b.out)"
}

# tier: long
test_differential_5_runs() {
    local id=""
    for i in 1 2 3 4 5; do
        run_rw d$i run --root "$ROOT" -- sh -c 'for i in 1 2 3; do echo $i; sleep 0.1; done; cat /proc/uptime'
        expect_rc 0
        expect_no_grep d$i.err 'DETERMINISM VIOLATION'
        local now_id; now_id=$(run_id d$i.err)
        [ -z "$id" ] || [ "$now_id" = "$id" ] || fail "run id changed"
        id=$now_id
        local now; now=$(manifest_fields "$id" trace_hash ram_hash steps status)
        [ -z "${first:-}" ] || [ "$now" = "$first" ] || fail "run $i: $now vs $first"
        first=$now
        cmp d1.out d$i.out || fail "output differs"
    done
}

# tier: vm
test_test_holes_refused_outside_tests() {
    REWIND_TEST_HOLES= run_rw r run --test-hole host-tsc --root "$ROOT" -- true
    expect_rc 2
    expect_grep r.err 'only for rewind'
}

# Negative twins: each hole must make the differential check fail and say
# at which step the runs part.
hole_twin() { # hole_twin HOLE PROGRAM...
    local hole=$1; shift
    export REWIND_TEST_HOLES=1
    local violated=0
    for i in 1 2 3 4; do
        # a machine with a hole open may also hang: bound each run
        run_rw n$i run --timeout 60 --test-hole "$hole" --root "$ROOT" -- "$@"
        if grep -q 'DETERMINISM VIOLATION' n$i.err; then violated=$i; break; fi
    done
    [ $violated -gt 0 ] || fail "hole $hole: 4 runs and the check saw no difference"
    grep 'DETERMINISM VIOLATION' n$violated.err | grep -q 'step' || fail "no step named: $(cat n$violated.err)"
    local id; id=$(run_id n$violated.err)
    run_rw dv diverge "$id" "$(ls "$REWIND_HOME/runs" | grep "^$id~" | head -1)"
    [ "$RC" -eq 1 ] || fail "diverge did not report a difference (rc $RC): $(cat dv.out dv.err)"
}

# tier: vm
test_hole_host_tsc_is_caught() { hole_twin host-tsc /usr/bin/rdtsc; }
# tier: vm
test_hole_host_rng_is_caught() { hole_twin host-rng /usr/bin/demo; }
# tier: vm
test_hole_timer_at_host_exit_is_caught() { hole_twin timer-at-host-exit /usr/bin/handoff; }

# tier: vm
test_diverge_identical_runs() {
    run_rw a run --root "$ROOT" --state-log 1000 -- /usr/bin/demo
    run_rw b run --root "$ROOT" --state-log 1000 --seed 3 -- /usr/bin/demo
    run_rw d diverge "$(run_id a.err)" "$(run_id b.err)"
    expect_rc 1
    expect_grep d.out 'traces part at event'
    expect_grep d.out 'registers first differ at step'
}
