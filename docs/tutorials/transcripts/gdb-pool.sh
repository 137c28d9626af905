# The pool's crash (examples/pool, built with -g as /usr/bin/pool-g): check
# finds and narrows it; the SIGSEGV's step; gdb's bt there.
source "$TX_LIB"
source "$(dirname "$TX_LIB")/pool-lib.sh"
pool_check tx
tx rewind events "$FAIL" --kind signal
tx_top rewind gdb "$FAIL" "$CRASH" -- -batch -ex bt -ex "'print t'" -ex "'print t - tasks'" \
    -ex "'print *t'" -ex "'print done'"
exit 0
