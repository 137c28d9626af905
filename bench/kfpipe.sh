#!/usr/bin/env bash
# bench/kfpipe.sh [FILE...]: issue 29 item 3, keyframes off the step path,
# in-process (no VM): first bench/ingest.sh's codecs (new pages MB/s per
# core: SHA-256 + zstd 1 / -1 / -3 / -5 / lz4), then bench/kfpipe.c's
# capture, synchronous against threaded, side by side in one run (its
# header says what it measures). The pages: FILEs, by default the guest
# kernel and the test root's image, as bench/ingest.sh takes them. Prints
# the load first: figures of a loaded machine are compared as ratios.
set -euo pipefail
TOP=$(cd "$(dirname "$0")/.." && pwd)
B=$TOP/build/bench
mkdir -p "$B"
make -C "$TOP" -s build/librewind.a
cc -O2 -std=c11 -D_GNU_SOURCE -I"$TOP/src" -I"$TOP/include" -o "$B/kfpipe" "$TOP/bench/kfpipe.c" \
    "$TOP/build/librewind.a" -lcrypto -ljansson -lzstd -ldw -lelf -pthread -lm
[ $# -gt 0 ] || set -- "$TOP/build/kernel/vmlinux" "$TOP/build/roots/test.erofs"
echo "load: $(uptime)"
"$TOP/bench/ingest.sh" "$@"
"$B/kfpipe" "$@"
echo "load: $(uptime)"
