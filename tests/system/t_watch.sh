# t_watch.sh: rewind watch (docs/tutorials/debugging.md). watchctr's three
# threads add 1 to `counter` under a mutex and log each increment; the watch
# must list 12 writes, values 1..12 in order, each at a step before the log
# line of its value and after the previous one, by the thread that logged it
# (every row exact: in the function bump, at the line that writes), with the
# replay equal to the stored run.

watch_run() {
    run_rw r run --root "$ROOT" -- /usr/bin/watchctr
    expect_rc 0 || return 1
    PID=$(sed -n 's/^watchctr pid=\([0-9]*\).*/\1/p' r.out)
    [ -n "$PID" ] || fail "watchctr printed no pid"
}

# tier: vm
test_watch_counter_matches_log() {
    watch_run || return 1
    run_rw e events @
    expect_rc 0 || return 1
    run_rw w watch @ counter --pid "$PID" --json
    expect_rc 0 || return 1
    local line
    line=$(grep -n 'the write the test watches' "$TOP/tests/guest/watchctr.c" | cut -d: -f1)
    [ -n "$line" ] || fail "no watched line in tests/guest/watchctr.c"
    python3 - e.out w.out "$line" <<'PY'
import json, re, sys
log = []  # (step, tid, value) of each "bump" line
for line in open(sys.argv[1]):
    m = re.match(r'\s*(\d+)\s+output fd 1 pid \d+/(\d+): "bump tid=(\d+) counter=(\d+)', line)
    if m:
        log.append((int(m.group(1)), int(m.group(3)), int(m.group(4))))
w = json.load(open(sys.argv[2]))
assert w["trace_verified"], "the replay was not verified against the stored run"
writes = w["writes"]
assert len(log) == 12, f"log has {len(log)} bumps"
assert len(writes) == len(log), f"{len(writes)} writes listed, {len(log)} logged"
prev = -1
for (lstep, ltid, v), x in zip(log, writes):
    assert int(x["new"]) == v, f"write {x} is not value {v}"
    assert x["old"] == str(v - 1), f"write {x}: old is not {v - 1}"
    assert prev <= x["step"] < lstep, f"write of {v} at step {x['step']}, logged at {lstep}, previous log {prev}"
    assert x["tid"] == ltid, f"write of {v} by tid {x['tid']}, logged by {ltid}"
    # every writer is named: by a hardware watchpoint, or (a KVM whose
    # debug registers never fire, as in the test host) by single-stepping
    # the stretch where the change was seen (src/run/watchstep.c)
    assert x["exact"], f"write of {v} has no writer: {x}"
    assert x["caught"] in ("watchpoint", "single-step"), x
    assert x["function"] == "bump", f"write of {v} in {x['function']}"
    assert x["file"] == "watchctr.c" and x["line"] == int(sys.argv[3]), f"write of {v} at {x['file']}:{x['line']}"
    prev = lstep
assert w["left_seen"] == 0, w["left_seen"]
PY
}

# tier: long
test_watch_errors() {
    watch_run || return 1
    run_rw a watch @ no_such_symbol --pid "$PID"
    expect_rc 2 && expect_grep a.err "no symbol no_such_symbol" || return 1
    [ "$(wc -l < a.err)" -eq 1 ] || fail "more than one line: $(cat a.err)" || return 1
    run_rw b watch @ counter --pid 9999
    expect_rc 2 && expect_grep b.err "no process 9999" || return 1
    run_rw c watch @ counter --pid "$PID" --from 99999999
    expect_rc 2 && expect_grep c.err "past its end" || return 1
    run_rw d watch @ counter
    expect_rc 2 && expect_grep d.err "needs --pid" || return 1
}
