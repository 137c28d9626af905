# The compatibility suite (tests/compat/README.md): real programs in Python,
# Go, C, Node.js and shell, and CPython's own regression tests, on a Debian
# root built by tools/mkroot-debian.sh. Each workload runs three times with
# one id, no determinism violation, the same steps and the expected output,
# then under `check --schedules 8` with no schedule ending differently.

COMPAT=$TOP/build/roots/compat.erofs
COMPAT_DIR=$TOP/tests/compat
# Schedules of each workload's check (issue 12 asks for 8; each test's
# time in the test host is in bench/RESULTS.md, "Compatibility suite").
COMPAT_SCHEDULES=8

# compat_home: the compat image is hashed and cached once per suite run and
# hard-linked into each compat test's home (as run.sh does for the test
# root: images are named by content and never modified).
compat_home() {
    [ -f "$COMPAT" ] || skip "no $COMPAT (make build/roots/compat.erofs)"
    local shared=$T/../compat-images
    if [ ! -d "$shared" ]; then
        local prime=$T/../compat-prime t0; t0=$(date +%s)
        rm -rf "$prime"
        REWIND_HOME=$prime "$REWIND" run --root "$COMPAT" -- true >"$T/prime.log" 2>&1 ||
            fail "priming the compat image: $(tail -n 2 "$T/prime.log" | tr '\n' '|')" || return 1
        mv "$prime/images" "$shared"
        rm -rf "$prime"
        compat_note "image: first use (hash, cache, boot, true) in $(($(date +%s) - t0)) s"
    fi
    cp -al "$shared/." "$REWIND_HOME/images/"
}

# compat_cmd NAME: the workload's command from tests/compat/workloads.txt
compat_cmd() {
    local c; c=$(grep -v '^#' "$COMPAT_DIR/workloads.txt" | grep "^$1|" | cut -d'|' -f2-)
    [ -n "$c" ] || fail "no workload $1 in workloads.txt" || return 1
    echo "$c"
}

# compat_three NAME: three runs, one id, one trace, the expected output.
compat_three() {
    local name=$1 cmd; cmd=$(compat_cmd "$name")
    compat_home
    local i t0; t0=$(date +%s)
    for i in 1 2 3; do
        run_rw "r$i" run --root "$COMPAT" -- sh -c "$cmd"
        expect_rc 0
        expect_no_grep "r$i.err" 'DETERMINISM VIOLATION'
    done
    compat_note "$name: three runs in $(($(date +%s) - t0)) s"
    same_run r1.err r2.err
    same_run r1.err r3.err
    cmp -s r1.out r2.out && cmp -s r1.out r3.out || fail "output differs between runs"
    [ "$(steps_of r1.err)" = "$(steps_of r2.err)" ] && [ "$(steps_of r1.err)" = "$(steps_of r3.err)" ] ||
        fail "steps differ: $(steps_of r1.err) $(steps_of r2.err) $(steps_of r3.err)"
    diff -u "$COMPAT_DIR/expected/$name.out" r1.out >&2 || fail "$name: output is not expected/$name.out"
    run_rw s show "$(run_id r1.err)"
    expect_grep s.out '^trace:    [0-9a-f]\{64\}$'
    compat_note "$name: $(closing r1.err)"
}

# compat_note LINE: figures for bench/RESULTS.md, kept in $COMPAT_FIGURES
# when set (a file in the work tree: the test host keeps it).
compat_note() { [ -z "${COMPAT_FIGURES:-}" ] || echo "$*" >>"$COMPAT_FIGURES"; }

# compat_check NAME [N]: N (default COMPAT_SCHEDULES) schedules, none ends
# differently.
compat_check() {
    local t0 n=${2:-$COMPAT_SCHEDULES}; t0=$(date +%s)
    run_rw c check --schedules "$n" --run "$(run_id r1.err)"
    compat_note "$1: check --schedules $n: rc $RC in $(($(date +%s) - t0)) s"
    [ "$RC" -eq 0 ] || fail "check --schedules $n of $1: rc $RC: $(tail -n 5 c.out c.err | tr '\n' '|')"
    grep -q "^no difference: $n schedules ended like schedule 0" c.out c.err ||
        fail "check of $1: not $n schedules without a difference: $(tail -n 3 c.out c.err | tr '\n' '|')"
}

compat_workload() { compat_three "$1" && compat_check "$1" "${2:-}"; }

# make check-long: every workload's three runs and a check of
# COMPAT_SCHEDULES schedules (make check runs the negative twin below and
# its positive twin on the same root).
# Issue 31's `make -j$(nproc)` with --cpus 4 (docs/determinism.md, "CPUs the
# job sees"): nproc says 4, make runs four compilers at once on the one
# vCPU with memory-access points, and two runs are one run.
# tier: long
test_compat_make_j_with_four_cpus() {
    compat_home
    local cmd='nproc; make -s -C /compat/c -j"$(nproc)" check'
    local i
    for i in 1 2; do
        run_rw "m$i" run --root "$COMPAT" --cpus 4 --preempt memory --timeout 1200 -- sh -c "$cmd"
        expect_rc 0
        expect_no_grep "m$i.err" 'DETERMINISM VIOLATION'
    done
    expect_grep m1.out '^4$'
    sed 1d m1.out >m1.rest
    diff -u m1.rest "$COMPAT_DIR/expected/c.out" >&2 || fail "make -j4: not expected/c.out"
    same_run m1.err m2.err
    cmp -s m1.out m2.out || fail "two outputs"
}

# tier: long
test_compat_python() { compat_workload python; }
# tier: long
test_compat_go() { compat_workload go; }
# tier: long
test_compat_c() { compat_workload c; }
# tier: long
test_compat_node() { compat_workload node; }
# tier: long
test_compat_shell() { compat_workload shell; }
# tier: long
test_compat_cpython_tests() { compat_workload cpython-tests; }


# Negative twin of compat_three (docs/determinism.md, "Negative twins"): a
# Debian python3 that reads host entropy through an open hole (host-rng: the
# guest kernel's RNG seeded from the host; Python seeds its random module
# from it) must be caught by the same checks the workloads pass: one id, and
# a determinism violation naming a step by the third run. Its root is
# python.erofs (the test root with Debian's python3, 100 MB), not the
# compatibility root: in the vm tier no other test uses that root, and its
# first use (hashing and copying 492 MB) took 37 s in the test host.
# tier: vm
test_compat_hole_is_caught() {
    local COMPAT=$TOP/build/roots/python.erofs
    [ -f "$COMPAT" ] || fail "no $COMPAT (make build/roots/python.erofs)"
    # its positive twin first: without the hole, two runs of the same
    # program are one run (one id, one number, no violation)
    local i
    for i in 1 2; do
        run_rw "p$i" run --timeout 300 --root "$COMPAT" -- python3 -c 'import random; print(random.getrandbits(64))'
        expect_rc 0
        expect_no_grep "p$i.err" 'DETERMINISM VIOLATION'
    done
    same_run p1.err p2.err
    grep -qx '[0-9]\+' p1.out && cmp -s p1.out p2.out || fail "without the hole: $(cat p1.out p2.out)"
    export REWIND_TEST_HOLES=1
    hole_caught h 3 --timeout 300 --test-hole host-rng --root "$COMPAT" -- \
        python3 -c 'import random; print(random.getrandbits(64))'
    grep -qx '[0-9]\+' h1.out && grep -qx '[0-9]\+' h$CAUGHT.out || fail "no number: $(cat h1.err)"
    ! cmp -s h1.out h$CAUGHT.out || fail "the same number twice: the hole did not reach the program"
}
