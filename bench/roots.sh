#!/usr/bin/env bash
# bench/roots.sh [MiB]: what a root directory costs before the VM starts,
# the first time and again unchanged (issue 12, item 3), in one bench run.
#
#   tree:    build/bench-roots/tree, about MiB MiB (default 400) of files of
#            mixed sizes (most a few KiB, some up to 4 MiB) in 100 folders,
#            plus busybox from the test root so the job can run `true`.
#            Generated once and kept (generation is not measured).
#   run 1:   `rewind run --root tree -- true` in a fresh REWIND_HOME:
#            every file is read (hashed into the file index), mkfs.erofs
#            builds the image.
#   run 2:   the same, unchanged: the file index and the cache key make it a
#            walk of stat calls.
#   run 3:   after one file's contents changed: that file is read again and
#            the image rebuilt (the tree's content changed).
# "prep" is the sum of the phases REWIND_TIMING=1 prints before the VM runs
# (image, hashes, setup). Acceptance: run 2 <= run 1 / 10.
# Where KVM is not native: /work/notes/kvmh -- bench/roots.sh (or tools/kvm-host).
set -euo pipefail
cd "$(dirname "$0")/.."
MIB=${1:-400}
dir=build/bench-roots
tree=$dir/tree
if [ ! -e "$dir/tree.done" ] || [ "$(cat "$dir/tree.done")" != "$MIB" ]; then
    rm -rf "$tree"
    mkdir -p "$tree/bin"
    cp build/roots/test/bin/busybox "$tree/bin/busybox"
    ln -s busybox "$tree/bin/true"
    ln -s busybox "$tree/bin/sh"
    python3 - "$tree" "$MIB" <<'PY'
import os, random, sys
root, mib = sys.argv[1], int(sys.argv[2])
rnd = random.Random(12)
target, total, i = mib << 20, 0, 0
while total < target:
    r = rnd.random()
    size = (rnd.randint(100, 8 << 10) if r < 0.80 else
            rnd.randint(8 << 10, 64 << 10) if r < 0.97 else
            rnd.randint(64 << 10, 1 << 20) if r < 0.997 else
            rnd.randint(1 << 20, 4 << 20))
    d = os.path.join(root, "usr", "d%02d" % (i % 100))
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "f%06d" % i), "wb") as f:
        f.write(rnd.randbytes(size))
    total += size
    i += 1
print("generated %d files, %d MiB" % (i, total >> 20))
PY
    echo "$MIB" > "$dir/tree.done"
    # the file index does not trust files younger than 2 s (racy entries)
    sleep 3
fi
files=$(find "$tree" -type f | wc -l)
mib=$(du -sm "$tree" | cut -f1)
home=$(mktemp -d "$dir/home.XXXXXX")
trap 'rm -rf "$home"' EXIT
export REWIND_HOME=$home REWIND_TIMING=1

# prep seconds of one run (image + hashes + setup phases)
prep() {
    local out=$1
    awk '/timing: (image|hashes|setup) / { s += $(NF-1) } END { printf "%.3f", s }' "$out"
}
one() {
    local n=$1 out="$dir/run$1.err"
    local t0 t1
    t0=$(date +%s.%N)
    build/rewind run --root "$tree" -- true 2> "$out" || { cat "$out" >&2; exit 1; }
    t1=$(date +%s.%N)
    echo "run $n: prep $(prep "$out") s (image $(awk '/timing: image /{print $(NF-1)}' "$out") s)," \
        "whole process $(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.3f", b-a}') s"
}
echo "tree: $files files, $mib MiB ($tree)"
r1=$(one 1); echo "$r1"
r2=$(one 2); echo "$r2"
victim=$(find "$tree/usr" -type f -name 'f000000')
python3 -c "import sys; f=open(sys.argv[1],'r+b'); f.write(b'changed!'); f.close()" "$victim"
sleep 3
r3=$(one 3); echo "$r3"
p1=$(prep "$dir/run1.err"); p2=$(prep "$dir/run2.err")
awk -v a="$p1" -v b="$p2" 'BEGIN { printf "ratio run2/run1 (prep): %.4f (goal <= 0.1): %s\n", b/a, (b <= a/10) ? "met" : "NOT met" }'

# Untouched guest memory costs nothing: the peak RSS of a run with --mem 8192
# whose job touches little (needs a host with MemAvailable >= 8.5 GiB, e.g.
# kvmh --mem 12288 -- bench/roots.sh), next to one with the default 512 MiB.
avail=$(awk '/^MemAvailable:/ {print int($2 / 1024)}' /proc/meminfo)
for m in 512 8192; do
    if [ "$m" -gt 512 ] && [ "$avail" -lt 8700 ]; then
        echo "rss --mem $m: skipped (MemAvailable $avail MiB)"
        continue
    fi
    /usr/bin/time -f '%M' -o "$dir/rss.$m" build/rewind run --root build/roots/test.erofs --mem "$m" \
        -- /bin/cat /proc/meminfo > "$dir/meminfo.$m" 2>/dev/null
    echo "rss --mem $m: rewind peak RSS $(( $(cat "$dir/rss.$m") / 1024 )) MiB;" \
        "guest $(grep MemTotal "$dir/meminfo.$m")"
done
