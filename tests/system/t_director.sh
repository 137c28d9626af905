# The example director (examples/director): a program that sees only
# include/rewind.h records a run, reads a file in it and forks it; what it
# prints must agree with the CLI's view of the same runs: the job's output
# through the observer, rw_cat's file against `rewind cat`, rw_seek's step,
# the fork's outcome, and `rewind show`'s command line for the run.

DIRECTOR=$TOP/build/examples/director

# tier: vm
test_director_records_cats_and_forks() {
    [ -x "$DIRECTOR" ] || fail "no $DIRECTOR (make all builds it)"
    set +e
    REWIND_KERNEL=$TOP/build/kernel/vmlinux REWIND_INIT=$TOP/build/rewind-init \
        "$DIRECTOR" "$ROOT" >d.out 2>d.err
    RC=$?
    set -e
    [ "$RC" -eq 0 ] || fail "director: rc $RC $(tail -n 3 d.err | tr '\n' '|')"
    # the job's output came through the observer, in order
    [ "$(grep '^job: ' d.out | tr '\n' ' ')" = "job: one job: two " ] ||
        fail "job output: $(grep '^job: ' d.out | tr '\n' '|')"
    local id steps
    id=$(sed -n 's/^recorded \([0-9a-f]*\): exited 0 after \([0-9]*\) steps$/\1/p' d.out)
    steps=$(sed -n 's/^recorded [0-9a-f]*: exited 0 after \([0-9]*\) steps$/\1/p' d.out)
    [ -n "$id" ] && [ -n "$steps" ] || fail "no recorded line: $(head -c 300 d.out | tr '\n' '|')"
    [ -f "$REWIND_HOME/runs/$id/manifest.json" ] || fail "run $id is not kept"
    # rw_cat saw what `rewind cat` sees at the same step
    local at=$((steps - 5))
    expect_grep d.out "^cat at step $at: status 0$"
    run_rw c cat "$id" "$at" /tmp/f
    expect_rc 0
    [ "$(grep '^cat: ' d.out | sed 's/^cat: //')" = "$(cat c.out)" ] ||
        fail "director's cat '$(grep '^cat: ' d.out | tr '\n' '|')' vs CLI '$(tr '\n' '|' <c.out)'"
    # rw_seek paused a machine exactly there, its registers readable
    expect_grep d.out "^seek to step $at: paused at step $at, rip 0x[0-9a-f]*[1-9a-f][0-9a-f]*$"
    [ -z "$(ls -A "$REWIND_HOME/runs" | grep "^\.$id\.")" ] || fail "a throwaway left a staging dir"
    # the unperturbed fork ends like its parent and names it
    expect_grep d.out "^forked $id at step $((steps / 2)): exited 0 after $steps steps, same output$"
    run_rw s show "$id"
    expect_rc 0
    expect_grep s.out "^command:  rewind run --root .* -- sh -c 'echo one > /tmp/f; sleep 1; echo two >> /tmp/f; cat /tmp/f'$"
}
