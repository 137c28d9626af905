#!/usr/bin/env bash
# sha256.sh: SHA-256 of a 4 KiB page through OpenSSL (bench/sha256.c) on
# this machine, and in the test host (tools/kvm-host) under OpenSSL's
# default code path and the masks docs/test-host.md compares. Prints one
# line per case.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p build/bench
cc -O2 -o build/bench/sha256 bench/sha256.c -lcrypto
echo "this machine: $(build/bench/sha256)"
tools/kvm-host --mem 1024 --timeout 600 -- bash -c '
for m in default "~0x1000000000000000:~0x20" "~0x1000020000000000:~0x20"; do
    if [ "$m" = default ]; then unset OPENSSL_ia32cap; else export OPENSSL_ia32cap="$m"; fi
    echo "test host, OPENSSL_ia32cap=$m: $(build/bench/sha256)"
done'
