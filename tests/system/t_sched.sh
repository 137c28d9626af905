# Which thread held the CPU (docs/guest-abi.md, "Context switches"): the
# guest kernel reports its context switches through the shared page, the
# monitor writes them as sched records, and `rewind sched` and `rewind ps`
# read them back. pingpong's two threads pass a token through two pipes and
# each writes a line (one output record, one step, with the writer's tid)
# while it holds the token.

# sched_check RUN: every output step of pingpong was made by the thread
# `rewind sched --json` says held the CPU there, and the two threads'
# stretches alternate. Prints "PING PONG" (their tids).
sched_check() {
    "$REWIND" sched "$1" --json > s.json || fail "sched --json: $(cat s.json)" || return 1
    "$REWIND" events "$1" --kind output --json > o.json || fail "events: $(cat o.json)" || return 1
    python3 - s.json o.json <<'PY'
import json, re, sys
s = json.load(open(sys.argv[1])); out = json.load(open(sys.argv[2]))
assert s["switch_count"] > 0 and s["lost"] == 0, s["switch_count"]
def held(step):
    for x in s["stretches"]:
        if not x["between"] and x["from"] <= step <= x["to"]:
            return x["tid"]
lines = [(e["step"], e["tid"], e["payload"]) for e in out if re.match(r"p[io]ng \d", e["payload"])]
assert len(lines) == 12, lines
tids = {}
for step, tid, text in lines:
    who, i, said = re.match(r"(p[io]ng) (\d+) tid (\d+)", text).groups()
    assert int(said) == tid, (text, tid)          # the record's tid is the writer's
    assert held(step) == tid, (step, text, held(step))  # and sched says it held the CPU
    tids.setdefault(who, tid)
ping, pong = tids["ping"], tids["pong"]
assert ping != pong
names = {t["tid"]: t for t in s["threads"]}
assert names[ping]["name"] == "pingpong" and names[ping]["pid"] == names[pong]["pid"], names
# alternation: the stretches that hold the lines, in order, belong to ping,
# pong, ping, ... and each line is in a stretch after the previous line's
held_at = [next(i for i, x in enumerate(s["stretches"])
                if not x["between"] and x["from"] <= step <= x["to"]) for step, _, _ in lines]
assert all(a < b for a, b in zip(held_at, held_at[1:])), held_at
assert [s["stretches"][i]["tid"] for i in held_at] == [ping, pong] * 6, held_at
print(ping, pong)
PY
}

# tier: vm
test_sched_shows_handoff_alternating() {
    run_rw r run --root "$ROOT" -- /usr/bin/pingpong
    expect_rc 0
    local id; id=$(run_id r.err)
    sched_check "$id" > tids || return 1
    local ping pong; read -r ping pong < tids
    # text: a lane per thread and a row per stretch naming the thread
    run_rw t sched "$id"
    expect_rc 0
    expect_grep t.out 'context switches'
    grep -Eq "^ +[0-9]+ +[0-9]+ .*#.*  $ping \(pid [0-9]+ pingpong\)\$" t.out ||
        fail "no stretch of ping ($ping): $(grep -c . t.out) lines"
    [ "$(grep -c "  $pong (pid [0-9]* pingpong)\$" t.out)" -ge 6 ] || fail "pong stretches: $(cat t.out)"
    # --from/--to bound the rows
    local s4; s4=$(python3 -c 'import json,sys; print([e["step"] for e in json.load(open(sys.argv[1])) if e["payload"].startswith("pong 4 ")][0])' o.json)
    run_rw w sched "$id" --from "$s4" --to "$s4" --json
    expect_rc 0
    python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); assert [x["tid"] for x in s["stretches"] if not x["between"]] == [int(sys.argv[2])], s' \
        w.out "$pong" || fail "sched at the step of 'pong 4': $(cat w.out)"
    # ps at that step marks the process and names pong's thread
    run_rw p ps "$id" "$s4"
    expect_rc 0
    grep -Eq '^\* *[0-9]+ .*pingpong' p.out || fail "ps does not mark pingpong: $(cat p.out)"
    expect_grep p.out "held the CPU: thread $pong of pid"
    run_rw pj ps "$id" "$s4" --json
    python3 -c 'import json,sys; ps=json.load(open(sys.argv[1])); assert [p["ran_tid"] for p in ps if "ran_tid" in p] == [int(sys.argv[2])], ps' \
        pj.out "$pong" || fail "ps --json ran_tid: $(cat pj.out)"
    # bad arguments: one line, exit 2
    run_rw b sched "$id" --from 9 --to 3
    expect_rc 2
    run_rw b sched "$id" --from x
    expect_rc 2
    run_rw b sched
    expect_rc 2
}

# The records are part of the trace: a replay must reproduce them, and a
# fork under a schedule from the job's start may interleave otherwise but
# still agrees with its own output steps.
# tier: long
test_sched_replays_and_forks() {
    run_rw r run --root "$ROOT" -- /usr/bin/pingpong
    expect_rc 0
    local id; id=$(run_id r.err)
    run_rw q replay "$id"
    expect_rc 0
    "$REWIND" events "$id" --kind output --json > o.json
    local s1; s1=$(python3 -c 'import json,sys; print([e["step"] for e in json.load(open(sys.argv[1])) if e["payload"].startswith("ping 1 ")][0])' o.json)
    run_rw f fork "$id" "$s1" --schedule 3
    expect_rc 0
    sched_check "$(run_id f.err)" > /dev/null || return 1
}
