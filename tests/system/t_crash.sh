# t_crash: a crash at any write, fsync or rename loses nothing (issue 11).
# build/rewind-fp (src/util/failpoint.h) is killed with SIGKILL at every
# failpoint it lists (REWIND_FAILPOINT=list: a failpoint added later is
# walked too, or this test fails for want of a scenario that reaches it).
# After each kill:
#  - the home opens (ls), every run published before is still listed, its
#    files are byte for byte what they were and every page its keyframes
#    name reads back and verifies (export --replayable);
#  - every run listed as complete is whole (show, events: no torn trace);
#  - the killed run is listed as incomplete (or, killed after its rename,
#    as complete), never half-written as complete;
#  - removing what was killed and one gc reclaim the debris: afterwards the
#    home holds only complete runs, live images, the store and lock files,
#    and a dry-run gc finds nothing more to free.
# At the end every complete run replays identically (A, the run every
# fork starts from, from its keyframe at the forks' step: booting it again
# would cost more than the whole walk under the host VM).
# Temp files younger than an hour are kept by gc on purpose (another rewind
# may still be writing them); the test ages them by two hours first.
# Speed: one base home is prepared once (crash_base); every kill happens in
# a fresh copy of it (cp --reflink=auto: packs are appended to in place, so
# they are copied, never hard-linked), so the checks after a kill look only
# at the base's runs and the killed one, never at what earlier kills left.
# test_crash_at_chosen_failpoints (tier long, make check-long) walks a few failpoints that
# cover run publishing, store append, store gc and import;
# test_crash_at_every_failpoint (tier long, make check-long) walks
# every one.

FP=$TOP/build/rewind-fp
JOB_A='echo crash-base; echo x > /tmp/f'
KF=40 # --keyframe-every: a few keyframes in these short jobs

# All complete runs: "id" per line, sorted.
complete_runs() { "$REWIND" ls --json | python3 -c '
import json,sys
for r in json.load(sys.stdin):
    if r["outcome"] != "incomplete": print(r["id"])' | sort; }
incomplete_dirs() { "$REWIND" ls --json | python3 -c '
import json,sys
for r in json.load(sys.stdin):
    if r["outcome"] == "incomplete": print(r["dir"])'; }
# A run's content: its files but the manifest, whose times a re-run of the
# same spec rewrites, and the manifest's fields that say what the run was.
snap() {
    (cd "$REWIND_HOME/runs/$1" && sha256sum -- $(ls | grep -v '^manifest.json$') | sort)
    python3 -c 'import json,sys; m=json.load(open(sys.argv[1]))
print([m.get(k) for k in ("id","state","outcome","steps","trace_hash","ram_hash","parent")])' \
        "$REWIND_HOME/runs/$1/manifest.json"
}
# Files outside complete runs, images (gc --dry-run says none is dead), the
# image cache's keys and directory-root indexes, the store and the lock files.
debris() { (cd "$REWIND_HOME" && find . -type f | sort | python3 -c '
import sys, os
runs = set(sys.argv[1:])
for p in sys.stdin.read().split():
    parts = p.split("/")
    if len(parts) == 4 and parts[1] == "runs" and parts[2] in runs: continue
    if len(parts) == 3 and parts[1] == "images" and p.endswith(".erofs"): continue
    if len(parts) == 4 and parts[1:3] == ["images", "keys"]: continue  # image cache keys
    if len(parts) == 4 and parts[1:3] == ["images", "index"]: continue  # the file-hash index of a directory root (a cache)
    if parts[1] == "store" and (p in ("./store/index", "./store/lock") or
                                (parts[2] == "packs" and p.endswith(".pack"))): continue
    if p == "./gc.lock": continue
    print(p)' $(ls "$REWIND_HOME/runs" | grep -v '^\.')); }

# After a kill: the checks above, then cleanup and gc. Published runs are
# remembered in $T/known (id) and $T/snap.<id> (by the baseline check only).
after_kill() {
    local what=$1 id
    "$REWIND" ls >/dev/null 2>"$T/ls.err" || fail "$what: the home does not open: $(cat "$T/ls.err")"
    complete_runs >"$T/now"
    while read -r id; do
        grep -qx "$id" "$T/now" || fail "$what: run $id, published before, is gone"
        [ "$(snap "$id")" = "$(cat "$T/snap.$id")" ] || fail "$what: run $id changed on disk"
        # every page its keyframes name is still in the store and hashes
        # right (export re-reads and verifies each one)
        "$REWIND" export "$id" --replayable -o /dev/null >/dev/null 2>"$T/x.err" ||
            fail "$what: run $id lost pages: $(tail -n 1 "$T/x.err")"
    done <"$T/known"
    while read -r id; do
        "$REWIND" show "$id" >"$T/show.out" 2>&1 || fail "$what: show $id: $(tail -n 1 "$T/show.out")"
        "$REWIND" events "$id" >"$T/ev.out" 2>&1 || fail "$what: events $id: $(tail -n 1 "$T/ev.out")"
        ! grep -q 'truncated or corrupt' "$T/ev.out" || fail "$what: run $id is listed complete with a torn trace"
        # the base's runs are remembered; a run a kill published is not
        # (the next kill starts from a fresh copy of the base)
        [ "$what" != baseline ] || [ -e "$T/snap.$id" ] || { snap "$id" >"$T/snap.$id"; echo "$id" >>"$T/known"; }
    done <"$T/now"
    for d in $(incomplete_dirs); do
        # an import's staging directory is not a run: gc takes it (below)
        case $d in .import.*) continue ;; esac
        # show copes with a killed run's partial manifest (issue 11 defect
        # 1): an answer or one error line, never a crash
        local src=0
        "$REWIND" show "$d" >"$T/show.out" 2>&1 || src=$?
        [ "$src" -lt 128 ] || fail "$what: show of the killed run $d died (status $src)"
        # `remove` names a killed run by its staging directory (the "dir"
        # of ls --json), also beside a complete run of its id (a
        # replacement killed after its swap)
        "$REWIND" remove "$d" >"$T/rm.out" 2>&1 ||
            fail "$what: cannot remove the killed run $d: $(tail -n 1 "$T/rm.out")"
    done
    local before; before=$(cd "$REWIND_HOME" && find . -type f | wc -l)
    find "$REWIND_HOME" -name '*.tmp*' -exec touch -d '2 hours ago' {} +
    "$REWIND" gc >"$T/gc.out" 2>&1 || fail "$what: gc after the kill: $(tail -n 1 "$T/gc.out")"
    local after; after=$(cd "$REWIND_HOME" && find . -type f | wc -l)
    echo "$what: $before files -> $after after gc (at ${SECONDS}s)" >>"$T/walk.log"
    debris >"$T/debris"
    [ ! -s "$T/debris" ] || fail "$what: gc left debris: $(head -n 5 "$T/debris" | tr '\n' ' ')"
    "$REWIND" gc --dry-run --json >"$T/gcd.json" 2>&1 || fail "$what: gc --dry-run"
    python3 - "$T/gcd.json" <<'PY' || fail "$what: gc left something to free: $(cat "$T/gcd.json")"
import json, sys
g = json.load(open(sys.argv[1]))
bad = {k: g[k] for k in ("removed_pages", "removed_images", "removed_temp_files", "removed_imports") if g[k]}
if g["pack_bytes_after"] != g["pack_bytes_before"]: bad["pack_bytes"] = (g["pack_bytes_before"], g["pack_bytes_after"])
sys.exit(1 if bad else 0)
PY
    WALKED=$((WALKED + 1))
    cp "$T/walk.log" "$TOP/build/t_crash.walk.log" 2>/dev/null || true
}

# hits FILE NAME: how often NAME was reached in a REWIND_FAILPOINT_COUNT file.
hits() { grep -cx "$2" "$1" 2>/dev/null || true; }

# crash_base: the home every kill starts from, in $T/base: A (the run every
# later crash must leave intact and every fork starts from) and the debris
# of B (another root, so another image, and another job: exported to
# $T/b.rewind, then removed and gc'd): B's archive is what the import walk
# imports, its pages and image what the gc walk frees. Sets A, B, FROM.
crash_base() {
    [ -x "$FP" ] || fail "build/rewind-fp is missing (make build/rewind-fp)"
    export REWIND_HOME=$T/base
    mkdir -p "$REWIND_HOME"
    cp -al "$T/home/images" "$REWIND_HOME/images" 2>/dev/null || true
    : >"$T/known"; : >"$T/walk.log"; WALKED=0
    # A's failpoint hits tell how often a run reaches each failpoint
    REWIND_FAILPOINT_COUNT="$T/hits.run" "$FP" run --root "$ROOT" --keyframe-every $KF \
        -- sh -c "$JOB_A" >a.out 2>a.err || fail "run A: $(tail -n 2 a.err)"
    A=$(run_id a.err)
    cp -a "$ROOTDIR" "$T/root2"; echo other >"$T/root2/crash-marker"
    run_rw b run --root "$T/root2" --keyframe-every $KF -- sh -c 'echo crash-b'
    expect_rc 0
    B=$(run_id b.err)
    # the forks start near A's end: a fork starts from a keyframe instead
    # of booting (~5x cheaper under the host VM), so the walk's runs are forks
    local steps; steps=$(steps_of a.err); FROM=$((steps * 3 / 4))
    run_rw x export "$B" --replayable -o "$T/b.rewind"; expect_rc 0
    run_rw r remove "$B"; expect_rc 0
    rm -rf "$T/root2"
    run_rw g gc; expect_rc 0
    after_kill "baseline"
    WALKED=0
    cp "$T/walk.log" "$TOP/build/t_crash.walk.log" 2>/dev/null || true
}

# crash_home: a fresh copy of the base home in $T/kh, as REWIND_HOME.
crash_home() {
    rm -rf "$T/kh"
    cp -a --reflink=auto "$T/base" "$T/kh"
    export REWIND_HOME=$T/kh
}

# crash_count: which failpoints an import, a gc, a fork and a replacing fork
# reach, and how often (hits.SCENARIO), each counted in a copy of the base.
crash_count() {
    local s
    for s in fork import gc replace; do
        crash_home
        crash_setup $s 0
        REWIND_FAILPOINT_COUNT="$T/hits.$s" crash_cmd $s 0 >/dev/null 2>"$T/count.err" ||
            fail "counting $s failed: $(tail -n 2 "$T/count.err" | tr '\n' '|')"
    done
}

# crash_setup SCEN N: what scenario SCEN needs in the home before its kill.
crash_setup() {
    case $1 in
    gc) # B imported then removed, and an old temp file: gc has pages, an
        # image and a temp file to free
        run_rw i import "$T/b.rewind"; expect_rc 0
        run_rw r remove "$B"; expect_rc 0
        echo x >"$REWIND_HOME/images/old.tmp.1"
        touch -d '2 hours ago' "$REWIND_HOME/images/old.tmp.1" ;;
    replace) # the same fork cut by --timeout first: a complete run then
        # replaces the stored cut one (rundir.publish.remove_old)
        run_rw c fork "$A" $FROM --schedule $((2000 + $2)) --timeout 0.001
        expect_rc 124
        "$REWIND" ls --json | grep -q '"outcome": *"timeout"' ||
            fail "the fork cut by --timeout was not kept: $("$REWIND" ls 2>&1 | tr '\n' '|')" ;;
    esac
}

# crash_cmd SCEN N: the command of scenario SCEN, with $FP as the rewind.
crash_cmd() {
    case $1 in
    fork) "$FP" fork "$A" $FROM --schedule $((1000 + $2)) ;;
    replace) "$FP" fork "$A" $FROM --schedule $((2000 + $2)) ;;
    run) "$FP" run --root "$ROOT" --keyframe-every $KF -- sh -c "echo crash $2" ;;
    import) "$FP" import "$T/b.rewind" ;;
    gc) "$FP" gc ;;
    esac
}

# crash_kill NAME K SCEN N: in a fresh copy of the base, scenario SCEN
# (schedule number N) killed at the K-th hit of NAME, then the checks.
crash_kill() {
    local name=$1 k=$2 scen=$3 n=$4
    crash_home
    crash_setup "$scen" "$n"
    set +e
    REWIND_FAILPOINT="$name:$k" crash_cmd "$scen" "$n" >"$T/fp.out" 2>"$T/fp.err"
    local rc=$?
    set -e
    echo "$name:$k ($scen): killed (at ${SECONDS}s)" >>"$T/walk.log"
    grep -qx "$A" "$T/known" || fail "run A is not among the runs the base published"
    [ $rc -eq 137 ] || fail "$name:$k not reached by $scen (exit $rc: $(tail -n 2 "$T/fp.err" | tr '\n' '|'))"
    after_kill "$name:$k ($scen)"
}

# crash_end: A still replays identically in the base home (from the forks'
# keyframe; pages lost to a crash would fail its seek or its final RAM).
crash_end() {
    export REWIND_HOME=$T/base
    run_rw p replay "$A" --from $FROM
    [ "$RC" -eq 0 ] || fail "replay $A after the walk: $(tail -n 2 p.out p.err | tr '\n' '|')"
    expect_grep p.out identical
    rm -rf "$T/kh"
    cp "$T/walk.log" "$TOP/build/t_crash.walk.log" 2>/dev/null || true
}

# The short walk (tier long, make check-long): run publishing (a fork's rename, and the
# removal of the cut run it replaces), store append, store gc and import.
# tier: long
test_crash_at_chosen_failpoints() {
    crash_base
    local fp
    for fp in "rundir.publish.rename fork" "rundir.publish.remove_old replace" \
        "store.append.index import" "store.gc.rename_index gc" "import.publish.rename import"; do
        set -- $fp
        crash_kill "$1" 1 "$2" 1
    done
    crash_end
    [ "$WALKED" -eq 5 ] || fail "walked $WALKED kills, expected 5"
    echo "failpoints walked: $WALKED, all recovered" >>"$T/walk.log"
}

# tier: long
test_crash_at_every_failpoint() {
    crash_base
    REWIND_FAILPOINT=list "$FP" >"$T/fps" || fail "rewind-fp cannot list its failpoints"
    [ "$(wc -l <"$T/fps")" -ge 20 ] || fail "only $(wc -l <"$T/fps") failpoints listed"
    crash_count
    local n=0 name k last scen scens
    while read -r name; do
        n=$((n + 1))
        # The scenarios that reach the failpoint: those without a guest
        # first (a guest run costs ~10x more under the host VM); with
        # CRASH_FULL=1 every one that reaches it, a run's at its first and
        # last hit (default: the last only for the manifest writes).
        scens=""
        for scen in import gc fork replace run; do
            [ "$(hits "$T/hits.$scen" "$name")" -gt 0 ] && scens="$scens $scen"
        done
        [ -n "$scens" ] || fail "no scenario reaches failpoint $name (add one to t_crash.sh)"
        [ "${CRASH_FULL:-0}" = 1 ] || scens=$(echo $scens | awk '{print $1}')
        for scen in $scens; do
            last=1
            if [[ $scen == fork || $scen == run || $scen == replace ]] &&
                { [ "${CRASH_FULL:-0}" = 1 ] || [[ $name == rundir.write_file.* ]]; }; then
                last=$(hits "$T/hits.$scen" "$name")
            fi
            for k in $(printf '%s\n' 1 "$last" | sort -un); do
                crash_kill "$name" "$k" "$scen" $((10 * n + k))
            done
        done
    done <"$T/fps"
    crash_end
    echo "failpoints walked: $WALKED kills over $n failpoints, all recovered" >>"$T/walk.log"
    cp "$T/walk.log" "$TOP/build/t_crash.walk.log" 2>/dev/null || true
}

# tests/system/run.sh counts a test file bash cannot parse as a failure (it
# used to list only the functions defined before the error, silently running
# fewer tests): a copy of the runner over a suite of one good file and one
# with a syntax error after its first test. Needs no guest (the runner's
# image priming fails fast with `false` as the rewind under test).
# tier: engine
test_runner_fails_a_file_with_a_syntax_error() {
    local s=$T/suite/tests/system
    mkdir -p "$s"
    cp "$TOP/tests/system/run.sh" "$TOP/tests/system/lib.sh" "$TOP/tests/system/fixtures.sh" "$s/"
    printf '# tier: vm\ntest_ok() { true; }\n' >"$s/t_ok.sh"
    printf '# tier: vm\ntest_a() { true; }\nif then fi\n# tier: vm\ntest_b() { true; }\n' >"$s/t_bad.sh"
    local p rc
    # the inner suite is not one of this run's copies (run.sh invariant 6)
    unset REWIND_SYSTEST_SHARD REWIND_SYSTEST_QUEUE REWIND_TIER
    for p in . 't_bad:test_b$' 't_bad'; do
        set +e
        REWIND_UNDER_TEST=/bin/false "$s/run.sh" "$p" >suite.out 2>&1
        rc=$?
        set -e
        [ $rc -ne 0 ] || fail "run.sh '$p' passed a file with a syntax error: $(tail -n 1 suite.out)"
        expect_grep suite.out '^FAIL t_bad:(syntax error)'
        expect_grep suite.out ', 1 failed, '
    done
    # a pattern that selects only the good file is not failed by the bad one
    REWIND_UNDER_TEST=/bin/false "$s/run.sh" 't_ok' >suite.out 2>&1 || fail "run.sh t_ok: $(tail -n 3 suite.out)"
    expect_grep suite.out '^1 passed, 0 failed, 0 skipped$'
}

# run.sh invariants 5 and 6: a test with no tier line fails in every tier;
# a long test runs only in tier long; two copies of run.sh sharing one queue
# run each test exactly once between them.
# tier: engine
test_runner_tiers_and_queue() {
    local s=$T/suite/tests/system q=$T/queue
    mkdir -p "$s" "$q"
    cp "$TOP/tests/system/run.sh" "$TOP/tests/system/lib.sh" "$TOP/tests/system/fixtures.sh" "$s/"
    {
        for i in 1 2 3 4 5 6; do printf '# tier: vm\ntest_v%d() { echo v%d >>"%s/ran"; sleep 0.2; }\n' $i $i "$T"; done
        printf '# tier: long\ntest_l() { echo l >>"%s/ran"; }\n' "$T"
    } >"$s/t_q.sh"
    unset REWIND_SYSTEST_SHARD REWIND_SYSTEST_QUEUE REWIND_TIER
    REWIND_UNDER_TEST=/bin/false REWIND_SYSTEST_QUEUE=$q "$s/run.sh" >c1.out 2>&1 &
    local p1=$!
    REWIND_UNDER_TEST=/bin/false REWIND_SYSTEST_QUEUE=$q "$s/run.sh" >c2.out 2>&1 || fail "copy 2: $(tail -n 3 c2.out)"
    wait "$p1" || fail "copy 1: $(tail -n 3 c1.out)"
    [ "$(sort "$T/ran" | tr '\n' ' ')" = "v1 v2 v3 v4 v5 v6 " ] || fail "ran: $(sort "$T/ran" | tr '\n' ' ')"
    local n1 n2; n1=$(grep -c '^PASS' c1.out || true); n2=$(grep -c '^PASS' c2.out || true)
    [ $((n1 + n2)) -eq 6 ] || fail "passes: $n1 + $n2"
    rm -f "$T/ran"
    REWIND_UNDER_TEST=/bin/false REWIND_TIER=long "$s/run.sh" >l.out 2>&1 || fail "tier long: $(tail -n 3 l.out)"
    [ "$(cat "$T/ran")" = l ] || fail "tier long ran: $(cat "$T/ran")"
    printf 'test_untiered() { true; }\n' >"$s/t_u.sh"
    for tier in vm long; do
        set +e
        REWIND_UNDER_TEST=/bin/false REWIND_TIER=$tier "$s/run.sh" t_u >u.out 2>&1
        rc=$?
        set -e
        [ $rc -ne 0 ] || fail "tier $tier: a test without a tier passed"
        expect_grep u.out "^FAIL t_u:test_untiered: no '# tier"
    done
}
