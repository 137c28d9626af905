# Events from the guest kernel: ps at chosen steps, file events with
# absolute paths, the signal with its fault address, output in order.

SCENARIO='echo start; sleep 1 & echo data > /tmp/x.txt; mv /tmp/x.txt /tmp/y.txt; rm /tmp/y.txt; /usr/bin/events; wait; echo end'

step_of_output() { # step_of_output PATTERN: the step of the first output chunk matching
    "$REWIND" log evrun --steps | grep -m1 -- "$1" | sed 's/^\[\([0-9]*\) .*/\1/'
}

ps_pids() { # ps_pids STEP: the pids alive at STEP, sorted, space-separated
    "$REWIND" ps evrun "$1" --json | python3 -c 'import json,sys; print(" ".join(str(p["pid"]) for p in sorted(json.load(sys.stdin), key=lambda p: p["pid"])))'
}

# One run of the scenario: its events (file events with absolute paths, an
# exec's argv, the signal with its fault address, an end in words), ps at
# chosen steps, and log --steps in order.
# tier: vm
test_events_scenario() {
    run_rw r run --name evrun --root "$ROOT" -- sh -c "$SCENARIO"
    expect_rc 0
    expect_grep r.out '^events: done$'
    run_rw e events evrun
    expect_rc 0
    # file events, absolute and normalized, from the shell and from the program
    grep -q 'open pid .*"/tmp/x.txt"' e.out || fail "no open of /tmp/x.txt: $(grep open e.out)"
    grep -q 'rename pid .*"/tmp/x.txt /tmp/y.txt"' e.out || fail "no rename x->y: $(grep rename e.out)"
    grep -q 'unlink pid .*"/tmp/y.txt"' e.out || fail "no unlink of /tmp/y.txt"
    grep -q 'open pid .*"/tmp/a.txt"' e.out || fail "no open of /tmp/a.txt (normalized)"
    grep -q 'rename pid .*"/tmp/a.txt /tmp/b.txt"' e.out || fail "no rename a->b (normalized)"
    grep -q 'unlink pid .*"/tmp/b.txt"' e.out || fail "no unlink of /tmp/b.txt"
    grep -q 'exec pid .*"/bin/true true arg1 two words"' e.out || fail "no exec of /bin/true with argv: $(grep exec e.out)"
    grep -q 'signal 11 .*addr 0x1234' e.out || fail "no SIGSEGV at 0x1234: $(grep signal e.out)"
    # --kind filters, --from/--to bound
    run_rw k events evrun --kind rename
    [ "$(grep -c . k.out)" -eq 2 ] || fail "--kind rename: $(cat k.out)"
    # the segv child's pid, from the program's own output
    local segv; segv=$(sed -n 's/^child \([0-9]*\) segv.*/\1/p' r.out)
    grep -q "signal 11 .* pid $segv/$segv addr 0x1234" e.out || fail "signal not from pid $segv"
    # its end, in words (a core only if the guest dumped one)
    grep -Eq "exit pid $segv/$segv \"[^\"]*\": killed by SIGSEGV( \(core\))?\$" e.out ||
        fail "no 'killed by SIGSEGV' for pid $segv: $(grep "exit pid $segv/" e.out)"
    # ps at chosen steps of the same run
    local shpid evpid child s1 s2
    evpid=$(sed -n 's/^events: pid \([0-9]*\)$/\1/p' r.out)
    child=$(sed -n 's/^child \([0-9]*\) wrote.*/\1/p' r.out)
    s1=$(step_of_output 'wrote /tmp/a.txt')
    s2=$(step_of_output 'events: done')
    [ -n "$s1" ] && [ -n "$s2" ] || fail "steps not found"
    local at1 at2 end
    at1=$(ps_pids "$s1"); at2=$(ps_pids "$s2"); end=$(ps_pids 999999999)
    # while the child runs: init, the job's shell, sleep, events and the child
    for p in 1 "$evpid" "$child"; do
        echo " $at1 " | grep -q " $p " || fail "pid $p not alive at step $s1: $at1"
    done
    [ "$(echo $at1 | wc -w)" -eq 5 ] || fail "expected 5 processes at step $s1: $at1"
    # after the children ended: the child is gone, events still there
    echo " $at2 " | grep -q " $child " && fail "child $child still listed at step $s2: $at2"
    echo " $at2 " | grep -q " $evpid " || fail "events not alive at step $s2: $at2"
    # at the end: only init
    [ "$end" = "1" ] || fail "at the end: $end"
    # log --steps: the output in order, with its steps
    run_rw l log evrun --steps
    expect_rc 0
    head -1 l.out | grep -q '\] start$' || fail "first line: $(head -1 l.out)"
    tail -1 l.out | grep -q '\] end$' || fail "last line: $(tail -1 l.out)"
    sed 's/^\[\([0-9]*\) .*/\1/' l.out | sort -n -c || fail "steps not increasing"
}

# A process's end as a person reads it, in events and in ps --ended: an
# exit(1) job and a job killed by SIGSEGV; the raw wait status stays in
# the JSON's aux/status field for scripts.
# tier: long
test_ends_in_words() {
    run_rw r run --name ex1 --root "$ROOT" -- sh -c 'exit 1'
    expect_rc 1
    run_rw e events ex1 --kind exit
    expect_rc 0
    grep -Eq '^ *[0-9]+  exit pid ([0-9]+)/\1 "[^"]*": exited 1$' e.out ||
        fail "no 'exited 1' in events: $(cat e.out)"
    expect_no_grep e.out 'code 256'
    run_rw j events ex1 --kind exit --json
    python3 -c 'import json,sys; ev=json.load(open(sys.argv[1])); assert any(e["aux"]==256 and e["status_text"]=="exited 1" for e in ev), ev' j.out ||
        fail "events --json: no aux 256 with status_text 'exited 1': $(cat j.out)"
    run_rw p ps ex1 --ended
    expect_rc 0
    grep -Eq '^ *[0-9]+ +[0-9]+  exited 1 +[^ ]+$' p.out || fail "ps --ended lacks 'exited 1': $(cat p.out)"
    run_rw pj ps ex1 --ended --json
    python3 -c 'import json,sys; ps=json.load(open(sys.argv[1])); assert any(p["status"]==256 and p["status_text"]=="exited 1" for p in ps), ps' pj.out ||
        fail "ps --ended --json: no status 256 'exited 1': $(cat pj.out)"
    # ps without --ended is unchanged: the processes alive (only init at the end)
    run_rw a ps ex1
    expect_no_grep a.out 'exited'

    run_rw r run --name segv --root "$ROOT" -- sh -c 'kill -SEGV $$'
    expect_rc 139
    run_rw e events segv --kind exit
    expect_rc 0
    grep -Eq '^ *[0-9]+  exit pid ([0-9]+)/\1 "[^"]*": killed by SIGSEGV( \(core\))?$' e.out ||
        fail "no 'killed by SIGSEGV' in events: $(cat e.out)"
    run_rw p ps segv --ended
    expect_rc 0
    grep -Eq '^ *[0-9]+ +[0-9]+  killed by SIGSEGV( \(core\))? +[^ ]+$' p.out ||
        fail "ps --ended lacks 'killed by SIGSEGV': $(cat p.out)"
}


