# t_spin.sh: a guest that makes no step ends as outcome spin after
# --spin-limit seconds of wall time, naming the process (pid, comm), its
# mode, the instruction pointer and the function (issue 12, item 4).

# The spinning program is named: pid (as it printed it), comm, user mode,
# the function spin_here; exit 117; within the limit plus boot and margin.
# tier: vm
test_spin_named() {
    local t0 t1
    t0=$(date +%s)
    run_rw r run --root "$ROOT" --spin-limit 5 -- /usr/bin/spin
    t1=$(date +%s)
    expect_rc 117
    local pid; pid=$(sed -n 's/^spin: pid \([0-9]*\)$/\1/p' r.out)
    [ -n "$pid" ] || fail "spin printed no pid: $(cat r.out)"
    local line; line=$(closing r.err)
    echo "$line" | grep -q " spin after " || fail "not outcome spin: $line"
    echo "$line" | grep -q "pid $pid (spin) spinning in user mode at 0x" || fail "pid/comm/mode: $line"
    echo "$line" | grep -q "in spin_here+0x[0-9a-f]* (/usr/bin/spin)" || fail "function: $line"
    # no step for 5 s: the run's wall time is boot + job start + 5 s (+ margin)
    local wall; wall=$(wall_of r.err)
    awk -v w="$wall" 'BEGIN { exit !(w >= 5 && w < 5 + 60) }' || fail "wall $wall s for a 5 s limit"
    [ $((t1 - t0)) -lt 180 ] || fail "took $((t1 - t0)) s"
    # the manifest says spin
    run_rw s show "$(run_id r.err)" --json
    expect_rc 0
    expect_grep s.out '"outcome": *"spin"'
}

# --spin-limit 0 never ends a run: the same program ends by --timeout (124).
# tier: long
test_spin_limit_off() {
    run_rw r run --root "$ROOT" --spin-limit 0 --timeout 15 -- /usr/bin/spin
    expect_rc 124
    closing r.err | grep -q " timeout after " || fail "not a timeout: $(closing r.err)"
}

# A spin-ended run is no reference: the same spec again is no determinism
# violation (its last step depends on wall time), and check refuses it.
# tier: long
test_spin_no_reference() {
    run_rw a run --root "$ROOT" --spin-limit 5 -- /usr/bin/spin
    expect_rc 117
    run_rw b run --root "$ROOT" --spin-limit 5 -- /usr/bin/spin
    expect_rc 117
    expect_no_grep b.err "DETERMINISM VIOLATION"
    run_rw c check --schedules 2 --root "$ROOT" --spin-limit 5 -- /usr/bin/spin
    [ "$RC" -ne 0 ] || fail "check accepted a spin-ended schedule 0"
    expect_grep c.err "ended as spin (by wall time): it is no reference"
}

# A run that makes steps is never a spin, however long it takes: clockloop
# reads the clock (a step each) for longer than a 10 s limit. (A limit of a
# few seconds can be hit between two steps of the boot itself under the
# nested test host, which runs the guest kernel slowly.)
# tier: long
test_spin_steps_are_progress() {
    run_rw r run --root "$ROOT" --spin-limit 10 -- /usr/bin/clockloop 150000 50000
    expect_rc 0
    local wall; wall=$(wall_of r.err)
    awk -v w="$wall" 'BEGIN { exit !(w > 10) }' || skip "clockloop ran in $wall s, not longer than the limit here"
}
