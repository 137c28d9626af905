# The SDK (docs/sdk.md): C, Go and Python programs using every call leave
# typed records with steps, threads and source locations; the catalog
# names assertions never reached; outside rewind the programs behave the
# same minus the records; a malformed line stays a plain mark; and a race
# with no system call between its read and its store is found by check only
# with a schedule point between them.

# check_sdk_run RUN FILE: the assert events and `rewind asserts` of a run of
# sdk_c / sdk_go / sdk_py.py with the argument "fail" (FILE: the source
# location's file as that language reports it).
check_sdk_run() {
    "$REWIND" events "$1" --kind assert --json > ev.json || fail "events: $(cat ev.json)"
    "$REWIND" asserts "$1" --json > as.json || fail "asserts failed"
    "$REWIND" asserts "$1" > as.txt || fail "asserts failed"
    python3 - "$2" ev.json as.json 2> py.err <<'PY' || fail "records: $(tail -n 4 py.err)"
import json, sys
file = sys.argv[1]
ev = json.load(open(sys.argv[2]))
lines = [e for e in ev]
assert lines and all(e["kind"] == "assert" for e in lines), ev
def fields(e):
    return e["payload"].rstrip("\n").split(" ")
cats = [e for e in lines if fields(e)[1] == "cat"]
hits = [e for e in lines if fields(e)[1] == "hit"]
points = [e for e in lines if fields(e)[1] == "point"]
# 3 always in the worker + sometimes, always_or_unreachable, reachable,
# and with "fail" an always and an unreachable: 8 evaluations
assert len(points) == 3 and len(hits) == 8, (len(points), len(hits))
# every record names the program's file and a line, and a step
for e in lines:
    f = fields(e)
    where = f[3:5] if f[1] == "cat" else f[4:6] if f[1] == "hit" else f[2:4]
    assert where[0] == file and int(where[1]) > 0, e
    assert e["step"] > 0 and e["pid"] > 1, e
# the worker thread's hits and points carry its own tid
worker = [e for e in hits if "counter%20stays%20positive" in e["payload"]] + points
# (a Go goroutine is not a thread of its own: it may run on the main thread)
assert len({e["tid"] for e in worker}) == 1, worker
assert file.endswith(".go") or worker[0]["tid"] != worker[0]["pid"], worker
# the never reached unreachable is in the catalog, before any hit
neg = [e for e in cats if e["payload"].endswith("counter%20went%20negative\n")]
assert len(neg) == 1, cats
first_hit = min(e["step"] for e in hits)
a = {x["message"]: x for x in json.load(open(sys.argv[3]))}
assert len(a) == 7, a
assert a["counter went negative"]["catalogued"] and a["counter went negative"]["hits"] == 0
assert a["counter went negative"]["verdict"] == "unreached"
assert a["counter stays positive"]["hits"] == 3 and a["counter stays positive"]["verdict"] == "ok"
four = a["counter is four on request"]
fstep = [e["step"] for e in hits if "counter%20is%20four" in e["payload"]]
assert four["failed"] and four["fails"] == 1 and four["first_fail_step"] == fstep[0], four
assert a["the failure path"]["failed"] and a["the failure path"]["kind"] == "unreachable"
assert a["counter reaches three"]["passes"] == 1 and not a["counter reaches three"]["failed"]
assert a["the end is reached"]["kind"] == "reachable" and a["the end is reached"]["hits"] == 1
for m, x in a.items():
    assert x["file"] == file and x["line"] > 0, x
PY
    expect_grep as.txt '^FAILED  *always .*"counter is four on request"'
    "$REWIND" events "$1" > all.txt
    expect_grep all.txt 'assert pid [0-9/]*: schedule point at '"$2"':'
    expect_grep all.txt 'assert pid [0-9/]*: always "counter is four on request" FAILED at '"$2"':'
}

# tier: vm
test_sdk_c_records_and_catalog() {
    run_rw a run --root "$ROOT" -- /usr/bin/sdk_c fail
    expect_rc 0
    check_sdk_run "$(run_id a.err)" tests/guest/sdk_c.c
    # the C catalog is complete at program start: all 7 entries come
    # before the first evaluation
    python3 - ev.json <<'PY' || fail "catalog not first: $(head -c 2000 ev.json)"
import json, sys
ev = json.load(open(sys.argv[1]))
kinds = [e["payload"].split(" ")[1] for e in ev]
assert kinds[:7] == ["cat"] * 7 and "cat" not in kinds[7:], kinds
PY
    # outside rewind: the same output, no records
    "$TOP/build/guest/sdk_c" fail > host.out || fail "sdk_c failed outside rewind"
    cmp -s a.out host.out || fail "output differs outside rewind: $(cat a.out) / $(cat host.out)"
}

# tier: long
test_sdk_go_records() {
    run_rw a run --root "$ROOT" -- /usr/bin/sdk_go fail
    expect_rc 0
    check_sdk_run "$(run_id a.err)" rewind.local/sdkgo/main.go
    "$TOP/build/guest/sdk_go" fail > host.out || fail "sdk_go failed outside rewind"
    cmp -s a.out host.out || fail "output differs outside rewind: $(cat a.out) / $(cat host.out)"
}

# The Python SDK needs a root with python3: build/roots/python.erofs, the
# test root plus Debian's python3 (tools/mkroot-python.sh, made by `make
# all`); the module and the program are handed to the job as arguments.
# tier: long
test_sdk_python_records() {
    local croot=$TOP/build/roots/python.erofs
    [ -e "$croot" ] || fail "no root with python3: make build/roots/python.erofs"
    run_rw a run --root "$croot" -- sh -c \
        'mkdir -p /tmp/sdk && printf %s "$1" > /tmp/sdk/rewind.py && printf %s "$2" > /tmp/sdk/sdk_py.py && cd /tmp/sdk && exec python3 sdk_py.py fail' \
        sh "$(cat "$TOP/guest/sdk/python/rewind.py")" "$(cat "$TOP/tests/guest/sdk_py.py")"
    expect_rc 0
    check_sdk_run "$(run_id a.err)" /tmp/sdk/sdk_py.py
    (cd "$TOP/tests/guest" && PYTHONPATH=$TOP/guest/sdk/python python3 -B sdk_py.py fail) > host.out
    cmp -s a.out host.out || fail "output differs outside rewind: $(cat a.out) / $(cat host.out)"
}

# Outside rewind (no /dev/rewind) the Python and Go SDKs change nothing but
# the records; pointed at a file they write exactly the protocol lines.
# tier: engine
test_sdk_python_go_outside_rewind() {
    local py=$TOP/tests/guest/sdk_py.py
    PYTHONPATH=$TOP/guest/sdk/python python3 -B "$py" fail > plain.out || fail "sdk_py.py failed"
    : > dev
    REWIND_SDK_DEVICE=$T/dev PYTHONPATH=$TOP/guest/sdk/python python3 -B "$py" fail > dev.out ||
        fail "sdk_py.py failed with a device"
    cmp -s plain.out dev.out || fail "output changed"
    grep -qx "rw1 cat unreachable $py 31 counter%20went%20negative" dev ||
        fail "no catalog line for the unreached assertion: $(cat dev)"
    grep -qx "rw1 hit always 0 $py 33 counter%20is%20four%20on%20request" dev ||
        fail "no failing hit: $(cat dev)"
    [ "$(grep -c "^rw1 point $py 21\$" dev)" -eq 3 ] || fail "not 3 points: $(cat dev)"
    : > dev
    REWIND_SDK_DEVICE=$T/dev "$TOP/build/guest/sdk_go" fail > go.out || fail "sdk_go failed"
    "$TOP/build/guest/sdk_go" fail > goplain.out
    cmp -s go.out goplain.out || fail "Go output changed"
    grep -qx "rw1 cat unreachable rewind.local/sdkgo/main.go 14 counter%20went%20negative" dev ||
        fail "no declared catalog line: $(cat dev)"
}

# tier: long
test_sdk_malformed_lines_stay_marks() {
    run_rw a run --root "$ROOT" -- sh -c \
        'printf "rw1 hit always 2 f.c 1 m\n" > /dev/rewind; printf "rw1 hit always 1 f.c 1 a%%zz\n" > /dev/rewind; printf "rw9 point f.c 1\n" > /dev/rewind; printf "rw1 point f.c 7\n" > /dev/rewind'
    expect_rc 0
    local id; id=$(run_id a.err)
    "$REWIND" events "$id" --kind mark > m.txt
    "$REWIND" events "$id" --kind assert > s.txt
    [ "$(wc -l < m.txt)" -eq 3 ] || fail "marks: $(cat m.txt)"
    [ "$(wc -l < s.txt)" -eq 1 ] || fail "asserts: $(cat s.txt)"
    expect_grep s.txt 'schedule point at f.c:7'
    run_rw l asserts "$id"
    expect_rc 0
    [ "$(wc -l < l.out)" -eq 1 ] || fail "malformed lines became assertions: $(cat l.out)"
}

# The acceptance of schedule points (docs/tutorials/schedule-points.md): the
# same schedules 1..6 find nothing without the point (no step falls between
# the read and the store, so no schedule can act there: more schedules would
# not help, the tutorial shows 64) and find the lost update with it, narrowed
# to the point's step; the failing run replays identically and says which
# assertion failed.
# tier: long
test_sdk_schedule_point_race() {
    run_rw n check --schedules 6 -j 2 --preempt off --root "$ROOT" -- /usr/bin/sdk_race
    [ "$RC" -eq 0 ] || fail "check without a point: exit $RC: $(tail -n 5 n.out n.err)"
    grep -Eq '^no (failure: schedule 0 and 6 schedules pass every property|difference: 6 schedules ended like schedule 0)' n.out ||
        fail "without a point: $(cat n.out)"
    run_rw p check --schedules 6 -j 2 --json --preempt off --root "$ROOT" -- /usr/bin/sdk_race point
    [ "$RC" -eq 1 ] || fail "check with a point: exit $RC: $(tail -n 5 p.out p.err)"
    python3 - p.out > ids <<'PY' || fail "report: $(cat p.out)"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["found"] and r["narrowed"] and 1 <= r["schedule"] <= 6, r
assert r["window"][1] - r["window"][0] == 1, r
f = r["failing_run"]
assert (f["outcome"], f["exit_code"]) == ("exited", 1), r
print(f["id"], r["deciding_step"])
PY
    local fid step; read -r fid step < ids
    # the deciding step is a schedule point
    "$REWIND" events "$fid" --from "$step" --to "$step" > d.txt
    expect_grep d.txt "schedule point at tests/guest/sdk_race.c:"
    # the failing run replays identically (so to the same failure), and
    # says which assertion failed
    run_rw r replay "$fid"
    expect_rc 0
    expect_grep r.out '^identical: '
    run_rw s asserts "$fid"
    expect_grep s.out '^FAILED  *always .*"no update is lost"'
}

# A `reachable` never reached in any run of a check is a failure of its own
# (exit 1), like an unmet `sometimes` (t_props); reached once, it passes.
# The job speaks the line protocol from the shell (docs/sdk.md: any
# language can join): a catalog line, and in the twin also a hit.
# tier: long
test_sdk_unreached_reachable_fails_the_check() {
    local cat='printf "rw1 cat reachable job.sh 3 the%%20retry%%20path\n" > /dev/rewind'
    local hit='printf "rw1 hit reachable 1 job.sh 3 the%%20retry%%20path\n" > /dev/rewind'
    run_rw m check --schedules 2 -j 2 --root "$ROOT" -- sh -c "$cat; echo done"
    [ "$RC" -eq 1 ] || fail "never reached: exit $RC: $(cat m.out) $(tail -n 3 m.err)"
    expect_grep m.out '^no failure: schedule 0 and 2 schedules pass every property'
    expect_grep m.out 'FAILED reachable "the retry path": reached 0, .*; never reached in any run$'
    expect_grep m.out '^check fails: 1 assertions were never met'
    run_rw h check --schedules 2 -j 2 --root "$ROOT" -- sh -c "$cat; $hit; echo done"
    [ "$RC" -eq 0 ] || fail "reached: exit $RC: $(cat h.out) $(tail -n 3 h.err)"
    expect_grep h.out 'ok  *reachable "the retry path": reached 3, '
    expect_no_grep h.out 'never met'
}
