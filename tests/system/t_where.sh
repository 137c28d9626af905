# rewind where: the stack of every thread of a process at a step
# (docs/debugging.md), from the guest kernel's saved registers and libdwfl.

# out_step RUN TEXT: the step of the first output event containing TEXT
out_step() {
    "$REWIND" events "$1" --kind output --json | python3 -c '
import json, sys
for e in json.load(sys.stdin):
    if sys.argv[1] in e["payload"]:
        print(e["step"]); break' "$2"
}

# tier: vm
test_where_names_each_threads_function() {
    local id; id=$(fixture dbg_threads)
    local before; before=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["trace_hash"])' "$REWIND_HOME/runs/$id/manifest.json")
    local s; s=$(out_step "$id" ready)
    [ -n "$s" ] || fail "no ready output"
    s=$((s + 5))
    run_rw w where "$id" "$s" --json
    expect_rc 0
    python3 - w.out <<'PY' || fail "where: $(head -c 2000 w.out)"
import json, sys
w = json.load(open(sys.argv[1]))
assert w["exe"].endswith("dbg_threads"), w["exe"]
ths = w["threads"]
assert len(ths) == 4, "threads: %d" % len(ths)
want = {"wait_main", "wait_pipe", "wait_cond", "wait_sleep"}
seen = set()
for t in ths:
    fns = [f["function"] for f in t["frames"]]
    hit = want & set(fns)
    assert len(hit) == 1, (t["tid"], fns)
    f = [f for f in t["frames"] if f["function"] in hit][0]
    assert f["file"].endswith("dbg_threads.c") and f["line"] > 0, f
    seen |= hit
assert seen == want, seen
PY
    # the text form, and --kernel: each thread's kernel stack shows the scheduler
    run_rw k where "$id" "$s" --kernel
    expect_rc 0
    expect_grep k.out 'in wait_pipe.* at .*dbg_threads.c:'
    expect_grep k.out 'kernel:'
    expect_grep k.out '__schedule\|schedule'
    # nothing stored changed
    local after; after=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["trace_hash"])' "$REWIND_HOME/runs/$id/manifest.json")
    [ "$before" = "$after" ] || fail "where changed the run"
    # errors: one line, non-zero
    run_rw e1 where "$id" "$s" --pid 999
    [ "$RC" -ne 0 ] || fail "where --pid 999 succeeded"
    [ "$(wc -l < e1.err)" -eq 1 ] || fail "more than one error line: $(cat e1.err)"
    run_rw e2 where "$id" 99999999
    [ "$RC" -eq 2 ] || fail "where past the end: rc $RC $(cat e2.err)"
    [ "$(wc -l < e2.err)" -eq 1 ] || fail "more than one error line: $(cat e2.err)"
}

# A thread stopped in the vDSO (dbg_clock: every clock_gettime is a step,
# read in the vDSO) unwinds through it: the vDSO's image is read out of the
# process (AT_SYSINFO_EHDR) and its CFI leads to read_clock's line in
# dbg_clock.c. Without the vDSO module the stack is one frame, `??`.
# tier: long
test_where_unwinds_through_the_vdso() {
    run_rw a run --root "$ROOT" -- /usr/bin/dbg_clock
    expect_rc 0
    local id; id=$(run_id a.err)
    local s; s=$(out_step "$id" "clock 100")
    [ -n "$s" ] || fail "no first line of dbg_clock"
    local k found=""
    for k in 1 2 3 4 5 6; do
        run_rw w where "$id" $((s + k)) --json
        expect_rc 0
        if python3 -c 'import json,sys; f=json.load(open(sys.argv[1]))["threads"][0]["frames"]; sys.exit(not (f and f[0]["file"] == "[vdso]"))' w.out 2>/dev/null; then
            found=$((s + k)); break
        fi
    done
    [ -n "$found" ] || fail "no step after $s with dbg_clock in clock_gettime's vDSO code: $(head -c 1500 w.out)"
    python3 - w.out <<'PY' || fail "where in the vDSO at step $found: $(head -c 2000 w.out)"
import json, sys
w = json.load(open(sys.argv[1]))
assert w["exe"].endswith("dbg_clock"), w["exe"]
fr = w["threads"][0]["frames"]
assert fr[0]["file"] == "[vdso]" and fr[0]["line"] == 0, fr[0]
assert fr[0]["pc"] >= 1 << 40, fr[0]  # the vDSO lies above the program
# the vDSO's exported function (frame 0 may be an internal one, unnamed)
assert any(f["file"] == "[vdso]" and "clock_gettime" in f["function"] for f in fr), fr
fns = [f["function"] for f in fr]
assert "read_clock" in fns and "main" in fns, fns
for name in ("read_clock", "main"):
    f = fr[fns.index(name)]
    assert f["file"].endswith("dbg_clock.c") and f["line"] > 0, f
assert fr[fns.index("read_clock")]["line"] == 11, fr  # its clock_gettime call
PY
    run_rw t where "$id" "$found"
    expect_rc 0
    expect_grep t.out '#[0-9] .* in [_a-z]*clock_gettime.* from \[vdso\]'
    expect_grep t.out 'in read_clock+0x[0-9a-f]* at .*dbg_clock.c:11$'
}

# Issue 14: check's report shows the job's threads at the deciding step of
# each side (rw_where: the passing and the failing run), one line a thread
# with its innermost frames; the pool built with -g has a worker in
# worker() at a pool.c line on at least one side. The same check in JSON,
# from the kept schedule 0, has an object per side. (--no-where, which
# leaves them out, is checked by t_gdb's pool_crash.)
# tier: long
test_check_shows_the_threads_at_the_deciding_step() {
    run_rw c check --schedules 64 -j 2 --root "$ROOT" -- /usr/bin/pool-g
    [ "$RC" -eq 1 ] || fail "check found no crash of pool-g: rc $RC $(tail -n 3 c.err)"
    local d; d=$(sed -n 's/^deciding step: \([0-9]*\),.*/\1/p' c.out)
    [ -n "$d" ] || fail "no deciding step: $(cat c.out)"
    expect_grep c.out "^the job's threads at step $d, innermost frames first:\$"
    local k
    for k in passing failing; do
        expect_grep c.out "^  $k run [0-9a-f~]*, process [0-9]* (/usr/bin/pool-g; full stacks: rewind where [0-9a-f~]* $d):\$"
    done
    expect_grep c.out '^    thread [0-9]* ([^)]*) [a-z-]*:.* worker (pool\.c:[0-9][0-9]*)'
    local base; base=$(sed -n 's/^schedule 0: run \([0-9a-f~]*\) .*/\1/p' c.out)
    [ -n "$base" ] || fail "no schedule 0 run: $(head -n 3 c.out)"
    run_rw j check --schedules 64 -j 2 --json --run "$base"
    [ "$RC" -eq 1 ] || fail "check --json --run $base: rc $RC $(tail -n 3 j.err)"
    python3 - j.out "$d" <<'PY' || fail "check --json: $(head -c 3000 j.out)"
import json, sys
c = json.load(open(sys.argv[1]))
assert c["deciding_step"] == int(sys.argv[2]), c["deciding_step"]
w = c["where"]
assert w["step"] == c["deciding_step"], w["step"]
workers = 0
for side, run in (("passing", "passing_run"), ("failing", "failing_run")):
    s = w[side]
    assert s["run"] == c[run]["id"], (side, s["run"], c[run]["id"])
    assert "error" not in s, (side, s["error"])
    assert s["step"] == c["deciding_step"] and s["exe"] == "/usr/bin/pool-g", s
    assert len(s["threads"]) >= 2, (side, len(s["threads"]))
    for t in s["threads"]:
        workers += any(f["function"] == "worker" and f["file"].endswith("pool.c") and f["line"] > 0
                       for f in t["frames"])
assert workers >= 1, "no thread in worker() at a pool.c line on either side"
PY
}
