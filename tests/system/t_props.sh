# Properties (docs/tutorials/properties.md): --expect and --property judge a
# run from outside; check judges every schedule by them, keeps going,
# counts failures from a step, and reports per property.


# A bug that leaves the output unchanged: the job prints "saved" either way,
# but the buggy one stores the wrong count and exits 3.
GOOD='echo saved; echo 2 > /tmp/count'
BUG='echo saved; echo 1 > /tmp/count; exit 3'

# tier: vm
test_expect_exit_catches_a_silent_bug() {
    run_rw g run --root "$ROOT" --expect exit=0 --expect 'output~^saved$' -- sh -c "$GOOD"
    expect_rc 0
    expect_grep g.err 'property exit=0: passed (exit 0)'
    expect_grep g.err 'property output~^saved$: passed'
    run_rw b run --root "$ROOT" --expect exit=0 --expect 'output~^saved$' -- sh -c "$BUG"
    expect_rc 3
    expect_grep b.err 'property exit=0: FAILED (exit 3)'
    expect_grep b.err 'property output~^saved$: passed'
    cmp -s g.out b.out || fail "the two jobs' output differs: the bug is not silent"
    # properties are part of the spec: another id than the same job without
    run_rw n run --root "$ROOT" -- sh -c "$BUG"
    [ "$(run_id n.err)" != "$(run_id b.err)" ] || fail "--expect did not change the spec"
    python3 -c 'import json,sys; assert "expect" not in json.load(open(sys.argv[1]))["spec"]' \
        "$REWIND_HOME/runs/$(run_id n.err)/manifest.json" || fail "a spec without properties has expect"
    # show prints them and their verdicts; its command line recreates the run
    run_rw s show "$(run_id b.err)"
    expect_rc 0
    expect_grep s.out "--expect exit=0"
    expect_grep s.out 'property exit=0: FAILED (exit 3)'
}

# tier: long
test_property_command_and_file_catch_a_silent_bug() {
    local P='test "$(cat /tmp/count)" = 2'
    run_rw g run --root "$ROOT" --property "$P" --expect 'file:/tmp/count~^2$' -- sh -c "$GOOD"
    expect_rc 0
    expect_grep g.err "property property: $P: passed (exit 0)"
    expect_grep g.err 'property file:/tmp/count~^2$: passed'
    run_rw b run --root "$ROOT" --property "echo checked; $P" --expect 'file:/tmp/count~^2$' \
        -- sh -c 'echo saved; echo 1 > /tmp/count'
    expect_rc 1
    expect_grep b.err "property property: .*: FAILED (exit 1, output: checked"
    expect_grep b.err 'property file:/tmp/count~^2$: FAILED (no match'
    cmp -s g.out b.out || fail "the jobs' output differs ($(cat b.out))"
    expect_no_grep b.out checked # the property's output is kept apart
    # a file that does not exist, and a property whose run is replayed
    run_rw m run --root "$ROOT" --expect 'file:/nonexistent~x' -- true
    expect_rc 1
    expect_grep m.err 'property file:/nonexistent~x: FAILED (cannot read it: No such file'
    run_rw r replay "$(run_id b.err)"
    expect_rc 0
    # bad properties: one clear line, exit 2
    run_rw u run --root "$ROOT" --expect 'exit=x' -- true
    expect_rc 2
    run_rw u run --root "$ROOT" --expect 'output~(' -- true
    expect_rc 2
    expect_grep u.err 'bad regular expression'
}

# tier: long
test_check_judges_schedules_by_properties() {
    run_rw c check --schedules 64 -j 2 --json --root "$ROOT" --expect exit=0 \
        --expect 'output~^sum ' -- /usr/bin/pool
    [ "$RC" -eq 1 ] || fail "check exit $RC: $(tail -n 5 c.err) $(cat c.out)"
    python3 - c.out > ids <<'PY' || fail "report: $(cat c.out)"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["found"] and r["narrowed"] and r["judged_by_properties"], r
assert r["failing_run"]["fails"].startswith("exit=0"), r
ps = {p["property"]: p for p in r["properties"]}
e = ps["exit=0"]
assert e["failed"] >= 1 and e["first_failing_run"] and e["reached"] == e["passed"] + e["failed"], e
print(r["passing_run"]["id"], r["failing_run"]["id"], e["first_failing_run"])
PY
    read -r pass failr first < ids
    run_rw q replay "$failr"
    [ "$RC" -eq 0 ] || fail "the failing run does not replay: $(cat q.out)"
    run_rw s show "$failr"
    expect_grep s.out 'property exit=0: FAILED'
    run_rw s show "$pass"
    expect_grep s.out 'property exit=0: passed'
}

# tier: vm
test_check_schedule0_fails_its_property() {
    run_rw c check --schedules 4 --root "$ROOT" --property 'test -e /tmp/done' -- true
    expect_rc 1
    expect_grep c.out '^schedule 0 itself fails: property: test -e /tmp/done: exit 1'
    run_rw k check --schedules 4 --root "$ROOT" --property 'test -e /tmp/done' -- touch /tmp/done
    expect_rc 0
    expect_grep k.out '^no failure: schedule 0 and 4 schedules pass every property'
    expect_grep k.out 'ok  *property: test -e /tmp/done: reached 5, passed 5, failed 0'
}

# tier: long
test_check_from_step_counts_failures() {
    run_rw a run --root "$ROOT" --expect exit=0 -- /usr/bin/pool
    expect_rc 0
    local id steps; id=$(run_id a.err); steps=$(steps_of a.err)
    local js; js=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["steps"])' \
        "$REWIND_HOME/runs/$id/manifest.json")
    run_rw c check --from "$id:$((steps / 4))" --keep-going --schedules 16 --root x
    expect_rc 2 # --from takes no run options
    run_rw c check --from "$id:$((steps / 4))" --keep-going --schedules 16 -j 2
    [ "$RC" -le 1 ] || fail "check --from: exit $RC: $(tail -n 3 c.err)"
    expect_grep c.out '^failures: [0-9]* of 16 schedules ([0-9.]*%), 95% interval [0-9.]*%\.\.[0-9.]*%$'
    [ "$(grep -c '^rewind: check: schedule [0-9]* ' c.err)" -eq 16 ] ||
        fail "not 16 schedules: $(grep -c 'check: schedule' c.err)"
    run_rw d check --from "$id:$((js + 10))" --schedules 2
    expect_rc 2
    expect_grep d.err "is not inside run"
}

# tier: long
test_check_is_a_record_and_ls_groups_it() {
    run_rw c check --schedules 3 -j 2 --root "$ROOT" -- /usr/bin/handoff
    expect_rc 0
    local cid; cid=$(sed -n 's/^check \([0-9a-f]*\) kept: .*/\1/p' c.out)
    [ -n "$cid" ] || fail "check printed no record id: $(cat c.out)"
    run_rw k checks
    expect_rc 0
    [ "$(grep -c "^$cid " k.out)" -eq 1 ] || fail "checks: $(cat k.out)"
    expect_grep k.out "^$cid .* 3  *0  no difference"
    run_rw kj checks --json
    python3 -c 'import json,sys; l=json.load(open(sys.argv[1])); assert len(l)==1 and l[0]["tried"]==3 and l[0]["runs"]==3, l' \
        kj.out || fail "checks --json: $(cat kj.out)"
    run_rw s show "$cid"
    expect_rc 0
    expect_grep s.out "^check: *$cid"
    expect_grep s.out '^schedules: 3 tried of 3'
    # ls: the schedule-0 run and one line for the check, not its 3 runs
    run_rw l ls
    expect_rc 0
    [ "$(grep -c 'handoff' l.out)" -eq 1 ] || fail "ls lists the check's runs: $(cat l.out)"
    expect_grep l.out "^  check $cid: 3 schedules, 0 failing"
    run_rw la ls --all
    [ "$(grep -c 'handoff' la.out)" -eq 4 ] || fail "ls --all: $(cat la.out)"
    run_rw lj ls --json
    python3 -c 'import json,sys; l=json.load(open(sys.argv[1])); assert [x.get("kind") for x in l].count("check")==1 and len(l)==2, l' \
        lj.out || fail "ls --json: $(cat lj.out)"
    # the same check again keeps one record; a corrupt record is skipped
    echo '{' > "$REWIND_HOME/checks/0123456789abcdef.json"
    run_rw k2 checks
    expect_rc 0
    [ "$(grep -c '^[0-9a-f]\{16\} ' k2.out)" -eq 1 ] || fail "checks with a corrupt record: $(cat k2.out)"
    run_rw s2 show 0123456789abcdef
    [ "$RC" -ne 0 ] || fail "show of a corrupt check succeeded"
}

# An `always` asserted from inside (guest/sdk/rewind.h) fails in some
# schedules: check finds it, narrows it, and the failing run replays to the
# same failure. sdk_race (the sdk helper's program) with one rewind_point()
# between its read and its store: a race schedules can reach. (props_always,
# whose window is a system call, was not reached in 32 schedules: see the
# unmet sometimes below.)
# tier: long
test_check_finds_a_failing_always() {
    # --preempt off: the race is reached through the SDK's point alone (with
    # memory-access points, check's default, schedule 0 already loses an
    # update: t_races covers that)
    run_rw c check --schedules 32 -j 2 --json --preempt off --root "$ROOT" -- /usr/bin/sdk_race point
    [ "$RC" -eq 1 ] || fail "check exit $RC: $(tail -n 5 c.err) $(cat c.out)"
    python3 - c.out > ids <<'PY' || fail "report: $(cat c.out)"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["found"] and r["schedule"] > 0 and r["judged_by_properties"], r
assert r["narrowed"], r
ps = {p["property"]: p for p in r["properties"]}
a = ps['always "no update is lost"']
assert a["kind"] == "always" and a["failed"] >= 1 and a["first_failing_run"], a
assert r["passing_run"]["outcome"] == "exited" and r["passing_run"]["exit_code"] == 0
print(r["failing_run"]["id"], r["passing_run"]["id"])
PY
    read -r failr pass < ids
    run_rw q replay "$failr"
    [ "$RC" -eq 0 ] || fail "the failing run does not replay: $(cat q.out q.err)"
    expect_grep q.out '^identical: '
    run_rw a asserts "$failr"
    expect_grep a.out '^FAILED  *always .*"no update is lost"'
    run_rw a asserts "$pass"
    expect_grep a.out '^ok  *always .*"no update is lost"'
}

# The fixed program: the always holds in every schedule, and the sometimes
# ("a counted result is missing") is never true: a failure of its own, exit 1.
# tier: vm
test_check_reruns_a_cut_schedule_and_names_a_violation() {
    # The job computes in user mode without a step for seconds. The first run
    # of schedule 1 gets a spin limit of 1 ms (REWIND_TEST_CUT_FIRST), so the
    # spin watch cuts it, as a host that stalls would; check runs it once more
    # (src/explore/check.c invariant 7), and the complete run counts.
    local JOB='i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done; echo $i'
    REWIND_TEST_HOLES=1 REWIND_TEST_CUT_FIRST=1 run_rw c check --preempt off --schedules 2 \
        --expect exit=0 --root "$ROOT" -- sh -c "$JOB"
    expect_rc 0
    expect_grep c.err 'schedule 1 (random): run [0-9a-f]* cut by a wall-clock limit (spin after'
    expect_grep c.err 'schedule 1 (random): run [0-9a-f]* exited 0'
    expect_grep c.out '^1 schedule cut by a wall-clock limit (spin or timeout) and run once more$'
    expect_grep c.out '^no failure'
    # the store keeps the complete run under the schedule's id, not the cut one
    local id
    id=$(sed -n 's/.*schedule 1 (random): run \([0-9a-f]*\) cut.*/\1/p' c.err | head -1)
    [ -n "$id" ] || fail "no run id in the cut line"
    run_rw s show "$id"
    expect_rc 0
    expect_grep s.out '^outcome: *exited (exit code 0)'
    # A run of the check that differs from the stored run of its spec is a
    # determinism violation, and check says so: schedule 2's stored run is
    # given another final RAM hash by hand, and schedule 2 runs again.
    local id2 m
    id2=$(sed -n 's/.*schedule 2 (pct): run \([0-9a-f]*\) exited.*/\1/p' c.err | head -1)
    m=$REWIND_HOME/runs/$id2/manifest.json
    [ -n "$id2" ] && [ -f "$m" ] || fail "no stored run for schedule 2 ($id2)"
    python3 - "$m" <<'PY' || fail "cannot edit $m"
import json, sys
m = json.load(open(sys.argv[1]))
m["ram_hash"] = "0" * len(m["ram_hash"])
json.dump(m, open(sys.argv[1], "w"))
PY
    # (--schedules 2..2: only that schedule, the very schedule 2 of the
    # check above (A..B runs each schedule of its number), so it computes
    # the stored run's id again and meets its edited twin; schedule 1 does
    # not run)
    run_rw r check --preempt off --schedules 2..2 --expect exit=0 --root "$ROOT" -- sh -c "$JOB"
    expect_rc 1
    expect_grep r.err "schedule 2: DETERMINISM VIOLATION: this run differs from the stored run $id2"
    expect_no_grep r.err 'schedule 1 '
    expect_grep r.out '^DETERMINISM VIOLATION in 1 run; the lowest, schedule 2: '
    expect_grep r.out '^schedules 2\.\.2 only (--schedules A\.\.B)$'
    # the same through an engine (--via local), in a home of its own
    REWIND_HOME=$REWIND_HOME/via REWIND_TEST_HOLES=1 REWIND_TEST_CUT_FIRST=1 run_rw v check \
        --via local --preempt off --schedules 2 --expect exit=0 --root "$ROOT" -- sh -c "$JOB"
    expect_rc 0
    expect_grep v.err 'schedule 1 (random): run [0-9a-f]* cut by a wall-clock limit (spin after [0-9]* steps on local'
    expect_grep v.err 'schedule 1 (random): run [0-9a-f]* exited 0, [0-9]* steps on local'
    expect_grep v.out '^1 schedule cut by a wall-clock limit (spin or timeout) and run once more$'
    # a range through the engine: schedule 2 alone, the same run as above
    local vid
    vid=$(sed -n 's/.*schedule 2 (pct): run \([0-9a-f]*\) exited.*/\1/p' v.err | head -1)
    [ -n "$vid" ] || fail "no run for schedule 2 through the engine: $(cat v.err)"
    # (its first run cut by the spin limit, so the rerun of a range's
    # schedule runs too)
    REWIND_HOME=$REWIND_HOME/via REWIND_TEST_HOLES=1 REWIND_TEST_CUT_FIRST=2 run_rw w check \
        --via local --preempt off --schedules 2..2 --expect exit=0 --root "$ROOT" -- sh -c "$JOB"
    expect_rc 0
    expect_grep w.err 'schedule 2 (pct): run [0-9a-f]* cut by a wall-clock limit (spin after'
    expect_grep w.err "schedule 2 (pct): run $vid exited 0"
    expect_no_grep w.err 'schedule 1 '
    expect_grep w.out '^no failure: schedule 0 and 1 schedules pass every property'
    expect_grep w.out '^1 schedule cut by a wall-clock limit (spin or timeout) and run once more$'
    expect_grep w.out '^schedules 2\.\.2 only (--schedules A\.\.B)$'
    # the check's record keeps the range
    local cid
    cid=$(sed -n 's/^check \([0-9a-f]*\) kept.*/\1/p' w.out)
    [ -n "$cid" ] || fail "no check id: $(cat w.out)"
    REWIND_HOME=$REWIND_HOME/via run_rw k show "$cid"
    expect_grep k.out '^schedules: 1 tried of 2\.\.2, '
    REWIND_HOME=$REWIND_HOME/via run_rw j checks --json
    expect_grep j.out "\"id\":\"$cid\".*\"first\":2,\"schedules\":2,"
}

# A bad range of schedules is one line and exit 2, before any guest.
# tier: engine
test_check_bad_schedule_ranges_are_refused() {
    local root="$T/root" bad
    mkdir -p "$root"
    for bad in 0..2 3..2 ..2 2.. 1..100001 x..3 '2..3..4' 1...3; do
        run_rw x check --schedules "$bad" --root "$root" -- true
        expect_rc 2
        [ "$(wc -l <x.err)" -eq 1 ] || fail "'$bad': $(cat x.err)"
        expect_grep x.err 'schedules'
    done
    # the last --schedules counts, range or not
    run_rw x check --schedules 5..10 --schedules 3 --root "$T/no-root" -- true
    expect_grep x.err 'no-root'
    expect_no_grep x.err 'above the last'
    # a good range passes the options: the missing root is what stops it
    # (and a check of a missing root exits as rewind run does: the user's
    # error, not rewind's)
    run_rw y run --root "$T/no-root" -- true
    local runrc=$RC
    run_rw x check --schedules 2..3 --root "$T/no-root" -- true
    [ "$RC" -ne 0 ] && [ "$RC" -eq "$runrc" ] || fail "check exits $RC, run $runrc"
    expect_grep x.err 'no-root'
    expect_no_grep x.err 'schedules'
    [ ! -d "$REWIND_HOME/runs" ] || [ -z "$(ls "$REWIND_HOME/runs")" ] || fail "a run was stored"
}

# tier: vm
test_unmet_sometimes_fails_the_check() {
    run_rw c check --schedules 4 -j 2 --root "$ROOT" -- /usr/bin/props_always fixed
    expect_rc 1
    expect_grep c.out '^no failure: schedule 0 and 4 schedules pass every property'
    expect_grep c.out 'FAILED sometimes "a counted result is missing": reached 5, passed 0, failed 0; never true in any run'
    expect_grep c.out 'ok  *always "every counted result is stored": reached 5, passed 5, failed 0'
    expect_grep c.out '^check fails: 1 assertions were never met'
}

# --vary seed (docs/tutorials/properties.md, "Seeds that vary randomness"): schedule k also gets
# seed base+k. A job whose failure depends only on a random byte of
# /dev/urandom (seeded from the run's seed) fails in no schedule at seed 0
# (the negative twin: without --vary seed, every schedule draws the same
# byte) and fails in some with --vary seed; the report says the seed
# decides, and names the failing schedule's strategy.
SEED_JOB='n=$(od -An -N1 -tu1 /dev/urandom); echo $n; test $((n % 4)) -ne 0'
# tier: long
test_check_vary_seed_reaches_seed_dependent_failures() {
    run_rw n check --keep-going --schedules 8 -j 2 --root "$ROOT" --expect exit=0 -- sh -c "$SEED_JOB"
    [ "$RC" -eq 0 ] || fail "without --vary seed: exit $RC: $(cat n.out) $(tail -n 3 n.err)"
    expect_grep n.out '^no failure: schedule 0 and 8 schedules pass every property'
    # every schedule drew the byte of seed 0
    [ "$(grep -c '^rewind: check: schedule [1-8] (.*): run .* exited 0, ' n.err)" -eq 8 ] ||
        fail "without --vary seed: $(cat n.err)"
    run_rw v check --vary seed --keep-going --schedules 8 -j 2 --root "$ROOT" --expect exit=0 -- sh -c "$SEED_JOB"
    [ "$RC" -eq 1 ] || fail "with --vary seed: exit $RC: $(cat v.out) $(tail -n 3 v.err)"
    grep -q '^rewind: check: schedule 5 (random, seed 5): ' v.err || fail "no seed in progress: $(cat v.err)"
    grep -Eq '^schedule [1-8] \((random|pct)\) fails: run [0-9a-f]{16} exited 1 ' v.out ||
        fail "the failing schedule: $(cat v.out)"
    grep -Eq '^failures: [1-8] of 8 schedules \([0-9.]+%\), 95% interval ' v.out || fail "no count: $(cat v.out)"
    expect_grep v.out '^the seed decides: run [0-9a-f]*, at the same seed with no perturbation, fails too'
}
