# The pool's crash in reverse: from the worker's SIGSEGV, reverse-continue
# to the last `done++` before it (the line found in pool.c as
# tests/system/t_gdb.sh finds it), and look around there.
source "$TX_LIB"
source "$(dirname "$TX_LIB")/pool-lib.sh"
pool_check
line=$(grep -n '^ *done++;' "$POOL_C" | cut -d: -f1)
[ -n "$line" ] || { echo "gdb-pool-reverse: no done++ line in $POOL_C" >&2; exit 1; }
# the crashing worker's task, by its index in the array (gdb at the crash)
task=$(rewind gdb "$FAIL" "$CRASH" -- -batch -ex 'print t - tasks' 2>/dev/null | sed -n 's/^\$1 = \([0-9]*\)$/\1/p')
[ -n "$task" ] || { echo "gdb-pool-reverse: no task index at the crash" >&2; exit 1; }
tx_top rewind gdb "$FAIL" "$CRASH" --verify -- -batch -ex "'break pool.c:$line'" -ex reverse-continue \
    -ex "'print done'" -ex "'print tasks[$task].out'" -ex "'thread apply all bt'" -ex next -ex "'print done'"
exit 0
