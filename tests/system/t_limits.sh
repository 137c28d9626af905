# Limits (issue 11, defect 8; docs/reliability.md): a guest cannot fill the
# disk (--max-trace, --max-disk end the run with the outcome "limit", exit
# 118), --timeout ends a run whose stdout nobody reads, cat and shell take
# --timeout, and SIGINT ends a shell session cleanly (the session is kept).
# replay and fork take the same caps, and a --state-log file counts in
# the disk cap.

# limits_job JOB: run sh -c JOB (it must exit 0); sets ID and STEPS.
limits_job() {
    run_rw a run --root "$ROOT" -- sh -c "$1"
    expect_rc 0
    ID=$(run_id a.err)
    STEPS=$(steps_of a.err)
}

# tier: vm
test_trace_limit_ends_the_run() {
    run_rw a run --root "$ROOT" --max-trace 1 -- sh -c 'yes 0123456789abcdef0123456789 | head -c 8000000'
    expect_rc 118
    expect_grep a.err 'limit after'
    expect_grep a.err 'trace limit of 1 MiB (--max-trace)'
    local id; id=$(run_id a.err)
    run_rw s show "$id"
    expect_rc 0
    expect_grep s.out 'outcome:  limit (exit code 118)'
    expect_grep s.out 'limit:    trace limit of 1 MiB'
    # the trace on disk stays near the cap
    local sz; sz=$(stat -c %s "$REWIND_HOME/runs/$id/trace")
    [ "$sz" -lt $((2 * 1024 * 1024)) ] || fail "trace is $sz bytes with --max-trace 1"
    run_rw l ls --json
    expect_grep l.out "\"outcome\":\"limit\""
    # a bad cap is one clear error
    run_rw b run --root "$ROOT" --max-trace 0 -- true
    expect_rc 2
    expect_grep b.err 'max-trace needs a number of MiB'
}

# tier: long
test_disk_limit_counts_keyframe_pages() {
    # little output, many new pages: random bytes written to the tmpfs, a
    # keyframe every 256 steps stores them
    run_rw a run --root "$ROOT" --max-disk 2 --keyframe-every 256 -- \
        sh -c 'dd if=/dev/urandom of=/tmp/x bs=64k count=256 2>/dev/null; echo done'
    expect_rc 118
    expect_grep a.err 'disk limit of 2 MiB (--max-disk)'
    expect_no_grep a.out 'done'
}

# tier: long
test_timeout_ends_a_run_blocked_on_stdout() {
    # stdout and stderr are one pipe whose reader never reads: the run
    # blocks writing its output, and rewind's own last line would block too
    mkfifo pipe
    sleep 600 < pipe &
    local reader=$!
    local t0; t0=$(date +%s)
    set +e
    timeout -s KILL 300 "$REWIND" run --root "$ROOT" --timeout 20 -- yes > pipe 2>&1
    RC=$?
    set -e
    kill "$reader" 2>/dev/null || true
    local t1; t1=$(date +%s)
    [ "$RC" -eq 124 ] || fail "exit $RC after $((t1 - t0)) s (137: still blocked when killed)"
    # the run is kept, cut by the timeout
    run_rw l ls --json
    expect_grep l.out '"outcome":"timeout"'
}

# tier: long
test_cat_takes_a_timeout() {
    limits_job 'echo v > /tmp/f; i=0; while [ $i -lt 3000 ]; do i=$((i+1)); done; echo end'
    run_rw c cat "$ID" $((STEPS - 1)) /tmp/f --timeout 0.01
    expect_rc 124
    run_rw h cat --help
    expect_grep h.out 'default 600'
    run_rw h2 shell --help
    expect_grep h2.out '--timeout S'
}

# tier: long
test_shell_sigint_keeps_the_session() {
    limits_job 'echo hi > /tmp/f; sleep 0.2; echo end'
    mkfifo in
    # a writer that holds the input open and never writes: only SIGINT ends it
    sleep 900 > in &
    local writer=$!
    "$REWIND" shell "$ID" $((STEPS - 20)) < in > sh.out 2> sh.err &
    local pid=$!
    local i=0
    while [ $i -lt 600 ] && ! grep -q '[#$] ' sh.out 2>/dev/null; do sleep 0.5; i=$((i + 1)); done
    grep -q '[#$] ' sh.out || { kill -KILL "$pid" "$writer" 2>/dev/null; fail "no prompt: $(tail -c 300 sh.out) $(tail -n 3 sh.err)"; }
    sleep 1
    kill -INT "$pid"
    i=0
    while [ $i -lt 300 ] && kill -0 "$pid" 2>/dev/null; do sleep 0.5; i=$((i + 1)); done
    if kill -0 "$pid" 2>/dev/null; then
        kill -KILL "$pid" "$writer" 2>/dev/null
        fail "shell still running 150 s after SIGINT"
    fi
    set +e; wait "$pid"; RC=$?; set -e
    kill "$writer" 2>/dev/null || true
    [ "$RC" -eq 130 ] || fail "shell exit $RC after SIGINT (130 expected): $(tail -n 3 sh.err)"
    expect_grep sh.err 'session kept as run'
    local sid; sid=$(sed -n 's/.*session kept as run \([0-9a-f~]*\).*/\1/p' sh.err | head -n 1)
    run_rw r replay "$sid"
    expect_rc 0
}

# tier: long
test_replay_and_fork_take_the_disk_limits() {
    limits_job 'yes 0123456789abcdef0123456789 | head -c 2500000; echo end'
    # a replay from the keyframe before a quarter of the run still has
    # more than 1 MiB of output ahead: cut, and not kept beside the run
    run_rw r replay "$ID" --from $((STEPS / 4)) --max-trace 1
    expect_rc 118
    expect_grep r.out 'cut: limit after'
    expect_grep r.out 'trace limit of 1 MiB (--max-trace)'
    ! ls "$REWIND_HOME/runs" | grep -q '~' || fail "a cut replay was kept: $(ls "$REWIND_HOME/runs")"
    run_rw f fork "$ID" $((STEPS / 4)) --schedule 3 --max-trace 1
    expect_rc 118
    expect_grep f.err 'limit:118 after'
    local fid; fid=$(run_id f.err)
    run_rw s show "$fid"
    expect_grep s.out 'limit:    trace limit of 1 MiB'
    run_rw h fork --help
    expect_grep h.out '--max-disk MB'
    run_rw h replay --help
    expect_grep h.out '--max-trace MB'
}

# tier: long
test_state_log_counts_in_the_disk_cap() {
    # no keyframes: the disk cap counts the trace and the state log (16
    # bytes a step), and the message says how much of each; that the state
    # log alone can tip the cap is limits.c's (harden2_test)
    run_rw a run --root "$ROOT" --no-keyframes --max-disk 1 --state-log 100000000 -- \
        sh -c 'yes 0123456789abcdef0123456789 | head -c 8000000'
    expect_rc 118
    expect_grep a.err 'disk limit of 1 MiB (--max-disk)'
    grep -Eq 'bytes of trace, 0 of keyframes and pages, [1-9][0-9]* of state log' a.err ||
        fail "the state log is not counted: $(grep 'limit of' a.err)"
    local id; id=$(run_id a.err)
    [ -s "$REWIND_HOME/runs/$id/states" ] || fail "no state log kept: $(ls "$REWIND_HOME/runs/$id")"
}
