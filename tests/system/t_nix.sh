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
