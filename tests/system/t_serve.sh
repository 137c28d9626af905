# t_serve.sh: rewind serve and rewind open (docs/serve.md). The refusals are
# checked with curl; the page is driven in Debian's chromium by playwright-core
# (tests/browser/serve.mjs) on the pool's failing run from check. Screenshots
# of each view go to build/artifacts/t_serve/ (the test's own dir is removed
# after the suite).

SHOTS=$TOP/build/artifacts/t_serve

# The server listens on the loopback interface: tools/kvm-host's host VM
# brings it up at boot; bring it up where it is down (a no-op where it is up).
loopback_up() {
    ip link show lo 2>/dev/null | grep -q 'UP' && return 0
    ip link set lo up 2>/dev/null || ifconfig lo up 2>/dev/null ||
        skip "the loopback interface is down and cannot be brought up"
}

# serve_start OUT [ARGS...]: rewind serve ARGS in the background; sets URL,
# BASE (without the token), TOKEN and SPID once it printed its URL.
serve_start() {
    local out=$1; shift
    "$REWIND" serve "$@" >"$out.out" 2>"$out.err" &
    SPID=$!
    for _ in $(seq 100); do
        URL=$(head -n 1 "$out.out" 2>/dev/null)
        [ -n "$URL" ] && break
        sleep 0.1
    done
    [ -n "$URL" ] || fail "serve printed no URL: $(cat "$out.err")" || return 1
    TOKEN=$(echo "$URL" | cut -d/ -f4)
    BASE=${URL%/"$TOKEN"/}
}
serve_stop() { kill "$SPID" 2>/dev/null; wait "$SPID" 2>/dev/null || true; }
http() { curl -s --path-as-is -o "$T/body" -w '%{http_code}' "$@"; }

# serve's actions end to end over HTTP, on a real run (its one path in make
# check; the browser drives them in check-long): cat of a file the job wrote,
# fork under another schedule (a new run, stored and listed), both answered
# by the command serve starts in JSON (docs/serve.md, "Answers").
# tier: vm
test_serve_actions_cat_and_fork_over_http() {
    command -v curl >/dev/null || skip "no curl"
    loopback_up
    run_rw a run --root "$ROOT" -- sh -c 'echo one > /tmp/f; /usr/bin/handoff >/dev/null; echo two > /tmp/f; echo written; sleep 0.5; echo end'
    expect_rc 0
    local id steps at; id=$(run_id a.err); steps=$(steps_of a.err)
    # the step "written" came out at: the job is alive there, /tmp/f says two
    # (the log in a file first: grep -m1 on a pipe would end rewind log by
    # SIGPIPE, and run.sh's pipefail the test, silently)
    "$REWIND" log "$id" --steps >log.out || fail "log: rc $?"
    at=$(grep -m1 'written' log.out | sed 's/^\[\([0-9]*\) .*/\1/')
    [ -n "$at" ] || fail "no step for the written line: $(tail -n 3 log.out)"
    serve_start s
    trap serve_stop EXIT
    local h="X-Rewind-Token: $TOKEN"
    [ "$(http -X POST -H "$h" -d "{\"run\":\"$id\",\"step\":$at,\"path\":\"/tmp/f\"}" "${URL}api/cat")" = 200 ] ||
        fail "cat: $(cat "$T/body")"
    python3 -c 'import json,sys; a = json.load(open(sys.argv[1])); assert a["content"] == "two\n", a' "$T/body" ||
        fail "cat's answer: $(cat "$T/body")"
    [ "$(http -X POST -H "$h" -d "{\"run\":\"$id\",\"step\":$((steps / 2)),\"schedule\":3}" "${URL}api/fork")" = 200 ] ||
        fail "fork: $(cat "$T/body")"
    local fid; fid=$(python3 -c 'import json,sys; a = json.load(open(sys.argv[1])); assert a["parent"] == sys.argv[2], a; print(a["id"])' "$T/body" "$id") ||
        fail "fork's answer: $(cat "$T/body")"
    [ -n "$fid" ] && [ "$fid" != "$id" ] || fail "fork named no new run: $(cat "$T/body")"
    [ -d "$REWIND_HOME/runs/$fid" ] || fail "the fork $fid is not stored"
    [ "$(http "${URL}api/runs")" = 200 ] && grep -q "$fid" "$T/body" || fail "the fork is not listed: $(head -c 300 "$T/body")"
    # a bad action answers an error in JSON, and the server lives on
    [ "$(http -X POST -H "$h" -d "{\"run\":\"$id\",\"step\":$((steps + 1000)),\"schedule\":1}" "${URL}api/fork")" != 200 ] ||
        fail "a fork past the run's end was accepted"
    [ "$(http "${URL}api/runs")" = 200 ] || fail "the server died after a bad fork"
    # (the EXIT trap stops the server: a second kill would fail the test)
}

# tier: vm
test_serve_refuses_without_token_dotdot_and_readonly_posts() {
    command -v curl >/dev/null || skip "no curl"
    loopback_up
    serve_start s
    trap serve_stop EXIT
    echo "$URL" | grep -qE '^http://127\.0\.0\.1:[0-9]+/[0-9a-f]{32}/$' || fail "URL: $URL"
    [ "$(http "$URL")" = 200 ] || fail "the page with the token: $(cat "$T/body")"
    grep -q '<title>rewind</title>' "$T/body" || fail "not the page"
    [ "$(http "${URL}api/runs")" = 200 ] || fail "api/runs with the token"
    [ "$(http "$BASE/")" = 403 ] || fail "no token: not refused"
    [ "$(http "$BASE/api/runs")" = 403 ] || fail "no token (api): not refused"
    [ "$(http "$BASE/0123456789abcdef0123456789abcdef/api/runs")" = 403 ] || fail "a wrong token: not refused"
    [ "$(http "$BASE/${TOKEN%?}/api/runs")" = 403 ] || fail "a token one digit short: not refused"
    [ "$(http "${URL}../../etc/passwd")" = 403 ] || fail "'..': not refused"
    [ "$(http "${URL}api/run/..%2f..%2fetc/summary")" = 403 ] || fail "'%2e%2e': not refused"
    [ "$(http "${URL}/etc/passwd")" = 403 ] || fail "an absolute path: not refused"
    ! grep -q root: "$T/body" || fail "served /etc/passwd"
    # the stack route checks its run before anything runs
    [ "$(http "${URL}api/run/0123456789abcdef/where?step=1")" = 404 ] || fail "where of no run: $(cat "$T/body")"
    [ "$(http "${URL}api/run/a%20b/where?step=1")" = 400 ] || fail "where of a bad reference: $(cat "$T/body")"
    [ "$(http "${URL}api/run/..%2f..%2fetc/where?step=1")" = 403 ] || fail "where with '..': not refused"
    # the Stack pane's words for what a stack lacks (web/stack.js, no browser)
    if command -v node >/dev/null; then
        node --no-warnings "$TOP/tests/browser/stack_test.mjs" > stack_test.out 2>&1 ||
            fail "stack_test.mjs: $(cat stack_test.out)"
    fi
    # a POST needs the token in its header too
    [ "$(http -X POST -d '{"run":"@","step":1,"schedule":1}' "${URL}api/fork")" = 403 ] ||
        fail "a POST without X-Rewind-Token: not refused"
    [ "$(http -X POST -H "X-Rewind-Token: $TOKEN" -d '{"run":"@","step":1,"path":"/a/../b"}' \
        "${URL}api/cat")" != 200 ] || fail "cat of a path with '..' accepted"
    # the state file names this server, and open reuses it
    grep -q "\"token\":\"$TOKEN\"" "$REWIND_HOME/serve.json" || fail "serve.json: $(cat "$REWIND_HOME/serve.json")"
    serve_stop
    [ ! -e "$REWIND_HOME/serve.json" ] || fail "serve.json left after the server stopped"
    # read-only: reading works, every POST is refused
    serve_start r --read-only
    [ "$(http "${URL}api/runs")" = 200 ] || fail "read-only: api/runs"
    [ "$(http -X POST -H "X-Rewind-Token: $TOKEN" -d '{}' "${URL}api/fork")" = 403 ] ||
        fail "read-only: a POST was not refused ($(cat "$T/body"))"
    grep -q read-only "$T/body" || fail "read-only: the refusal does not say why: $(cat "$T/body")"
    run_rw bad serve --port 70000
    expect_rc 2
}

# browser_ready: node, Debian's chromium, playwright-core and loopback, or skip
browser_ready() {
    command -v node >/dev/null || skip "no node"
    [ -x /usr/bin/chromium ] || skip "no /usr/bin/chromium"
    [ -d "$TOP/web/node_modules/playwright-core" ] || skip "no web/node_modules (make runs npm ci in web/)"
    loopback_up
}

# browser_drive RUN OTHER STEP SHOTS [VAR=VALUE...]: `rewind open RUN STEP`
# (a server started, then reused by a second open with --compare OTHER),
# then tests/browser/serve.mjs on it with the variables given; its lines
# are kept in SHOTS/browser.out. Sets URL0 (the page without its hash) and
# SPID (the server).
browser_drive() {
    local run=$1 other=$2 step=$3 shots=$4; shift 4
    "$REWIND" log "$run" "$step" > log_at_step
    run_rw o1 open "$run" "$step"
    expect_rc 0
    run_rw o2 open "$run" "$step" --compare "$other"
    expect_rc 0
    local u1 u2; u1=$(cat o1.out); u2=$(cat o2.out)
    [ "${u1%%#*}" = "${u2%%#*}" ] || fail "open started a second server: $u1 vs $u2"
    grep -q 'started rewind serve' o1.err || fail "the first open did not start a server: $(cat o1.err)"
    ! grep -q 'started' o2.err || fail "the second open started another server"
    SPID=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["pid"])' "$REWIND_HOME/serve.json")
    trap 'kill $SPID 2>/dev/null || true' EXIT
    URL0=${u1%%#*}
    mkdir -p "$shots"
    rm -f "$shots"/*.png "$shots/browser.out"
    local t0; t0=$(date +%s)
    env FAIL="$run" PASS="$other" SEGV="$step" LOG_AT_SEGV="$T/log_at_step" SHOTS="$shots" "$@" \
        node "$TOP/tests/browser/serve.mjs" "$URL0" > browser.out 2>&1 ||
        fail "the browser ($(cat times), then $(( $(date +%s) - t0 ))s): $(cat browser.out)"
    echo "browser part: $(( $(date +%s) - t0 ))s after $(cat times)" >> browser.out
    cp browser.out "$shots/browser.out"
}

# file_run: a run whose job writes /tmp/note (the page's files list, a
# click on it: its content at the step, by cat); sets FILE_ARGS, the
# variables for serve.mjs: the run, the step before the open that writes
# the file and the exec of sleep after it (sh has written and closed it).
file_run() {
    run_rw f run --root "$ROOT" -- sh -c 'echo rewind-file-ok > /tmp/note; sleep 1'
    expect_rc 0
    local rf; rf=$(run_id f.err)
    printf 'rewind-file-ok\n' > note_want
    "$REWIND" events "$rf" --json > fe.json
    local fsteps; fsteps=$(python3 - fe.json <<'PY'
import json, sys
ev = json.load(open(sys.argv[1]))
o = [e["step"] for e in ev if e["kind"] == "open" and e["payload"].split("\0")[0] == "/tmp/note"][0]
x = [e["step"] for e in ev if e["kind"] == "exec" and "sleep" in e["payload"].split("\0") and e["step"] > o][0]
print(o - 1, x)
PY
) || fail "no open of /tmp/note then exec of sleep: $(head -c 600 fe.json)"
    local fbefore fafter; read -r fbefore fafter <<<"$fsteps"
    FILE_ARGS=(FILE_RUN="$rf" FILE_BEFORE="$fbefore" FILE_STEP="$fafter" FILE_PATH=/tmp/note
        FILE_WANT="$T/note_want")
}

# The short version of the next test (both in tier long, make check-long;
# make check starts serve in the two tests above): a run of the pool (built with -g: pool-g) and one of the fixed
# pool instead of a 64-schedule check, and the page driven without the
# actions that boot a VM (cat, fork, shell) but one: the stack. The pool's
# run opens, the playhead is dragged and moved by the arrow keys to its
# "sum" line, whose event, process tree and log (rewind log's) are shown;
# the comparison with the fixed pool names where the runs part; at an idle
# step after the pool made its threads (its main thread sleeps in main) the
# Stack box shows main at its line of pool.c (rewind where on the server).
# Last, a run that writes /tmp/note is opened by its hash: the files list
# lacks the file before its open, has it after the write, and a click on it
# shows its content at that step (cat: the one action by click here).
# (The deep link, a second page load, is the long one's. That a client that
# hangs up ends its `rewind where` is tests/engine/serve_where_test.c's.)
# tier: long
test_serve_page_in_the_browser_short() {
    browser_ready
    local ts; ts=$(date +%s)
    run_rw a run --root "$ROOT" -- /usr/bin/pool-g
    expect_rc 0
    run_rw b run --root "$ROOT" -- /usr/bin/pool-fixed
    expect_rc 0
    # a third run whose job writes a file: the page's files list, a click
    # on it, its content at the step (the one throwaway VM of this test)
    file_run
    local ra rb; ra=$(run_id a.err) && rb=$(run_id b.err)
    echo "three runs: $(( $(date +%s) - ts ))s" > times
    run_rw e events "$ra" --kind output --json
    local step; step=$(python3 -c 'import json,sys; print([e["step"] for e in json.load(open(sys.argv[1]))][-1])' e.out) ||
        fail "no output event: $(head -c 400 e.out)"
    # the stack's step: after the job made its last thread (so its main
    # thread is in main, polling or joining) and before its output, one at
    # which the CPU is idle (the last switch of the sched records so far
    # went to pid 0). rewind where reads the guest kernel's task list from
    # init_task, which it finds only while the idle task holds an
    # active_mm: Linux sets it to NULL when it switches from idle straight
    # to a user task (docs/serve.md, "Tests").
    "$REWIND" events "$ra" > x.out
    local sstep; sstep=$(python3 - x.out "$step" <<'PY'
import re, sys
last_fork = cur = None
for line in open(sys.argv[1]):
    m = re.match(r"\s*(\d+)\s+(\S+)(.*)", line)
    if not m:
        continue
    s, kind, rest = int(m.group(1)), m.group(2), m.group(3)
    if s >= int(sys.argv[2]):
        break
    if kind == "fork":
        last_fork = s
    if kind == "sched":
        sw = re.findall(r"(\d+)->(\d+)", rest)
        if sw and last_fork is not None and s > last_fork + 1 and cur is None and sw[-1][1] == "0":
            cur = s
print(cur)
PY
)
    [[ "$sstep" =~ ^[0-9]+$ ]] || fail "no idle step after the last thread was made: $(grep -E 'fork|sched' x.out | head -40)"
    browser_drive "$ra" "$rb" "$step" "$SHOTS/short" SHORT=1 EVENT_RE='output fd 1 .*sum' STACK_STEP="$sstep" \
        "${FILE_ARGS[@]}"
    kill "$SPID"
}

# tier: long
test_serve_pool_failing_run_in_the_browser() {
    browser_ready
    local ts; ts=$(date +%s)
    run_rw c check --schedules 64 -j 2 --json --root "$ROOT" -- /usr/bin/pool
    [ "$RC" -eq 1 ] || fail "check exit $RC: $(tail -n 5 c.err)"
    python3 - c.out > ids <<'PY' || fail "report: $(cat c.out)"
import json, sys
r = json.load(open(sys.argv[1]))
print(r["passing_run"]["id"], r["failing_run"]["id"])
PY
    read -r pass failr < ids
    echo "check: $(( $(date +%s) - ts ))s" > times
    run_rw e events "$failr" --kind signal --json
    segv=$(python3 -c 'import json,sys; print([e["step"] for e in json.load(open(sys.argv[1])) if e["aux"] & 0xff == 11][0])' e.out) ||
        fail "no SIGSEGV in the failing run: $(head -c 400 e.out)"
    file_run
    browser_drive "$failr" "$pass" "$segv" "$SHOTS" CAT_WANT="$TOP/build/roots/test/etc/hostname" \
        CRASH_STACK_RE='#[0-9]+ +worker\b' "${FILE_ARGS[@]}"
    # cat through the API: a file of the root as the job saw it at the step
    local tok; tok=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["token"])' "$REWIND_HOME/serve.json")
    curl -s -H "X-Rewind-Token: $tok" -d "{\"run\":\"$failr\",\"step\":$segv,\"path\":\"/etc/hostname\"}" \
        "${URL0}api/cat" > cat.json
    python3 - cat.json "$TOP/build/roots/test/etc/hostname" <<'PY' || fail "api/cat: $(cat cat.json)"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["content"] == open(sys.argv[2]).read(), r
PY
    kill "$SPID"
}
