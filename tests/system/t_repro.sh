# Reproducible builds (docs/nix.md, docs/tutorials/reproducible-builds.md):
# --dirorder / --vary, --collect and diff --files, --track-writes and blame,
# repro. Each determinism claim has its negative twin: without the
# variation the same build collects the same bytes.

# A "build" whose output embeds the order GNU ls -U reads a directory in
# (busybox's ls always sorts): the root is tests/nix/lsroot.sh's, busybox
# with GNU coreutils' ls as /bin/ls. ls is called by its path: busybox's
# shell would run its own ls applet for a bare `ls`, in a child it does not
# exec (the child keeps the shell's argv); by path GNU ls is exec'd, and
# blame names it.
LISTING='mkdir -p /build/src /build/out
for f in alpha beta gamma delta epsilon zeta eta theta; do echo $f > /build/src/$f; done
echo "# listing" > /build/out/list
/bin/ls -U /build/src >> /build/out/list
echo same > /build/out/same'

lsroot() {
    LSROOT=$T/lsroot
    "$TOP/tests/nix/lsroot.sh" "$LSROOT" >lsroot.err 2>&1 || fail "tests/nix/lsroot.sh: $(tail -n 2 lsroot.err)"
}

# tier: vm
test_dirorder_changes_a_listing_and_blame_names_ls() {
    lsroot || return 1
    local opts=(--root "$LSROOT" --collect /build/out --track-writes '/build/out/*')
    run_rw a run "${opts[@]}" -- sh -c "$LISTING"
    expect_rc 0
    run_rw b run "${opts[@]}" --dirorder 1 -- sh -c "$LISTING"
    expect_rc 0
    local A B; A=$(run_id a.err) && B=$(run_id b.err) || return 1
    [ "$A" != "$B" ] || fail "--dirorder did not change the spec"
    python3 -c 'import json,sys; s=json.load(open(sys.argv[1]))["spec"]; assert "dirorder" not in s and s["collect"]=="/build/out"' \
        "$REWIND_HOME/runs/$A/manifest.json" || fail "a spec without --dirorder has dirorder"
    # negative twin: the same spec collects the same files
    run_rw same diff --files "$A" "$A"
    expect_rc 0
    expect_grep same.out 'identical: 3 collected entries'
    # the varied order shows in the listing, and only there
    run_rw d diff --files --no-diffoscope "$A" "$B"
    expect_rc 1
    expect_grep d.out '^list: content differs'
    expect_no_grep d.out '^same:'
    expect_grep d.out 'bytes [0-9]*\.\.[0-9]* differ'
    run_rw dj diff --files --json "$A" "$B"
    expect_rc 1
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert not d["identical"] and [f["path"] for f in d["files"]]==["list"] and d["files"][0]["first_diff"]>=10' dj.out \
        || fail "diff --files --json: $(cat dj.out)"
    # blame: ls wrote the first differing byte, in both runs: its pid,
    # argv, step, and the chain of execs above it
    run_rw bl blame "$B" /build/out/list --diff "$A"
    expect_rc 0
    expect_grep bl.out '^  byte [0-9]* of /build/out/list in run '"$B"' was written by pid [0-9]* `/bin/ls -U /build/src` at step [0-9]* (event [0-9]*)$'
    expect_grep bl.out '^  byte [0-9]* of /build/out/list in run '"$A"' was written by pid [0-9]* `/bin/ls -U /build/src` at step [0-9]* (event [0-9]*)$'
    expect_grep bl.out 'chain: pid [0-9]* `/bin/ls -U /build/src` <- pid [0-9]* `sh -c'
    expect_grep bl.out 'the file still holds these bytes'
    run_rw blj blame "$B" /build/out/list --diff "$A" --json
    expect_rc 0
    python3 - blj.out <<'PY' || fail "blame --diff --json: $(cat blj.out)"
import json, sys
d = json.load(open(sys.argv[1]))
r = d["ranges"][0]
assert r["from"] >= 10, r  # after "# listing\n", which the shell wrote
for b in (r["blame"], r["other"]):
    assert b["found"] and b["argv"] == "/bin/ls -U /build/src", b
    assert b["pid"] > 1 and b["step"] > 0 and b["write_offset"] == 10, b
    assert [c["argv"].split()[:2] for c in b["chain"][:2]] == [["/bin/ls", "-U"], ["sh", "-c"]], b
PY
    # byte 0 came from the shell's echo
    run_rw b0 blame "$B" /build/out/list 0 --json
    expect_rc 0
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["found"] and d["argv"].startswith("sh -c") and d["write_offset"]==0, d' b0.out \
        || fail "blame of byte 0: $(cat b0.out)"
    # a byte no write covers, and a run without tracking
    run_rw nb blame "$B" /build/out/list 100000
    expect_rc 1
    expect_grep nb.out 'no tracked write covers it'
    # the write records are events
    run_rw ev events "$B" --kind write
    expect_grep ev.out 'write pid .* /build/out/list: [0-9]* bytes at 0'
}

# The order is a function of N: the same spec twice is the same run, with
# or without --dirorder; blame without --track-writes says what is missing.
# tier: long
test_dirorder_is_a_function_of_n_and_blame_needs_tracking() {
    lsroot || return 1
    local opts=(--root "$LSROOT" --collect /build/out --track-writes '/build/out/*')
    run_rw a run "${opts[@]}" -- sh -c "$LISTING"
    run_rw a2 run "${opts[@]}" -- sh -c "$LISTING"
    same_run a.err a2.err
    run_rw b run "${opts[@]}" --dirorder 1 -- sh -c "$LISTING"
    run_rw b2 run "${opts[@]}" --dirorder 1 -- sh -c "$LISTING"
    same_run b.err b2.err
    run_rw nt run --root "$LSROOT" --collect /build/out -- sh -c "$LISTING"
    run_rw ntb blame "$(run_id nt.err)" /build/out/list 0
    expect_rc 1
    expect_grep ntb.out 'was the run made with --track-writes'
}

# check sees a schedule that leaves other files (--collect's marks count in
# the output hash) as ending differently; without --collect the same job
# prints nothing and every schedule ends alike (the negative twin).
# tier: long
test_check_sees_the_collected_files() {
    local J='mkdir /d; for f in a b c d e f g h; do : > /d/$f; done; /usr/bin/find /d > /d/list'
    run_rw c check --vary dirorder --schedules 1 --root "$ROOT" --collect /d -- sh -c "$J"
    expect_rc 1
    expect_grep c.out 'ends differently'
    expect_grep c.out 'the seed decides'
    run_rw n check --vary dirorder --schedules 1 --root "$ROOT" -- sh -c "$J"
    expect_rc 0
    expect_grep n.out '^no difference: 1 schedules'
}

# tier: long
test_collect_pages_survive_gc_and_bad_input_is_refused() {
    local CMD='mkdir -p /out/d; head -c 20000 /bin/busybox > /out/d/big; ln -s d/big /out/link'
    run_rw a run --root "$ROOT" --collect /out -- sh -c "$CMD"
    expect_rc 0
    run_rw b run --root "$ROOT" --collect /out --seed 5 -- sh -c "$CMD"
    expect_rc 0
    local A B; A=$(run_id a.err) && B=$(run_id b.err) || return 1
    run_rw d diff --files "$A" "$B"
    expect_rc 0
    expect_grep d.out 'identical: 4 collected entries'
    # identical files are the same pages in the store
    python3 - "$REWIND_HOME/runs/$A/collect.json" "$REWIND_HOME/runs/$B/collect.json" <<'PY' || fail "collect.json pages differ"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
pa = {f["path"]: f["pages"] for f in a["files"]}
pb = {f["path"]: f["pages"] for f in b["files"]}
assert pa == pb and len(pa["d/big"]) == 5, (pa, pb)
PY
    # gc keeps the pages the collected files name
    run_rw gc gc
    expect_rc 0
    run_rw d2 diff --files "$A" "$B"
    expect_rc 0
    # bad input: one clear line, non-zero
    run_rw e1 run --root "$ROOT" --track-writes 'a b' -- true
    expect_rc 2
    expect_grep e1.err 'track-writes needs a glob'
    run_rw e2 run --root "$ROOT" --dirorder x -- true
    expect_rc 2
    run_rw nc run --root "$ROOT" -- true
    run_rw e3 diff --files "$A" "$(run_id nc.err)"
    expect_rc 2
    expect_grep e3.err 'collected no files'
}

# mktemp's random part, embedded in an output, differs with the seed;
# repro names the writer. Without variation the builds reproduce.
MKTEMP='mkdir -p /build/out; t=$(mktemp /tmp/tmp.XXXXXX); echo "built in $t" > /build/out/info; echo fixed > /build/out/fixed'

# tier: vm
test_repro_finds_mktemp_under_seed() {
    run_rw r repro --builds 2 --vary seed --root "$ROOT" --collect /build/out -- sh -c "$MKTEMP"
    expect_rc 1
    expect_grep r.out '^/build/out/info differs in build 2: bytes [0-9]*\.\.'
    expect_grep r.out 'build 2: byte [0-9]* of /build/out/info in run [0-9a-f]* was written by pid [0-9]* `sh -c'
    expect_no_grep r.out '^/build/out/fixed'
    expect_grep r.out 'NOT reproducible'
    # negative twin: the same builds without variation reproduce
    run_rw n repro --builds 2 --vary none --root "$ROOT" --collect /build/out -- sh -c "$MKTEMP"
    expect_rc 0
    expect_grep n.out 'reproducible: every build collected the same files'
    run_rw u repro --root "$ROOT" -- true
    expect_rc 2
    expect_grep u.err 'repro needs --collect PATH'
}

# The epoch: a build that stamps the date differs under --vary epoch, and
# check --vary dirorder finds a listing that depends on the order.
# tier: long
test_vary_epoch_and_check_vary_dirorder() {
    run_rw r repro --builds 2 --vary epoch --root "$ROOT" --collect /o -- \
        sh -c 'mkdir /o; date +%s > /o/stamp'
    expect_rc 1
    expect_grep r.out '^/o/stamp differs in build 2'
    run_rw c check --vary dirorder --schedules 2 --root "$ROOT" -- \
        sh -c 'mkdir /d; for f in a b c d e f g h; do : > /d/$f; done; find /d'
    expect_rc 1
    expect_grep c.out 'the seed decides'
    run_rw cn check --schedules 1 --root "$ROOT" -- \
        sh -c 'mkdir /d; for f in a b c d e f g h; do : > /d/$f; done; find /d'
    expect_rc 0
}
