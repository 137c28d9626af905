# t_hostile: the hostile guest (tests/guest/hostile.c) against the monitor.
# A root program in the guest sends wild and adversarial port writes: records
# at wild addresses with wild lengths and kinds, unassigned ports, IN and
# narrow and string accesses, unknown stop codes, the shared page registered
# again (at wild addresses and at a copy that moves from page to page), and,
# through the kernel's test hole (--test-hole guest-hostile), MMIO where no
# device is, HLT with interrupts off, a triple fault and code run from MMIO.
# The monitor must refuse and count every breach, never crash or hang, end
# every run with a clear outcome, and leave the store and other runs intact.
# bench/RESULTS.md ("Hostile guest") has the figures of one run of this file.

# hostile_field FILE KEY: the number after KEY on the guest's summary line
# (the guest's garbage OUTPUT records are on stdout too, maybe on that line)
hostile_field() { LC_ALL=C sed -n "s/.*hostile: refused-expected .*\b$2 \([0-9]*\).*/\1/p" "$1" | head -n 1; }
# report LINE: a figure, on stderr and, if REWIND_HOSTILE_REPORT names a file
# (in the work tree: the test host writes nowhere else), appended to it
report() {
    echo "  $*" >&2
    [ -z "${REWIND_HOSTILE_REPORT:-}" ] || echo "$*" >>"$REWIND_HOSTILE_REPORT"
}
# manifest_field RUN KEY: a top-level field of `rewind show RUN --json`
manifest_field() {
    "$REWIND" show "$1" --json | python3 -c 'import json,sys; print(json.load(sys.stdin).get(sys.argv[1], 0))' "$2"
}

# actions per long fuzz run: ~60% breaches, ~20% garbage records, ~20% noise;
# two long runs make > 100,000 hostile records
FUZZ_N=${REWIND_HOSTILE_N:-50000}

# tier: long
test_hostile_flood_is_refused_and_counted() {
    export REWIND_TEST_HOLES=1
    # a run made before the flood, to replay after it
    run_rw base run --root "$ROOT" -- sh -c 'echo before; ls /usr/bin | wc -l'
    expect_rc 0
    local base; base=$(run_id base.err)

    local total=0 records=0 runs=0 seed
    for seed in 1 2; do
        run_rw f$seed run --timeout 900 --test-hole guest-hostile --test-hole refuse-go-on \
            --root "$ROOT" -- /usr/bin/hostile fuzz $seed "$FUZZ_N" 512
        [ "$RC" -eq 0 ] || fail "seed $seed: exit $RC: $(tail -n 3 f$seed.err | tr '\n' '|')"
        local want split acc id got out
        want=$(LC_ALL=C sed -n 's/.*hostile: refused-expected \([0-9]*\) .*/\1/p' f$seed.out)
        split=$(hostile_field f$seed.out or-if-split)
        acc=$(hostile_field f$seed.out accepted)
        [ -n "$want" ] && [ "$want" -gt 0 ] || fail "seed $seed: no summary: $(tail -n 3 f$seed.out)"
        id=$(run_id f$seed.err)
        got=$(manifest_field "$id" refused)
        out=$(manifest_field "$id" outcome)
        # exact: KVM hands a string OUT over whole (one breach) or split
        # into single OUTs (one breach per value) -- the guest counted both
        [ "$got" = "$want" ] || [ "$got" = "$split" ] ||
            fail "seed $seed: the monitor refused $got writes, the guest made $want breaches ($split if string OUTs are split)"
        [ "$got" = "$want" ] || report "seed $seed: KVM split the string OUTs into single OUTs"
        want=$got
        [ "$out" = exited ] || fail "seed $seed: outcome $out"
        [ "$(hostile_field f$seed.out mmio)" -gt 0 ] || fail "seed $seed: no MMIO went through the hole"
        expect_no_grep f$seed.out MMIO-WRONG
        total=$((total + want)); records=$((records + want + acc)); runs=$((runs + 1))
        report "seed $seed: $want breaches refused, $acc garbage records accepted, $(steps_of f$seed.err) steps, $(wall_of f$seed.err) s" >&2
    done
    report "hostile: $total breaches refused and counted, $records hostile records, $runs runs" >&2
    [ "$records" -ge 100000 ] || [ -n "${REWIND_HOSTILE_N:-}" ] || fail "only $records hostile records"

    # a shorter flood twice: the same run, and the monitor finds no divergence
    # (the second run is compared with the stored first, trace and RAM)
    run_rw s1 run --timeout 900 --test-hole guest-hostile --test-hole refuse-go-on \
        --root "$ROOT" -- /usr/bin/hostile fuzz 3 2000 512
    expect_rc 0
    run_rw s2 run --timeout 900 --test-hole guest-hostile --test-hole refuse-go-on \
        --root "$ROOT" -- /usr/bin/hostile fuzz 3 2000 512
    expect_rc 0
    same_run s1.err s2.err
    expect_no_grep s2.err 'DETERMINISM VIOLATION'
    cmp s1.out s2.out || fail "the same seed printed something else"

    # the readers survive the garbage the guest put in its trace
    local id1; id1=$(run_id s1.err)
    for cmd in events log; do
        set +e; timeout 300 "$REWIND" $cmd "$id1" >$cmd.out 2>$cmd.err; RC=$?; set -e
        [ "$RC" -eq 0 ] || fail "rewind $cmd on the hostile run: exit $RC: $(tail -n 2 $cmd.err)"
    done

    # the store and the run made before are intact
    run_rw rp replay "$base"
    expect_rc 0
    run_rw gc gc --dry-run --json
    expect_rc 0
    python3 - gc.out <<'EOF' || fail "gc --dry-run would free live data: $(cat gc.out)"
import json, sys
g = json.load(open(sys.argv[1]))
sys.exit(0 if g["removed_pages"] == 0 and g["removed_images"] == 0 else 1)
EOF
    run_rw ls ls --json
    expect_rc 0
    [ "$(grep -o '"id"' ls.out | wc -l)" -eq 4 ] || fail "runs missing: $(cat ls.out)"
    expect_no_grep ls.out incomplete
}

# closing_a FILE: the closing line, read as text although the guest's garbage
# OUTPUT records (aux 2) put binary bytes on stderr too
closing_a() { grep -a '^rewind: run ' "$1" | tail -n 1; }

# breach_regex NAME: what the monitor's message must say for that breach
breach_regex() {
    case $1 in
    record-outside-ram | record-straddles-ram-end) echo 'record at 0x[0-9a-f]* is outside guest RAM' ;;
    unassigned-port) echo 'access to unassigned platform port 0xe' ;;
    in-on-platform-port) echo 'needs a single 32-bit OUT (got IN of 1 x [124] bytes)' ;;
    narrow-out) echo 'needs a single 32-bit OUT (got OUT of 1 x [12] bytes)' ;;
    string-out) echo '\(needs a single 32-bit OUT (got OUT of [2-8] x 4 bytes)\|record at 0xfffff000 is outside guest RAM\|unknown stop code 4294963200\|registered twice\)' ;;
    unknown-stop-code) echo 'unknown stop code [0-9]' ;;
    shared-again-wild | shared-moved) echo 'shared page registered twice (at 0x[0-9a-f]*, again at 0x' ;;
    own-bad-record) echo 'record at 0x[0-9a-f]* \(has bad length\|length [0-9]* has unknown kind\)' ;;
    record-runs-past-ram-end) echo 'record at 0x[0-9a-f]* length 4096 runs past guest RAM' ;;
    *) echo "unknown breach $1" ;;
    esac
}

# tier: vm
test_each_breach_ends_the_run_clearly() {
    export REWIND_TEST_HOLES=1
    local seed seen=
    # seeds picked to cover different breaches (the guest prints which)
    for seed in ${REWIND_HOSTILE_SEEDS:-1 2 3 4 5 6}; do
        run_rw o$seed run --test-hole guest-hostile --root "$ROOT" -- /usr/bin/hostile one $seed 512
        local name re
        name=$(LC_ALL=C sed -n 's/.*hostile: breach \([a-z-]*\).*/\1/p' o$seed.out)
        [ -n "$name" ] || fail "seed $seed: no breach named: $(tail -n 3 o$seed.err)"
        [ "$RC" -eq 119 ] || fail "seed $seed ($name): exit $RC, expected 119: $(tail -n 2 o$seed.err)"
        re=$(breach_regex "$name")
        closing_a o$seed.err | grep -q "guest-error after .*: .*$re" ||
            fail "seed $seed ($name): $(closing_a o$seed.err), expected /$re/"
        expect_no_grep o$seed.out 'still running'
        [ "$(manifest_field "$(closing_a o$seed.err | awk '{print $3}')" refused)" = 1 ] || fail "seed $seed: refused is not 1"
        seen="$seen $name"
    done
    report "one breach per run, guest-error each:$seen"
    # rewind-init's records forged by the job: an INSPECT_DONE outside an
    # inspection ends nothing, a forged ERROR does not hide the monitor's word
    run_rw fg run --root "$ROOT" -- /usr/bin/hostile forge
    expect_rc 119
    expect_grep fg.out 'still running after the forged records'
    expect_no_grep fg.out 'after the bad record'
    closing_a fg.err | grep -q 'guest-error after .*: record at 0xfffff000 is outside guest RAM' ||
        fail "forge: $(closing_a fg.err)"
    # and without any hole, from user space alone
    unset REWIND_TEST_HOLES
    run_rw plain run --root "$ROOT" -- /usr/bin/hostile one 7 512
    expect_rc 119
    expect_grep plain.err 'guest-error after'
    run_rw ok run --root "$ROOT" -- echo fine
    expect_rc 0
    expect_file ok.out fine
}

# tier: vm
test_exits_user_space_cannot_cause() {
    export REWIND_TEST_HOLES=1
    # MMIO where no device is: reads all ones, writes dropped, the run goes on
    run_rw m run --test-hole guest-hostile --root "$ROOT" -- /usr/bin/hostile mmio
    expect_rc 0
    expect_file m.out 'hostile: mmio read 0xffffffff'
    # HLT with interrupts off: KVM keeps the vCPU in KVM_RUN; the monitor's
    # watchdog must end the run as a guest error, not wait for --timeout
    run_rw h run --timeout 120 --test-hole guest-hostile --root "$ROOT" -- /usr/bin/hostile hlt
    [ "$RC" -eq 119 ] || fail "hlt: exit $RC, expected 119: $(closing h.err)"
    closing h.err | grep -q 'guest-error after .*: the guest halted (HLT) with nothing to wake it' ||
        fail "hlt: $(closing h.err)"
    # a triple fault
    run_rw t run --timeout 600 --test-hole guest-hostile --root "$ROOT" -- /usr/bin/hostile triple
    [ "$RC" -eq 119 ] || fail "triple: exit $RC: $(closing t.err)"
    closing t.err | grep -q 'guest-error after .*triple-faulted' || fail "triple: $(closing t.err)"
    # code run from MMIO: KVM cannot emulate the fetch
    run_rw x run --timeout 600 --test-hole guest-hostile --root "$ROOT" -- /usr/bin/hostile execmmio
    [ "$RC" -eq 119 ] || [ "$RC" -eq 123 ] || fail "execmmio: exit $RC: $(closing x.err)"
    closing x.err | grep -q 'guest-error after\|panic after' || fail "execmmio: $(closing x.err)"
    report "mmio: $(cat m.out); hlt: $(closing h.err | sed 's/.*wall: //'); triple: $(closing t.err | sed 's/.*wall: //'); execmmio: $(closing x.err | sed 's/.*wall: //')"
    # without the hole the kernel refuses the ioctl
    run_rw n run --root "$ROOT" -- /usr/bin/hostile hlt
    expect_rc 2
    expect_grep n.err 'needs --test-hole guest-hostile'
    # and the monitor goes on working
    unset REWIND_TEST_HOLES
    run_rw ok run --root "$ROOT" -- echo fine
    expect_rc 0
}
