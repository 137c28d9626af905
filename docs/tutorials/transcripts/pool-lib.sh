# pool-lib.sh: sourced by the gdb-pool*.sh transcripts (not a transcript).
# pool_check [tx]: `rewind check` over examples/pool built with -g
# (/usr/bin/pool-g), 64 schedules, -j 1 so the schedules run in order and
# the same one fails every time (shown with tx when asked, else its run
# ids are numbered as gdb-pool.sh shows them: lib.sh's tx_ids); sets FAIL
# (the narrowed failing run), DECIDING (its deciding step), CRASH (the step
# of its first signal, the worker's SIGSEGV), PID (the pool's process) and
# POOL_C (examples/pool/pool.c in this tree), as tests/system/t_gdb.sh finds
# them.
TOP=$(cd "$(dirname "$TX_LIB")/../../.." && pwd)
POOL_C=$TOP/examples/pool/pool.c
pool_check() {
    local c='rewind check --schedules 64 -j 1 --preempt off --root $ROOT -- /usr/bin/pool-g 2>/dev/null'
    if [ "${1:-}" = tx ]; then
        tx "$c"
    else
        LAST_OUT=$(eval "$c")
        # the ids in the order the shown check printed them first: schedule
        # 0's run, the failing schedule's, the narrowed failing run, the check
        tx_ids $(printf '%s\n' "$LAST_OUT" | sed -n -e 's/^schedule 0: run \([0-9a-f]*\) .*/\1/p' \
            -e 's/^schedule [0-9]* (.*) .*: run \([0-9a-f]*\) .*/\1/p' \
            -e 's/^passing run: .*failing run: \([0-9a-f]*\) .*/\1/p' -e 's/^check \([0-9a-f]*\) kept: .*/\1/p')
    fi
    FAIL=$(printf '%s\n' "$LAST_OUT" | sed -n 's/^passing run: .*failing run: \([0-9a-f]*\) .*/\1/p')
    DECIDING=$(printf '%s\n' "$LAST_OUT" | sed -n 's/^deciding step: \([0-9]*\),.*/\1/p')
    [ -n "$FAIL" ] && [ -n "$DECIDING" ] || { echo "pool-lib: check found no narrowed failing run" >&2; exit 1; }
    local sig
    sig=$(rewind events "$FAIL" --kind signal --json | python3 -c '
import json, sys
e = json.load(sys.stdin)[0]
print(e["step"], e["pid"])')
    CRASH=${sig% *}
    PID=${sig#* }
    [ -n "$CRASH" ] || { echo "pool-lib: no signal in run $FAIL" >&2; exit 1; }
}
