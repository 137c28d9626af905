# rewind nix (docs/nix.md): derivations from tests/nix/default.nix in a
# single-user store under the test's directory (tests/nix/setup.sh), offline:
# the only input is busybox, added to the store by builtins.path.

nix_setup() {
    command -v nix-build >/dev/null 2>&1 || skip "nix-build missing (apt-get install nix-bin)"
    local env
    env=$("$TOP/tests/nix/setup.sh" "$T/nixs") || fail "tests/nix/setup.sh failed" || return 1
    eval "$env"
    NIXF=$T/nixs/default.nix
}

# tier: vm
test_nix_build_matches_the_store() {
    nix_setup
    # the flake (tests/nix/flake.nix) and the file give the same derivation
    local fl=$T/nixs/flake
    local out; out=$(nix-build "$NIXF" -A hello --no-out-link 2>nb.err) || fail "nix-build: $(tail -3 nb.err)" || return 1
    nix build --no-link --json "$fl#hello" >fb.json 2>fb.err || fail "nix build: $(tail -3 fb.err)" || return 1
    python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))[0]["outputs"]["out"] == sys.argv[2]' \
        fb.json "$out" || fail "nix build FLAKE#hello and nix-build -A hello differ: $(cat fb.json)"
    local want; want=$(nix-store -q --hash "$out")
    run_rw n nix "$fl#hello" --json
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
    # bad usage: one clear line each (the negative twin of matching is in
    # test_nix_network_fails_and_an_output_that_differs_is_told)
    run_rw u1 nix "$fl#hello" --root /
    expect_rc 2
    expect_grep u1.err 'the derivation fixes the root.*drop --root'
    run_rw u2 nix "$fl#hello" "$fl#listing"
    expect_rc 2
    expect_grep u2.err 'one installable at a time'
    run_rw u3 nix -f "$NIXF" -A hello --dirorder x
    expect_rc 2
    expect_grep u3.err 'dirorder must be'
}

# tier: long
test_nix_network_fails_and_an_output_that_differs_is_told() {
    nix_setup
    run_rw f nix -f "$NIXF" -A fetch
    expect_rc 1
    expect_grep f.err 'the builder failed (exited 1).*fetches from the network.*the VM has no network'
    run_rw u nix -f "$T/nope.nix" -A x
    expect_rc 2
    expect_grep u.err 'nix could not evaluate'
    # negative twin of test_nix_build_matches_the_store: the stamp
    # derivation writes the date, the host's in the store, the VM's (its
    # epoch) in rewind's build: it is told as differing, exit 1
    local out; out=$(nix-build "$NIXF" -A stamp --no-out-link 2>nb.err) || fail "nix-build: $(tail -3 nb.err)" || return 1
    run_rw s nix -f "$NIXF" -A stamp --json
    expect_rc 1
    python3 - s.out "$out" "$(nix-store -q --hash "$out")" <<'PY' || fail "rewind nix -A stamp --json: $(cat s.out)"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["path"] == sys.argv[2] and d["in_store"] and not d["matches"], d
assert d["store_hash"] == sys.argv[3] != d["nar_hash"] and d["nar_hash"].startswith("sha256:"), d
PY
}

# rewind check INSTALLABLE: a derivation whose test suite runs a thread
# pool with a shutdown race (examples/pool) fails under some schedule; the
# fixed derivation does not (the negative twin).
# tier: long
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

# The short version of the above (make check): check INSTALLABLE runs the
# derivation's build as schedule 0 and under schedules, and reports the
# output each built.
# tier: long
test_nix_check_runs_the_build_under_schedules() {
    nix_setup
    run_rw c check --schedules 2 -f "$NIXF" -A threads-fixed
    expect_rc 0
    expect_grep c.out '^derivation .*-threads-fixed\.drv$'
    expect_grep c.out '^no difference: 2 schedules'
    expect_grep c.out '^output of schedule 0 [0-9a-f]*: sha256:'
    local id; id=$(sed -n 's/^schedule 0: run \([0-9a-f]*\) .*/\1/p' c.out)
    python3 -c 'import json,sys; s=json.load(open(sys.argv[1]))["spec"]; assert s["nix_drv"].endswith("-threads-fixed.drv") and s["collect"].endswith("-threads-fixed"), s' \
        "$REWIND_HOME/runs/$id/manifest.json" || fail "schedule 0's spec is not the derivation's build"
    run_rw u check -f "$NIXF" -A threads-fixed --cwd /x
    expect_rc 2
    expect_grep u.err 'drop --cwd'
}

# rewind repro INSTALLABLE: the listing derivation (GNU ls -U, from the
# coreutils-ls derivation, into $out/list) differs under another directory
# order, and blame names ls: its pid, argv and step, in both builds; hello
# reproduces (negative twin).
# tier: long
test_nix_repro_blames_ls() {
    nix_setup
    run_rw r repro --vary dirorder -f "$NIXF" -A listing
    expect_rc 1
    expect_grep r.out '^derivation .*-listing\.drv$'
    expect_grep r.out '-listing/list differs in build 2: bytes [0-9]*\.\.'
    expect_grep r.out '^  build 1: byte [0-9]* of .*-listing/list in run [0-9a-f]* was written by pid [0-9]* `.*-coreutils-ls/bin/ls -U src` at step [0-9]* (event [0-9]*)$'
    expect_grep r.out '^  build 2: byte [0-9]* of .*-listing/list in run [0-9a-f]* was written by pid [0-9]* `.*-coreutils-ls/bin/ls -U src` at step [0-9]* (event [0-9]*)$'
    expect_grep r.out 'build 2:   chain: pid [0-9]* `.*-coreutils-ls/bin/ls -U src` <- pid [0-9]* `.*-busybox/bin/sh -c'
    expect_grep r.out 'NOT reproducible'
    run_rw h repro --vary dirorder -f "$NIXF" -A hello
    expect_rc 0
    expect_grep h.out 'reproducible: every build collected the same files'
}
