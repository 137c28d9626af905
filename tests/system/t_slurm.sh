# t_slurm.sh: `check --via slurm` on a real Slurm cluster started by the
# test itself (tools/slurm-cluster.sh: munged, slurmctld and two slurmd
# node names on this machine, all state under $T/slurm, stopped on exit),
# and `--via local` (docs/distributed.md). The long versions (32 schedules)
# are in tier long (make check-long).

# Start the cluster (slurm_up SPOOL: slurmd's spool there, RW_SLURM_SPOOL of
# tools/slurm-cluster.sh); stop it when the test's subshell ends.
slurm_up() {
    command -v sbatch >/dev/null 2>&1 && { command -v slurmctld >/dev/null 2>&1 ||
        [ -x /usr/sbin/slurmctld ]; } || skip "slurm-wlm and munge are not installed (tools/deps.sh)"
    trap '"$TOP/tools/slurm-cluster.sh" stop "$T/slurm" >/dev/null 2>&1 || true' EXIT
    RW_SLURM_SPOOL=${1:-} "$TOP/tools/slurm-cluster.sh" start "$T/slurm" 2 >"$T/slurm.out" 2>"$T/slurm.err" ||
        fail "the cluster did not start: $(tail -n 3 "$T/slurm.err" "$T"/slurm/log/*.log 2>&1)"
    export SLURM_CONF="$T/slurm/slurm.conf"
}

# What Slurm says, for a failure message: every task's state and reason,
# the nodes' states, the controller's last log lines.
slurm_state() {
    echo "squeue: $(squeue -h -t all -r -o '%i %T %N %r' 2>&1 | tr '\n' ';')"
    echo "sinfo: $(sinfo -h -N -o '%N %T %E' 2>&1 | tr '\n' ';')"
    echo "slurmctld: $(tail -n 4 "$T/slurm/log/slurmctld.log" 2>&1 | tr '\n' ';')"
}

# A second home for the local check of the same spec (same image cache).
home2() {
    mkdir -p "$T/home2"
    [ -d "$T/home2/images" ] || cp -al "$REWIND_HOME/images" "$T/home2/images"
}

# check_passed CPID N WHAT: the check running as CPID (output in c.out,
# c.err) ends with exit 0, no difference over N schedules, none lost.
check_passed() {
    set +e
    wait "$1"
    RC=$?
    set -e
    [ "$RC" -eq 0 ] || fail "check exit $RC after $3: $(tail -n 8 c.err) $(cat c.out) $(slurm_state)"
    expect_grep c.out "^no difference: $2 schedules ended like schedule 0"
    expect_no_grep c.out 'lost'
}

# check.py A.json B.json: both checks found the same schedule, narrowed to
# the same deciding step between the same two runs, from the same schedule 0.
same_check() {
    python3 - "$1" "$2" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
for r in (a, b):
    assert r["found"] and r["narrowed"], r
for k in ("schedule", "deciding_step", "window"):
    assert a[k] == b[k], (k, a[k], b[k])
for k in ("schedule0", "failing", "passing_run", "failing_run"):
    assert a[k]["id"] == b[k]["id"], (k, a[k], b[k])
print("schedule", a["schedule"], "deciding step", a["deciding_step"])
PY
}

# tier: long
test_slurm_check_finds_the_pool_race_like_a_local_check() {
    slurm_up
    # (--timeout: a check whose tasks never start fails, it does not hang the suite)
    # (16 schedules: with check's default --preempt memory the pool's race is found at
    # after 9 schedules tried in a local check; 4 found it before memory-access points)
    # (REWIND_PROGRESS: --json alone prints no progress lines)
    REWIND_PROGRESS=1 run_rw s check --via slurm --share "$T/share" --schedules 16 -j 2 --json --timeout 1200 \
        --root "$ROOT" -- /usr/bin/pool
    [ "$RC" -eq 1 ] || fail "check --via slurm exit $RC: $(tail -n 5 s.err) $(cat s.out) $(slurm_state)"
    # every schedule's line says where it ran
    grep -q '^rewind: check: schedule [0-9]* (.*): run .* steps on node[12] task [01]' s.err ||
        fail "no schedule ran on a node: $(grep schedule s.err | head -n 3)"
    python3 -c 'import json,sys; r=json.load(open("s.out")); assert "node" in r["ran_on"], r' ||
        fail "the report lacks ran_on: $(cat s.out)"
    home2
    REWIND_HOME=$T/home2 run_rw l check --schedules 16 -j 2 --json --root "$ROOT" -- /usr/bin/pool
    [ "$RC" -eq 1 ] || fail "the local check exit $RC: $(tail -n 5 l.err)"
    same_check s.out l.out >&2 || fail "slurm and local checks differ: $(cat s.out) $(cat l.out)"
    # --via local goes through the same engine interface and agrees too
    mkdir -p "$T/home3"; cp -al "$REWIND_HOME/images" "$T/home3/images"
    REWIND_HOME=$T/home3 run_rw v check --via local --schedules 16 -j 2 --json --root "$ROOT" -- /usr/bin/pool
    [ "$RC" -eq 1 ] || fail "check --via local exit $RC: $(tail -n 5 v.err)"
    same_check v.out l.out >&2 || fail "--via local and local checks differ"
    # the runs the tasks made are in this home, readable
    local failr; failr=$(python3 -c 'import json; print(json.load(open("s.out"))["failing"]["id"])')
    run_rw w show "$failr"
    expect_rc 0
}

# The short version of the 32-schedule one: pool-fixed, no difference.
# tier: long
test_slurm_fixed_pool_and_a_killed_task_retried() {
    slurm_up
    "$REWIND" check --via slurm --share "$T/share" --schedules 4 -j 2 --timeout 1200 --root "$ROOT" \
        -- /usr/bin/pool-fixed >c.out 2>c.err &
    local cpid=$! pid="" kids="" i
    # kill task 0 mid-run, as a node that dies: the task and the schedule it
    # runs (its child), once it runs one, while schedule 3 (its last) has
    # no outcome yet
    for i in $(seq 1200); do
        pid=$(cat "$T"/share/check-*/work/t0.pid 2>/dev/null || true)
        kids=""
        [ -n "$pid" ] && kids=$(pgrep -P "$pid" || true)
        [ -n "$kids" ] && break
        kill -0 "$cpid" 2>/dev/null || break
        sleep 0.25
    done
    [ -n "$kids" ] || { wait "$cpid"; fail "task 0 never ran a schedule: $(tail -n 5 c.err) $(slurm_state)"; }
    kill -9 "$pid" $kids || fail "task 0 (pid $pid) was gone before it could be killed"
    echo "killed task 0 (pid $pid) and its schedule (pid $kids)" >&2
    # (otherwise the test tests nothing)
    ! ls "$T"/share/check-*/out/3.json >/dev/null 2>&1 || fail "task 0 had run its schedules when it was killed"
    check_passed "$cpid" 4 "a task was killed"
    grep -q 'task 0 ended (.*) with [0-9]* schedules left: submitted again' c.err ||
        fail "task 0 was not submitted again: $(grep -E 'task|schedule' c.err | tr '\n' '|')"
}

# tier: long
test_slurm_check_fixed_pool_32_schedules() {
    slurm_up
    run_rw c check --via slurm --schedules 32 -j 4 --timeout 3000 --root "$ROOT" -- /usr/bin/pool-fixed
    [ "$RC" -eq 0 ] || fail "the fixed pool via slurm: exit $RC: $(tail -n 5 c.err c.out) $(slurm_state)"
    expect_grep c.out '^no difference: 32 schedules ended like schedule 0'
    expect_grep c.out '^the schedules ran on: node[12] [0-9]*, node[12] [0-9]*'
}

# tier: long
test_slurm_no_sbatch_or_no_controller_is_one_line() {
    command -v sbatch >/dev/null 2>&1 || skip "slurm-wlm is not installed (tools/deps.sh)"
    mkdir -p "$T/bin"
    PATH=$T/bin run_rw n check --via slurm --schedules 2 --root "$ROOT" -- /usr/bin/pool-fixed
    [ "$RC" -ne 0 ] || fail "no sbatch: exit 0"
    [ "$(wc -l <n.err)" -eq 1 ] || fail "no sbatch: not one line: $(cat n.err)"
    expect_grep n.err 'sbatch not found in PATH'
    # a cluster that was started and stopped: its controller does not answer
    slurm_up
    "$TOP/tools/slurm-cluster.sh" stop "$T/slurm"
    run_rw u check --via slurm --schedules 2 --root "$ROOT" -- /usr/bin/pool-fixed
    [ "$RC" -ne 0 ] || fail "no controller: exit 0"
    [ "$(wc -l <u.err)" -eq 1 ] || fail "no controller: not one line: $(cat u.err)"
    expect_grep u.err 'the Slurm controller does not answer'
    # nothing was recorded before the check gave up
    [ -z "$(ls "$REWIND_HOME/runs" 2>/dev/null)" ] || fail "runs were recorded: $(ls "$REWIND_HOME/runs")"
}

# Ctrl-C (SIGINT) on the check cancels its Slurm jobs: no task of it is
# left in squeue, and no task process runs on.
# tier: long
test_slurm_ctrl_c_cancels_the_jobs() {
    slurm_up
    "$REWIND" check --via slurm --share "$T/share" --schedules 8 -j 2 --root "$ROOT" \
        -- /usr/bin/pool-fixed >i.out 2>i.err &
    local cpid=$! i p pids=""
    # both tasks are running: each wrote its pid
    for i in $(seq 600); do
        [ -s "$(ls "$T"/share/check-*/work/t0.pid 2>/dev/null | head -n 1)" ] &&
            [ -s "$(ls "$T"/share/check-*/work/t1.pid 2>/dev/null | head -n 1)" ] && break
        kill -0 "$cpid" 2>/dev/null || break
        sleep 0.5
    done
    pids=$(cat "$T"/share/check-*/work/t[01].pid 2>/dev/null | tr '\n' ' ')
    [ "$(echo $pids | wc -w)" -eq 2 ] || { kill -INT "$cpid"; wait "$cpid"; fail "the tasks never started: $(tail -n 5 i.err) $(slurm_state)"; }
    [ -n "$(squeue -h -n rewind-check -t PENDING,RUNNING -o %i)" ] || fail "no job in squeue"
    kill -INT "$cpid"
    echo "SIGINT to the check (tasks $pids)" >&2
    local waited=0
    while kill -0 "$cpid" 2>/dev/null && [ $waited -lt 120 ]; do sleep 0.5; waited=$((waited + 1)); done
    kill -0 "$cpid" 2>/dev/null && fail "the check still runs 60 s after SIGINT"
    set +e
    wait "$cpid"
    local crc=$?
    set -e
    # a stopped check is no pass: exit 124, and it says how far it got
    [ "$crc" -eq 124 ] || fail "check stopped by SIGINT exited $crc, not 124"
    # every job of the check was cancelled (scancel: CANCELLED), none pending or running
    for i in $(seq 60); do
        [ -z "$(squeue -h -n rewind-check -t PENDING,RUNNING,COMPLETING,CONFIGURING -o %i)" ] && break
        sleep 0.5
    done
    [ -z "$(squeue -h -n rewind-check -t PENDING,RUNNING,COMPLETING,CONFIGURING -o '%i %T')" ] ||
        fail "jobs left after SIGINT: $(squeue -h -n rewind-check -o '%i %T')"
    squeue -h -n rewind-check -t all -o '%i %T' >sq.out
    echo "after SIGINT: $(cat sq.out | tr '\n' ' ')" >&2
    expect_grep sq.out 'CANCELLED'
    # every job it submitted is noted in the share's jobs file (slurm.c invariant 5)
    local j noted
    noted=$(cat "$T"/share/check-*/jobs 2>/dev/null) || fail "no jobs file in the share"
    for j in $(cut -d' ' -f1 sq.out | cut -d_ -f1 | sort -u); do
        grep -qx "$j" <<<"$noted" || fail "job $j is not in the jobs file ($noted)"
    done
    expect_grep i.err 'its jobs: .*/jobs'
    for p in $pids; do
        for i in $(seq 40); do kill -0 "$p" 2>/dev/null || break; sleep 0.5; done
        kill -0 "$p" 2>/dev/null && fail "task process $p runs on after SIGINT"
    done
    expect_no_grep i.out '^no difference: 8 schedules'
    expect_grep i.out '^stopped: [0-7] of 8 schedules ran before --timeout or a signal stopped the check'
    expect_grep i.err 'check: stopped (a signal or --timeout) with [0-7] of 8 schedules back; the slurm engine'
}

# A task whose launch fails is requeued held by Slurm ("launch failed
# requeued held") and would wait for `scontrol release` forever: the check
# cancels it and submits it again; held again, its schedules are lost, and
# the check ends saying so, no pass. The failure is real: slurmd's spool is
# a path too long for slurmstepd's socket (108 bytes), the cause of the
# holds seen in the test host before (docs/distributed.md).
# tier: long
test_slurm_failed_launch_held_is_retried_then_lost() {
    local long; long=$T/spool-$(printf 'x%.0s' $(seq 110))
    slurm_up "$long"
    run_rw h check --via slurm --share "$T/share" --schedules 2 -j 2 --timeout 900 --root "$ROOT" \
        -- /usr/bin/pool-fixed
    [ "$RC" -eq 124 ] || fail "check exit $RC, not 124: $(tail -n 5 h.err) $(cat h.out) $(slurm_state)"
    for k in 0 1; do
        # (a node in the state when the launch was tried on it)
        grep -q "task $k held (PENDING, launch failed requeued held\( on node[12]\)\?) with 1 schedules left: submitted again as job" h.err &&
            grep -q "task $k held again (PENDING, launch failed requeued held\( on node[12]\)\?): 1 schedules lost" h.err ||
            fail "task $k not held, retried, held again and lost: $(grep task h.err | tr '\n' '|')"
    done
    expect_grep h.out '^2 schedules were lost: their task died or was held twice'
    expect_grep h.out '^no difference: 0 schedules ended like schedule 0 .*, but 2 were lost: not a pass'
    # the held tasks were cancelled: none is left waiting
    [ -z "$(squeue -h -n rewind-check -t PENDING,RUNNING,COMPLETING,CONFIGURING -o '%i %T %r')" ] ||
        fail "tasks left after the check: $(squeue -h -r -n rewind-check -o '%i %T %r')"
}

# A task held while pending (here by `scontrol hold`, as an admin would) is
# cancelled and submitted again, and the check completes.
# tier: long
test_slurm_held_task_is_cancelled_and_submitted_again() {
    slurm_up
    # 3 tasks on 2 one-CPU nodes: task 2 waits for a node, and is held there
    "$REWIND" check --via slurm --share "$T/share" --schedules 3 -j 3 --timeout 1500 --root "$ROOT" \
        -- /usr/bin/pool-fixed >c.out 2>c.err &
    local cpid=$! i held=""
    for i in $(seq 1200); do
        held=$(squeue -h -r -n rewind-check -t PENDING -o '%i' | grep '_2$' || true)
        [ -n "$held" ] && scontrol hold "$held" && break
        held=""
        kill -0 "$cpid" 2>/dev/null || break
        sleep 0.5
    done
    [ -n "$held" ] || { wait "$cpid"; fail "task 2 was never seen pending: $(tail -n 5 c.err) $(slurm_state)"; }
    echo "held task $held" >&2
    check_passed "$cpid" 3 "a task was held"
    expect_grep c.err 'task 2 held (PENDING, JobHeld[A-Za-z]*) with 1 schedules left: submitted again as job'
    squeue -h -r -t all -o '%i %T' | grep "^$held " >sq.out || true
    expect_grep sq.out 'CANCELLED'
}

# A check via slurm of a spec whose runs are already in the home (a local
# check of it ran first): its schedules' runs are not imported again (that
# failed: their manifests differ in wall times) and end as the stored ones.
# tier: vm
test_slurm_check_again_in_the_same_home() {
    slurm_up
    run_rw a check --via local --schedules 2 -j 2 --root "$ROOT" -- /usr/bin/pool-fixed
    expect_rc 0
    # the same spec again (not --run: it takes no --timeout), so the same runs
    run_rw b check --via slurm --share "$T/share" --schedules 2 -j 2 --timeout 900 --root "$ROOT" \
        -- /usr/bin/pool-fixed
    [ "$RC" -eq 0 ] || fail "the second check exit $RC: $(tail -n 3 b.err) $(cat b.out) $(slurm_state)"
    [ "$(sed -n 's/^schedule 0: run \([0-9a-f]*\) .*/\1/p' a.out)" = \
        "$(sed -n 's/^schedule 0: run \([0-9a-f]*\) .*/\1/p' b.out)" ] || fail "another schedule 0"
    expect_grep b.out '^no difference: 2 schedules ended like schedule 0'
    expect_grep b.out '^the schedules ran on: node[12]'
}

# tier: long
test_slurm_check_reruns_a_cut_schedule() {
    slurm_up
    # src/explore/check.c invariant 7 through Slurm: schedule 1's first run is
    # cut (REWIND_TEST_CUT_FIRST: a 1 ms spin limit; the job computes without
    # a step), imported, and replaced by its complete rerun (slurm.c
    # invariant 5)
    local JOB='i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done; echo $i'
    REWIND_TEST_HOLES=1 REWIND_TEST_CUT_FIRST=1 run_rw c check --via slurm --share "$T/share" \
        --schedules 2 -j 2 --timeout 900 --preempt off --expect exit=0 --root "$ROOT" -- sh -c "$JOB"
    [ "$RC" -eq 0 ] || fail "check exit $RC: $(tail -n 3 c.err) $(cat c.out) $(slurm_state)"
    expect_grep c.err 'schedule 1 (random): run [0-9a-f]* cut by a wall-clock limit (spin after [0-9]* steps on node'
    expect_grep c.err 'schedule 1 (random): run [0-9a-f]* exited 0, [0-9]* steps on node'
    expect_grep c.out '^1 schedule cut by a wall-clock limit (spin or timeout) and run once more$'
    local id
    id=$(sed -n 's/.*schedule 1 (random): run \([0-9a-f]*\) cut.*/\1/p' c.err | head -1)
    run_rw s show "$id"
    expect_grep s.out '^outcome: *exited (exit code 0)'
}
