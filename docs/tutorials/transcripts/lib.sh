# lib.sh: sourced by every docs/tutorials/transcripts/ID.sh (see
# tools/transcripts.sh). `tx CMD...` prints "$ CMD" and runs it (stdout and
# stderr together, in order). tools/transcripts.sh filters the script's
# whole output (in the one python3 that compares a file's transcripts:
# python3 starts slowly under the test host's software CPU), so that the
# transcript is the same on any machine and at any time:
#  - a run id (16 hex digits) depends on the kernel, init and root builds:
#    each distinct id becomes a stable stand-in (the n-th id seen in this
#    transcript always gets the same one), the same in commands and output;
#  - wall-clock times ("0.8s wall", "(12.3 s)") become "N.Ns", and dates
#    ("2026-11-30 21:17:00") "YYYY-MM-DD hh:mm:ss".
#  - `tx_ids ID...` prints no transcript line: it numbers those ids first,
#    in that order, so a transcript that continues another one in the
#    same file (the same runs, found again by a command not shown) gives
#    them the stand-ins the first one gave (docs/tutorials/README.md).
# `rewind` is the binary under test ($REWIND). Run ids to reuse in later
# commands: `id=$(rewind_last_id)` after a run.
rewind() { "$REWIND" "$@"; }

# tx CMD...: print "$ CMD" and CMD's output; keep its status.
tx() {
    printf '$ %s\n' "$*"
    local out rc
    out=$(eval "$*" 2>&1)
    rc=$?
    [ -z "$out" ] || printf '%s\n' "$out"
    LAST_OUT=$out
    return $rc
}

# tx_top CMD...: tx, run from the repository's top ($TX_TOP), where gdb
# finds the test root's sources: their compilation directory is `.`
# (docs/debugging.md), as for a user who runs gdb from the checkout.
tx_top() {
    local here=$PWD rc
    cd "$TX_TOP" || return 2
    tx "$@"
    rc=$?
    cd "$here" || return 2
    return $rc
}

# tx_ids ID...: a line tools/transcripts.sh reads and drops (above).
tx_ids() { printf '@tx-ids %s\n' "$*"; }

# The id of the last run that the last tx printed a closing line for.
rewind_last_id() { printf '%s\n' "$LAST_OUT" | sed -n 's/^rewind: run \([0-9a-f~0-9]*\) .*/\1/p' | tail -n 1; }
