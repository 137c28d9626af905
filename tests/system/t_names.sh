# Names are aliases (issue 11, defects 10 and 11; docs/reliability.md):
# every --name given to a run keeps resolving when the same spec runs again
# under another name, and `show` lists them all.

# tier: vm
test_every_name_keeps_resolving() {
    run_rw a run --root "$ROOT" --name first -- echo same
    expect_rc 0
    run_rw b run --root "$ROOT" --name second -- echo same
    expect_rc 0
    same_run a.err b.err
    local id; id=$(run_id a.err)
    run_rw s1 show first
    expect_rc 0
    expect_grep s1.out "run:      $id"
    run_rw s2 show second
    expect_rc 0
    expect_grep s2.out "run:      $id"
    expect_grep s2.out 'names:    first, second'
    # a third run without a name keeps both
    run_rw c run --root "$ROOT" -- echo same
    expect_rc 0
    run_rw s3 show first
    expect_rc 0
    expect_grep s3.out "run:      $id"
    run_rw l ls --name first --json
    expect_grep l.out "\"id\":\"$id\""
    # a name shaped like a run id is refused: it could stand for another run
    run_rw d run --root "$ROOT" --name 0123456789abcdef -- true
    expect_rc 2
    expect_grep d.err 'not shaped like a run id'
}
