# The trace: every event with its step, and the commands that read it.

# tier: vm
test_log_and_steps() {
    run_rw r run --name logtest --root "$ROOT" -- sh -c 'echo one; echo two >&2; echo three'
    expect_rc 0
    run_rw l log logtest
    expect_rc 0
    expect_file l.out "$(printf 'one\ntwo\nthree')"
    run_rw s log logtest --steps
    grep -q '^\[[0-9]* [0-9]* out\] one$' s.out || fail "no step prefix: $(cat s.out)"
    grep -q '^\[[0-9]* [0-9]* err\] two$' s.out || fail "stderr not marked: $(cat s.out)"
    local step2; step2=$(sed -n 's/^\[\([0-9]*\) .*\] two$/\1/p' s.out)
    run_rw u log logtest "$step2"
    expect_file u.out "$(printf 'one\ntwo')"
}

# tier: vm
test_diff_names_first_differing_output() {
    run_rw a run --root "$ROOT" -- /usr/bin/demo
    run_rw b run --root "$ROOT" --seed 7 -- /usr/bin/demo
    run_rw d diff "$(run_id a.err)" "$(run_id b.err)"
    expect_rc 1
    expect_grep d.out 'the runs part at event'
    grep '^  A >' d.out | grep -q 'random' || fail "the marked event is not the random line: $(cat d.out)"
    run_rw s diff "$(run_id a.err)" "$(run_id a.err)"
    expect_rc 0
    expect_grep s.out '^identical'
}

# tier: vm
test_replay_is_identical() {
    run_rw r run --root "$ROOT" -- /usr/bin/handoff
    run_rw p replay @
    expect_rc 0
    grep -q '^identical: [0-9]* events over [0-9]* steps$' p.out || fail "$(cat p.out p.err)"
}

# tier: vm
test_ls_show_json() {
    run_rw r run --name lsme --root "$ROOT" -e A=1 -- echo 'a b'
    expect_rc 0
    run_rw l ls --json
    expect_rc 0
    python3 -c 'import json,sys; d=json.load(open("l.out")); assert any(x.get("name")=="lsme" for x in d)' || fail "ls --json: $(cat l.out)"
    run_rw n ls --name lsme
    expect_grep n.out "$(run_id r.err)"
    run_rw s show lsme
    expect_rc 0
    expect_grep s.out "^command:  rewind run --root .* -e A=1 .* -- echo 'a b'$"
    run_rw j show lsme --json
    expect_rc 0
    python3 - j.out "$(run_id r.err)" <<'PY' || fail "show --json: $(cat j.out)"
import json, sys
m = json.load(open(sys.argv[1]))
assert m["id"] == sys.argv[2] and m["name"] == "lsme", m
PY
    # the printed command line recreates the run: same id
    local cmd; cmd=$(sed -n 's/^command:  rewind //p' s.out)
    eval "set -- $cmd"
    run_rw again "$@"
    expect_rc 0
    same_run again.err r.err || fail "show's command gives another run"
}

# tier: long
test_remove() {
    run_rw r run --name gone --root "$ROOT" -- true
    expect_rc 0
    local id; id=$(run_id r.err)
    [ -d "$REWIND_HOME/runs/$id" ] || fail "run $id not stored"
    run_rw x remove gone
    expect_rc 0
    [ ! -e "$REWIND_HOME/runs/$id" ] || fail "remove left runs/$id"
    run_rw l log gone
    expect_rc 1
    run_rw y remove no-such-run
    expect_rc 1
}

# tier: long
test_truncated_trace_and_corrupt_manifest() {
    run_rw r run --name torn --root "$ROOT" -- sh -c 'for i in 1 2 3 4 5; do echo line$i; done'
    local dir="$REWIND_HOME/runs/$(run_id r.err)"
    local size; size=$(stat -c %s "$dir/trace")
    truncate -s $((size - 3)) "$dir/trace"
    run_rw l log torn
    expect_grep l.err 'truncated or corrupt'
    [ "$(grep -c . l.err)" -eq 1 ] || fail "more than one error line: $(cat l.err)"
    echo '{not json' > "$dir/manifest.json"
    run_rw s show "$(run_id r.err)"
    expect_rc 1
    expect_grep s.err 'corrupt'
    [ "$(grep -c . s.err)" -eq 1 ] || fail "more than one error line"
}

# tier: vm
test_hostile_guest_is_guest_error() {
    for mode in oob byte stop port; do
        run_rw h$mode run --root "$ROOT" -- /usr/bin/hostile $mode
        [ "$RC" -eq 119 ] || fail "$mode: exit $RC, expected 119: $(tail -2 h$mode.err)"
        grep -q 'guest-error' h$mode.err || fail "$mode: no guest-error outcome"
        expect_no_grep h$mode.out 'still running'
    done
    # the monitor and the store survive: the next run works
    run_rw ok run --root "$ROOT" -- echo fine
    expect_rc 0
    expect_file ok.out fine
}

# tier: vm
test_killed_run_is_incomplete_and_readable() {
    # The job spins after its first line: it never ends by itself (a long
    # sleep would: idle jumps virtual time, so sleep 1000000 ends in ~30 s of
    # wall time, and under load the kill could come after the run's end).
    ( "$REWIND" run --root "$ROOT" -- sh -c 'echo early; while :; do :; done' >k.out 2>k.err & echo $! > pid )
    for i in $(seq 1 200); do grep -q early k.out 2>/dev/null && break; sleep 0.2; done
    grep -q early k.out || fail "the run never printed: $(cat k.err)"
    local pid; pid=$(cat pid)
    kill -9 "$pid" || fail "the run was not running any more: $(tail -n 2 k.err)"
    sleep 0.5
    # the killed run's own staging directory: runs/.<id>.<its pid>.<8 random
    # hex digits> (docs/reliability.md, "Staging names")
    local dirs; dirs=$(cd "$REWIND_HOME/runs" && ls -A | grep "^\.[0-9a-f]\{16\}\.$pid\.[0-9a-f]\{8\}\$" || true)
    [ "$(echo "$dirs" | grep -c .)" -eq 1 ] || fail "no single staging dir of pid $pid: $(ls -A "$REWIND_HOME/runs")"
    local id=${dirs#.}; id=${id%%.*}
    [ -s "$REWIND_HOME/runs/$dirs/trace" ] || fail "no trace in $dirs"
    # ls names that run, and only it, as incomplete
    run_rw l ls --json
    expect_rc 0
    python3 - l.out "$id" "$dirs" <<'PY2' || fail "ls --json: $(cat l.out)"
import json, sys
runs = json.load(open(sys.argv[1]))
inc = [r for r in runs if r.get("outcome") == "incomplete"]
assert [(r["id"], r["dir"]) for r in inc] == [(sys.argv[2], sys.argv[3])], inc
PY2
    run_rw t ls
    expect_grep t.out "^$id .*incomplete"
    # and it is readable: its trace has the output it made before the kill
    run_rw g log "$id"
    expect_grep g.out '^early$'
}
