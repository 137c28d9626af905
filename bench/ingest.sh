#!/usr/bin/env bash
# bench/ingest.sh [FILE...]: what a page costs to enter the page store, per
# codec, side by side in one run (bench/ingest.c; issue 17 item 4): SHA-256
# alone (a known page) and SHA-256 plus zstd 1 / -1 / -3 / -5 / lz4 (a new
# page), MB/s on one core, ratio, decode speed. The pages: FILEs cut in
# 4 KiB pages, by default the guest kernel (build/kernel/vmlinux) and the
# test root's image (build/roots/test.erofs), the bytes a guest's memory
# is mostly made of, plus as many zero pages as a keyframe has (a third).
set -euo pipefail
TOP=$(cd "$(dirname "$0")/.." && pwd)
B=$TOP/build/bench
mkdir -p "$B"
cc -O2 -o "$B/ingest" "$TOP/bench/ingest.c" -lzstd -llz4 -lcrypto
if [ $# -eq 0 ]; then
    set -- "$TOP/build/kernel/vmlinux" "$TOP/build/roots/test.erofs"
    sz=$(cat "$@" | wc -c)
    head -c $((sz / 2)) /dev/zero >"$B/zeros"
    set -- "$@" "$B/zeros"
fi
"$B/ingest" "$@"
