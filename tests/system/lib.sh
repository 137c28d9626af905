# lib.sh: helpers for system tests. Each tests/system/t_*.sh defines functions
# named test_*; run.sh runs each in a subshell, in its own directory $T with
# its own REWIND_HOME ($T/home): it passes when it returns 0, is skipped when
# it calls skip. A failing helper prints why on stderr.
# Helpers called many times per test use shell builtins where a program would
# do: under the test host's software CPU each program started costs 0.1-0.3 s
# (bench/RESULTS.md, "Programs a test starts").
TOP=$(cd "${BASH_SOURCE[0]%/*}/../.." && pwd)
# REWIND_UNDER_TEST: another build of rewind to test (e.g. one broken on
# purpose, to see a test fail); it finds kernel/ and rewind-init beside it.
REWIND=${REWIND_UNDER_TEST:-$TOP/build/rewind}
ROOTDIR=$TOP/build/roots/test       # a directory root (tests of root handling)
ROOT=$TOP/build/roots/test.erofs    # the same tree as an erofs image (fast)

fail() { echo "  $*" >&2; return 1; }
# python3 without the site module (-S): the tests' Python reads JSON and
# uses the standard library only (PYTHONPATH still counts), and under the
# test host's software CPU site's start-up was about half of a python3's
# 0.9 s (docs/test-host.md).
python3() { command python3 -S "$@"; }
# small_root DIR [PROGRAM...]: a root directory of its own, small (busybox
# with a few applets, and the named programs of build/guest), for tests
# that change a root or need one of their own: hashing and imaging it is
# cheap where a copy of $ROOTDIR is not, and it is made without a process
# per applet (tools/mkroot.sh's loop over ~400 applets took minutes under
# the test host's software CPU).
small_root() {
    local d=$1 p a; shift
    mkdir -p "$d"/{bin,sbin,usr/bin,etc,root,tmp,dev,proc,sys,var/tmp} || return 1
    cp "$ROOTDIR/bin/busybox" "$d/bin/busybox" || return 1
    for a in sh ash cat echo ls rm mkdir sleep tail head true false test wc mv cp chmod readlink; do
        ln -s busybox "$d/bin/$a"
    done
    printf 'root:x:0:0:root:/root:/bin/sh\n' >"$d/etc/passwd"
    printf 'root:x:0:\n' >"$d/etc/group"
    for p in "$@"; do cp "$TOP/build/guest/$p" "$d/usr/bin/" || return 1; done
    chmod 1777 "$d/tmp" "$d/var/tmp"
}
# skip WHY: this test cannot run here (a tool is missing, ...); counted as
# skipped, never as passed. Ends the test.
skip() { echo "$*" > "$T/skipped"; exit 0; }

# run_rw OUTPREFIX ARGS...: rewind ARGS with stdout/stderr in OUTPREFIX.out/.err;
# sets RC. Never fails by itself.
run_rw() {
    local p=$1; shift
    set +e
    "$REWIND" "$@" >"$p.out" 2>"$p.err"
    RC=$?
    LAST=$p
    set -e
}

expect_rc() { [ "$RC" -eq "$1" ] || fail "exit status $RC, expected $1 ($(tail -n 3 "${LAST:-r}.err" 2>/dev/null | tr '\n' '|'))"; }
expect_file() { # expect_file FILE EXPECTED-CONTENT
    local got; got=$(cat "$1")
    [ "$got" = "$2" ] || fail "$1: got '$got', expected '$2'"
}
expect_grep() { grep -q -- "$2" "$1" || fail "$1 lacks '$2': $(head -c 300 "$1" | tr '\n' '|')"; }
expect_no_grep() { ! grep -q -- "$2" "$1" || fail "$1 has '$2': $(grep -m 2 -- "$2" "$1" | cut -c1-400 | tr '\n' '|')"; }
# closing ERRFILE: the last line that starts with "rewind: run " (none:
# nothing); the closing line's fields below
closing() {
    local l last='' found=0
    [ -r "$1" ] || { echo "closing: cannot read $1" >&2; return 0; }
    while IFS= read -r l || [ -n "$l" ]; do
        [[ $l == 'rewind: run '* ]] && { last=$l; found=1; }
    done <"$1"
    [ "$found" = 0 ] || printf '%s\n' "$last"
    return 0
}
# closing_field ERRFILE REGEX: the first group of REGEX (an ERE whose
# leading .* makes it the line's last match) in the closing line, or nothing
closing_field() {
    local c; c=$(closing "$1")
    [[ $c =~ $2 ]] && printf '%s\n' "${BASH_REMATCH[1]}"
    return 0
}
# run_id ERRFILE: the run id on the closing line; fails (saying why) if the
# run printed none, so `x=$(run_id r.err)` stops the test there.
run_id() {
    local id c; c=$(closing "$1")
    read -r _ _ id _ <<<"$c"
    [ -n "$id" ] || fail "no run id in $1: $(tail -n 2 "$1" 2>/dev/null | tr '\n' '|')" || return 1
    echo "$id"
}
# same_run A.err B.err: both runs printed an id, and it is the same one
# mf RUN FIELD: one field of RUN's manifest.
mf() {
    python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' \
        "$REWIND_HOME/runs/$1/manifest.json" "$2"
}

same_run() {
    local a b; a=$(run_id "$1") && b=$(run_id "$2") || return 1
    [ "$a" = "$b" ] || fail "$1 and $2 name other runs: $a $b"
}
steps_of() { closing_field "$1" '.* after ([0-9]*) steps'; }
virt_of() { closing_field "$1" '.* steps, ([0-9.]*)s virtual'; }
wall_of() { closing_field "$1" '.*virtual, ([0-9.]*)s wall'; }
# hole_caught PREFIX N ARGS...: a negative twin's runs (docs/determinism.md):
# up to N runs of `rewind run ARGS` (a test hole open among ARGS; outputs in
# PREFIX1.out ...), until one reports a DETERMINISM VIOLATION; it must be a
# later run of the first one's id and name a step. Sets CAUGHT to its number.
hole_caught() {
    local p=$1 n=$2 i; shift 2
    CAUGHT=0
    for i in $(seq "$n"); do
        run_rw "$p$i" run "$@"
        if grep -q 'DETERMINISM VIOLATION' "$p$i.err"; then CAUGHT=$i; break; fi
    done
    [ "$CAUGHT" -gt 1 ] || fail "$n runs of one spec with a hole open and no violation" || return 1
    grep 'DETERMINISM VIOLATION' "$p$CAUGHT.err" | grep -q 'step' ||
        fail "no step named: $(grep VIOLATION "$p$CAUGHT.err")" || return 1
    same_run "${p}1.err" "$p$CAUGHT.err"
}

# fixture NAME: the base run NAME (fixture_NAME in fixtures.sh) in this
# test's own home, imported from an archive that run.sh's host VM recorded on
# first use (run.sh invariant 2), as a user moves a run between homes. Prints
# the run's id. The files the recording left in its directory (the outputs
# of its commands) are copied into $T/fixture-NAME/. Fails (saying why) when
# the recording, the export or the import fails.
fixture() {
    local n=$1 d=${REWIND_FIXTURES:?fixture needs run.sh} id
    declare -F "fixture_$n" >/dev/null || fail "no fixture $n in fixtures.sh" || return 1
    if [ ! -s "$d/$n.id" ]; then
        rm -rf "$d/$n.home" "$d/$n.work" && mkdir -p "$d/$n.home" "$d/$n.work" &&
            cp -al "$REWIND_FIXTURE_IMAGES" "$d/$n.home/images"
        id=$(export REWIND_HOME="$d/$n.home"; cd "$d/$n.work" && "fixture_$n" | tail -n 1) || true
        [ -n "$id" ] && [ -d "$d/$n.home/runs/$id" ] || fail "fixture $n: no run recorded ('$id')" || return 1
        REWIND_HOME="$d/$n.home" "$REWIND" export "$id" --replayable --without-image -o "$d/$n.rewind" >/dev/null 2>"$d/$n.xerr" ||
            fail "fixture $n: export: $(tail -n 1 "$d/$n.xerr")" || return 1
        rm -rf "$d/$n.home"
        echo "$id" >"$d/$n.id"
    fi
    "$REWIND" import "$d/$n.rewind" >/dev/null 2>"$T/fixture-$n.ierr" ||
        fail "fixture $n: import: $(tail -n 1 "$T/fixture-$n.ierr")" || return 1
    rm -rf "$T/fixture-$n" && cp -r "$d/$n.work" "$T/fixture-$n"
    cat "$d/$n.id"
}
source "${BASH_SOURCE[0]%/*}/fixtures.sh"
