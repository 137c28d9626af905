#!/usr/bin/env bash
# tests/nix/lsroot.sh OUT: a small root (tools/mkroot.sh: busybox-static and
# its applets) whose /bin/ls is GNU coreutils' ls, copied from the host with
# the libraries it loads (/lib/x86_64-linux-gnu, the loader in /lib64).
# busybox's ls always sorts; GNU `ls -U` lists a directory in the order it
# is read, which --dirorder varies (docs/nix.md, t_repro.sh, the
# reproducible-builds tutorial).
set -euo pipefail
out=$1
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
"$here/../../tools/mkroot.sh" "$out"
rm -f "$out/bin/ls"
"$here/copy-elf.sh" /bin/ls "$out/bin" "$out/lib/x86_64-linux-gnu"
mkdir -p "$out/lib64"
mv "$out/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2" "$out/lib64/"
