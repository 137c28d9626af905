# Soak (issue 11; docs/reliability.md): bench/soak.sh runs the mixed soak
# suite 20 times through the command line, plain and perturbed, and every
# run matches the first of its kind (id, trace hash, output). Its negative
# twin opens a determinism hole (host-rng) and must see divergences.

# tier: long
test_soak_20_runs_no_divergence() {
    REWIND="$REWIND" TMPDIR=$T REWIND_HOME=$T/soak-home "$TOP/bench/soak.sh" 20 > soak.out 2>&1
    RC=$?; LAST=soak
    [ "$RC" -eq 0 ] || fail "soak: $(tail -n 5 soak.out | tr '\n' '|')"
    expect_grep soak.out '^soak: 20 runs, 0 divergences'
}

# tier: long
test_soak_sees_a_hole() {
    # the soak's checks must catch a run that differs: a rewind whose
    # guest entropy comes from the host differs every run
    cat > rw-hole <<EOS
#!/bin/sh
if [ "\$1" = run ]; then shift; exec env REWIND_TEST_HOLES=1 "$REWIND" run --test-hole host-rng "\$@"; fi
exec "$REWIND" "\$@"
EOS
    chmod +x rw-hole
    set +e
    TMPDIR=$T REWIND=$T/rw-hole REWIND_HOME=$T/hole-home "$TOP/bench/soak.sh" 3 > hole.out 2>&1
    RC=$?
    set -e
    [ "$RC" -ne 0 ] || fail "soak passed with a determinism hole open: $(tail -n 3 hole.out | tr '\n' '|')"
    # the runs themselves worked, and the soak told them apart by what they
    # recorded (a rewind that fails outright would also "diverge")
    expect_grep hole.out 'DIVERGES: .*\(trace hash differs\|determinism violation\)'
    expect_no_grep hole.out 'no run id\|the first run of its kind failed'
}
