# Inspection: cat shows a file as it was at a step, in a throwaway fork;
# shell gives a shell at a step through a pty, and the session replays.

mark_step() { # mark_step RUN TEXT: the step of the mark event TEXT
    "$REWIND" events "$1" --json | python3 -c '
import json, sys
for e in json.load(sys.stdin):
    if e["kind"] == "mark" and e["payload"] == sys.argv[1]:
        print(e["step"]); break' "$2"
}

# tier: vm
test_cat_shows_each_version() {
    run_rw a run --root "$ROOT" -- /usr/bin/rewrite
    expect_rc 0
    local id; id=$(run_id a.err)
    local before; before=$(mf "$id" trace_hash)
    for v in 1 50 100; do
        local s; s=$(mark_step "$id" "v $v")
        [ -n "$s" ] || fail "no mark v $v"
        run_rw c cat "$id" "$s" /tmp/file
        [ "$RC" -eq 0 ] || fail "cat at step $s: rc $RC $(cat c.err)"
        expect_file c.out "version $v"
    done
    # when the command starts the file does not exist yet: exit 3
    local first; first=$("$REWIND" events "$id" --kind exec --json | python3 -c '
import json, sys
print([e["step"] for e in json.load(sys.stdin) if "rewrite" in e["payload"]][0])')
    run_rw n cat "$id" "$first" /tmp/file
    [ "$RC" -eq 3 ] || fail "cat of a missing file: rc $RC $(cat n.err)"
    expect_grep n.err 'did not exist'
    # before the command runs there is nothing to look at: one clear error
    run_rw e cat "$id" 3 /tmp/file
    [ "$RC" -eq 2 ] || fail "cat before the job: rc $RC"
    expect_grep e.err 'before the job'
    [ "$(mf "$id" trace_hash)" = "$before" ] || fail "cat changed the run"
}

# tier: long
test_cat_as_a_process_sees_its_cwd() {
    run_rw a run --root "$ROOT" -- sh -c 'mkdir -p /tmp/w && cd /tmp/w && echo here > rel.txt && sleep 0.5 && echo end'
    expect_rc 0
    local id; id=$(run_id a.err)
    # the step where sh has started sleep: sh waits in /tmp/w
    local at; at=$("$REWIND" events "$id" --json | python3 -c '
import json, sys
print([e["step"] for e in json.load(sys.stdin)
       if e["kind"] == "exec" and e["payload"].split("\0")[1:2] == ["sleep"]][0])')
    local pid; pid=$("$REWIND" ps "$id" "$at" --json | python3 -c '
import json, sys
print([p["pid"] for p in json.load(sys.stdin) if p["argv"].startswith("sh")][0])')
    run_rw c cat "$id" "$at" rel.txt --pid "$pid"
    [ "$RC" -eq 0 ] || fail "cat rel.txt as pid $pid: rc $RC $(cat c.err)"
    expect_file c.out here
}

# tier: vm
test_shell_through_a_pty() {
    run_rw a run --root "$ROOT" -- /usr/bin/rewrite
    expect_rc 0
    local id; id=$(run_id a.err)
    local s; s=$(mark_step "$id" "v 42")
    [ -n "$s" ] || fail "no mark v 42"
    python3 - "$REWIND" "$id" "$s" > sh.out 2> sh.err <<'PY' || fail "pty session: $(tail -c 600 sh.out) $(cat sh.err)"
import os, pty, select, sys, time
rewind, run, step = sys.argv[1:4]
pid, fd = pty.fork()
if pid == 0:
    os.execv(rewind, [rewind, "shell", run, step])
out = b""
def wait_for(pat, t=120):
    global out
    end = time.time() + t
    while pat not in out:
        if time.time() > end:
            raise SystemExit("timed out waiting for %r; got %r" % (pat, out[-400:]))
        r, _, _ = select.select([fd], [], [], 1)
        if r:
            try:
                out += os.read(fd, 4096)
            except OSError:
                break
for cmd, want in [(b"echo $PWD\r", b"\n/\r"), (b"cat /tmp/file\r", b"version 42"),
                  (b"ls /usr/bin/rewrite\r", b"/usr/bin/rewrite\r")]:
    os.write(fd, cmd)
    wait_for(want)
os.write(fd, b"exit\r")
wait_for(b"session kept as run")
_, st = os.waitpid(pid, 0)
sys.stdout.write(out.decode("utf-8", "replace"))
PY
    local sid; sid=$(sed -n 's/.*session kept as run \([0-9a-f~]*\).*/\1/p' sh.out | head -n 1)
    [ -n "$sid" ] || fail "no session run id: $(tail -c 300 sh.out)"
    run_rw r replay "$sid"
    [ "$RC" -eq 0 ] || fail "the session does not replay: $(cat r.out r.err)"
}
