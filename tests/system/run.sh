#!/usr/bin/env bash
# run.sh [PATTERN]: run every system test (tests/system/t_*.sh, functions
# test_*) whose "file:function" name matches the extended regex PATTERN;
# print PASS/FAIL/SKIP per test and end with exactly one line
# "N passed, N failed, N skipped" (tests/README.md). Needs a KVM that runs
# guest kernels natively: the suite calls it through tools/kvm-host.
#
# Invariants:
#  1. Each test runs in a subshell of its own, in its own directory $T, with
#     its own REWIND_HOME ($T/home): no test sees another's runs, store or
#     locks, so a test cannot pass because of what another one left.
#  2. The only thing shared between homes is the cached image of the test
#     root (images/, hard links: images are content-addressed and never
#     modified in place), so each test does not hash and copy it again.
#     Runs and the page store are never shared, and no test's images are
#     passed on to another.
#  3. A test passes when its function returns 0, is skipped when it called
#     skip (lib.sh), and fails otherwise; every test selected is counted
#     exactly once.
#  4. A test file with a syntax error is one failure, never a silent skip.
#  5. REWIND_SYSTEST_SHARD=K/N (0 <= K < N) runs the K-th of N disjoint shards:
#     the selected tests are numbered in order and shard K takes those whose
#     number is K modulo N (a syntax error counts in shard 0), so the N shards
#     together run every selected test exactly once (tests/run-all.sh runs
#     them side by side, one host VM each).
set -uo pipefail
# The whole script is one compound command, read before it runs, so that
# editing a test file or this one while the suite runs cannot derail it.
{
HERE=$(cd "$(dirname "$0")" && pwd)
pat=${1:-.}
# REWIND_SYSTEST_EXCLUDE (an extended regex): tests whose name matches are not
# selected (make check leaves the long ones, tests/system/LONG, to make
# check-long: they are not skipped, they belong to the other target).
exclude=${REWIND_SYSTEST_EXCLUDE:-}
shard=${REWIND_SYSTEST_SHARD:-0/1}
sk=${shard%/*} sn=${shard#*/}
case "$sk/$sn" in
    *[!0-9/]* | /* | */) echo "run.sh: REWIND_SYSTEST_SHARD=$shard is not K/N" >&2; exit 2 ;;
esac
[ "$sn" -ge 1 ] && [ "$sk" -lt "$sn" ] || { echo "run.sh: REWIND_SYSTEST_SHARD=$shard: need 0 <= K < N" >&2; exit 2; }
idx=0 # selected tests seen so far (invariant 5)
pass=0; failn=0; skipn=0
export REWIND_HOME
base=$(mktemp -d "${TMPDIR:-/tmp}/rewind-systest.XXXXXX")
trap 'rm -rf "$base"' EXIT
# The shared image cache (invariant 2): one run of the test root in a home
# of its own caches the test root's image; only its images/ is kept.
images="$base/images"
if REWIND_HOME="$base/prime" "${REWIND_UNDER_TEST:-$HERE/../../build/rewind}" run --root "$HERE/../../build/roots/test.erofs" \
    -- true >"$base/prime.out" 2>&1 && [ -d "$base/prime/images" ]; then
    mv "$base/prime/images" "$images"
else
    echo "(could not cache the test root's image first: $(tail -n 1 "$base/prime.out"))"
    mkdir -p "$images"
fi
rm -rf "$base/prime"
for f in "$HERE"/t_*.sh; do
    # A file bash cannot parse defines none or only some of its tests:
    # it counts as one failure (invariant 4) when its name or a test it
    # names in its text is selected, instead of silently running fewer.
    if ! bash -n "$f" 2>"$base/syntax.err"; then
        fb=$(basename "$f" .sh)
        if { echo "$fb:"; grep -oE '^[[:space:]]*(function[[:space:]]+)?test_[A-Za-z0-9_]+' "$f" |
            sed -E "s/^[[:space:]]*(function[[:space:]]+)?/$fb:/"; } | grep -E "$pat" >/dev/null; then
            if [ "$sk" -eq 0 ]; then
                failn=$((failn+1)); echo "FAIL $fb:(syntax error)"; sed 's/^/    /' "$base/syntax.err" | tail -n 20
            fi
        fi
        continue
    fi
    for t in $(bash -c "source '$HERE/lib.sh'; source '$f'; declare -F" | awk '{print $3}' | grep '^test_' ); do
        name="$(basename "$f" .sh):$t"
        echo "$name" | grep -qE "$pat" || continue
        if [ -n "$exclude" ] && echo "$name" | grep -qE "$exclude"; then continue; fi
        idx=$((idx+1))
        [ $(((idx - 1) % sn)) -eq "$sk" ] || continue
        T="$base/$(basename "$f" .sh)/$t"; mkdir -p "$T/home"
        cp -al "$images" "$T/home/images"
        start=$(date +%s.%N)
        ( set -e; export T REWIND_HOME="$T/home"; source "$HERE/lib.sh"; source "$f"; cd "$T"; "$t" ) 2>"$T/why"
        rc=$?
        secs=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}')
        if [ -e "$T/skipped" ]; then
            skipn=$((skipn+1)); echo "SKIP $name (${secs}s): $(head -n 1 "$T/skipped")"
        elif [ $rc -eq 0 ]; then
            pass=$((pass+1)); echo "PASS $name (${secs}s)"
        else
            failn=$((failn+1)); echo "FAIL $name (${secs}s)"; sed 's/^/    /' "$T/why" | tail -n 20
        fi
        # free the memory (under the host VM /tmp is a tmpfs, and a test such
        # as t_roots:test_mem_above_4g needs most of it): a passing test's
        # whole directory goes, a failing or skipped one keeps its files
        # but not its homes
        if [ $rc -eq 0 ] && [ ! -e "$T/skipped" ]; then rm -rf "$T"; else rm -rf "$T/home" "$T/home2"; fi
    done
done
echo "$pass passed, $failn failed, $skipn skipped"
[ $failn -eq 0 ]
exit
}
