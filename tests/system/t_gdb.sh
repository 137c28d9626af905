# rewind gdb: Debian's gdb (batch mode) on a process at a step of a stored
# run, through the remote-protocol stub (docs/debugging.md): forward with
# hardware breakpoints, the session's run equal to the stored run, reverse
# execution by replay, one-line errors.

# out_step RUN TEXT: the step of the first output event containing TEXT
gdb_out_step() {
    "$REWIND" events "$1" --kind output --json | python3 -c '
import json, sys
for e in json.load(sys.stdin):
    if sys.argv[1] in e["payload"]:
        print(e["step"]); break' "$2"
}

# gdb_rw OUTPREFIX ARGS...: rewind gdb ARGS with a wall-clock limit (a hang
# fails the test, with the packets logged in OUTPREFIX.log); sets RC.
gdb_rw() {
    local p=$1; shift
    set +e
    REWIND_GDB_LOG=${GDB_LOG:-1} timeout -k 5 "${GDB_TIMEOUT:-400}" "$REWIND" gdb "$@" >"$p.out" 2>"$p.log"
    RC=$?
    set -e
    grep -v '^rewind: gdb [<-]' "$p.log" >"$p.err" || true
    LAST=$p
    # REWIND_GDB_KEEP=DIR: keep the session's output and packet log there
    if [ -n "${REWIND_GDB_KEEP:-}" ]; then
        cp "$p.out" "$REWIND_GDB_KEEP/$(basename "$T")-$p.out" 2>/dev/null || true
        cp "$p.log" "$REWIND_GDB_KEEP/$(basename "$T")-$p.log" 2>/dev/null || true
    fi
    [ "$RC" -ne 124 ] || fail "rewind gdb timed out: $(tail -n 20 "$p.log" | tr '\n' '|') $(tail -n 20 "$p.out" | tr '\n' '|')"
}

# dbg_run [PROGRAM]: record dbg_threads (the fixture, fixtures.sh) or
# PROGRAM; sets ID and AT (a few steps after "ready")
dbg_run() {
    command -v gdb >/dev/null || skip "gdb is not installed (tools/deps.sh)"
    if [ $# -eq 0 ]; then
        ID=$(fixture dbg_threads)
    else
        run_rw a run --root "$ROOT" -- "$1"
        expect_rc 0
        ID=$(run_id a.err)
    fi
    local s; s=$(gdb_out_step "$ID" ready)
    [ -n "$s" ] || fail "no ready output"
    AT=$((s + 5))
}

# tier: vm
test_gdb_break_continue_print_next() {
    dbg_run
    gdb_rw g "$ID" "$AT" --verify -- -batch \
        -ex 'info threads' -ex 'break bump' -ex 'continue' -ex 'print i' \
        -ex 'continue' -ex 'print i' -ex 'next' -ex 'bt' -ex 'finish'
    expect_rc 0
    # four threads, the stop in bump with its argument, next goes on in bump,
    # finish returns to wait_sleep
    [ "$(grep -c '^[* ] [0-9]* *Thread ' g.out)" -eq 4 ] || fail "threads: $(cat g.out)"
    # two hits in a row: bump (i=N) then bump (i=N+1), as print says
    python3 - g.out <<'PY' || fail "breakpoint hits: $(cat g.out)"
import re, sys
t = open(sys.argv[1]).read()
hits = [int(x) for x in re.findall(r"Breakpoint 1, bump \(i=(\d+)\) at .*dbg_threads.c:\d+", t)]
vals = [int(x) for x in re.findall(r"^\$\d+ = (\d+)$", t, re.M)]
assert len(hits) == 2 and hits[1] == hits[0] + 1, hits
assert vals == hits, (vals, hits)
PY
    # next went on to a later line of bump (bt's frame #0), and finish
    # returned to wait_sleep (batch gdb does not print "Run till exit")
    python3 - g.out <<'PY' || fail "next / finish: $(cat g.out)"
import re, sys
t = open(sys.argv[1]).read()
hit = int(re.findall(r"Breakpoint 1, bump \(i=\d+\) at .*dbg_threads.c:(\d+)", t)[-1])
after = int(re.search(r"^#0  bump \(i=\d+\) at .*dbg_threads.c:(\d+)$", t, re.M).group(1))
assert after > hit, (hit, after)
assert re.search(r"^(0x[0-9a-f]+ in )?wait_sleep \(\) at .*dbg_threads.c:\d+$", t.split("#0  bump", 1)[1], re.M)
PY
    # the machine ran on to the run's end: the same trace as the stored run
    expect_grep g.err 'trace [0-9a-f]* equal to run'
}

# expect_stepi_returns FILE: gdb's output with `info registers` after
# MARK-A (the position), MARK-B (after reverse-stepi) and MARK-C (after
# stepi): the 17 general registers at A and C are the same, and B's pc is
# another.
expect_stepi_returns() {
    python3 - "$1" <<'PY' || fail "reverse-stepi then stepi: $(cat "$1")"
import re, sys
t = open(sys.argv[1]).read()
def regs(mark):
    part = t.split(mark, 1)[1].split("MARK", 1)[0]
    return dict(re.findall(r"^(r\w+)\s+(0x[0-9a-f]+)", part, re.M))
a, b, c = regs("MARK-A"), regs("MARK-B"), regs("MARK-C")
assert len(a) == 17, a
assert a == c, (a, c)
assert a["rip"] != b["rip"], (a, b)
PY
}

# tier: vm
test_gdb_reverse_continue_and_stepi() {
    dbg_run
    local regs='info registers rip rsp rbp rax rbx rcx rdx rsi rdi r8 r9 r10 r11 r12 r13 r14 r15'
    gdb_rw g "$ID" "$AT" -- -batch \
        -ex 'break bump' -ex 'continue' -ex 'continue' -ex 'print i' \
        -ex 'reverse-continue' -ex 'print i' \
        -ex 'stepi' -ex 'stepi' -ex 'echo MARK-A\n' -ex "$regs" \
        -ex 'reverse-stepi' -ex 'echo MARK-B\n' -ex "$regs" -ex 'stepi' -ex 'echo MARK-C\n' -ex "$regs"
    expect_rc 0
    # reverse-continue goes back to the hit before: i one less
    local v1 v2
    v1=$(sed -n 's/^\$1 = \([0-9]*\)$/\1/p' g.out)
    v2=$(sed -n 's/^\$2 = \([0-9]*\)$/\1/p' g.out)
    [ -n "$v1" ] && [ "$v2" = "$((v1 - 1))" ] || fail "reverse-continue: i $v1 then $v2: $(cat g.out g.err)"
    expect_stepi_returns g.out
}

# A session from the step the program was exec'd: its start (glibc's
# CPUID, the threads' creation) runs under the debugger, and the machine
# still runs the stored run (--verify). KVM emulates CPUID and, with the
# trap flag set, would queue its single-step trap into the guest: a
# SIGTRAP for the process (src/run/debug.c invariant 11).
# tier: long
test_gdb_from_the_exec_step() {
    dbg_run
    local ex
    ex=$("$REWIND" events "$ID" --kind exec --json | python3 -c '
import json, sys
print(json.load(sys.stdin)[-1]["step"])')
    # At the exec step the program's pages are not yet in its page table:
    # the stub serves its read-only segments from its file (src/gdbstub/
    # progmem.c), so gdb reads bump's code and puts the breakpoint after
    # its prologue, where it puts it from a later step; an untouched
    # function disassembles; its first writable page is not served (it
    # reads as unreadable until the program touches it).
    local rw
    rw=$(readelf -lW "$TOP/build/roots/test/usr/bin/dbg_threads" |
        awk '$1 == "LOAD" && $7 == "RW" { print $3; exit }')
    [ -n "$rw" ] || fail "no writable segment in dbg_threads"
    rw=$(printf '0x%x' "$((rw))")
    gdb_rw g "$ID" "$ex" --verify -- -batch -ex 'break bump' -ex 'x/4i wait_pipe' \
        -ex "x/xg $rw" -ex 'continue' \
        -ex 'print i' -ex 'continue' -ex 'print i'
    expect_rc 0
    # the first two calls, in order (nothing before the first was missed)
    expect_grep g.out 'Breakpoint 1, bump (i=1) at .*dbg_threads.c:'
    expect_grep g.out 'Breakpoint 1, bump (i=2) at .*dbg_threads.c:'
    expect_grep g.err 'trace [0-9a-f]* equal to run'
    [ "$(grep -c '<wait_pipe+[0-9]*>:' g.out)" -eq 3 ] && grep -q '<wait_pipe>:' g.out ||
        fail "x/4i of an untouched function: $(cat g.out g.err)"
    grep -q "Cannot access memory at address $rw\$" g.err ||
        fail "the writable segment was served: $(cat g.out g.err)"
    gdb_rw h "$ID" "$AT" -- -batch -ex 'break bump'
    expect_rc 0
    local a b
    a=$(sed -n 's/^Breakpoint 1 at \(0x[0-9a-f]*\): file .*/\1/p' g.out)
    b=$(sed -n 's/^Breakpoint 1 at \(0x[0-9a-f]*\): file .*/\1/p' h.out)
    [ -n "$a" ] && [ "$a" = "$b" ] || fail "break bump at the exec step $a, later $b"
}

# tier: long
test_gdb_errors_are_one_line() {
    dbg_run
    gdb_rw e1 "$ID" "$AT" --pid 999 -- -batch -ex bt
    [ "$RC" -eq 2 ] || fail "--pid 999: rc $RC $(cat e1.err)"
    [ "$(wc -l < e1.err)" -eq 1 ] || fail "not one line: $(cat e1.err)"
    gdb_rw e2 "$ID" 99999999 -- -batch -ex bt
    [ "$RC" -eq 2 ] || fail "past the end: rc $RC $(cat e2.err)"
    [ "$(wc -l < e2.err)" -eq 1 ] || fail "not one line: $(cat e2.err)"
    # gdb's own message (batch gdb answers "no" to a pending breakpoint
    # and exits 0)
    gdb_rw e3 "$ID" "$AT" -- -batch -ex 'break no_such_function'
    expect_grep e3.err 'Function "no_such_function" not defined'
    gdb_rw e4 "$ID" "$AT" --keep --kernel -- -batch -ex bt
    [ "$RC" -eq 2 ] || fail "--keep --kernel: rc $RC $(cat e4.err)"
    [ "$(wc -l < e4.err)" -eq 1 ] || fail "not one line: $(cat e4.err)"
}

# dbg_threads' output line "done N": N, the counter bump() adds to.
done_of() {
    "$REWIND" events "$1" --kind output --json | python3 -c '
import json, re, sys
for e in json.load(sys.stdin):
    m = re.search(r"done (\d+)", e["payload"])
    if m: print(m.group(1))'
}
runs_here() { ls -A "$REWIND_HOME/runs" | grep -cv '^\.' || true; }

# --keep (docs/debugging.md, "Keeping a session"): `set var` at the
# session's start becomes a new run whose output shows it; the same session
# again gives the same id; its replay (from boot: the engine applies the
# write at its step) is identical, and with the writes left out (a test
# hole) it is not. (Where the kept run goes: test_gdb_kept_run_travels.)
# tier: vm
test_gdb_keep_a_write() {
    dbg_run
    local orig; orig=$(done_of "$ID")
    [ -n "$orig" ] && [ "$orig" -lt 1000000 ] || fail "dbg_threads printed done $orig"
    gdb_rw k1 "$ID" "$AT" --keep -- -batch -ex 'set var counter = 1000000'
    expect_rc 0
    expect_grep k1.err "^rewind: kept run [0-9a-f]\{16\} (fork of $ID at step $AT with 1 gdb write)"
    local k; k=$(sed -n 's/^rewind: kept run \([0-9a-f]*\) .*/\1/p' k1.err)
    local kd; kd=$(done_of "$k")
    [ -n "$kd" ] && [ "$kd" -ge 1000000 ] || fail "kept run $k printed done $kd (stored run: $orig)"
    # the kept run is a run like any other: its replay from boot (the write
    # applied at its step) is identical
    run_rw r replay "$k"
    expect_rc 0
    expect_grep r.out '^identical: '
    run_rw v verify
    expect_rc 0
    REWIND_TEST_HOLES=1 REWIND_TEST_HOLE_NO_PATCH=1 run_rw h replay "$k"
    [ "$RC" -eq 1 ] || fail "a replay without the writes: rc $RC $(cat h.out h.err)"
    expect_grep h.out '^parts: '
}

# A kept run goes where runs go: gdb at a later step of it sees the write,
# a fork of it under a schedule keeps it, and it travels to a clean home as
# an archive and replays there.
# tier: long
test_gdb_kept_run_travels() {
    dbg_run
    gdb_rw k1 "$ID" "$AT" --keep -- -batch -ex 'set var counter = 1000000'
    expect_rc 0
    local k; k=$(sed -n 's/^rewind: kept run \([0-9a-f]*\) .*/\1/p' k1.err)
    [ -n "$k" ] || fail "no kept run: $(cat k1.err)"
    gdb_rw k3 "$k" $((AT + 3)) -- -batch -ex 'print counter >= 1000000'
    expect_rc 0
    expect_grep k3.out '^\$1 = 1$'
    run_rw f fork "$k" $((AT + 2)) --schedule 3
    expect_rc 0
    local fd; fd=$(done_of "$(run_id f.err)")
    [ -n "$fd" ] && [ "$fd" -ge 1000000 ] || fail "a fork of the kept run printed done $fd"
    run_rw x export "$k" --replayable -o "$T/k.rewind"
    expect_rc 0
    REWIND_HOME="$T/home2" run_rw i import "$T/k.rewind"
    expect_rc 0
    REWIND_HOME="$T/home2" run_rw r2 replay "$k"
    expect_rc 0
    expect_grep r2.out '^identical: '
}

# --keep refuses a write once the machine ran (one line; the session goes
# on), keeps nothing without writes, and excludes --verify.
# tier: long
test_gdb_keep_refusals() {
    dbg_run
    local n0; n0=$(runs_here)
    gdb_rw k1 "$ID" "$AT" --keep -- -batch -ex 'break bump' -ex 'continue' \
        -ex 'set var counter = 5' -ex 'echo AFTER\n' -ex 'print i'
    expect_rc 0
    [ "$(grep -c '^rewind: --keep: gdb writes only at the session' k1.err)" -eq 1 ] ||
        fail "refusal: $(cat k1.err)"
    expect_grep k1.out '^AFTER'
    expect_grep k1.err '^rewind: nothing to keep: gdb wrote nothing at step'
    [ "$(runs_here)" -eq "$n0" ] || fail "a run was stored: $(ls "$REWIND_HOME/runs")"
    gdb_rw k2 "$ID" "$AT" --keep --verify -- -batch -ex bt
    [ "$RC" -eq 2 ] && [ "$(wc -l < k2.err)" -eq 1 ] || fail "--keep --verify: rc $RC $(cat k2.err)"
}

# A watchpoint on the counter bump() adds to: each stop shows the old and
# the new value, which differ by the next i (1, 2, 3, ...).
# tier: long
test_gdb_watch_a_variable() {
    dbg_run
    gdb_rw g "$ID" "$AT" --verify -- -batch -ex 'watch counter' -ex 'continue' -ex 'continue' \
        -ex 'bt'
    expect_rc 0
    python3 - g.out <<'PY' || fail "watchpoint: $(cat g.out g.err)"
import re, sys
t = open(sys.argv[1]).read()
ch = [(int(a), int(b)) for a, b in re.findall(r"Old value = (\d+)\s+New value = (\d+)", t)]
assert len(ch) == 2, ch
(o1, n1), (o2, n2) = ch
assert o2 == n1 and n2 - o2 == n1 - o1 + 1, ch
PY
    expect_grep g.out 'wait_sleep () at .*dbg_threads.c'
    expect_grep g.err 'trace [0-9a-f]* equal to run'
}

# Register writes (G/P) on the throwaway machine: read back after gdb
# drops its cache, on the thread on the CPU (the vCPU) and on a thread the
# kernel saved; afterwards reverse execution is refused (the stored run has
# no such write) and the session says its run is no longer the stored one.
# tier: long
test_gdb_register_writes() {
    dbg_run
    gdb_rw g "$ID" "$AT" -- -batch -ex 'break bump' -ex 'continue' \
        -ex 'set $rax = 0x1234abcd' -ex 'maint flush register-cache' -ex 'echo MARK-A\n' -ex 'print/x $rax' \
        -ex 'thread 2' -ex 'set $r12 = 0x7766' -ex 'maint flush register-cache' -ex 'echo MARK-B\n' -ex 'print/x $r12' \
        -ex 'thread 1' -ex 'reverse-continue' -ex 'echo END\n'
    expect_rc 0
    python3 - g.out <<'PY' || fail "register writes: $(cat g.out g.err)"
import re, sys
t = open(sys.argv[1]).read()
assert re.search(r"MARK-A\n\$\d+ = 0x1234abcd", t), "rax"
assert re.search(r"MARK-B\n\$\d+ = 0x7766", t), "r12 of a saved thread"
PY
    expect_grep g.err 'reverse execution after a write to registers or memory is not possible'
    expect_grep g.err 'its run is not the stored run'
}

# The failing run of a check of pool-g (64 schedules) and its SIGSEGV step:
# FAILR, CRASH.
pool_crash() {
    command -v gdb >/dev/null || skip "gdb is not installed (tools/deps.sh)"
    run_rw c check --schedules 64 -j 2 --json --no-where --preempt off --root "$ROOT" -- /usr/bin/pool-g
    [ "$RC" -eq 1 ] || fail "check found no crash of pool-g: rc $RC $(tail -n 3 c.err)"
    FAILR=$(python3 -c 'import json,sys
c = json.load(open(sys.argv[1]))
assert "where" not in c, "--no-where: the threads at the deciding step are in the report"
print(c["failing_run"]["id"])' c.out)
    [ -n "$FAILR" ] || fail "no failing run in the check's JSON"
    CRASH=$("$REWIND" events "$FAILR" --kind signal --json | python3 -c '
import json, sys
print([e["step"] for e in json.load(sys.stdin)][0])')
    [ -n "$CRASH" ] || fail "no signal event in $FAILR"
}

# The pool's crash (long: check over 64 schedules): bt at the SIGSEGV step
# names the worker and its line.
# tier: long
test_gdb_bt_at_the_pool_crash() {
    pool_crash
    gdb_rw g "$FAILR" "$CRASH" -- -batch -ex bt
    expect_rc 0
    expect_grep g.out 'worker (.*pool.c:[0-9]'
}

# Issue 14: from the pool's crash, reverse-continue to the store that set a
# task done (`done++`, the line after the lock in worker), then
# reverse-stepi and stepi come back to the same registers, and the machine
# is still the stored run (--verify). The counting replays' windows do not
# overlap and the landing seeks to the hit's own step (src/gdbstub/stub.c
# invariants 6 and 7): REWIND_GDB_LOG=2 lists the replays.
# tier: long
test_gdb_reverse_continue_from_the_pool_crash() {
    pool_crash
    local line regs='info registers rip rsp rbp rax rbx rcx rdx rsi rdi r8 r9 r10 r11 r12 r13 r14 r15'
    line=$(grep -n '^ *done++;' "$TOP/examples/pool/pool.c" | cut -d: -f1)
    [ -n "$line" ] || fail "no done++ line in examples/pool/pool.c"
    GDB_LOG=2 GDB_TIMEOUT=3000 gdb_rw g "$FAILR" "$CRASH" --verify -- -batch \
        -ex "break pool.c:$line" -ex 'reverse-continue' -ex 'echo MARK-A\n' -ex "$regs" \
        -ex 'reverse-stepi' -ex 'echo MARK-B\n' -ex "$regs" -ex 'stepi' -ex 'echo MARK-C\n' -ex "$regs"
    expect_rc 0
    expect_grep g.out "Breakpoint 1, worker (.*pool.c:$line"
    expect_stepi_returns g.out
    expect_grep g.err 'trace [0-9a-f]* equal to run'
    grep 'gdb session' g.err >&2 || true
    grep -c 'replay from' g.log >&2 || true
}

# A position-independent program (static-pie): gdb places it by the
# process's auxiliary vector (qXfer:auxv:read), so the breakpoint, the
# arguments and the source line are right; without the vector gdb would
# set the breakpoint at the unrelocated address and never stop there.
# tier: long
test_gdb_pie_program() {
    dbg_run /usr/bin/dbg_threads_pie
    gdb_rw g "$ID" "$AT" -- -batch -ex 'info auxv' -ex 'break bump' -ex 'continue' -ex 'print i' -ex 'bt'
    expect_rc 0
    expect_grep g.out 'AT_ENTRY'
    expect_grep g.out 'Breakpoint 1, bump (i=[0-9]*) at .*dbg_threads.c:[0-9]'
    expect_grep g.out 'in wait_sleep () at .*dbg_threads.c:[0-9]'
}

# The negative twin of "a debug exit is never a step": with a hole that lets
# each debug exit move the guest's clock, --verify sees the session's run
# part from the stored one.
# tier: vm
test_gdb_verify_sees_a_debugger_that_perturbs() {
    dbg_run
    REWIND_TEST_HOLES=1 REWIND_TEST_HOLE_DEBUG_TIME=1 gdb_rw g "$ID" "$AT" --verify -- -batch \
        -ex 'break bump' -ex 'continue' -ex 'continue'
    [ "$RC" -eq 1 ] || fail "a perturbing debugger: rc $RC $(cat g.err)"
    expect_grep g.err 'DIFFERS from run'
}

# --port: the stub alone; a gdb started without the program gets it from
# the guest through the protocol (qXfer:exec-file, vFile), symbols included.
# tier: long
test_gdb_port_serves_the_program() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(1)
socket.create_connection(s.getsockname(), 5)' 2>/dev/null ||
        skip "no loopback network here (tools/kvm-host brings it up in the test host): --port untestable"
    dbg_run
    local port=$((20000 + RANDOM % 20000))
    "$REWIND" gdb "$ID" "$AT" --port "$port" >s.out 2>s.err &
    local stub=$!
    local i
    for i in $(seq 1 600); do
        grep -q 'gdb stub for process' s.err 2>/dev/null && break
        kill -0 "$stub" 2>/dev/null || break
        sleep 1
    done
    expect_grep s.err "on 127.0.0.1:$port"
    timeout -k 5 400 gdb -q -nx -batch -ex 'set remotetimeout 600' -ex "target remote 127.0.0.1:$port" \
        -ex 'thread apply all bt' >g.out 2>g.err
    wait "$stub" || true
    expect_grep g.out 'wait_pipe () at .*dbg_threads.c:'
    expect_grep g.out 'main () at .*dbg_threads.c:'
}

# --stdio: gdb starts the stub itself over a pipe (target remote | ...),
# with no network at all; the program comes through the protocol (vFile),
# and --verify's verdict reaches gdb's stderr.
# tier: long
test_gdb_stdio_pipe() {
    dbg_run
    set +e
    timeout -k 5 400 gdb -q -nx -batch -ex 'set remotetimeout 600' \
        -ex "target remote | exec '$REWIND' gdb --stdio --verify $ID $AT 2>v.log" \
        -ex 'info threads' -ex 'break bump' -ex 'continue' -ex 'print i' -ex 'bt' \
        -ex 'detach' >p.out 2>p.err
    RC=$?
    set -e
    [ "$RC" -ne 124 ] || fail "gdb over --stdio timed out: $(tail -n 20 p.err | tr '\n' '|')"
    expect_rc 0
    [ "$(grep -c '^[* ] [0-9]* *Thread ' p.out)" -eq 4 ] || fail "threads: $(cat p.out p.err)"
    expect_grep p.out 'Breakpoint 1, bump (i=[0-9]*) at .*dbg_threads.c:[0-9]'
    expect_grep p.out '^\$1 = [0-9]'
    expect_grep p.out 'in wait_sleep () at .*dbg_threads.c:[0-9]'
    # gdb stops reading the stub's stderr when it closes the pipe: the
    # verdict of --verify, printed after, goes to the file given
    expect_grep v.log 'trace [0-9a-f]* equal to run'
    # usage errors: one line, exit 2
    run_rw e gdb --stdio --port 1234 "$ID" "$AT"
    expect_rc 2
    [ "$(wc -l < e.err)" -eq 1 ] || fail "not one line: $(cat e.err)"
}

# --kernel: the whole machine, the guest kernel's symbols, a breakpoint in
# the kernel, a single step of the vCPU.
# tier: long
test_gdb_kernel_whole_machine() {
    dbg_run
    gdb_rw k "$ID" "$AT" --kernel --verify -- -batch -ex 'break schedule' -ex 'continue' \
        -ex 'echo MARK-A\n' -ex 'print $pc' -ex 'stepi' -ex 'echo MARK-B\n' -ex 'print $pc'
    # The whole machine's breakpoints are the CPU's debug registers, which
    # the test host's KVM never fires (docs/debugging.md): the machine then
    # runs to its end without stopping (and gdb, with no registers left,
    # exits 1). That host cannot test this.
    if ! grep -q 'Breakpoint 1, ' k.out && grep -q 'exited\|not being run\|No registers' k.out k.err; then
        skip "this KVM does not fire debug registers (docs/debugging.md): --kernel breakpoints untestable here"
    fi
    expect_rc 0
    expect_grep k.out 'Breakpoint 1, 0x[0-9a-f]* in schedule ()'
    python3 - k.out <<'PY' || fail "stepi: $(cat k.out)"
import re, sys
t = open(sys.argv[1]).read()
a = re.search(r"MARK-A\n\$\d+ = .*?(0x[0-9a-f]+)", t).group(1)
b = re.search(r"MARK-B\n\$\d+ = .*?(0x[0-9a-f]+)", t).group(1)
assert a != b and int(a, 16) >= 0xffffffff80000000, (a, b)
PY
    expect_grep k.err 'equal to run'
    gdb_rw e "$ID" "$AT" --kernel -- -batch -ex 'reverse-stepi'
    expect_grep e.err 'not supported'
}

# --kernel where the test host can: no breakpoint (debug registers never
# fire there), but the whole machine at a step of a run: the vCPU's pc is
# named by the guest kernel's symbols (the ELF given to gdb), memory is read
# through the vCPU's CR3 (the kernel's banner, read by an `m` packet, is the
# file's), stepi moves the pc, the machine still runs the stored run
# (--verify), and reverse execution is refused in one line.
# tier: long
test_gdb_kernel_symbols_stepi_memory() {
    dbg_run
    local vmlinux="$TOP/build/kernel/vmlinux"
    gdb_rw k "$ID" "$AT" --kernel --verify -- -batch \
        -ex 'echo MARK-A\n' -ex 'print $pc' -ex 'info symbol $pc' -ex 'x/i $pc' \
        -ex 'stepi' -ex 'echo MARK-B\n' -ex 'print $pc' -ex 'info symbol $pc' \
        -ex 'echo MARK-C\n' -ex 'x/s &linux_banner' -ex 'reverse-stepi' -ex 'echo END\n'
    expect_rc 0
    # the banner as the kernel's file has it (gdb on the file alone)
    timeout 120 gdb -q -nx -batch "$vmlinux" -ex 'x/s &linux_banner' >f.out 2>/dev/null
    python3 - k.out f.out k.log <<'PY' || fail "--kernel: $(cat k.out; grep -v 'gdb [<-]' k.log)"
import re, sys
t, f, log = (open(x).read() for x in sys.argv[1:4])
def part(mark):
    return t.split(mark, 1)[1].split("MARK", 1)[0]
def pc(mark):
    return int(re.search(r"^\$\d+ = .*?(0x[0-9a-f]+)", part(mark), re.M).group(1), 16)
a, b = pc("MARK-A"), pc("MARK-B")
# stepi moved the vCPU, and each pc is in the kernel, named by a symbol
assert a != b, (hex(a), hex(b))
for mark in ("MARK-A", "MARK-B"):
    p = part(mark)
    if pc(mark) >= 0xffffffff80000000:
        assert re.search(r"^\w+( \+ \d+)? in section \.\w+", p, re.M), p
    else:
        assert "No symbol matches" in p, p
assert pc("MARK-A") >= 0xffffffff80000000 or pc("MARK-B") >= 0xffffffff80000000, (hex(a), hex(b))
assert re.search(r"^=> 0x[0-9a-f]+( <\w+(\+\d+)?>)?:\s+\S", part("MARK-A"), re.M), part("MARK-A")
# the banner through CR3 equals the file's, and came from the stub
banner = re.search(r'<linux_banner>:\s+(".*")', part("MARK-C")).group(1)
want = re.search(r'<linux_banner>:\s+(".*")', f).group(1)
assert banner == want and banner.startswith('"Linux version'), (banner, want)
addr = re.search(r"^(0x[0-9a-f]+) <linux_banner>", f, re.M).group(1)[2:]
assert re.search(r"gdb -> [$]?m" + addr + ",", log), "no m packet at " + addr
PY
    expect_grep k.err 'reverse execution of the whole machine (--kernel) is not supported'
    [ "$(grep -c 'not supported' k.err)" -eq 1 ] || fail "reverse-stepi: $(cat k.err)"
    expect_grep k.out 'END'
    expect_grep k.err 'trace [0-9a-f]* equal to run'
}

# Ctrl-C (SIGINT to rewind and gdb, as a terminal sends it) stops the
# running `continue` only: the next command runs (stepi moves the pc).
# Before the fix every command after one Ctrl-C answered "interrupted" at
# once (the abort flag was never cleared).
# tier: long
test_gdb_ctrl_c_stops_only_the_running_command() {
    command -v gdb >/dev/null || skip "gdb is not installed (tools/deps.sh)"
    # clockloop: a step per clock read, so a step lands inside its loop
    run_rw a run --root "$ROOT" -- /usr/bin/clockloop 60000 1000
    expect_rc 0
    ID=$(run_id a.err)
    local at
    at=$(gdb_out_step "$ID" "1000 ")
    [ -n "$at" ] || fail "no first line of clockloop"
    at=$((at + 5))
    # a breakpoint nothing hits: continue single-steps the loop for long
    REWIND_GDB_LOG=1 "$REWIND" gdb "$ID" "$at" -- -batch -ex 'break *0x10' -ex 'continue' \
        -ex 'delete' -ex 'print $pc' -ex 'stepi' -ex 'print $pc' >g.out 2>g.log &
    local rpid=$! gpid="" i
    for i in $(seq 120); do
        gpid=$(pgrep -P "$rpid" -x gdb || true)
        [ -n "$gpid" ] && grep -Eq 'rewind: gdb -> (vCont;c|c)' g.log 2>/dev/null && break
        sleep 0.5
    done
    [ -n "$gpid" ] || { kill -KILL "$rpid"; fail "gdb never started: $(tail -n 5 g.log)"; }
    sleep 3
    kill -0 "$rpid" 2>/dev/null || fail "the session ended before Ctrl-C: $(cat g.out) $(grep -v 'gdb [<-]' g.log | tail -n 5)"
    kill -INT "$rpid" "$gpid"
    for i in $(seq 240); do kill -0 "$rpid" 2>/dev/null || break; sleep 0.5; done
    kill -0 "$rpid" 2>/dev/null && { kill -KILL "$rpid" "$gpid"; fail "the session hangs after Ctrl-C: $(tail -n 5 g.log)"; }
    set +e
    wait "$rpid"
    RC=$?
    set -e
    expect_grep g.log 'interrupted'
    # two pcs printed, and stepi moved it
    python3 - g.out <<'PY' || fail "stepi after Ctrl-C: $(cat g.out) $(grep -v 'gdb [<-]' g.log | tail -n 5)"
import re, sys
pcs = re.findall(r"^\$\d+ = \(void \(\*\)\(\)\) (0x[0-9a-f]+)", open(sys.argv[1]).read(), re.M)
assert len(pcs) == 2 and pcs[0] != pcs[1], pcs
PY
}

# A continue over a process that spins (every instruction of it traps, none
# is a step) ends the run as spin within --spin-limit, naming where it spun,
# instead of running on until --timeout: the debugger runs the one machine
# loop with hooks, so it has the spin watch (src/vmm/vcpu.c invariant 4,
# src/run/debug.c invariant 16).
# tier: vm
test_gdb_continue_over_a_spin() {
    command -v gdb >/dev/null || skip "gdb is not installed (tools/deps.sh)"
    run_rw a run --root "$ROOT" --spin-limit 5 -- /usr/bin/spin
    expect_rc 117
    ID=$(run_id a.err)
    local at t0 t1
    at=$(gdb_out_step "$ID" "spin: pid")
    [ -n "$at" ] || fail "no pid line of spin: $(cat a.out)"
    # that line is the run's last step (it spun after it): a step before it
    at=$((at - 1))
    t0=$(date +%s)
    GDB_TIMEOUT=300 gdb_rw g "$ID" "$at" --spin-limit 5 -- -batch -ex 'continue'
    t1=$(date +%s)
    expect_grep g.err 'the run ended as spin at step [0-9]*: no step for 5 s of wall time'
    expect_grep g.err 'spinning in user mode at 0x'
    # the seek, 5 s of spin and gdb's start: well under the 300 s wrapper
    [ $((t1 - t0)) -lt 120 ] || fail "took $((t1 - t0)) s for a 5 s spin limit"
}
