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
# image cache's keys, the store and the lock files.
debris() { (cd "$REWIND_HOME" && find . -type f | sort | python3 -c '
import sys, os
runs = set(sys.argv[1:])
for p in sys.stdin.read().split():
    parts = p.split("/")
    if len(parts) == 4 and parts[1] == "runs" and parts[2] in runs: continue
    if len(parts) == 3 and parts[1] == "images" and p.endswith(".erofs"): continue
    if len(parts) == 4 and parts[1:3] == ["images", "keys"]: continue  # image cache keys
    if parts[1] == "store" and (p in ("./store/index", "./store/lock") or
                                (parts[2] == "packs" and p.endswith(".pack"))): continue
    if p == "./gc.lock": continue
    print(p)' $(ls "$REWIND_HOME/runs" | grep -v '^\.')); }

# fp_do NAME K CMD...: CMD (with $FP as the rewind) killed at the K-th hit
# of NAME; fails unless it died of SIGKILL (the failpoint was reached).
fp_do() {
    local name=$1 k=$2; shift 2
    set +e
    REWIND_FAILPOINT="$name:$k" "$FP" "$@" >"$T/fp.out" 2>"$T/fp.err"
    local rc=$?
    set -e
    [ $rc -eq 137 ] || fail "$name:$k not reached by '$*' (exit $rc: $(tail -n 2 "$T/fp.err" | tr '\n' '|'))"
}

# After a kill: the checks above, then cleanup and gc. Published runs are
# remembered in $T/known (id) and $T/snap.<id>.
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
        [ -e "$T/snap.$id" ] || { snap "$id" >"$T/snap.$id"; echo "$id" >>"$T/known"; }
    done <"$T/now"
    for d in $(incomplete_dirs); do
        "$REWIND" remove "$d" >/dev/null 2>&1 || fail "$what: cannot remove the killed run $d"
    done
    local before; before=$(cd "$REWIND_HOME" && find . -type f | wc -l)
    find "$REWIND_HOME" -name '*.tmp*' -exec touch -d '2 hours ago' {} +
    "$REWIND" gc >"$T/gc.out" 2>&1 || fail "$what: gc after the kill: $(tail -n 1 "$T/gc.out")"
    local after; after=$(cd "$REWIND_HOME" && find . -type f | wc -l)
    echo "$what: $before files -> $after after gc" >>"$T/walk.log"
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
}

# hits FILE NAME: how often NAME was reached in a REWIND_FAILPOINT_COUNT file.
hits() { grep -cx "$2" "$1" || true; }

test_crash_at_every_failpoint() {
    [ -x "$FP" ] || fail "build/rewind-fp is missing (make build/rewind-fp)"
    REWIND_FAILPOINT=list "$FP" >"$T/fps" || fail "rewind-fp cannot list its failpoints"
    [ "$(wc -l <"$T/fps")" -ge 20 ] || fail "only $(wc -l <"$T/fps") failpoints listed"
    : >"$T/known"; : >"$T/walk.log"; WALKED=0
    # A: the run every later crash must leave intact. Its failpoint hits
    # tell how often a run reaches each one.
    REWIND_FAILPOINT_COUNT="$T/hits.run" "$FP" run --root "$ROOT" --keyframe-every $KF \
        -- sh -c "$JOB_A" >a.out 2>a.err || fail "run A: $(tail -n 2 a.err)"
    local a; a=$(run_id a.err)
    # B: another root (so another image) and job; exported, then removed:
    # its archive is what the import walk imports, its pages and image
    # what the gc walk frees.
    cp -a "$ROOTDIR" "$T/root2"; echo other >"$T/root2/crash-marker"
    run_rw b run --root "$T/root2" --keyframe-every $KF -- sh -c 'echo crash-b'
    expect_rc 0
    local b; b=$(run_id b.err)
    # F1: a fork of A near its end. A fork starts from a keyframe instead of
    # booting (~5x cheaper under the host VM), so the walk's runs are forks.
    local steps; steps=$(steps_of a.err); FROM=$((steps * 3 / 4))
    REWIND_FAILPOINT_COUNT="$T/hits.fork" "$FP" fork "$a" $FROM --schedule 1 >f.out 2>f.err ||
        fail "fork of A: $(tail -n 2 f.err)"
    run_rw x export "$b" --replayable -o "$T/b.rewind"; expect_rc 0
    run_rw r remove "$b"; expect_rc 0
    run_rw g gc; expect_rc 0
    after_kill "baseline"
    # Which failpoints an import and a gc reach: counted on a copy of the home.
    cp -a "$REWIND_HOME" "$T/hc"
    REWIND_HOME="$T/hc" REWIND_FAILPOINT_COUNT="$T/hits.import" "$FP" import "$T/b.rewind" >/dev/null 2>&1 ||
        fail "counting import failed"
    REWIND_HOME="$T/hc" "$REWIND" remove "$b" >/dev/null 2>&1
    echo x >"$T/hc/images/old.tmp.1"; touch -d '2 hours ago' "$T/hc/images/old.tmp.1"
    REWIND_HOME="$T/hc" REWIND_FAILPOINT_COUNT="$T/hits.gc" "$FP" gc >/dev/null 2>&1 || fail "counting gc failed"
    rm -rf "$T/hc"
    WALKED=0
    local n=0 name k last scen scens
    while read -r name; do
        n=$((n + 1))
        # The scenarios that reach the failpoint: those without a guest
        # first (a guest run costs ~10x more under the host VM); with
        # CRASH_FULL=1 every one that reaches it, a run's at its first and
        # last hit (default: the last only for the manifest writes).
        scens=""
        for scen in import gc fork run; do
            [ "$(hits "$T/hits.$scen" "$name")" -gt 0 ] && scens="$scens $scen"
        done
        # rundir.publish.remove_old is reached only when a run replaces a
        # stored one of the same id, i.e. a complete run replacing one cut
        # by --timeout (an identical re-run or re-fork is not republished):
        # no scenario here makes one yet, so it is named, not walked.
        if [ "$name" = rundir.publish.remove_old ]; then
            echo "$name: not walked (no scenario replaces a stored run)" >>"$T/walk.log"; continue
        fi
        [ -n "$scens" ] || fail "no scenario reaches failpoint $name (add one to t_crash.sh)"
        [ "${CRASH_FULL:-0}" = 1 ] || scens=$(echo $scens | awk '{print $1}')
        for scen in $scens; do
            last=1
            if [[ $scen == fork || $scen == run ]] && { [ "${CRASH_FULL:-0}" = 1 ] || [[ $name == rundir.write_file.* ]]; }; then
                last=$(hits "$T/hits.$scen" "$name")
            fi
            for k in $(printf '%s\n' 1 "$last" | sort -un); do
                case $scen in
                fork) fp_do "$name" "$k" fork "$a" $FROM --schedule $((1000 + 10 * n + k)) ;;
                run) fp_do "$name" "$k" run --root "$ROOT" --keyframe-every $KF -- sh -c "echo crash $n $k" ;;
                import) fp_do "$name" "$k" import "$T/b.rewind" ;;
                gc)
                    run_rw i import "$T/b.rewind"; expect_rc 0
                    run_rw r remove "$b"; expect_rc 0
                    echo x >"$REWIND_HOME/images/old.tmp.1"
                    touch -d '2 hours ago' "$REWIND_HOME/images/old.tmp.1"
                    fp_do "$name" "$k" gc ;;
                esac
                after_kill "$name:$k ($scen)"
                # an import killed after publishing leaves B: take it out again
                if [ $scen = import ] && grep -qx "$b" "$T/known"; then
                    run_rw r remove "$b"; expect_rc 0
                    sed -i "/^$b\$/d" "$T/known"; rm -f "$T/snap.$b"
                    run_rw g gc; expect_rc 0
                fi
            done
        done
    done <"$T/fps"
    # Everything still listed replays identically (pages lost to a crash
    # would fail the seek to a keyframe or the final RAM).
    while read -r id; do
        if [ "$id" = "$a" ]; then run_rw p replay "$id" --from $FROM; else run_rw p replay "$id"; fi
        [ "$RC" -eq 0 ] || fail "replay $id after the walk: $(tail -n 2 p.out p.err | tr '\n' '|')"
        expect_grep p.out identical
    done <"$T/known"
    grep -qx "$a" "$T/known" || fail "run A is not listed at the end"
    echo "failpoints walked: $WALKED kills over $n failpoints" >>"$T/walk.log"
    cp "$T/walk.log" "$TOP/build/t_crash.walk.log" 2>/dev/null || true
}
