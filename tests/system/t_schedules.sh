# Schedules: perturbed runs are as deterministic as any other; a fork is its
# parent through the fork step; check finds the pool's race, narrows it to
# one step, and the runs it names replay to their outcomes.

JOB='for i in 1 2 3; do /usr/bin/handoff | tail -n 1; echo $i > /tmp/f$i; sleep 0.01; done'

# tier: vm
test_schedule_is_deterministic_and_changes_the_run() {
    run_rw a run --root "$ROOT" --schedule 3 -- sh -c "$JOB"
    expect_rc 0
    run_rw c run --root "$ROOT" -- sh -c "$JOB"
    expect_rc 0
    local ia ic; ia=$(run_id a.err); ic=$(run_id c.err)
    [ "$ia" != "$ic" ] || fail "schedule 3 has schedule 0's id"
    [ "$(mf "$(run_id a.err)" trace_hash)" != "$(mf "$(run_id c.err)" trace_hash)" ] ||
        fail "schedule 3 perturbed nothing"
    # show names the schedule, and its command line recreates the run: the
    # same spec again is the same run, compared with the stored one
    run_rw s show "$ia"
    expect_rc 0
    expect_grep s.out '^schedule: 3 (random) at steps \[0, end)'
    local cmd; cmd=$(sed -n 's/^command:  rewind //p' s.out)
    [ -n "$cmd" ] || fail "show prints no command line: $(cat s.out)"
    eval "set -- $cmd"
    run_rw again "$@"
    expect_rc 0
    same_run again.err a.err || fail "show's command gives another run: $cmd"
    expect_no_grep again.err 'DETERMINISM VIOLATION'
}

# tier: vm
test_fork_is_identical_through_its_step() {
    run_rw a run --root "$ROOT" --keyframe-every 300 -- sh -c "$JOB"
    local id; id=$(run_id a.err); local steps; steps=$(steps_of a.err)
    for k in $((steps / 3)) $((2 * steps / 3)); do
        run_rw f fork "$id" "$k" --schedule 5
        local fid; fid=$(run_id f.err)
        [ -n "$fid" ] || fail "fork at $k: $(cat f.err)"
        "$REWIND" events "$id" --to "$k" --json > pa.json
        "$REWIND" events "$fid" --to "$k" --json > pf.json
        cmp -s pa.json pf.json || fail "fork at $k differs from its parent before step $k"
        [ "$(mf "$fid" parent)" = "$id" ] || fail "fork's parent is $(mf "$fid" parent)"
        # a fork is a pure function of its spec: replayed from boot, identical
        # (the first fork's replay shows it)
        if [ "$k" -eq $((steps / 3)) ]; then
            run_rw r replay "$fid"
            [ "$RC" -eq 0 ] || fail "fork at $k does not replay from boot: $(cat r.out r.err)"
        fi
    done
    run_rw t ls --forks-of "$id"
    [ "$(grep -c 'forked at step' t.out)" -eq 2 ] || fail "ls --forks-of: $(cat t.out)"
    expect_grep t.out "forked at step $((steps / 3)) "
}

# tier: vm
test_fork_schedule0_is_the_parent() {
    run_rw a run --root "$ROOT" -- sh -c "$JOB"
    expect_rc 0
    run_rw f fork "$(run_id a.err)" 100
    expect_rc 0
    same_run f.err a.err || fail "an unperturbed fork is another run"
    expect_no_grep f.err 'DETERMINISM VIOLATION'
}

# tier: long
test_check_race_free_program() {
    run_rw c check --schedules 6 -j 2 --root "$ROOT" -- /usr/bin/handoff
    [ "$RC" -eq 0 ] || fail "check exit $RC on a race-free program: $(tail -n 5 c.out c.err)"
    expect_grep c.out '^no difference: 6 schedules'
}

# A check that --timeout stops before all its schedules ran is no pass: it
# says how many ran and exits 124, never "no difference" with 0.
# tier: long
test_check_stopped_by_timeout_is_no_pass() {
    run_rw s check --schedules 1000 -j 2 --timeout 30 --root "$ROOT" -- /usr/bin/handoff
    [ "$RC" -eq 124 ] || fail "check stopped by --timeout exited $RC: $(tail -n 5 s.out s.err)"
    expect_grep s.out '^stopped: [0-9]* of 1000 schedules ran before --timeout or a signal'
    expect_no_grep s.out '^no difference'
}

# tier: vm
test_check_finds_and_narrows_the_pool_race() {
    run_rw c check --schedules 64 -j 2 --json --root "$ROOT" -- /usr/bin/pool
    [ "$RC" -eq 1 ] || fail "check exit $RC: $(tail -n 5 c.err) $(cat c.out)"
    python3 - c.out > ids <<'PY' || fail "report: $(cat c.out)"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["found"] and r["narrowed"], r
assert r["window"][1] - r["window"][0] >= 1
assert r["passing_run"]["outcome"] == "exited" and r["passing_run"]["exit_code"] == 0, r
f = r["failing_run"]
assert (f["outcome"], f["exit_code"]) != ("exited", 0), r
print(r["passing_run"]["id"], r["failing_run"]["id"], r["schedule"], r["deciding_step"],
      r["window"][0], r["window"][1])
PY
    read -r pass failr sched step w0 w1 < ids
    echo "pool: schedule $sched, deciding step $step" >&2
    run_rw p replay "$pass"
    [ "$RC" -eq 0 ] || fail "the passing run does not replay: $(cat p.out)"
    run_rw q replay "$failr"
    [ "$RC" -eq 0 ] || fail "the failing run does not replay: $(cat q.out)"
    # show names the failing run and its perturbation: the schedule's
    # actions over the narrowed window, its bursts from the job's start on
    run_rw s show "$failr"
    expect_rc 0
    expect_grep s.out "^run: *$failr\$"
    expect_grep s.out "^schedule: $sched ([a-z]*) at steps \[$w0, $w1), its bursts at \[[0-9]*, end)\$"
}

# tier: long
test_check_fixed_pool_passes() {
    run_rw c check --schedules 16 -j 2 --root "$ROOT" -- /usr/bin/pool-fixed
    [ "$RC" -eq 0 ] || fail "the fixed pool: check exit $RC: $(tail -n 5 c.out)"
    grep -q '^no difference: 16 schedules ended like schedule 0' c.out c.err ||
        fail "the fixed pool: not 16 schedules without a difference: $(tail -n 3 c.out c.err | tr '\n' '|')"
}

# tier: long
test_remove_keeps_a_parent_with_forks() {
    # a spec of its own: other tests fork their runs of $JOB in the same home
    run_rw a run --root "$ROOT" -- sh -c "$JOB; echo remove-test"
    local id; id=$(run_id a.err); local steps; steps=$(steps_of a.err)
    run_rw f fork "$id" $((steps / 2)) --schedule 1
    local fid; fid=$(run_id f.err)
    [ -n "$fid" ] || fail "fork: $(cat f.err)"
    run_rw r remove "$id"
    [ "$RC" -eq 1 ] || fail "removed a parent with a fork: rc $RC"
    expect_grep r.err "has 1 fork starting from its keyframes ($fid)"
    [ -d "$REWIND_HOME/runs/$id" ] || fail "the parent is gone"
    run_rw g remove --force "$id"
    [ "$RC" -eq 0 ] || fail "remove --force: $(cat g.err)"
    run_rw p replay "$fid"
    [ "$RC" -eq 0 ] || fail "the orphaned fork does not replay from boot: $(cat p.out p.err)"
    run_rw q replay "$fid" --from $((steps * 3 / 4))
    [ "$RC" -eq 2 ] || fail "seek in an orphaned fork: rc $RC"
    expect_grep q.err 'parent was removed'
}
