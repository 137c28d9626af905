#!/usr/bin/env bash
# run.sh [PATTERN]: run every system test (tests/system/t_*.sh, functions
# test_*) of the selected tier whose "file:function" name matches the
# extended regex PATTERN; print PASS/FAIL/SKIP per test and end with exactly
# one line "N passed, N failed, N skipped" (docs/testing.md). Needs a KVM
# that runs guest kernels natively: the suite calls it through tools/kvm-host.
#
# Invariants:
#  1. Each test runs in a subshell of its own, in its own directory $T, with
#     its own REWIND_HOME ($T/home): no test sees another's runs, store or
#     locks, so a test cannot pass because of what another one left.
#  2. The only things shared between homes are the cached image of the test
#     root (images/, hard links: images are content-addressed and never
#     modified in place), so each test does not hash and copy it again, and
#     the fixtures (fixtures.sh): base runs recorded once by this script and
#     imported into a test's own home by `fixture NAME` as an archive, the way
#     a user moves a run between homes, and this run's own shared key cache
#     (REWIND_CACHE: big files' hashes by file identity, src/image/image.c
#     invariant 8). A test never sees another test's runs, store or images.
#  3. A test passes when its function returns 0, is skipped when it called
#     skip (lib.sh), and fails otherwise; every test selected is counted
#     exactly once.
#  4. A test file with a syntax error is one failure, never a silent skip.
#  5. Every test function carries a tier: the line right above
#     `test_x() {` reads `# tier: engine` (it boots no guest: run on this
#     machine directly), `# tier: vm` or `# tier: long` (docs/testing.md,
#     "Tiers"). REWIND_TIER (default vm) selects the tier to run (`all`: every
#     one); a test with no tier line, or an unknown one, is selected in every
#     tier and counts as one failure, so no test silently belongs to none.
#     Tier engine primes no image: its tests must not boot a guest.
#  6. Several copies of this script (one per host VM, tests/run-all.sh) share
#     the work without running a test twice: with REWIND_SYSTEST_QUEUE=DIR (a
#     directory all of them see) a copy runs a test only after it created
#     DIR/<name> itself (mkdir is atomic: exactly one copy succeeds), so a copy
#     that is free takes the next test; without it REWIND_SYSTEST_SHARD=K/N
#     (0 <= K < N) takes the tests whose number is K modulo N. Both walk the
#     same list in the same order: the longest tests first by the times in
#     tests/system/durations (a test not listed there counts as 60 s), so
#     the last test to start is a short one. A syntax error counts in the
#     copy that claims it (shard 0 without a queue).
set -uo pipefail
# The whole script is one compound command, read before it runs, so that
# editing a test file or this one while the suite runs cannot derail it.
{
HERE=$(cd "$(dirname "$0")" && pwd)
pat=${1:-.}
# REWIND_SYSTEST_EXCLUDE (an extended regex): tests whose name matches are not
# selected.
exclude=${REWIND_SYSTEST_EXCLUDE:-}
shard=${REWIND_SYSTEST_SHARD:-0/1}
queue=${REWIND_SYSTEST_QUEUE:-}
sk=${shard%/*} sn=${shard#*/}
case "$sk/$sn" in
    *[!0-9/]* | /* | */) echo "run.sh: REWIND_SYSTEST_SHARD=$shard is not K/N" >&2; exit 2 ;;
esac
[ "$sn" -ge 1 ] && [ "$sk" -lt "$sn" ] || { echo "run.sh: REWIND_SYSTEST_SHARD=$shard: need 0 <= K < N" >&2; exit 2; }
[ -z "$queue" ] || [ -d "$queue" ] || { echo "run.sh: REWIND_SYSTEST_QUEUE=$queue is not a directory" >&2; exit 2; }
tier=${REWIND_TIER:-vm}
case "$tier" in engine | vm | long | all) ;; *) echo "run.sh: REWIND_TIER=$tier: not engine, vm, long or all" >&2; exit 2 ;; esac
pass=0; failn=0; skipn=0
export REWIND_HOME
base=$(mktemp -d "${TMPDIR:-/tmp}/rewind-systest.XXXXXX")
trap 'rm -rf "$base"' EXIT

# 1. The selection: "secs file test tier" per selected test, syntax errors
#    as "secs file - syntax". REWIND_SYSTEST_LIST=FILE: take it from FILE,
#    made by REWIND_SYSTEST_LIST_ONLY=1 (which prints it and stops): every
#    host VM of one make check walks the same list, made once on this
#    machine (sourcing every test file under the test host's software CPU
#    took minutes).
: >"$base/list"
[ -z "${REWIND_SYSTEST_LIST:-}" ] || [ -f "$REWIND_SYSTEST_LIST" ] ||
    { echo "run.sh: REWIND_SYSTEST_LIST=$REWIND_SYSTEST_LIST is not a file" >&2; exit 2; }
for f in "$HERE"/t_*.sh; do
    [ -z "${REWIND_SYSTEST_LIST:-}" ] || break
    fb=$(basename "$f" .sh)
    # A file bash cannot parse defines none or only some of its tests:
    # it counts as one failure (invariant 4) when its name or a test it
    # names in its text is selected, instead of silently running fewer.
    if ! bash -n "$f" 2>"$base/syntax.$fb"; then
        if { echo "$fb:"; grep -oE '^[[:space:]]*(function[[:space:]]+)?test_[A-Za-z0-9_]+' "$f" |
            sed -E "s/^[[:space:]]*(function[[:space:]]+)?/$fb:/"; } | grep -E "$pat" >/dev/null; then
            echo "0 $f - syntax" >>"$base/list"
        fi
        continue
    fi
    # each test's tier (invariant 5): "name tier", tier "none" when the
    # line above its definition is not a tier line
    awk '/^test_[A-Za-z0-9_]+\(\)/ { n = $1; sub(/\(\).*/, "", n);
             t = "none"; if (prev ~ /^# tier: /) { split(prev, w, " "); t = w[3] }
             print n, t }
         { prev = $0 }' "$f" >"$base/tiers"
    for t in $(bash -c "source '$HERE/lib.sh'; source '$f'; declare -F" | awk '{print $3}' | grep '^test_' ); do
        name="$fb:$t"
        echo "$name" | grep -qE "$pat" || continue
        if [ -n "$exclude" ] && echo "$name" | grep -qE "$exclude"; then continue; fi
        tt=$(awk -v n="$t" '$1 == n { print $2 }' "$base/tiers")
        case "$tt" in engine | vm | long) [ "$tier" = all ] || [ "$tt" = "$tier" ] || continue ;; *) tt=none ;; esac
        secs=$(awk -v n="$name" '$1 == n { print int($2) }' "$HERE/durations" 2>/dev/null)
        echo "${secs:-60} $f $t $tt" >>"$base/list"
    done
done
# longest first; ties in file order (sort -s)
if [ -n "${REWIND_SYSTEST_LIST:-}" ]; then
    cp "$REWIND_SYSTEST_LIST" "$base/order"
else
    sort -s -k1,1nr "$base/list" >"$base/order"
fi
if [ "${REWIND_SYSTEST_LIST_ONLY:-0}" = 1 ]; then
    cat "$base/order"
    exit 0
fi

# 2. Shared state (invariant 2): the program under test on this machine's
#    own disk, the test root's image, cached by one run of the test root in a
#    scratch home, and the fixtures, recorded on first use.
#    The program, its kernel and rewind-init are copied once per copy of
#    run.sh (REWIND_SYSTEST_COPY_BIN=0: not) into a folder every user may
#    read: under the host VM the work tree is a 9p share that keeps no page
#    cache, so every command and every guest run would read them through
#    QEMU again (bench/RESULTS.md, "The program under test on the host VM's
#    own disk").
if [ "$tier" != engine ] && [ "${REWIND_SYSTEST_COPY_BIN:-1}" = 1 ]; then
    src=${REWIND_UNDER_TEST:-$HERE/../../build/rewind}
    sd=$(dirname "$src")
    if [ -x "$src" ] && [ -f "$sd/kernel/vmlinux" ] && [ -f "$sd/rewind-init" ]; then
        bindir=$(mktemp -d "${TMPDIR:-/tmp}/rewind-bin.XXXXXX")
        trap 'rm -rf "$base" "$bindir"' EXIT
        mkdir "$bindir/kernel"
        cp "$src" "$bindir/rewind" && cp "$sd/rewind-init" "$bindir/rewind-init" &&
            cp "$sd"/kernel/* "$bindir/kernel/" && chmod -R a+rX "$bindir" &&
            export REWIND_UNDER_TEST="$bindir/rewind" ||
            echo "(could not copy the program under test to $bindir: its files are read where they are)"
    fi
fi
images="$base/images"
# the user's shared key cache (src/image/image.c invariant 8): this run's own,
# so no test reads keys a developer's earlier runs left
mkdir -p -m 700 "$base/cache"
export REWIND_CACHE="$base/cache"
if [ "$tier" = engine ]; then
    mkdir -p "$images" # no guest in this tier (invariant 5)
elif REWIND_HOME="$base/prime" "${REWIND_UNDER_TEST:-$HERE/../../build/rewind}" run --root "$HERE/../../build/roots/test.erofs" \
    -- true >"$base/prime.out" 2>&1 && [ -d "$base/prime/images" ]; then
    mv "$base/prime/images" "$images"
else
    echo "(could not cache the test root's image first: $(tail -n 1 "$base/prime.out"))"
    mkdir -p "$images"
fi
rm -rf "$base/prime"
export REWIND_FIXTURES="$base/fixtures" REWIND_FIXTURE_IMAGES="$images"
mkdir -p "$REWIND_FIXTURES"

# The tests run in the C locale: grep, sed and tail start about a third
# faster under the test host's software CPU when they load no locale
# (bench/RESULTS.md, "Programs a test starts"); every test file is ASCII.
export LC_ALL=C

# 3. Run: claim (invariant 6), then run in a world of its own (invariant 1).
idx=0
while read -r _ f t tt <&9; do
    fb=${f##*/}; fb=${fb%.sh}
    name="$fb:$t"
    [ "$t" = - ] && name="$fb:(syntax error)"
    idx=$((idx+1))
    if [ -n "$queue" ]; then
        mkdir "$queue/$fb:$t" 2>/dev/null || continue
    else
        [ $(((idx - 1) % sn)) -eq "$sk" ] || continue
    fi
    if [ "$tt" = syntax ]; then
        bash -n "$f" 2>"$base/syntax.$fb"
        failn=$((failn+1)); echo "FAIL $name"; sed 's/^/    /' "$base/syntax.$fb" | tail -n 20
        continue
    fi
    if [ "$tt" = none ]; then
        failn=$((failn+1)); echo "FAIL $name: no '# tier: engine', '# tier: vm' or '# tier: long' line above it (run.sh invariant 5)"
        continue
    fi
    T="$base/$fb/$t"; mkdir -p "$T/home"
    cp -al "$images" "$T/home/images"
    start=${EPOCHREALTIME/[.,]/}
    # REWIND_SYSTEST_XTRACE=DIR: each test's commands with the time each
    # started, in DIR/<file>:<test>.trace (a profile: tools/xtrace-profile.sh)
    ( set -e; export T REWIND_HOME="$T/home"
      if [ -n "${REWIND_SYSTEST_XTRACE:-}" ]; then
          exec 8>"$REWIND_SYSTEST_XTRACE/$fb:$t.trace"; BASH_XTRACEFD=8; PS4='+${EPOCHREALTIME} '; set -x
      fi
      source "$HERE/lib.sh"; source "$f"; cd "$T"; "$t" ) 2>"$T/why" 9<&-
    rc=$?
    took=$(( (${EPOCHREALTIME/[.,]/} - start + 50000) / 100000 )) # tenths of a second
    secs=$((took / 10)).$((took % 10))
    if [ -e "$T/skipped" ]; then
        skipn=$((skipn+1)); echo "SKIP $name (${secs}s): $(head -n 1 "$T/skipped")"
    elif [ $rc -eq 0 ]; then
        pass=$((pass+1)); echo "PASS $name (${secs}s)"
    else
        failn=$((failn+1)); echo "FAIL $name (${secs}s)"; sed 's/^/    /' "$T/why" | tail -n 20
        # the host VM's /tmp goes with it: a failing test's own files (its
        # commands' output, not its homes; each under 4 MiB) are copied
        # to the work tree, where they outlive the host VM
        keep_dir=${HERE%/tests/system}/build/artifacts/failed/${name//:/.}
        rm -rf "$keep_dir" && mkdir -p "$keep_dir" &&
            find "$T" -maxdepth 1 -type f -size -4M -exec cp -t "$keep_dir" {} + 2>/dev/null &&
            echo "    (its files: ${keep_dir#"${HERE%/tests/system}"/})"
    fi
    # free the memory (under the host VM /tmp is a tmpfs, and a test such
    # as t_roots:test_mem_above_4g needs most of it): a passing test's
    # whole directory goes, a failing or skipped one keeps its files
    # but not its homes
    if [ $rc -eq 0 ] && [ ! -e "$T/skipped" ]; then rm -rf "$T"; else rm -rf "$T/home" "$T/home2"; fi
done 9<"$base/order"
echo "$pass passed, $failn failed, $skipn skipped"
[ $failn -eq 0 ]
exit
}
