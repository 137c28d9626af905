# fixtures.sh: base runs that several system tests start from, recorded once
# per host VM and imported into each test's own home by `fixture NAME`
# (lib.sh; tests/system/run.sh invariant 2; docs/testing.md, "Fixtures").
# fixture_NAME runs in a scratch directory with a scratch REWIND_HOME, with
# lib.sh's helpers, and prints the id of the run to hand out as the last
# line of its stdout; what it leaves in its directory (outputs) is copied
# into each test's $T/fixture-NAME/.

# fx_run PREFIX ARGS...: `rewind run ARGS` (outputs in PREFIX.out/.err) and
# its run's id
fx_run() {
    local p=$1; shift
    "$REWIND" run "$@" >"$p.out" 2>"$p.err" || true
    run_id "$p.err"
}

# dbg_threads: the debugger's program (threads with symbols), for gdb, where
fixture_dbg_threads() { fx_run a --root "$ROOT" -- /usr/bin/dbg_threads; }
