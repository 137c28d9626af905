# rewind nix (docs/nix.md): derivations from tests/nix/default.nix in a
# single-user store under the test's directory (tests/nix/setup.sh), offline:
# the only input is busybox, added to the store by builtins.path.

nix_setup() {
    command -v nix-build >/dev/null 2>&1 || skip "nix-build missing (apt-get install nix-bin)"
    eval "$("$TOP/tests/nix/setup.sh" "$T/nixs")" || fail "tests/nix/setup.sh failed"
    NIXF=$T/nixs/default.nix
}

test_nix_build_matches_the_store() {
    nix_setup
    local out; out=$(nix-build "$NIXF" -A hello --no-out-link 2>nb.err) || fail "nix-build: $(tail -3 nb.err)" || return 1
    local want; want=$(nix-store -q --hash "$out")
    run_rw n nix -f "$NIXF" -A hello --json
    expect_rc 0
    python3 - n.out "$out" "$want" <<'PY' || fail "rewind nix --json: $(cat n.out)"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["path"] == sys.argv[2] and d["in_store"] and d["matches"], d
assert d["nar_hash"] == sys.argv[3] == d["store_hash"], d
assert d["drv"].endswith("-hello.drv")
PY
    # the .drv is part of the spec
    local id; id=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["run"])' n.out)
    python3 -c 'import json,sys; s=json.load(open(sys.argv[1]))["spec"]; assert s["nix_drv"].endswith("-hello.drv") and s["cwd"]=="/build", s' \
        "$REWIND_HOME/runs/$id/manifest.json" || fail "the spec lacks the derivation"
    # negative twin: the output's hash follows its content; a listing built
    # under two directory orders hashes differently (and is not in the store)
    run_rw l1 nix -f "$NIXF" -A listing --dirorder 1 --json
    expect_rc 0
    run_rw l2 nix -f "$NIXF" -A listing --dirorder 2 --json
    expect_rc 0
    python3 - l1.out l2.out <<'PY' || fail "listing hashes: $(cat l1.out l2.out)"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
assert not a["in_store"] and a["nar_hash"].startswith("sha256:") and a["nar_hash"] != b["nar_hash"], (a, b)
PY
}

test_nix_network_derivation_fails_clearly() {
    nix_setup
    run_rw f nix -f "$NIXF" -A fetch
    expect_rc 1
    expect_grep f.err 'the builder failed (exited 1).*fetches from the network.*the VM has no network'
    run_rw u nix -f "$T/nope.nix" -A x
    expect_rc 2
    expect_grep u.err 'nix could not evaluate'
}

# A flake (tests/nix/flake.nix, no inputs): rewind nix FLAKE#attr builds
# what `nix build` built, bit for bit.
test_nix_flake_build_matches_nix_build() {
    nix_setup
    local fl=$T/nixs/flake
    nix build --no-link --json "$fl#hello" >nb.json 2>nb.err || fail "nix build: $(tail -3 nb.err)" || return 1
    local out; out=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[0]["outputs"]["out"])' nb.json)
    local want; want=$(nix-store -q --hash "$out")
    run_rw n nix "$fl#hello" --json
    expect_rc 0
    python3 - n.out "$out" "$want" <<'PY' || fail "rewind nix FLAKE#hello --json: $(cat n.out)"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["path"] == sys.argv[2] and d["in_store"] and d["matches"], d
assert d["nar_hash"] == sys.argv[3] == d["store_hash"], d
PY
    # bad usage: one clear line each
    run_rw u1 nix "$fl#hello" --root /
    expect_rc 2
    expect_grep u1.err 'the derivation fixes the root.*drop --root'
    run_rw u2 nix "$fl#hello" "$fl#listing"
    expect_rc 2
    expect_grep u2.err 'one installable at a time'
}

# rewind check INSTALLABLE: a derivation whose test suite runs a thread
# pool with a shutdown race (examples/pool) fails under some schedule; the
# fixed derivation does not (the negative twin).
test_nix_check_finds_the_thread_race() {
    nix_setup
    run_rw c check --schedules 64 -f "$NIXF" -A threads
    expect_rc 1
    expect_grep c.out '^derivation .*-threads\.drv$'
    expect_grep c.out '^schedule [0-9]* (.*) ends differently: run [0-9a-f]* '
    expect_grep c.out '^deciding step: [0-9]*'
    expect_grep c.out '^output of schedule 0 [0-9a-f]*: sha256:'
    local failr; failr=$(sed -n 's/^passing run: .*failing run: \([0-9a-f]*\) .*/\1/p' c.out)
    [ -n "$failr" ] || fail "no failing run in: $(cat c.out)"
    python3 -c 'import json,sys; s=json.load(open(sys.argv[1]))["spec"]; assert s["nix_drv"].endswith("-threads.drv"), s' \
        "$REWIND_HOME/runs/$failr/manifest.json" || fail "the failing run's spec lacks the derivation"
    run_rw q replay "$failr"
    [ "$RC" -eq 0 ] || fail "the failing run does not replay: $(cat q.out q.err)"
    expect_no_grep q.err 'DETERMINISM VIOLATION'
    run_rw f check --schedules 8 -f "$NIXF" -A threads-fixed
    expect_rc 0
    expect_grep f.out '^no difference: 8 schedules'
}

# rewind repro INSTALLABLE: the listing derivation differs under another
# directory order, and blame names find; hello reproduces (negative twin).
test_nix_repro_blames_find() {
    nix_setup
    run_rw r repro --vary dirorder -f "$NIXF" -A listing
    expect_rc 1
    expect_grep r.out '^derivation .*-listing\.drv$'
    expect_grep r.out '-listing/list differs in build 2: bytes [0-9]*\.\.'
    expect_grep r.out 'build 2: byte [0-9]* of .*-listing/list in run [0-9a-f]* was written by pid [0-9]* `.*-busybox/bin/find src`'
    expect_grep r.out 'NOT reproducible'
    run_rw h repro --vary dirorder -f "$NIXF" -A hello
    expect_rc 0
    expect_grep h.out 'reproducible: every build collected the same files'
}
