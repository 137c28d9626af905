# Nodes (docs/faults.md, "Nodes"): --node NAME=COMMAND starts COMMAND before
# the job in a network and host name of its own; nodes and the job reach
# each other by name over one bridge; log, ps and events name each
# process's node; a run with nodes is a function of its spec like any other.

# A node's lines: its host name, its addresses, and a web server on port 80;
# the job fetches from each node by name (retrying until the server is up).
NODE_CMD='echo "$REWIND_NODE is $(hostname)"; ip -4 addr show eth0 | sed -n "s/.*inet \([0-9./]*\).*/$REWIND_NODE addr \1/p"; mkdir -p /srv/$REWIND_NODE; echo "served by $(hostname)" >/srv/$REWIND_NODE/index.html; exec httpd -f -p 80 -h /srv/$REWIND_NODE'
JOB_CMD='for n in n1 n2; do i=0; until wget -q -O - http://$n/ 2>/dev/null; do i=$((i+1)); [ $i -lt 50 ] || { echo "no answer from $n"; exit 1; }; sleep 0.1; done; done; wget -q -O - http://10.77.0.2/ ; echo "job is $(hostname)"; grep -c . /sys/class/net/lo/address >/dev/null && ls /sys/class/net | tr "\n" " "; echo'

# tier: vm
test_nodes_talk_by_name() {
    run_rw a run --root "$ROOT" --node "n1=$NODE_CMD" --node "n2=$NODE_CMD" -- sh -c "$JOB_CMD"
    expect_rc 0
    expect_grep a.out '^n1 is n1$'
    expect_grep a.out '^n2 is n2$'
    expect_grep a.out '^n1 addr 10.77.0.1/24$'
    expect_grep a.out '^n2 addr 10.77.0.2/24$'
    [ "$(grep -c '^served by n1$' a.out)" -eq 1 ] || fail "n1 by name: $(cat a.out)"
    [ "$(grep -c '^served by n2$' a.out)" -eq 2 ] || fail "n2 by name and address: $(cat a.out)"
    # the job keeps init's namespaces: no host name, the bridge and the
    # host sides of the nodes' links
    expect_grep a.out '^job is (none)$'
    expect_grep a.out '^lo rw0 rwn1 rwn2 $'
    local id; id=$(run_id a.err)
    grep -q '"nodes":\[{"name":"n1","run":' "$REWIND_HOME/runs/$id/spec.json" ||
        fail "the spec lacks the nodes: $(cat "$REWIND_HOME/runs/$id/spec.json")"
    run_rw s show "$id"
    expect_rc 0
    expect_grep s.out '^network:  loopback, and the job (10.77.0.254) with 2 nodes on a bridge'
    expect_grep s.out '^node:     n2 at 10.77.0.2: echo '
    expect_grep s.out -- "--node 'n1=echo "
    # log --node: one node's output, the job's apart
    "$REWIND" log "$id" --node n1 >l1.out || fail "log --node n1"
    [ "$(grep -c . l1.out)" -eq 2 ] && grep -q '^n1 is n1$' l1.out || fail "n1's log: $(cat l1.out)"
    "$REWIND" log "$id" --node job >lj.out || fail "log --node job"
    expect_no_grep lj.out ' is n'
    expect_grep lj.out '^served by n1$'
    "$REWIND" log "$id" --steps >ls.out || fail "log --steps"
    expect_grep ls.out '^\[[0-9]* [0-9]* n2 out\] n2 is n2$'
    # events and ps name the node of each process
    "$REWIND" events "$id" --kind exec --json >ev.json || fail "events --json"
    python3 - ev.json <<'EOF' || fail "events: $(head -c 600 ev.json)"
import json, sys
ev = json.load(open(sys.argv[1]))
def argv0(e): return e["payload"].split("\0")[1]
httpd = [e for e in ev if argv0(e) == "httpd"]
assert sorted(e.get("node") for e in httpd) == ["n1", "n2"], httpd
wget = [e for e in ev if argv0(e) == "wget"]
assert wget and all("node" not in e for e in wget), wget
EOF
    local step; step=$(python3 -c 'import json,sys; print(max(e["step"] for e in json.load(open(sys.argv[1])) if e["payload"].split("\0")[1] == "wget"))' ev.json)
    "$REWIND" ps "$id" "$step" >ps.out || fail "ps at $step"
    expect_grep ps.out '\[n1\] httpd -f -p 80'
    expect_grep ps.out '\[n2\] httpd -f -p 80'
    # the same spec is the same run: the replay runs it again from boot and
    # compares every record (the output too), the steps and the final RAM;
    # and a fork from the middle ends as the run did
    run_rw r replay "$id"
    expect_rc 0
    expect_grep r.out '^identical: '
    run_rw f fork "$id" "$step"
    expect_rc 0
    expect_grep f.err "^rewind: run [0-9a-f]* exited:0 "
}

# Bad node lists are refused with one line and exit 2, before any guest.
# tier: engine
test_bad_nodes_are_refused() {
    local root="$T/root"
    mkdir -p "$root"
    for bad in 'job=true' 'N1=true' '1n=true' 'n1=' 'n1' 'abcdefghijklmnopq=true'; do
        run_rw x run --root "$root" --node "$bad" -- true
        expect_rc 2
        [ "$(wc -l <x.err)" -eq 1 ] || fail "$bad: $(cat x.err)"
        expect_grep x.err "node"
    done
    run_rw x run --root "$root" --node n1=true --node n1=false -- true
    expect_rc 2
    expect_grep x.err 'two nodes have that name'
    local many=() i
    for i in $(seq 1 17); do many+=(--node "n$i=true"); done
    run_rw x run --root "$root" "${many[@]}" -- true
    expect_rc 2
    expect_grep x.err 'at most 16 nodes'
    echo '{"nodes": [{"name": "n1"}]}' >bad.json
    run_rw x run --root "$root" --nodes bad.json -- true
    expect_rc 2
    expect_grep x.err 'entry 1 needs exactly'
    echo '{"nodes": ' >bad2.json
    run_rw x run --root "$root" --nodes bad2.json -- true
    expect_rc 2
    expect_grep x.err -- '--nodes .*bad2.json'
    run_rw x run --root "$root" --nodes "$T/nonexistent.json" -- true
    expect_rc 2
    [ ! -d "$REWIND_HOME/runs" ] || [ -z "$(ls "$REWIND_HOME/runs")" ] || fail "a run was stored"
}

# examples/kv on three nodes (docs/faults.md): the client's acknowledged
# writes are on every node, for the store with its bug (kv: the primary
# acknowledges before it replicates) as for the fixed one. Without faults
# the bug never shows: every run passes.
# tier: long
test_kv_replicates_on_three_nodes() {
    local kv
    for kv in kv kv-fixed; do
        run_rw "$kv" run --root "$ROOT" --node "n1=$kv server n1 n1 n2 n3" \
            --node "n2=$kv server n2 n1 n2 n3" --node "n3=$kv server n3 n1 n2 n3" \
            -- "$kv" client n1 n2 n3
        expect_rc 0
        expect_grep "$kv.out" '^kv n1: serving (primary)$'
        expect_grep "$kv.out" '^kv n3: serving (backup)$'
        expect_grep "$kv.out" '^client: 20 of 20 writes acknowledged$'
        [ "$(grep -c '^client: n[123] has 20 of the 20 acknowledged writes$' "$kv.out")" -eq 3 ] ||
            fail "$kv: $(cat "$kv.out")"
        "$REWIND" asserts "$(run_id "$kv.err")" >"$kv.as" 2>&1 || fail "$kv: asserts: $(cat "$kv.as")"
        expect_grep "$kv.as" 'every acknowledged write is on every living node'
    done
}
