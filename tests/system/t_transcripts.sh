# Transcripts: every transcript in docs/tutorials is what its script prints
# now (tools/transcripts.sh --check), so a stale tutorial fails the suite.
# All of them take many minutes in the test host (checks over 64
# schedules): make check-long. make check runs the quick ones (single runs).

QUICK=props-first-run,sched-pingpong,watch-counter

# tier: long
test_tutorial_transcripts_are_current() {
    local rc=0 # (the tests run under set -e: a bare failing command would end
    # the test with no word of why)
    "$TOP/tools/transcripts.sh" --check >tx.out 2>tx.err || rc=$?
    [ $rc -eq 0 ] || fail "transcripts.sh --check: exit $rc: $(head -c 1500 tx.out) $(tail -n 3 tx.err)"
}

# tier: vm
test_quick_transcripts_are_current() {
    local rc=0 # (the tests run under set -e: a bare failing command would end
    # the test with no word of why)
    "$TOP/tools/transcripts.sh" --check --only "$QUICK" >tx.out 2>tx.err || rc=$?
    [ $rc -eq 0 ] || fail "transcripts.sh --check --only $QUICK: exit $rc: $(head -c 1500 tx.out) $(tail -n 3 tx.err)"
}

# Negative twin: a transcript edited by hand is found stale, and its diff
# names it; a rewrite brings it back.
# tier: engine
test_a_stale_transcript_fails_the_check() {
    mkdir -p docs/tutorials/transcripts
    printf '<!-- transcript: stale -->\n```\n$ echo hi\nhello\n```\n' > t.md
    cp "$TOP/docs/tutorials/transcripts/lib.sh" docs/tutorials/transcripts/
    # the script lives in the tree the tool reads: a private copy of it
    mkdir -p tools && cp "$TOP/tools/transcripts.sh" tools/
    printf 'source "$TX_LIB"\ntx echo hi\n' > docs/tutorials/transcripts/stale.sh
    set +e
    tools/transcripts.sh --check t.md > c.out 2> c.err
    local rc=$?
    set -e
    [ $rc -eq 1 ] || fail "a stale transcript: exit $rc, expected 1: $(cat c.out c.err)"
    expect_grep c.out '^-hello$'
    expect_grep c.out '^+hi$'
    # --only another transcript: the stale one is neither run nor compared
    printf '<!-- transcript: fresh -->\n```\n$ echo ok\nok\n```\n' >> t.md
    printf 'source "$TX_LIB"\ntx echo ok\n' > docs/tutorials/transcripts/fresh.sh
    tools/transcripts.sh --check --only fresh t.md > o.out 2> o.err || fail "--only fresh: $(cat o.out o.err)"
    set +e
    tools/transcripts.sh --check --only stale,fresh t.md > o2.out 2> o2.err
    rc=$?
    set -e
    [ $rc -eq 1 ] || fail "--only stale,fresh: exit $rc, expected 1"
    tools/transcripts.sh t.md > w.out 2> w.err || fail "rewrite: $(cat w.err)"
    tools/transcripts.sh --check t.md > c2.out 2> c2.err || fail "still stale after a rewrite: $(cat c2.out)"
    expect_file t.md "$(printf '<!-- transcript: stale -->\n```\n$ echo hi\nhi\n```\n<!-- transcript: fresh -->\n```\n$ echo ok\nok\n```')"
}

# lib.sh's tx_ids: the ids it names get the first stand-ins, in its order,
# and its line is not in the transcript (a transcript that continues
# another shows the same runs with the same stand-ins); without it the
# order of first appearance decides (the twin); a word that is not a run
# id is refused (exit 2).
# tier: engine
test_tx_ids_numbers_ids_first() {
    mkdir -p docs/tutorials/transcripts tools
    cp "$TOP/docs/tutorials/transcripts/lib.sh" docs/tutorials/transcripts/
    cp "$TOP/tools/transcripts.sh" tools/
    local a=1111111111111111 b=2222222222222222 s1 s2
    # the stand-ins (tools/transcripts.sh); sha256sum: python3 starts slowly in the test host
    s1=$(printf rewind-transcript-1 | sha256sum | cut -c1-16)
    s2=$(printf rewind-transcript-2 | sha256sum | cut -c1-16)
    printf '<!-- transcript: ids -->\n```\n```\n<!-- transcript: noids -->\n```\n```\n' > t.md
    printf 'source "$TX_LIB"\ntx_ids %s %s\ntx echo %s %s\n' $a $b $b $a > docs/tutorials/transcripts/ids.sh
    printf 'source "$TX_LIB"\ntx echo %s %s\n' $b $a > docs/tutorials/transcripts/noids.sh
    tools/transcripts.sh t.md > w.out 2> w.err || fail "rewrite: $(cat w.out w.err)"
    expect_file t.md "$(printf '<!-- transcript: ids -->\n```\n$ echo %s %s\n%s %s\n```\n<!-- transcript: noids -->\n```\n$ echo %s %s\n%s %s\n```' \
        "$s2" "$s1" "$s2" "$s1" "$s1" "$s2" "$s1" "$s2")"
    printf 'source "$TX_LIB"\ntx_ids not-an-id\ntx echo hi\n' > docs/tutorials/transcripts/ids.sh
    set +e
    tools/transcripts.sh --check --only ids t.md > b.out 2> b.err
    local rc=$?
    set -e
    [ $rc -eq 2 ] || fail "tx_ids not-an-id: exit $rc, expected 2: $(cat b.out b.err)"
    expect_grep b.err "tx_ids: 'not-an-id' is not a run id"
}
