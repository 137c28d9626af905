# Check workers (src/explore/cworker.c, src/run/warm.c): a schedule run by a
# warm worker, which runs schedule after schedule in one process and copies
# the job-start keyframe's pages from one shared materialized copy, is the
# run a fresh process makes: the same run ids, traces, final RAM and report.
# The negative twin keeps the VM between schedules and opens a hole in its
# in-place restore (the pages the last schedule dirtied are left as they
# are, REWIND_CHECK_INPLACE=1) and sees the runs differ.

# The runs of check report $1 as "id trace_hash outcome" lines, sorted.
runs_of() {
    for id in $(ls "$1/runs"); do
        python3 -c 'import json,sys; m=json.load(open(sys.argv[1]))
print(m["id"], m["trace_hash"], m["ram_hash"], m["outcome"], m["exit_code"], m["steps"])' "$1/runs/$id/manifest.json"
    done | sort
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

test_warm_workers_make_the_runs_of_fresh_processes() {
    check_in cold REWIND_CHECK_COLD=1
    check_in warm REWIND_CHECK_COLD=0
    report_of cold.json > cold.rep
    report_of warm.json > warm.rep
    grep -q '"schedules_tried": 4' warm.rep || fail "warm check: $(cat warm.json warm.err | tail -n 5)"
    cmp -s cold.rep warm.rep || fail "the reports differ: $(diff cold.rep warm.rep | head -n 10)"
    runs_of cold > cold.runs
    runs_of warm > warm.runs
    [ "$(wc -l < warm.runs)" -eq 5 ] || fail "expected 5 runs (schedule 0 and 4): $(cat warm.runs)"
    cmp -s cold.runs warm.runs || fail "the runs differ: $(diff cold.runs warm.runs)"
    for id in $(ls cold/runs); do
        cmp -s "cold/runs/$id/trace" "warm/runs/$id/trace" || fail "run $id: the traces differ"
    done
}

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
