# lib.sh: sourced by every docs/tutorials/transcripts/ID.sh (see
# tools/transcripts.sh). `tx CMD...` prints "$ CMD" and runs it (stdout and
# stderr together, in order), filtered so the transcript is the same on any
# machine and at any time:
#  - a run id (16 hex digits) depends on the kernel, init and root builds:
#    each distinct id becomes a stable stand-in (the n-th id seen in this
#    transcript always gets the same one), the same in commands and output;
#  - wall-clock times ("0.8s wall", "(12.3 s)") become "N.Ns", and dates
#    ("2026-11-30 21:17:00") "YYYY-MM-DD hh:mm:ss".
# `rewind` is the binary under test ($REWIND). Run ids to reuse in later
# commands: `id=$(rewind_last_id)` after a run.
rewind() { "$REWIND" "$@"; }

tx_filter() {
    python3 -c '
import hashlib, os, re, sys
path = os.environ["TX_IDS"]
ids = open(path).read().split() if os.path.exists(path) else []
def sub(m):
    if m.group(1) not in ids:
        ids.append(m.group(1))
    n = ids.index(m.group(1)) + 1
    return hashlib.sha256(b"rewind-transcript-%d" % n).hexdigest()[:16]
for line in sys.stdin:
    line = re.sub(r"(?<![0-9a-f])([0-9a-f]{16})(?![0-9a-f])", sub, line)
    line = re.sub(r"[0-9]+\.[0-9]+s wall", "N.Ns wall", line)
    line = re.sub(r"\b[0-9]+\.[0-9]+ s\)", "N.N s)", line)
    line = re.sub(r"\b20[0-9][0-9]-[01][0-9]-[0-3][0-9] [0-2][0-9]:[0-5][0-9]:[0-6][0-9]\b", "YYYY-MM-DD hh:mm:ss", line)
    line = re.sub(r"/tmp/rewind-where-[A-Za-z0-9]{6}", "/tmp/rewind-where-XXXXXX", line)
    sys.stdout.write(line)
open(path, "w").write("\n".join(ids))
'
}

# tx CMD...: print "$ CMD" and CMD's output, filtered; keep its status.
tx() {
    printf '$ %s\n' "$*" | tx_filter
    local out rc
    out=$(eval "$*" 2>&1)
    rc=$?
    [ -z "$out" ] || printf '%s\n' "$out" | tx_filter
    LAST_OUT=$out
    return $rc
}

# The id of the last run that the last tx printed a closing line for.
rewind_last_id() { printf '%s\n' "$LAST_OUT" | sed -n 's/^rewind: run \([0-9a-f~0-9]*\) .*/\1/p' | tail -n 1; }
