# The pool's failing run at its deciding step (rewind where, then gdb's bt
# of every thread there), and every write to its done counter.
source "$TX_LIB"
source "$(dirname "$TX_LIB")/pool-lib.sh"
pool_check
tx rewind where "$FAIL" "$DECIDING"
tx_top rewind gdb "$FAIL" "$DECIDING" -- -batch -ex "'thread apply all bt'" -ex "'print done'"
tx rewind watch "$FAIL" done --pid "$PID"
exit 0
