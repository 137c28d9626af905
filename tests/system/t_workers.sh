# Check workers (src/explore/cworker.c, src/run/warm.c): a schedule run by a
# warm worker, which runs schedule after schedule in one process and copies
# the job-start keyframe's pages from one shared materialized copy, is the
# run a fresh process makes: the same run ids, traces, final RAM and report.
# The negative twin keeps the VM between schedules and opens a hole in its
# in-place restore (the pages the last schedule dirtied are left as they
# are, REWIND_CHECK_INPLACE=1) and sees the runs differ.

# The runs of check report $1 as "id trace_hash outcome" lines, sorted.
runs_of() {
    python3 -c 'import json,sys
for p in [a for a in sys.argv[1:] if __import__("os").path.exists(a)]:
    m = json.load(open(p))
    print(m["id"], m["trace_hash"], m["ram_hash"], m["outcome"], m["exit_code"], m["steps"])' \
        "$1"/runs/*/manifest.json | sort
}

# The report without its timings and the check's id.
report_of() {
    python3 -c 'import json,sys
def s(o):
    if isinstance(o, dict): return {k: s(v) for k, v in o.items() if not k.endswith("_s") and k != "check"}
    if isinstance(o, list): return [s(v) for v in o]
    return o
print(json.dumps(s(json.load(open(sys.argv[1]))), sort_keys=True, indent=1))' "$1"
}

# check --schedules 4 on pool-fixed in home $1 with the environment $2...
check_in() {
    local home=$1; shift
    ( export REWIND_HOME="$T/$home"; env "$@" "$REWIND" check --schedules 4 -j 2 --json \
        --root "$ROOT" -- /usr/bin/pool-fixed > "$T/$home.json" 2> "$T/$home.err" ) || true
}

# tier: long
test_warm_workers_make_the_runs_of_fresh_processes() {
    check_in cold REWIND_CHECK_COLD=1
    # warm: a fresh VM per schedule; inplace: the VM kept and restored in
    # place (src/run/warm.c invariant 4: its memory map made new)
    check_in warm REWIND_CHECK_COLD=0 REWIND_CHECK_INPLACE=0
    check_in inplace REWIND_CHECK_COLD=0 REWIND_CHECK_INPLACE=1
    report_of cold.json > cold.rep
    runs_of cold > cold.runs
    for w in warm inplace; do
        report_of $w.json > $w.rep
        grep -q '"schedules_tried": 4' $w.rep || fail "$w check: $(cat $w.json $w.err | tail -n 5)"
        cmp -s cold.rep $w.rep || fail "$w: the reports differ: $(diff cold.rep $w.rep | head -n 10)"
        runs_of $w > $w.runs
        [ "$(wc -l < $w.runs)" -eq 5 ] || fail "$w: expected 5 runs (schedule 0 and 4): $(cat $w.runs)"
        cmp -s cold.runs $w.runs || fail "$w: the runs differ: $(diff cold.runs $w.runs)"
        for id in $(ls cold/runs); do
            cmp -s "cold/runs/$id/trace" "$w/runs/$id/trace" || fail "$w: run $id: the traces differ"
        done
    done
}

# tier: long
test_warm_workers_negative_twin_restore_keeping_dirty_pages() {
    check_in cold REWIND_CHECK_COLD=1
    # -j 2 over 4 schedules: each worker runs two, the second on a machine
    # whose pages the first dirtied and the hole leaves as they are.
    check_in holed REWIND_CHECK_COLD=0 REWIND_CHECK_INPLACE=1 REWIND_TEST_HOLES=1 \
        REWIND_TEST_RESTORE_KEEP_DIRTY=1
    runs_of cold > cold.runs
    runs_of holed > holed.runs
    ! cmp -s cold.runs holed.runs || fail "with the restore hole the runs are still the same"
}
