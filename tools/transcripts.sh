#!/usr/bin/env bash
# transcripts.sh [--check] [--only ID,...] [FILE...]: keep the transcripts
# in markdown files real (docs/tutorials/README.md says how to write one).
#
# In a markdown file (default: docs/tutorials/*.md) a transcript is a line
# `<!-- transcript: ID -->` followed by a fenced code block. The script
# docs/tutorials/transcripts/ID.sh prints exactly that block's content: its
# `$ cmd` lines and their real output, made host- and time-independent by
# this script (run ids, wall times; see docs/tutorials/transcripts/lib.sh). Without --check
# each block is rewritten with what its script prints now; with --check
# nothing is written, and any difference is printed as a diff and makes the
# exit status 1. Exit status 2: bad usage, a missing script, a transcript
# line not followed by a fenced block, or a script that failed. With
# --only, just the transcripts named run and are compared (or rewritten);
# the others are left as written (tests/system/t_transcripts.sh checks the
# quick ones in make check, all of them in make check-long).
#
# Each script runs in a fresh directory with a fresh REWIND_HOME, with
# REWIND (the rewind binary: $REWIND_UNDER_TEST, else build/rewind) and
# ROOT (build/roots/test.erofs) in its environment. Needs KVM: run it the
# way the system tests run (tests/system/t_transcripts.sh).
#
# Invariants:
#  1. A file is rewritten only when a block differs, and atomically (a
#     temporary file renamed over it): an interrupted run leaves it whole.
#  2. Only the content between the fences changes; every other byte of the
#     file is kept.
set -uo pipefail
TOP=$(cd "$(dirname "$0")/.." && pwd)
check=0
only=
files=()
want_only=0
for a in "$@"; do
    if [ $want_only = 1 ]; then
        only=",$a,"
        want_only=0
        continue
    fi
    case "$a" in
    --check) check=1 ;;
    --only) want_only=1 ;;
    -h | --help)
        sed -n '2,26p' "$0" | sed 's/^# \{0,1\}//'
        exit 0
        ;;
    -*) echo "transcripts.sh: unknown option $a (see --help)" >&2; exit 2 ;;
    *) files+=("$a") ;;
    esac
done
[ $want_only = 0 ] || { echo "transcripts.sh: --only needs IDs" >&2; exit 2; }
if [ ${#files[@]} -eq 0 ]; then
    shopt -s nullglob
    files=("$TOP"/docs/tutorials/*.md)
fi
export REWIND=${REWIND_UNDER_TEST:-$TOP/build/rewind}
export ROOT=${TRANSCRIPT_ROOT:-$TOP/build/roots/test.erofs}
export TX_LIB=$TOP/docs/tutorials/transcripts/lib.sh
export TX_TOP=$TOP
work=$(mktemp -d "${TMPDIR:-/tmp}/transcripts.XXXXXX")
trap 'rm -rf "$work"' EXIT

# run_script ID OUT: run ID.sh in a fresh directory and home; output to OUT.
run_script() {
    local id=$1 out=$2 s="$TOP/docs/tutorials/transcripts/$1.sh"
    [ -f "$s" ] || { echo "transcripts.sh: no script $s" >&2; return 2; }
    local d="$work/$id"
    rm -rf "$d"; mkdir -p "$d/home"
    if ! (cd "$d" && REWIND_HOME="$d/home" bash "$s") >"$out" 2>"$d/stderr"; then
        echo "transcripts.sh: $s failed: $(tail -n 3 "$d/stderr" | tr '\n' '|')" >&2
        return 2
    fi
}

status=0
for f in "${files[@]}"; do
    [ -f "$f" ] || { echo "transcripts.sh: no such file $f" >&2; exit 2; }
    # the transcript ids, in order (awk: python3 starts slowly in the test host)
    ids=$(awk '
        want { if ($0 !~ /^```/) { printf "%s:%d: a transcript line must be followed by a fenced block\n", FILENAME, NR - 1 > "/dev/stderr"; bad = 1; exit } want = 0 }
        /^[ \t]*<!-- transcript: [A-Za-z0-9_-]+ -->[ \t]*$/ { id = $0; sub(/^[ \t]*<!-- transcript: /, "", id); sub(/ -->[ \t]*$/, "", id); print id; want = 1 }
        END { if (want && !bad) { printf "%s:%d: a transcript line must be followed by a fenced block\n", FILENAME, NR > "/dev/stderr"; bad = 1 } exit bad }' "$f") || exit 2
    [ -n "$ids" ] || continue
    ran=0
    for id in $ids; do
        [ -z "$only" ] || [ "${only#*,"$id",}" != "$only" ] || continue
        run_script "$id" "$work/$id.out" || exit 2
        ran=1
    done
    [ $ran = 1 ] || continue # none selected by --only: nothing to compare
    python3 - "$f" "$work" "$check" <<'PY'
import difflib, hashlib, os, re, sys
path, work, check = sys.argv[1], sys.argv[2], sys.argv[3] == "1"

def host_free(lines):
    """A script's output made host- and time-independent (lib.sh): the
    n-th distinct run id becomes the n-th stand-in (counting the ids a
    tx_ids line names first, and dropping that line); wall times and
    dates become placeholders."""
    ids = []
    def sub(m):
        if m.group(1) not in ids:
            ids.append(m.group(1))
        n = ids.index(m.group(1)) + 1
        return hashlib.sha256(b"rewind-transcript-%d" % n).hexdigest()[:16]
    hashes = []
    def hsub(m):
        if m.group(1) not in hashes:
            hashes.append(m.group(1))
        n = hashes.index(m.group(1)) + 1
        return hashlib.sha256(b"rewind-transcript-trace-%d" % n).hexdigest()
    out = []
    for line in lines:
        # lib.sh's tx_ids: ids numbered first, in that order; not shown
        if line.startswith("@tx-ids "):
            for x in line.split()[1:]:
                if not re.fullmatch(r"[0-9a-f]{16}", x):
                    sys.stderr.write("transcripts.sh: tx_ids: %r is not a run id\n" % x)
                    sys.exit(2)
                if x not in ids:
                    ids.append(x)
            continue
        # a trace hash (64 hex digits) depends on the builds as a run id does
        line = re.sub(r"(?<![0-9a-f])([0-9a-f]{64})(?![0-9a-f])", hsub, line)
        # an address (0x and 16 digits: gdb's, where's) is not a run id
        line = re.sub(r"(?<![0-9a-f])(?<!0x)([0-9a-f]{16})(?![0-9a-f])", sub, line)
        line = re.sub(r"[0-9]+\.[0-9]+s wall", "N.Ns wall", line)
        line = re.sub(r"\b[0-9]+\.[0-9]+ s\)", "N.N s)", line)
        line = re.sub(r"\b20[0-9][0-9]-[01][0-9]-[0-3][0-9] [0-2][0-9]:[0-5][0-9]:[0-6][0-9]\b",
                      "YYYY-MM-DD hh:mm:ss", line)
        line = re.sub(r"/tmp/rewind-where-[A-Za-z0-9]{6}", "/tmp/rewind-where-XXXXXX", line)
        out.append(line)
    return out
text = open(path, encoding="utf-8").read()
lines = text.split("\n")
out, i, differ = [], 0, False
while i < len(lines):
    l = lines[i]
    out.append(l)
    m = re.fullmatch(r"<!-- transcript: ([A-Za-z0-9_-]+) -->", l.strip())
    i += 1
    if not m:
        continue
    fence = lines[i]
    out.append(fence)
    j = i + 1
    while j < len(lines) and lines[j].strip() != "```":
        j += 1
    if j >= len(lines):
        sys.exit("%s: transcript %s: its block never ends" % (path, m.group(1)))
    old = lines[i + 1:j]
    made = os.path.join(work, m.group(1) + ".out")
    if not os.path.exists(made):  # not selected by --only: kept as written
        out.extend(old)
        out.append(lines[j])
        i = j + 1
        continue
    new = host_free(open(made, encoding="utf-8").read().rstrip("\n").split("\n"))
    if old != new:
        differ = True
        sys.stdout.writelines(difflib.unified_diff(
            [x + "\n" for x in old], [x + "\n" for x in new],
            "%s (%s, written)" % (path, m.group(1)), "%s (%s, now)" % (path, m.group(1))))
    out.extend(new)
    out.append(lines[j])
    i = j + 1
if differ and not check:
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write("\n".join(out))
    os.replace(tmp, path)  # invariant 1
    print("%s: rewritten" % path)
sys.exit(1 if differ and check else 0)
PY
    rc=$?
    [ $rc -eq 0 ] || status=$rc
done
exit $status
