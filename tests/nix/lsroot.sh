#!/usr/bin/env bash
# tests/nix/lsroot.sh OUT: a small root whose /bin/ls is GNU coreutils' ls,
# copied from the host with the libraries it loads (/lib/x86_64-linux-gnu,
# the loader in /lib64), the rest busybox-static and its applets as
# symlinks, with a passwd and group (as tools/mkroot.sh makes them).
# busybox's ls always sorts; GNU `ls -U` lists a directory in the order it
# is read, which --dirorder varies (docs/nix.md, t_repro.sh, the
# reproducible-builds tutorial). Few processes: the test host's software
# CPU makes each one slow.
set -euo pipefail
out=$1
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
bb=/bin/busybox
[ -x "$bb" ] || { echo "lsroot.sh: $bb missing (apt-get install busybox-static)" >&2; exit 1; }
tmp=$(mktemp -d "${out%/}.tmp.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp"/{bin,sbin,usr/bin,usr/sbin,etc,root,tmp,dev,proc,sys,var/tmp,lib64}
cp "$bb" "$tmp/bin/busybox"
# one process for the ~400 links (python3: ln makes one link per call)
"$bb" --list-full | python3 -c '
import os, sys
for a in sys.stdin.read().split():
    if a not in ("bin/busybox", "bin/ls") and "/" in a and ".." not in a:
        os.makedirs(os.path.join(sys.argv[1], os.path.dirname(a)), exist_ok=True)
        os.symlink("/bin/busybox", os.path.join(sys.argv[1], a))
' "$tmp"
"$here/copy-elf.sh" /bin/ls "$tmp/bin" "$tmp/lib/x86_64-linux-gnu"
mv "$tmp/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2" "$tmp/lib64/"
printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/false\n' >"$tmp/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' >"$tmp/etc/group"
echo rewind >"$tmp/etc/hostname"
chmod 1777 "$tmp/tmp" "$tmp/var/tmp"
chmod 755 "$tmp"
rm -rf "$out"
mv "$tmp" "$out"
trap - EXIT
